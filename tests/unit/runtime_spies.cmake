# gp-runtime's Ruby, PHP and .NET adapters (libcore/src/runtime/spies/).
target_sources(gp_unit_tests PRIVATE
  unit/runtime_spies_parsers_test.cpp
  unit/runtime_spies_adapters_test.cpp
)
target_include_directories(gp_unit_tests PRIVATE ${PROJECT_SOURCE_DIR}/libcore/src)
