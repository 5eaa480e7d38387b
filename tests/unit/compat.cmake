# Backward-read tests against checked-in archives of earlier format versions (STYLE.md §L5).
target_sources(gp_unit_tests PRIVATE unit/archive_compat_test.cpp)
