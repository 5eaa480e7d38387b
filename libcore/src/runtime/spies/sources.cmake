# gp-runtime's Ruby, PHP and .NET adapters: rbspy, phpspy and dotnet-trace run as tools.
target_sources(gp_core PRIVATE
  src/runtime/spies/rbspy_output.cpp
  src/runtime/spies/phpspy_output.cpp
  src/runtime/spies/speedscope_input.cpp
  src/runtime/spies/spy_run.cpp
  src/runtime/spies/rbspy_adapter.cpp
  src/runtime/spies/phpspy_adapter.cpp
  src/runtime/spies/dotnet_trace_adapter.cpp
)
