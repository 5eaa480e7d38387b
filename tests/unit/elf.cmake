# Build-id tests (libcore/src/elf) and the ELF fixtures they read.
target_sources(gp_unit_tests PRIVATE unit/build_id_test.cpp)

set(GP_ELF_FIXTURES ${CMAKE_CURRENT_BINARY_DIR}/fixtures/elf)
file(MAKE_DIRECTORY ${GP_ELF_FIXTURES})
set(GP_FIXTURE_EXE_BUILD_ID 0123456789abcdef0123456789abcdef01234567)
set(GP_FIXTURE_LIB_BUILD_ID feedfacecafebeef00112233445566778899aabb)

# Native executable and shared library with pinned build-ids.
add_executable(gp_fixture_buildid_exe fixtures/src/buildid_main.c)
target_link_options(gp_fixture_buildid_exe PRIVATE -Wl,--build-id=0x${GP_FIXTURE_EXE_BUILD_ID})
add_library(gp_fixture_buildid_lib SHARED fixtures/src/buildid_lib.c)
target_link_options(gp_fixture_buildid_lib PRIVATE -Wl,--build-id=0x${GP_FIXTURE_LIB_BUILD_ID})
set_target_properties(gp_fixture_buildid_exe gp_fixture_buildid_lib PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${GP_ELF_FIXTURES} LIBRARY_OUTPUT_DIRECTORY ${GP_ELF_FIXTURES})

# Stripped and debug-only copies; an object whose build-id is only in a section header.
add_custom_command(OUTPUT ${GP_ELF_FIXTURES}/buildid_stripped ${GP_ELF_FIXTURES}/buildid.debug
  COMMAND ${CMAKE_STRIP} --strip-all -o ${GP_ELF_FIXTURES}/buildid_stripped $<TARGET_FILE:gp_fixture_buildid_exe>
  COMMAND ${CMAKE_OBJCOPY} --only-keep-debug $<TARGET_FILE:gp_fixture_buildid_exe> ${GP_ELF_FIXTURES}/buildid.debug
  DEPENDS gp_fixture_buildid_exe VERBATIM)
add_custom_command(OUTPUT ${GP_ELF_FIXTURES}/buildid_note.o
  COMMAND ${CMAKE_C_COMPILER} -c ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/src/buildid_note.c -o ${GP_ELF_FIXTURES}/buildid_note.o
  DEPENDS fixtures/src/buildid_note.c VERBATIM)
set(gp_elf_fixture_files ${GP_ELF_FIXTURES}/buildid_stripped ${GP_ELF_FIXTURES}/buildid.debug
                         ${GP_ELF_FIXTURES}/buildid_note.o)

# Other classes and byte orders: clang cross-compiles, ld.lld links without a libc. Missing
# tools leave the files out and the tests say so when they skip.
find_program(GP_CLANG clang)
find_program(GP_LLD ld.lld)
if(GP_CLANG AND GP_LLD)
  foreach(variant "i386-linux-gnu;i386;11" "powerpc64-linux-gnu;ppc64be;22" "mips-linux-gnu;mips32be;33"
                  "aarch64-linux-gnu;aarch64;44")
    list(GET variant 0 triple)
    list(GET variant 1 name)
    list(GET variant 2 tag)
    set(out ${GP_ELF_FIXTURES}/buildid_${name})
    add_custom_command(OUTPUT ${out}
      COMMAND ${GP_CLANG} --target=${triple} -O1 -c ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/src/buildid_cross.c -o ${out}.o
      COMMAND ${GP_LLD} --build-id=0x${tag}${tag}${tag}${tag}aabbccdd -e gp_fixture_entry ${out}.o -o ${out}
      DEPENDS fixtures/src/buildid_cross.c VERBATIM)
    list(APPEND gp_elf_fixture_files ${out})
  endforeach()
endif()
add_custom_target(gp_elf_fixtures DEPENDS ${gp_elf_fixture_files})
add_dependencies(gp_unit_tests gp_elf_fixtures gp_fixture_buildid_exe gp_fixture_buildid_lib)
target_compile_definitions(gp_unit_tests PRIVATE
  GP_ELF_FIXTURES="${GP_ELF_FIXTURES}"
  GP_FIXTURE_EXE="$<TARGET_FILE:gp_fixture_buildid_exe>"
  GP_FIXTURE_LIB="$<TARGET_FILE:gp_fixture_buildid_lib>"
  GP_FIXTURE_EXE_BUILD_ID="${GP_FIXTURE_EXE_BUILD_ID}"
  GP_FIXTURE_LIB_BUILD_ID="${GP_FIXTURE_LIB_BUILD_ID}")
