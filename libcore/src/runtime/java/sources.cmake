# gp-runtime's Java adapters: JFR through the target JDK's jcmd/jfr, and async-profiler (asprof).
target_sources(gp_core PRIVATE
  src/runtime/java/ap_collapsed.cpp
  src/runtime/java/async_profiler_adapter.cpp
  src/runtime/java/attach_socket.cpp
  src/runtime/java/jfr_adapter.cpp
  src/runtime/java/jfr_samples.cpp
  src/runtime/java/jvm_flags.cpp
  src/runtime/java/jvm_process.cpp
  src/runtime/java/jvm_session.cpp
  src/runtime/java/safemode.cpp
  src/runtime/java/safemode_watch.cpp
  src/runtime/java/tool_runner.cpp
  src/runtime/java/stack_table.cpp
  src/runtime/java/target_dir.cpp
)
