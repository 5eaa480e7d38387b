# gp-merge's engine: runtime into system (gProfiler §4), --smart (§3.5), --aggregate.
target_sources(gp_unit_tests PRIVATE
  unit/merge_fixture.h
  unit/merge_runtime_test.cpp
  unit/merge_smart_test.cpp
  unit/merge_aggregate_test.cpp
)
