# gp-runtime core: registry, subprocess runner, discovery, appids, driver.
target_sources(gp_unit_tests PRIVATE
  unit/runtime_appid_test.cpp
  unit/runtime_core_support.h
  unit/runtime_discovery_test.cpp
  unit/runtime_driver_test.cpp
  unit/runtime_kernel_log_test.cpp
  unit/runtime_registry_test.cpp
  unit/runtime_subprocess_test.cpp
)
