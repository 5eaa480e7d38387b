target_sources(gp_core PRIVATE
  src/elf/build_id.cpp
  src/elf/notes.cpp
)
