# fold: stacks and the text formats (the pprof/speedscope encoders are in pprof_sources.cmake).
target_sources(gp_core PRIVATE
  src/fold/stack_namer.cpp
  src/fold/stack_table.cpp
  src/fold/session_stacks.cpp
  src/fold/stacks.cpp
  src/fold/filter.cpp
  src/fold/col_context.cpp
  src/fold/col_header.cpp
  src/fold/col_writer.cpp
  src/fold/external_metadata.cpp
  src/fold/folded_writer.cpp
  src/fold/top.cpp
  src/fold/weight.cpp
)
