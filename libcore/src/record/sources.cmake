target_sources(gp_core PRIVATE
  src/record/assembler.cpp
)
