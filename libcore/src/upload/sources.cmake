# gp-upload's engine: .col splitting, Studio and Pyroscope request builders, HTTP with retries,
# the spool. libcurl does the transfers (and honours https_proxy/HTTPS_PROXY).
find_package(CURL REQUIRED)
target_sources(gp_core PRIVATE
  src/upload/col_text.cpp
  src/upload/host_facts.cpp
  src/upload/heartbeat.cpp
  src/upload/http.cpp
  src/upload/pyroscope.cpp
  src/upload/remote_logs.cpp
  src/upload/spool.cpp
  src/upload/studio.cpp
  src/upload/url.cpp
)
target_link_libraries(gp_core PUBLIC CURL::libcurl)
