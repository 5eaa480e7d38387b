target_sources(gp_core PRIVATE
  src/proc/cmdline.cpp
  src/proc/container.cpp
  src/proc/host_info.cpp
  src/proc/kallsyms.cpp
  src/proc/mappings.cpp
  src/proc/perf_map.cpp
  src/proc/proc_files.cpp
  src/proc/process.cpp
)
