# gp-runtime's Node adapters (perf, attach-maps, inspector) and gp's perf-map addon.
target_sources(gp_core PRIVATE
  src/runtime/node/attach_maps_adapter.cpp
  src/runtime/node/cpu_profile.cpp
  src/runtime/node/inspector.cpp
  src/runtime/node/inspector_adapter.cpp
  src/runtime/node/node_target.cpp
  src/runtime/node/perf_adapter.cpp
  src/runtime/node/websocket_client.cpp
  src/runtime/node/websocket_frame.cpp
)

# The addon that attach-maps loads into a running Node. It uses V8's C++ API, so it is built
# against the installed Node's headers (Debian's nodejs ships them in /usr/include/node) and
# loads only into a Node of the same ABI (NODE_MODULE_VERSION, checked before loading).
include(GNUInstallDirs)
set(GP_NODE_INCLUDE_DIR "/usr/include/node" CACHE PATH "Node.js headers for gp's perf-map addon")
if(EXISTS "${GP_NODE_INCLUDE_DIR}/node.h" AND EXISTS "${GP_NODE_INCLUDE_DIR}/v8.h")
  file(STRINGS "${GP_NODE_INCLUDE_DIR}/node_version.h" gp_node_abi_line
       REGEX "^#define NODE_MODULE_VERSION [0-9]+")
  string(REGEX MATCH "[0-9]+" GP_NODE_ADDON_ABI "${gp_node_abi_line}")
  add_library(gp_node_perfmap MODULE src/runtime/node/addon/gp_node_perfmap.cc)
  target_include_directories(gp_node_perfmap SYSTEM PRIVATE "${GP_NODE_INCLUDE_DIR}")
  # Node's own headers are C++17 code; the addon shares no code with gp_core.
  set_target_properties(gp_node_perfmap PROPERTIES
    PREFIX "" SUFFIX ".node" CXX_STANDARD 17
    LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/lib/gp")
  target_compile_options(gp_node_perfmap PRIVATE -Wno-unused-parameter)
  install(TARGETS gp_node_perfmap LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}/gp")
  # Only the two files that need them, so a new build dir does not recompile all of gp_core.
  set_source_files_properties(src/runtime/node/attach_maps_adapter.cpp PROPERTIES
    COMPILE_DEFINITIONS "GP_NODE_ADDON_ABI=${GP_NODE_ADDON_ABI}")
  set_source_files_properties(src/runtime/node/node_target.cpp PROPERTIES COMPILE_DEFINITIONS
    "GP_NODE_ADDON_BUILD_PATH=\"${CMAKE_BINARY_DIR}/lib/gp/gp_node_perfmap.node\";GP_NODE_ADDON_INSTALL_PATH=\"${CMAKE_INSTALL_FULL_LIBDIR}/gp/gp_node_perfmap.node\"")
  add_dependencies(gp_core gp_node_perfmap)
else()
  message(STATUS "Node.js headers not found in ${GP_NODE_INCLUDE_DIR}: gp-runtime's attach-maps mode will report the addon missing")
endif()
