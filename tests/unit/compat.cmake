# Archive compatibility: backward-read tests against checked-in archives of earlier format
# versions (STYLE.md §L5), and regression tests for reader bugs the archive fuzzer found.
target_sources(gp_unit_tests PRIVATE
  unit/archive_compat_test.cpp
  unit/archive_fuzz_regress_test.cpp
)
