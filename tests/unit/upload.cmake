# upload: gp-upload's request builders (.col split, Studio body/URL/metadata, Pyroscope
# chunks/URL), time parsing, redaction, the retry loop, the spool, the remote logs and the heartbeat protocol.
target_sources(gp_unit_tests PRIVATE
  unit/upload_test.cpp
  unit/upload_heartbeat_test.cpp
  unit/upload_http_test.cpp
  unit/upload_remote_logs_test.cpp
  unit/upload_url_test.cpp
)
