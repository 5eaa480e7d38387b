# Unwind tables (gp-record --unwind dwarf): .eh_frame/.debug_frame compiled into rows for the BPF
# walker. libelf locates the sections; the CFI parser is gp's own.
pkg_check_modules(UNWIND_ELF REQUIRED IMPORTED_TARGET libelf)
target_sources(gp_core PRIVATE
  src/unwind/cfi_entries.cpp
  src/unwind/cfa_program.cpp
  src/unwind/table_builder.cpp
  src/unwind/elf_input.cpp
  src/unwind/pack.cpp
)
target_link_libraries(gp_core PUBLIC PkgConfig::UNWIND_ELF)
# The BPF walker's rules in user space: unwinds copies of user stacks with the packed tables.
target_sources(gp_core PRIVATE src/unwind/stack_walker.cpp)
# Packed tables on disk, by build-id (gp-record's table cache).
target_sources(gp_core PRIVATE
  src/unwind/table_entry.cpp
  src/unwind/table_cache.cpp
)
