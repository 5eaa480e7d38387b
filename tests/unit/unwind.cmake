# Unwind-table builder tests (libcore/src/unwind): elfutils' CFI API is the oracle, on Debian's
# binaries and on two builds of one fixture: .eh_frame only, and .debug_frame (+ the crt files'
# .eh_frame).
target_sources(gp_unit_tests PRIVATE
  unit/unwind_oracle_test.cpp
  unit/unwind_table_test.cpp
  unit/unwind_corrupt_test.cpp
  unit/unwind_pack_test.cpp
  unit/unwind_table_cache_test.cpp
)
pkg_check_modules(UNWIND_DW REQUIRED IMPORTED_TARGET libdw)
target_link_libraries(gp_unit_tests PRIVATE PkgConfig::UNWIND_DW)

set(gp_unwind_fixtures ${CMAKE_CURRENT_BINARY_DIR}/fixtures/unwind)
add_executable(unwind_eh_frame fixtures/src/unwind_cfi.c)
target_compile_options(unwind_eh_frame PRIVATE -O2 -fomit-frame-pointer -fasynchronous-unwind-tables)
add_executable(unwind_debug_frame fixtures/src/unwind_cfi.c)
target_compile_options(unwind_debug_frame PRIVATE -O2 -fomit-frame-pointer -g
                       -fno-asynchronous-unwind-tables -fno-unwind-tables)
set_target_properties(unwind_eh_frame unwind_debug_frame PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${gp_unwind_fixtures})
add_dependencies(gp_unit_tests unwind_eh_frame unwind_debug_frame)
# Only these files see the paths: the rest of gp_unit_tests keeps its flags (and its ccache hits).
set_source_files_properties(unit/unwind_oracle_test.cpp unit/unwind_table_test.cpp
                            unit/unwind_corrupt_test.cpp unit/unwind_pack_test.cpp
  PROPERTIES COMPILE_DEFINITIONS
  "GP_UNWIND_EH_FRAME_FIXTURE=\"${gp_unwind_fixtures}/unwind_eh_frame\";GP_UNWIND_DEBUG_FRAME_FIXTURE=\"${gp_unwind_fixtures}/unwind_debug_frame\"")

# Benchmark driver (not a test): tests/bench/unwind_table_bench.sh runs it.
add_executable(unwind_table_bench bench/unwind_table_bench.cpp)
target_link_libraries(unwind_table_bench PRIVATE gp_core PkgConfig::UNWIND_DW)
set_target_properties(unwind_table_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
# The user-space stack walker (the BPF walker's rules over a stack copy).
target_sources(gp_unit_tests PRIVATE unit/unwind_stack_walker_test.cpp)
# Survey driver (not a test): tests/bench/cfi_forms_survey.sh runs it.
add_executable(cfi_forms_survey bench/cfi_forms_survey.cpp)
target_link_libraries(cfi_forms_survey PRIVATE gp_core)
set_target_properties(cfi_forms_survey PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
