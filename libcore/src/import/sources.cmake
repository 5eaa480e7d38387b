# gp-import's engine: perf script text, or perf.data, -> model::Session.
target_sources(gp_core PRIVATE
  src/import/perf_line.cpp
  src/import/perf_dso.cpp
  src/import/perf_header.cpp
  src/import/perf_script.cpp
  src/import/perf_runner.cpp
  src/import/perf_data_header.cpp
  src/import/perf_data_records.cpp
  src/import/perf_data_features.cpp
  src/import/perf_data_maps.cpp
  src/import/perf_data_unwind.cpp
  src/import/perf_unwind_tables.cpp
  src/import/perf_data_import.cpp
)
