# util: the JSON value/parser/writer.
target_sources(gp_unit_tests PRIVATE unit/json_test.cpp)
