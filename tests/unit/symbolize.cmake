# gp-symbolize: unit tests and the ELF fixtures they (and tests/cli/gp-symbolize.bats) resolve.
# Fixtures land in <build>/tests/fixtures/symbolize; tests derive stripped, debuglink and
# .build-id variants from them at run time (objcopy), so every variant is a real file.
target_sources(gp_unit_tests PRIVATE
  unit/symbolize_demangle_test.cpp
  unit/symbolize_finder_test.cpp
  unit/symbolize_resolver_test.cpp
  unit/symbolize_session_test.cpp
  unit/symbolize_live_test.cpp
  unit/symbolize_fixture_test.cpp
  unit/symbolize_scope_test.cpp
  unit/symbolize_stream_test.cpp
)

set(gp_sym_fixtures ${CMAKE_CURRENT_BINARY_DIR}/fixtures/symbolize)
set(gp_sym_src ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/src)

# name, source, language flags: one real program per fixture, always with -g (variants strip it).
function(gp_sym_fixture name src)
  add_executable(${name} ${gp_sym_src}/${src})
  target_compile_options(${name} PRIVATE -g ${ARGN})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${gp_sym_fixtures}
                        LINK_FLAGS "-Wl,--build-id=sha1")
  add_dependencies(gp_unit_tests ${name})
endfunction()

# -fno-shrink-wrap: the frame is set up on every path, so frame-pointer unwinding sees each caller.
gp_sym_fixture(sym_fp fp.c -O1 -fno-omit-frame-pointer -fno-shrink-wrap)
gp_sym_fixture(sym_nofp nofp.c -O2 -fomit-frame-pointer)
gp_sym_fixture(sym_inline inline.c -O2)
gp_sym_fixture(sym_cpptempl cpptempl.cpp -O1)

add_library(sym_shared SHARED ${gp_sym_src}/libshared.c)
target_compile_options(sym_shared PRIVATE -g -O1)
set_target_properties(sym_shared PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${gp_sym_fixtures}
                      LINK_FLAGS "-Wl,--build-id=sha1")
gp_sym_fixture(sym_useshared libshared.c -O1 -DSHARED_MAIN)
target_link_libraries(sym_useshared PRIVATE sym_shared)
set_target_properties(sym_useshared PROPERTIES BUILD_RPATH ${gp_sym_fixtures})
add_dependencies(gp_unit_tests sym_shared)

# Go: with symbols, and stripped of .symtab and DWARF (names only in .gopclntab).
find_program(GP_GO go)
if(GP_GO)
  set(gp_go_env GOCACHE=${CMAKE_CURRENT_BINARY_DIR}/go-cache GOPATH=${CMAKE_CURRENT_BINARY_DIR}/go-path
                GO111MODULE=off CGO_ENABLED=0 GOFLAGS=)
  add_custom_command(
    OUTPUT ${gp_sym_fixtures}/sym_go ${gp_sym_fixtures}/sym_go_stripped
    COMMAND ${CMAKE_COMMAND} -E env ${gp_go_env} ${GP_GO} build -o ${gp_sym_fixtures}/sym_go ${gp_sym_src}/gohello.go
    COMMAND ${CMAKE_COMMAND} -E env ${gp_go_env} ${GP_GO} build "-ldflags=-s -w" -o ${gp_sym_fixtures}/sym_go_stripped
            ${gp_sym_src}/gohello.go
    DEPENDS ${gp_sym_src}/gohello.go
    COMMENT "Building the Go symbolization fixtures" VERBATIM)
  add_custom_target(sym_go ALL DEPENDS ${gp_sym_fixtures}/sym_go ${gp_sym_fixtures}/sym_go_stripped)
  add_dependencies(gp_unit_tests sym_go)
  target_compile_definitions(gp_unit_tests PRIVATE GP_SYM_HAVE_GO=1)
endif()

target_compile_definitions(gp_unit_tests PRIVATE GP_SYM_FIXTURES="${gp_sym_fixtures}"
                                                 GP_SYM_SOURCES="${gp_sym_src}")

# tests/bench/symbolize_bench.sh: one session twice as long as a recording (memory scaling).
add_executable(symbolize_double_session ${CMAKE_CURRENT_SOURCE_DIR}/bench/symbolize_double_session.cpp)
target_link_libraries(symbolize_double_session PRIVATE gp_core)
set_target_properties(symbolize_double_session PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
