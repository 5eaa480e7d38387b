/* The offsets gp's PHP sampler reads, measured with offsetof() against PHP 8.2's own Zend
 * headers (php8.2-dev: /usr/include/php/20220829). runtime_php_test.cpp compares them with
 * gp's hard-coded table (libcore/src/runtime/php/php_layout.cpp), so a wrong offset fails. */
#define _GNU_SOURCE 1
#include <stddef.h>

#include "php.h"
#include "zend.h"
#include "zend_compile.h"
#include "zend_globals.h"

const unsigned gp_zend82_api_no = ZEND_MODULE_API_NO;
const unsigned gp_zend82_eg_current_execute_data =
    offsetof(zend_executor_globals, current_execute_data);
const unsigned gp_zend82_ex_opline = offsetof(zend_execute_data, opline);
const unsigned gp_zend82_ex_func = offsetof(zend_execute_data, func);
const unsigned gp_zend82_ex_prev = offsetof(zend_execute_data, prev_execute_data);
const unsigned gp_zend82_fn_type = offsetof(zend_function, type);
const unsigned gp_zend82_fn_name = offsetof(zend_function, common.function_name);
const unsigned gp_zend82_fn_scope = offsetof(zend_function, common.scope);
const unsigned gp_zend82_fn_filename = offsetof(zend_function, op_array.filename);
const unsigned gp_zend82_fn_line_start = offsetof(zend_function, op_array.line_start);
const unsigned gp_zend82_op_lineno = offsetof(zend_op, lineno);
const unsigned gp_zend82_str_len = offsetof(zend_string, len);
const unsigned gp_zend82_str_val = offsetof(zend_string, val);
const unsigned gp_zend82_ce_name = offsetof(zend_class_entry, name);
const unsigned gp_zend82_user_function = ZEND_USER_FUNCTION;
const unsigned gp_zend82_internal_function = ZEND_INTERNAL_FUNCTION;
const unsigned gp_zend82_eval_code = ZEND_EVAL_CODE;
const unsigned gp_zend82_sizeof_op_lineno = sizeof(((zend_op*)0)->lineno);
const unsigned gp_zend82_sizeof_str_len = sizeof(((zend_string*)0)->len);
const unsigned gp_zend82_sizeof_fn_type = sizeof(((zend_function*)0)->type);
