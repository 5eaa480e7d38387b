#include "copier.h"

namespace gp::merge::detail {
namespace {

template <typename T>
void put(std::string& key, T v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Memoized remap of a 1-based id; 0 (none) and out-of-range ids map to 0.
template <typename F>
uint64_t remap(std::unordered_map<uint64_t, uint64_t>& memo, uint64_t id, size_t size, F make) {
  if (id == 0 || id > size) return 0;
  auto it = memo.find(id);
  if (it != memo.end()) return it->second;
  uint64_t out = make();
  memo.emplace(id, out);
  return out;
}

}  // namespace

uint64_t Target::location(const model::Location& l) {
  std::string key;
  put(key, l.mapping_id);
  put(key, l.address);
  put(key, l.file_offset);
  put(key, l.kind);
  put(key, l.status);
  put(key, l.is_return_address);
  for (const model::Line& line : l.lines) {
    put(key, line.function_id);
    put(key, line.line);
    put(key, line.column);
    put(key, line.inlined);
  }
  auto [it, inserted] = locations_.try_emplace(std::move(key), session().locations.size() + 1);
  if (inserted) session().locations.push_back(l);
  return it->second;
}

int32_t Copier::pid(int32_t p) const {
  auto it = pids_.find(p);
  return it == pids_.end() ? p : it->second;
}

uint64_t Copier::function(uint64_t id) {
  return remap(functions_, id, src_.functions.size(), [&] {
    const model::Function& f = src_.function(id);
    return dst_.builder().function(f.name, f.file_name, f.start_line, f.system_name, f.package);
  });
}

uint64_t Copier::mapping(uint64_t id) {
  return remap(mappings_, id, src_.mappings.size(), [&] {
    model::Mapping m = src_.mapping(id);
    m.pid = pid(m.pid);
    return dst_.builder().mapping(m);
  });
}

uint64_t Copier::location(uint64_t id) {
  return remap(locations_, id, src_.locations.size(), [&] {
    model::Location l = src_.location(id);
    l.mapping_id = mapping(l.mapping_id);
    for (model::Line& line : l.lines) line.function_id = function(line.function_id);
    return dst_.location(l);
  });
}

uint64_t Copier::stack(uint64_t id) {
  return remap(stacks_, id, src_.stacks.size(), [&] {
    std::vector<uint64_t> ids;
    for (uint64_t loc : src_.stack(id).location_ids) ids.push_back(location(loc));
    return dst_.builder().stack(ids, src_.stack(id).end);
  });
}

void Copier::sample(const model::Sample& s, uint64_t count) {
  if (count == 0) return;
  dst_.builder().add_sample(pid(s.pid), s.tid == s.pid ? pid(s.tid) : s.tid, stack(s.stack_id),
                            count, s.weight, s.cpu, s.comm);
}

void Copier::process(const model::Process& p) {
  model::Process copy = p;
  copy.pid = pid(p.pid);
  dst_.builder().process(copy);
}

void Copier::process(int32_t src_pid) {
  if (const model::Process* p = src_.find_process(src_pid)) process(*p);
  threads(src_pid);
}

void Copier::threads(int32_t src_pid) {
  for (const model::Thread& t : src_.threads) {
    if (t.pid == src_pid)
      dst_.builder().thread(t.tid == t.pid ? pid(t.tid) : t.tid, pid(t.pid), t.comm);
  }
}

}  // namespace gp::merge::detail
