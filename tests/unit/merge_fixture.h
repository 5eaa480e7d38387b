#pragma once
// Sessions for gp-merge's unit tests, written as gProfiler's collapsed lines: "f1;f2;k_[k]" is
// a stack root first, "_[k]" marks kernel frames, "_[p]"/"_[j]" runtime frames, a "[Profiling
// x: y]" frame a pseudo frame. Built with SessionBuilder, as producers do.

#include <string>
#include <vector>

#include "gp/fold/stacks.h"
#include "gp/model/builder.h"

namespace gp::test::merge_fixture {

using model::FrameKind;

inline FrameKind kind_of(std::string& name) {
  static const std::pair<const char*, FrameKind> kSuffixes[] = {
      {"_[k]", FrameKind::kernel}, {"_[p]", FrameKind::python}, {"_[j]", FrameKind::java}};
  for (const auto& [suffix, kind] : kSuffixes) {
    std::string s = suffix;
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      name.resize(name.size() - s.size());
      return kind;
    }
  }
  if (name.rfind("[Profiling ", 0) == 0) return FrameKind::pseudo;
  return FrameKind::native;
}

// Adds `count` samples of pid/tid with the root-first stack "a;b;c_[k]".
inline void add(model::SessionBuilder& b, int32_t pid, const std::string& stack, uint64_t count,
                int32_t tid = 0) {
  std::vector<uint64_t> ids;
  size_t start = 0;
  while (start <= stack.size()) {
    size_t end = stack.find(';', start);
    if (end == std::string::npos) end = stack.size();
    std::string name = stack.substr(start, end - start);
    FrameKind kind = kind_of(name);
    ids.insert(ids.begin(), b.symbolic_location(kind, b.function(name)));
    start = end + 1;
  }
  b.add_sample(pid, tid == 0 ? pid : tid, b.stack(ids), count);
}

inline model::Process process(int32_t pid, const std::string& comm) {
  model::Process p;
  p.pid = pid;
  p.comm = comm;
  return p;
}

inline model::Session session(model::SourceKind source, const std::string& host = "h1",
                              const std::string& mode = "fp") {
  model::Session s;
  s.header.source = source;
  s.header.host.hostname = host;
  s.header.session_id = host + "-" + model::to_string(source) + "-" + mode;
  s.header.sampling.mode = mode;
  s.header.symbolized = true;
  return s;
}

inline std::string text(const fold::FoldedStack& st) {
  std::string out;
  for (const auto& f : st.frames) {
    if (!out.empty()) out += ';';
    out += f.name + fold::kind_suffix(f.kind);
  }
  return out + " " + std::to_string(st.count);
}

// The archive folded as gp-fold would (comm first), one "stack count" string per line.
inline std::vector<std::string> folded(const model::Archive& a) {
  std::vector<std::string> out;
  for (const auto& st : fold::fold_stacks(a, {})) out.push_back(text(st));
  return out;
}

inline uint64_t total(const model::Archive& a, int32_t pid = -1) {
  uint64_t n = 0;
  for (const auto& s : a.sessions)
    for (const auto& x : s.samples)
      if (pid < 0 || x.pid == pid) n += x.count;
  return n;
}

inline model::Archive archive_of(model::Session s) {
  model::Archive a;
  a.sessions.push_back(std::move(s));
  return a;
}

}  // namespace gp::test::merge_fixture
