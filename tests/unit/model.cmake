target_sources(gp_unit_tests PRIVATE unit/string_table_test.cpp)
target_sources(gp_unit_tests PRIVATE unit/builder_chain_test.cpp)
