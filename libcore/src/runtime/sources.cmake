# gp-runtime's core: adapter contract helpers, registry (mode -> adapter), subprocess runner,
# discovery, appids and the driver; remote/: reading a live process's memory and the symbols
# of its mapped files (gp's interpreter samplers). Adapters list their own sources in
# src/runtime/<dir>/.
target_sources(gp_core PRIVATE
  src/runtime/adapter.cpp
  src/runtime/app_metadata.cpp
  src/runtime/appid.cpp
  src/runtime/discovery.cpp
  src/runtime/driver.cpp
  src/runtime/kernel_log.cpp
  src/runtime/proc_exits.cpp
  src/runtime/profile_to_session.cpp
  src/runtime/registry.cpp
  src/runtime/remote/mapped_symbols.cpp
  src/runtime/remote/remote_memory.cpp
  src/runtime/remote/sampled_profile.cpp
  src/runtime/remote/sampling_clock.cpp
  src/runtime/root_path.cpp
  src/runtime/subprocess.cpp
  src/runtime/target_selection.cpp
  src/runtime/work_dir.cpp
)
