target_sources(gp_core PRIVATE
  src/record/assembler.cpp
  src/record/perf_map_tails.cpp
  src/record/stack_copies.cpp
  src/record/target_watch.cpp
)
# Samples whose user stack the BPF sampler copied before their tables: unwound in user space.
target_sources(gp_core PRIVATE src/record/deferred_stacks.cpp)
# The command of `gp-record -- COMMAND`: started held, in a cgroup of its own.
target_sources(gp_core PRIVATE src/record/command.cpp)
# The hottest functions of a recording, for the terminal.
target_sources(gp_core PRIVATE src/record/summary.cpp)
# Python frames the BPF program recorded in native stacks: split, spliced and named.
target_sources(gp_core PRIVATE src/record/python_frames.cpp)
# The evaluation loop's parts past its symbol (GCC's cold partitions: CPython 3.14 and 3.15).
target_sources(gp_core PRIVATE src/record/python_eval_parts.cpp)
