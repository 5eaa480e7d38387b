target_sources(gp_core PRIVATE
  src/fold/stack_namer.cpp
  src/fold/stacks.cpp
)
