target_sources(gp_core PRIVATE
  src/record/assembler.cpp
  src/record/perf_map_tails.cpp
  src/record/stack_copies.cpp
  src/record/target_watch.cpp
)
