# gp-profile's shared logic: option mapping, child processes, output files, lock and schedule.
target_sources(gp_core PRIVATE
  src/profile/plan.cpp
  src/profile/child.cpp
  src/profile/output.cpp
  src/profile/instance.cpp
  src/profile/agent.cpp
  src/profile/top_cgroups.cpp
  src/profile/usage.cpp
  src/profile/diagnostics.cpp
  src/profile/command.cpp
  src/profile/hw_events.cpp
  src/profile/hw_metrics.cpp
)
