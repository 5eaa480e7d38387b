/* Prints one row of gp's PHP layout table (libcore/src/runtime/php/php_layouts.inc): the
 * offsets gp's PHP sampler reads, measured with offsetof() against one PHP version's own Zend
 * headers. Compiled by scripts/gen-interp-layouts.sh with the host's compiler and that
 * version's headers (its php-dev package); never edited into the table by hand. */
#define _GNU_SOURCE 1
#include <stddef.h>
#include <stdio.h>

#include "php.h"
#include "zend.h"
#include "zend_compile.h"
#include "zend_globals.h"

#define MAX2(a, b) ((a) > (b) ? (a) : (b))

int main(void) {
  size_t ex_end = MAX2(offsetof(zend_execute_data, prev_execute_data),
                       MAX2(offsetof(zend_execute_data, func), offsetof(zend_execute_data, opline))) +
                  sizeof(void*);
  size_t fn_end = MAX2(offsetof(zend_function, op_array.filename) + sizeof(void*),
                       offsetof(zend_function, op_array.line_start) + sizeof(uint32_t));
  fn_end = MAX2(fn_end, offsetof(zend_function, common.scope) + sizeof(void*));
  /* The sampler reads these widths; a header that changes them needs a sampler change. */
  if (sizeof(((zend_function*)0)->type) != 1 || sizeof(((zend_op*)0)->lineno) != 4 ||
      sizeof(((zend_string*)0)->len) != 8 || ZEND_USER_FUNCTION != 2 ||
      ZEND_INTERNAL_FUNCTION != 1 || ZEND_EVAL_CODE != 4) {
    fprintf(stderr, "php_layout_probe: PHP %d.%d: a field's width or a function type changed\n",
            PHP_MAJOR_VERSION, PHP_MINOR_VERSION);
    return 1;
  }
  printf("    {%d, %d, %u, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %zu},"
         "  // PHP %d.%d\n",
         PHP_MAJOR_VERSION, PHP_MINOR_VERSION, (unsigned)ZEND_MODULE_API_NO,
         offsetof(zend_executor_globals, current_execute_data),
         offsetof(zend_execute_data, opline), offsetof(zend_execute_data, func),
         offsetof(zend_execute_data, prev_execute_data), ex_end,
         offsetof(zend_function, type), offsetof(zend_function, common.function_name),
         offsetof(zend_function, common.scope), offsetof(zend_function, op_array.filename),
         offsetof(zend_function, op_array.line_start), fn_end, offsetof(zend_op, lineno),
         offsetof(zend_string, len), offsetof(zend_string, val),
         offsetof(zend_class_entry, name), PHP_MAJOR_VERSION, PHP_MINOR_VERSION);
  return 0;
}
