// Shared helpers of the adapter contract (gp/runtime/adapter.h).
#include "gp/runtime/adapter.h"

namespace gp::runtime {

std::string_view runtime_name(Runtime r) {
  switch (r) {
    case Runtime::java:
      return "java";
    case Runtime::python:
      return "python";
    case Runtime::ruby:
      return "ruby";
    case Runtime::php:
      return "php";
    case Runtime::dotnet:
      return "dotnet";
    case Runtime::node:
      return "node";
  }
  return "unknown";
}

// gProfiler's error frames (gprofiler.md §9.2): the whole frame text, bracketed.
std::string error_frame(std::string_view reason) {
  return "[Profiling error: " + std::string(reason) + "]";
}

std::string skip_frame(std::string_view reason) {
  return "[Profiling skipped: " + std::string(reason) + "]";
}

}  // namespace gp::runtime
