# gp-runtime's Node adapters (libcore/src/runtime/node): WebSocket framing, the inspector client
# and the three adapters, against real node processes (tests/fixtures/runtime/node/chain.js).
target_sources(gp_unit_tests PRIVATE
  unit/runtime_node_adapter_test.cpp
  unit/runtime_node_addon_place_test.cpp
  unit/runtime_node_websocket_test.cpp
)
if(TARGET gp_node_perfmap)
  add_dependencies(gp_unit_tests gp_node_perfmap)
endif()

# A driver for one adapter run, for the bats suite (placed in <build>/tests so that the addon is
# found as <exe dir>/../lib/gp, as gp-runtime finds it).
add_executable(gp_node_adapter_run unit/runtime_node_adapter_run.cpp)
target_link_libraries(gp_node_adapter_run PRIVATE gp_core)
set_target_properties(gp_node_adapter_run PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
