#pragma once
// What gp's PHP sampler reads, per PHP version: byte offsets in the Zend engine's structs
// (zend_executor_globals, zend_execute_data, zend_function, zend_op, zend_string,
// zend_class_entry) for x86-64 and aarch64 (LP64; no arch-specific members), and the version
// the interpreter binary announces.
//
// Only PHP 8.2 has a table: its numbers are facts of PHP 8.2's Zend headers (API 20220829), and
// tests/unit/runtime_php_layout_test.cpp compiles offsetof() against the installed headers
// (php8.2-dev) to check them. These structs do not change within a minor version's releases.
// Any other version gets no walk (the adapter reports it skipped), never a guessed layout.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gp::runtime::php {

struct PhpVersion {
  int major = 0;
  int minor = 0;
  int micro = -1;            // -1 when unknown
  std::string text() const;  // "8.2" or "8.2.36"
};

// The version in an interpreter file's read-only data: PHP builds the header text
// "X-Powered-By: PHP/<PHP_VERSION>" into every SAPI (cli, fpm, cgi, embed/libphp).
// nullopt when the text is absent or does not start with a version.
std::optional<PhpVersion> version_from_rodata(std::string_view rodata);

struct PhpLayout {
  int major = 0, minor = 0;
  // zend_executor_globals
  uint32_t eg_current_execute_data = 0;
  // zend_execute_data
  uint32_t ex_opline = 0;
  uint32_t ex_func = 0;
  uint32_t ex_prev = 0;
  uint32_t ex_size = 0;  // bytes read per frame (covers the fields above)
  // zend_function (a union: common.* for every function, op_array.* for user functions)
  uint32_t fn_type = 0;        // uint8_t: kUserFunction, kInternalFunction or kEvalCode
  uint32_t fn_name = 0;        // common.function_name (zend_string*), null for top-level code
  uint32_t fn_scope = 0;       // common.scope (zend_class_entry*)
  uint32_t fn_filename = 0;    // op_array.filename (zend_string*), user functions only
  uint32_t fn_line_start = 0;  // op_array.line_start (uint32_t)
  uint32_t fn_size = 0;        // bytes read per function (covers the fields above)
  // zend_op
  uint32_t op_lineno = 0;  // uint32_t
  // zend_string
  uint32_t str_len = 0;  // size_t
  uint32_t str_val = 0;  // char[]
  // zend_class_entry
  uint32_t ce_name = 0;  // zend_string*
};

constexpr uint8_t kInternalFunction = 1;  // ZEND_INTERNAL_FUNCTION
constexpr uint8_t kUserFunction = 2;      // ZEND_USER_FUNCTION
constexpr uint8_t kEvalCode = 4;          // ZEND_EVAL_CODE: eval()'d code, `php -r` code

// The layout of PHP major.minor; nullopt for versions gp has no table for.
std::optional<PhpLayout> layout_for_version(int major, int minor);

// The versions that have a layout, for messages ("8.2").
std::string_view supported_versions();

}  // namespace gp::runtime::php
