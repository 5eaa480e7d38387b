# gp-upload's engine: .col splitting, Studio and Pyroscope request builders, HTTP with retries,
# the spool. libcurl does the transfers (and honours https_proxy/HTTPS_PROXY). A library of its
# own, linked by the tools that upload (gp-upload, gp-profile): in gp_core every tool loaded
# libcurl and its dependencies at each start.
find_package(CURL REQUIRED)
add_library(gp_upload STATIC
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
target_include_directories(gp_upload PRIVATE src)
target_link_libraries(gp_upload PUBLIC gp_core CURL::libcurl)
target_compile_options(gp_upload PRIVATE ${GP_UNITY_OPTIONS})
