# gp-runtime core: registry, subprocess runner, discovery, appids, driver.
target_sources(gp_unit_tests PRIVATE
  unit/runtime_registry_test.cpp
  unit/runtime_subprocess_test.cpp
)
