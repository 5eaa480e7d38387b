# util: the JSON value/parser/writer; opening files for writing where other users can write.
target_sources(gp_unit_tests PRIVATE
  unit/escape_test.cpp
  unit/json_test.cpp
  unit/safe_open_test.cpp
)
