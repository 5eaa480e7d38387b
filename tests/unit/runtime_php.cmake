# gp-runtime's PHP sampler (libcore/src/runtime/php): version parsing, the Zend layout table
# checked against PHP 8.2's own headers (php8.2-dev, installed by scripts/install-deps.sh
# --test), and the sampler against live php processes.
target_sources(gp_unit_tests PRIVATE unit/runtime_php_test.cpp)
target_include_directories(gp_unit_tests PRIVATE ${PROJECT_SOURCE_DIR}/libcore/src)

find_path(GP_PHP82_INCLUDE_DIR main/php.h PATHS /usr/include/php/20220829 NO_DEFAULT_PATH)
if(GP_PHP82_INCLUDE_DIR)
  add_library(gp_php82_offsets OBJECT unit/runtime_php_zend_offsets.c)
  target_include_directories(gp_php82_offsets PRIVATE ${GP_PHP82_INCLUDE_DIR}
    ${GP_PHP82_INCLUDE_DIR}/main ${GP_PHP82_INCLUDE_DIR}/Zend ${GP_PHP82_INCLUDE_DIR}/TSRM)
  target_compile_options(gp_php82_offsets PRIVATE -w)
  target_sources(gp_unit_tests PRIVATE $<TARGET_OBJECTS:gp_php82_offsets>)
else()
  # Not a skip: the layout test fails and says what is missing.
  target_compile_definitions(gp_unit_tests PRIVATE GP_PHP82_HEADERS_MISSING=1)
endif()

# Benchmark (not a test): the PHP sampler's own cost, run by bench/php_sampler_bench.sh.
add_executable(gp_php_sampler_bench bench/php_sampler_bench.cpp)
target_include_directories(gp_php_sampler_bench PRIVATE ${PROJECT_SOURCE_DIR}/libcore/src)
target_link_libraries(gp_php_sampler_bench PRIVATE gp_core)
