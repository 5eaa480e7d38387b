#include "gp/model/builder.h"

#include <algorithm>
#include <cstring>

namespace gp::model {
namespace {

// Appends fixed-width binary fields to an interning key (keys never leave the process).
template <typename T>
void put(std::string& key, T v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_str(std::string& key, std::string_view s) {
  put(key, static_cast<uint32_t>(s.size()));
  key.append(s);
}

// The interning key of an address location: 'a', mapping id, address, kind, return flag.
constexpr size_t kAddressKeyBytes = 1 + 8 + 8 + sizeof(FrameKind) + 1;
std::string_view address_key(char (&key)[kAddressKeyBytes], const SessionBuilder::AddressFrame& f) {
  char* p = key;
  *p++ = 'a';
  std::memcpy(p, &f.mapping_id, 8);
  std::memcpy(p + 8, &f.address, 8);
  std::memcpy(p + 16, &f.kind, sizeof f.kind);
  std::memcpy(p + 16 + sizeof f.kind, &f.is_return_address, 1);
  return {key, kAddressKeyBytes};
}

}  // namespace

uint64_t SessionBuilder::intern(Table& table, uint64_t next_id, bool& inserted) {
  auto [id, fresh] = table.try_insert(key_, next_id);
  inserted = fresh;
  return *id;
}

uint64_t SessionBuilder::function(std::string_view name, std::string_view file_name,
                                  uint32_t start_line, std::string_view system_name,
                                  std::string_view package) {
  key_.clear();
  put_str(key_, name);
  put_str(key_, file_name);
  put_str(key_, system_name);
  put_str(key_, package);
  put(key_, start_line);
  bool inserted;
  uint64_t id = intern(functions_, base_.functions + s_.functions.size() + 1, inserted);
  if (inserted) {
    s_.functions.push_back({std::string(name), std::string(system_name), std::string(file_name),
                            start_line, std::string(package)});
  }
  return id;
}

uint64_t SessionBuilder::symbolic_location(FrameKind kind, uint64_t function_id, uint32_t line,
                                           uint64_t mapping_id) {
  key_.assign(1, 's');
  put(key_, kind);
  put(key_, function_id);
  put(key_, line);
  put(key_, mapping_id);
  bool inserted;
  uint64_t id = intern(locations_, base_.locations + s_.locations.size() + 1, inserted);
  if (inserted) {
    Location loc;
    loc.mapping_id = mapping_id;
    loc.kind = kind;
    loc.status = SymbolStatus::symbolic;
    loc.lines.push_back({function_id, line, 0, false});
    s_.locations.push_back(std::move(loc));
  }
  return id;
}


uint64_t SessionBuilder::address_location(uint64_t mapping_id, uint64_t address, FrameKind kind,
                                          bool is_return_address) {
  AddressFrame f{mapping_id, address, kind, is_return_address};
  char key[kAddressKeyBytes];
  std::string_view k = address_key(key, f);
  bool inserted;
  return intern_address(k, hash_bytes(k), f, inserted);
}

void SessionBuilder::address_locations(std::span<const AddressFrame> frames,
                                       std::vector<uint64_t>& ids, std::vector<uint8_t>* inserted) {
  // In batches whose keys and hashes stay on the stack; a call chain is rarely longer.
  constexpr size_t kBatch = 32;
  char keys[kBatch][kAddressKeyBytes];
  uint64_t hashes[kBatch];
  while (!frames.empty()) {
    const size_t n = std::min(frames.size(), kBatch);
    for (size_t i = 0; i < n; ++i) {
      hashes[i] = hash_bytes(address_key(keys[i], frames[i]));
      locations_.prefetch(hashes[i]);
    }
    for (size_t i = 0; i < n; ++i) locations_.prefetch_key(hashes[i]);
    for (size_t i = 0; i < n; ++i) {
      bool fresh;
      ids.push_back(intern_address({keys[i], kAddressKeyBytes}, hashes[i], frames[i], fresh));
      if (inserted) inserted->push_back(fresh);
    }
    frames = frames.subspan(n);
  }
}

uint64_t SessionBuilder::intern_address(std::string_view key, uint64_t h, const AddressFrame& f,
                                        bool& inserted) {
  auto [id, fresh] = locations_.try_insert(key, h, base_.locations + s_.locations.size() + 1);
  inserted = fresh;
  if (fresh) {
    Location loc;
    loc.mapping_id = f.mapping_id;
    loc.address = f.address;
    loc.kind = f.kind;
    loc.is_return_address = f.is_return_address;
    if (f.mapping_id != 0) {
      loc.file_offset = f.address + mapping_shift_.at(f.mapping_id);
    } else {
      loc.status = SymbolStatus::unmapped;
    }
    s_.locations.push_back(std::move(loc));
  }
  return *id;
}

uint64_t SessionBuilder::mapping(const Mapping& m) {
  key_.clear();
  put(key_, m.pid);
  put(key_, m.start);
  put(key_, m.end);
  put(key_, m.file_offset);
  put(key_, m.kind);
  put_str(key_, m.path);
  put_str(key_, m.build_id);
  bool inserted;
  uint64_t id = intern(mappings_, base_.mappings + s_.mappings.size() + 1, inserted);
  if (inserted) {
    s_.mappings.push_back(m);
    mapping_shift_[id] = m.file_offset - m.start;  // unsigned wrap-around is intended
  }
  return id;
}

uint64_t SessionBuilder::stack(const std::vector<uint64_t>& ids, StackEnd end) {
  key_.assign(reinterpret_cast<const char*>(ids.data()), ids.size() * sizeof(uint64_t));
  // A known end adds one byte: its key's length is no multiple of 8, so it never equals the key
  // of an unknown end (or of any other list of ids).
  if (end != StackEnd::unknown) key_.push_back(static_cast<char>(end));
  bool inserted;
  uint64_t id = intern(stacks_, base_.stacks + s_.stacks.size() + 1, inserted);
  if (inserted) s_.stacks.push_back({ids, end});
  return id;
}

void SessionBuilder::add_sample(int32_t pid, int32_t tid, uint64_t stack_id, uint64_t count,
                                uint64_t weight, int32_t cpu, std::string_view comm) {
  key_.clear();
  put(key_, pid);
  put(key_, tid);
  put(key_, stack_id);
  put(key_, cpu);
  key_.append(comm);
  bool inserted;
  uint64_t at = intern(sample_index_, s_.samples.size(), inserted);
  if (inserted) {
    s_.samples.push_back({pid, tid, stack_id, count, cpu, weight, std::string(comm)});
  } else {
    s_.samples[at].count += count;
    s_.samples[at].weight += weight;
  }
}

static bool same_process(const Process& a, const Process& b) {
  return a.pid == b.pid && a.ppid == b.ppid && a.ns_pid == b.ns_pid && a.comm == b.comm &&
         a.exe == b.exe && a.cmdline == b.cmdline && a.start_time_ns == b.start_time_ns &&
         a.uid == b.uid && a.cgroup == b.cgroup && a.container_id == b.container_id &&
         a.container_name == b.container_name && a.appid == b.appid &&
         a.app_metadata_json == b.app_metadata_json && a.exited == b.exited &&
         a.runtime == b.runtime && a.error_frame == b.error_frame;
}

void SessionBuilder::process(const Process& p) {
  auto [it, inserted] = newest_process_.try_emplace(p.pid, p);
  if (!inserted) {
    if (same_process(it->second, p)) return;
    it->second = p;
  }
  s_.processes.push_back(p);
}

void SessionBuilder::thread(int32_t tid, int32_t pid, std::string_view comm) {
  key_.clear();
  put(key_, tid);
  put(key_, pid);
  key_.append(comm);
  bool inserted;
  intern(threads_, 1, inserted);
  if (inserted) s_.threads.push_back({tid, pid, std::string(comm)});
}

TableCounts SessionBuilder::take_entries(Session& out) {
  TableCounts base = base_;
  base_ = base_.plus(s_);
  auto take = [](auto& from, auto& to) {
    to = std::move(from);
    from.clear();  // a moved-from vector is only "valid but unspecified"
    // Room for as many as this chunk took: the next chunk's (drain's) lists then grow without
    // moving what they hold, each time they double.
    from.reserve(to.size());
  };
  take(s_.processes, out.processes);
  take(s_.threads, out.threads);
  take(s_.mappings, out.mappings);
  take(s_.functions, out.functions);
  take(s_.locations, out.locations);
  take(s_.stacks, out.stacks);
  take(s_.samples, out.samples);
  take(s_.kernel_symbols, out.kernel_symbols);
  take(s_.jit_maps, out.jit_maps);
  sample_index_.clear();
  return base;
}

}  // namespace gp::model
