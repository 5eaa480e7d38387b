# gp-runtime's core: adapter contract helpers, registry (mode -> adapter), subprocess runner,
# discovery, appids and the driver. Adapters list their own sources in src/runtime/<dir>/.
target_sources(gp_core PRIVATE
  src/runtime/adapter.cpp
  src/runtime/registry.cpp
  src/runtime/subprocess.cpp
)
