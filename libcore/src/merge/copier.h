#pragma once
// Copying samples between sessions (internal to libcore/src/merge): every id a sample reaches
// (stack → locations → functions, mappings) is re-interned in the destination, once per source id.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "gp/model/builder.h"
#include "gp/model/session.h"

namespace gp::merge::detail {

// The destination: a session, its builder, and location interning (the builder only interns
// single-line locations, and a resolved location can carry an inline chain).
class Target {
 public:
  explicit Target(model::Session& s) : builder_(s) {}
  model::SessionBuilder& builder() { return builder_; }
  model::Session& session() { return builder_.session(); }
  uint64_t location(const model::Location& remapped);

 private:
  model::SessionBuilder builder_;
  std::unordered_map<std::string, uint64_t> locations_;
};

class Copier {
 public:
  Copier(const model::Session& src, Target& dst) : src_(src), dst_(dst) {}
  // Pids of copied samples, mappings and processes go through this map (identity when absent).
  void renumber(int32_t from, int32_t to) { pids_[from] = to; }
  int32_t pid(int32_t p) const;

  uint64_t stack(uint64_t src_id);
  void sample(const model::Sample& s, uint64_t count);
  // Copies the newest process entry and the threads of pid (if the source has them).
  void process(int32_t src_pid);
  void process(const model::Process& p);
  void threads(int32_t src_pid);

 private:
  uint64_t location(uint64_t src_id);
  uint64_t function(uint64_t src_id);
  uint64_t mapping(uint64_t src_id);

  const model::Session& src_;
  Target& dst_;
  std::unordered_map<int32_t, int32_t> pids_;
  std::unordered_map<uint64_t, uint64_t> stacks_, locations_, functions_, mappings_;
};

}  // namespace gp::merge::detail
