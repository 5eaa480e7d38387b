# gp-runtime's Python adapters: gp's own CPython sampler (gp_python_adapter.cpp and the
# python_sampler / frame_walker / interpreter_locator / layout / line-table pieces) and py-spy.
target_sources(gp_core PRIVATE
  src/runtime/python/debug_offsets.cpp
  src/runtime/python/frame_walker.cpp
  src/runtime/python/gp_python_adapter.cpp
  src/runtime/python/interpreter_locator.cpp
  src/runtime/python/line_table.cpp
  src/runtime/python/package_versions.cpp
  src/runtime/python/py_spy_adapter.cpp
  src/runtime/python/pyperf_name.cpp
  src/runtime/python/py_spy_output.cpp
  src/runtime/python/python_layout.cpp
  src/runtime/python/python_sampler.cpp
  src/runtime/python/python_version.cpp
)
