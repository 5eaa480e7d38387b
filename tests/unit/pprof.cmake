# pprof/speedscope encoders (libcore/src/fold/pprof_sources.cmake). The tests include the
# private protobuf writer header and run tests/pprof/validate.sh (Go's pprof parser + CLI),
# whose binaries are built once into the build tree.
target_sources(gp_unit_tests PRIVATE unit/pprof_test.cpp unit/speedscope_test.cpp)
target_include_directories(gp_unit_tests PRIVATE ${PROJECT_SOURCE_DIR}/libcore/src)
target_compile_definitions(gp_unit_tests PRIVATE
  GP_PPROF_TOOLS_DIR="${CMAKE_BINARY_DIR}/pprof-tools"
  GP_SPEEDSCOPE_TOOLS_DIR="${CMAKE_BINARY_DIR}/speedscope-tools")
