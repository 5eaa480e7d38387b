target_sources(gp_core PRIVATE
  src/util/json.cpp
  src/util/json_parse.cpp
  src/util/json_write.cpp
  src/util/utf8.cpp
)
