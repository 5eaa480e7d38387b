# ELF build-id notes of untrusted files, read through elfutils' libelf.
pkg_check_modules(ELF_NOTES REQUIRED IMPORTED_TARGET libelf)
target_sources(gp_core PRIVATE
  src/elf/build_id.cpp
  src/elf/notes.cpp
)
target_link_libraries(gp_core PUBLIC PkgConfig::ELF_NOTES)
