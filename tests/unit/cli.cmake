# cli: the shared front-end plumbing (options from the environment and config files).
target_sources(gp_unit_tests PRIVATE unit/cli_env_config_test.cpp)
target_link_libraries(gp_unit_tests PRIVATE gp_cli)
