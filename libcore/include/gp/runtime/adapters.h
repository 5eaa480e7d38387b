#pragma once
// Factories of gp-runtime's adapters. Each is implemented in its adapter's directory
// (libcore/src/runtime/<java|python|node|php|spies>/); the driver's registry
// (libcore/src/runtime/registry.cpp) maps --<runtime>-mode values to them.

#include <memory>

#include "gp/runtime/adapter.h"

namespace gp::runtime {

// Java (libcore/src/runtime/java/)
std::unique_ptr<Adapter> make_async_profiler_adapter();  // asprof / async-profiler on PATH
std::unique_ptr<Adapter> make_jfr_adapter();             // the target JDK's jcmd + jfr

// Python (libcore/src/runtime/python/)
std::unique_ptr<Adapter> make_py_spy_adapter();     // py-spy on PATH
std::unique_ptr<Adapter> make_gp_python_adapter();  // gp's own CPython 3.8-3.15 sampler

// Node (libcore/src/runtime/node/)
std::unique_ptr<Adapter> make_node_perf_adapter();         // --perf-basic-prof processes: maps only
std::unique_ptr<Adapter> make_node_attach_maps_adapter();  // turns perf maps on in a running node
std::unique_ptr<Adapter> make_node_inspector_adapter();    // JS stacks via the inspector Profiler

// Ruby (libcore/src/runtime/ruby/)
std::unique_ptr<Adapter> make_gp_ruby_adapter();  // gp's own CRuby 3.1 sampler

// PHP (libcore/src/runtime/php/)
std::unique_ptr<Adapter> make_gp_php_adapter();  // gp's own PHP 8.2 sampler

// Ruby, PHP, .NET (libcore/src/runtime/spies/)
std::unique_ptr<Adapter> make_rbspy_adapter();
std::unique_ptr<Adapter> make_phpspy_adapter();
std::unique_ptr<Adapter> make_dotnet_trace_adapter();

}  // namespace gp::runtime
