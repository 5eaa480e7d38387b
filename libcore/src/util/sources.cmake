target_sources(gp_core PRIVATE
  src/util/base64.cpp
  src/util/escape.cpp
  src/util/huge_heap.cpp
  src/util/json.cpp
  src/util/json_parse.cpp
  src/util/json_write.cpp
  src/util/safe_open.cpp
  src/util/subprocess.cpp
  src/util/utf8.cpp
)
