# gp-import's perf script parser.
target_sources(gp_unit_tests PRIVATE
  unit/perf_script_line_test.cpp
  unit/perf_script_test.cpp
  unit/perf_data_header_test.cpp
)
