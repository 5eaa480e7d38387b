# gp-profile's shared logic: option mapping, output files and rotation, child processes, lock.
target_sources(gp_unit_tests PRIVATE
  unit/profile_plan_test.cpp
  unit/profile_output_test.cpp
  unit/profile_child_test.cpp
  unit/profile_agent_test.cpp
  unit/profile_top_cgroups_test.cpp
  unit/profile_usage_test.cpp
  unit/profile_hw_events_test.cpp
)
