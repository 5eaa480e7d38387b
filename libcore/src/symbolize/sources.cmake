# Symbolization (gp-symbolize): elfutils' libdwfl/libdw/libelf for ELF and DWARF, libdebuginfod
# for the opt-in debuginfod lookup (its header only: the library is loaded by the first lookup),
# libiberty for demangling.
pkg_check_modules(DW REQUIRED IMPORTED_TARGET libdw libelf)
pkg_check_modules(DEBUGINFOD REQUIRED libdebuginfod)
target_sources(gp_core PRIVATE
  src/symbolize/elf_file.cpp
  src/symbolize/debuginfo_finder.cpp
  src/symbolize/demangle.cpp
  src/symbolize/go_pclntab.cpp
  src/symbolize/module_resolver.cpp
  src/symbolize/module_opener.cpp
  src/symbolize/symbol_index.cpp
  src/symbolize/scope_index.cpp
  src/symbolize/kernel_symbols.cpp
  src/symbolize/symbolizer.cpp
  src/symbolize/stream_symbolizer.cpp
  src/symbolize/symbol_export.cpp
  src/symbolize/store_trust.cpp
)
target_link_libraries(gp_core PUBLIC PkgConfig::DW ${CMAKE_DL_LIBS})
target_include_directories(gp_core PRIVATE ${DEBUGINFOD_INCLUDE_DIRS})
# libiberty (libiberty-dev): the demangler of binutils and gdb; a static library without a
# pkg-config file.
find_library(GP_LIBIBERTY NAMES libiberty.a iberty REQUIRED)
find_path(GP_LIBIBERTY_INCLUDE libiberty/demangle.h REQUIRED)
target_include_directories(gp_core PRIVATE ${GP_LIBIBERTY_INCLUDE})
target_link_libraries(gp_core PUBLIC ${GP_LIBIBERTY})
