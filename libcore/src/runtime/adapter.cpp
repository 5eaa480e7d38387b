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

void add_thread_frames(Profile& profile) {
  for (Stack& s : profile.stacks) {
    if (s.tid == 0 && s.thread_name.empty()) continue;
    std::string text = "[" + s.thread_name;
    if (s.tid != 0) text += (s.thread_name.empty() ? "tid=" : " tid=") + std::to_string(s.tid);
    text += ']';
    Frame f;
    f.kind = model::FrameKind::pseudo;
    f.name = std::move(text);
    s.frames.insert(s.frames.begin(), std::move(f));
  }
}

}  // namespace gp::runtime
