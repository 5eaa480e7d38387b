#include "gp/model/session.h"

#include <time.h>

#include <fstream>

namespace gp::model {

namespace {

int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

void start_session_now(Header& header) {
  std::ifstream in("/proc/sys/kernel/random/uuid");
  std::getline(in, header.session_id);
  header.start_time_ns = clock_ns(CLOCK_REALTIME);
  header.monotonic_start_ns = clock_ns(CLOCK_MONOTONIC);
}

void Session::set_counter(const std::string& name, int64_t value) {
  for (auto& c : counters) {
    if (c.name == name) {
      c.value = value;
      return;
    }
  }
  counters.push_back({name, value});
}

int64_t Session::counter(const std::string& name) const {
  for (const auto& c : counters)
    if (c.name == name) return c.value;
  return 0;
}

uint64_t Session::total_samples() const {
  uint64_t total = 0;
  for (const auto& s : samples) total += s.count;
  return total;
}

TableCounts TableCounts::plus(const Session& e) const {
  return {processes + e.processes.size(),
          threads + e.threads.size(),
          mappings + e.mappings.size(),
          functions + e.functions.size(),
          locations + e.locations.size(),
          stacks + e.stacks.size(),
          kernel_symbols + e.kernel_symbols.size(),
          jit_maps + e.jit_maps.size()};
}

const Process* Session::find_process(int32_t pid) const {
  for (auto it = processes.rbegin(); it != processes.rend(); ++it)
    if (it->pid == pid) return &*it;
  return nullptr;
}

const char* to_string(FrameKind kind) {
  switch (kind) {
    case FrameKind::unknown:
      return "unknown";
    case FrameKind::native:
      return "native";
    case FrameKind::kernel:
      return "kernel";
    case FrameKind::java:
      return "java";
    case FrameKind::python:
      return "python";
    case FrameKind::ruby:
      return "ruby";
    case FrameKind::php:
      return "php";
    case FrameKind::dotnet:
      return "dotnet";
    case FrameKind::node:
      return "node";
    case FrameKind::go:
      return "go";
    case FrameKind::jit:
      return "jit";
    case FrameKind::python_native:
      return "python-native";
    case FrameKind::pseudo:
      return "pseudo";
    case FrameKind::interpreted:
      return "interpreted";
    case FrameKind::inlined:
      return "inlined";
  }
  return "unknown";
}

const char* to_string(SymbolStatus status) {
  switch (status) {
    case SymbolStatus::unsymbolized:
      return "unsymbolized";
    case SymbolStatus::resolved:
      return "resolved";
    case SymbolStatus::no_file:
      return "no-file";
    case SymbolStatus::build_id_mismatch:
      return "build-id-mismatch";
    case SymbolStatus::no_symbol:
      return "no-symbol";
    case SymbolStatus::unmapped:
      return "unmapped";
    case SymbolStatus::symbolic:
      return "symbolic";
  }
  return "unsymbolized";
}

const char* to_string(MappingKind kind) {
  switch (kind) {
    case MappingKind::user:
      return "user";
    case MappingKind::kernel:
      return "kernel";
    case MappingKind::module:
      return "module";
    case MappingKind::vdso:
      return "vdso";
    case MappingKind::anonymous:
      return "anonymous";
    case MappingKind::jit_map:
      return "jit-map";
  }
  return "user";
}

const char* to_string(SourceKind kind) {
  switch (kind) {
    case SourceKind::unknown:
      return "unknown";
    case SourceKind::system:
      return "system";
    case SourceKind::runtime:
      return "runtime";
    case SourceKind::imported:
      return "imported";
    case SourceKind::folded:
      return "folded";
    case SourceKind::merged:
      return "merged";
  }
  return "unknown";
}

}  // namespace gp::model
