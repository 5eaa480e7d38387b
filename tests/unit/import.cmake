# gp-import: the perf script parser and the perf.data reader.
target_sources(gp_unit_tests PRIVATE
  unit/perf_script_line_test.cpp
  unit/perf_script_test.cpp
  unit/perf_data_header_test.cpp
  unit/perf_data_import_test.cpp
)
