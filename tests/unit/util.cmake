# util: the JSON value/parser/writer; opening files for writing where other users can write;
# the one child-process spawner; the flat map of integer pairs.
target_sources(gp_unit_tests PRIVATE
  unit/escape_test.cpp
  unit/json_test.cpp
  unit/pair_map_test.cpp
  unit/safe_open_test.cpp
  unit/subprocess_test.cpp
  unit/utf8_test.cpp
)
