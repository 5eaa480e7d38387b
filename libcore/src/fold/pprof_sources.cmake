# pprof and speedscope encoders (owned apart from the rest of src/fold).
target_sources(gp_core PRIVATE
  src/fold/gzip.cpp
  src/fold/protobuf_writer.cpp
  src/fold/pprof_tables.cpp
  src/fold/pprof.cpp
  src/fold/speedscope.cpp
)
