# Archive compatibility: backward-read tests against checked-in archives of earlier format
# versions (STYLE.md §L5), regression tests for reader bugs the archive fuzzer found, and what
# the reader keeps or refuses from cut and hostile streams.
target_sources(gp_unit_tests PRIVATE
  unit/archive_compat_test.cpp
  unit/archive_fuzz_regress_test.cpp
  unit/archive_trust_test.cpp
)
