// Session assembly for gp-record: raw sampled addresses -> normalized archive tables.
#include "gp/record/assembler.h"

#include <algorithm>
#include <limits>

namespace gp::record {

namespace {
constexpr size_t kMaxUnmappedIps = 4096;  // per process
}  // namespace

model::Mapping kernel_mapping(const std::string& kernel_build_id) {
  model::Mapping m;
  m.pid = 0;
  m.start = 0;
  m.end = std::numeric_limits<uint64_t>::max();
  m.file_offset = 0;
  m.path = "[kernel.kallsyms]";
  m.build_id = kernel_build_id;
  m.kind = model::MappingKind::kernel;
  return m;
}

SessionAssembler::SessionAssembler(ProcessSource& source, std::string kernel_build_id)
    : source_(source), kernel_build_id_(std::move(kernel_build_id)) {}

void SessionAssembler::begin_session(model::Session& session) {
  if (session_ != nullptr) {
    // Forget processes the previous session never sampled (exited, idle or only announced), so
    // memory stays flat over days of --continuous; one that shows up again is snapshotted anew.
    for (auto it = processes_.begin(); it != processes_.end();)
      it = sampled_pids_.count(it->first) ? std::next(it) : processes_.erase(it);
  }
  session_ = &session;
  builder_ = std::make_unique<model::SessionBuilder>(session);
  written_generation_.clear();
  resnapshotted_this_drain_.clear();
  kernel_addresses_.clear();
  sampled_pids_.clear();
  kernel_mapping_id_ = 0;
}

void SessionAssembler::take_snapshot(TrackedProcess& p, int32_t pid) {
  ++snapshots_;
  auto meta = source_.snapshot(pid);
  if (!meta) {
    // Gone already: keep what an earlier snapshot (or the sample) told us.
    p.meta.pid = pid;
    p.meta.exited = true;
    p.exec_pending = false;
    return;
  }
  auto maps = source_.mappings(pid);
  p.meta = std::move(*meta);
  if (maps) {
    if (p.have_snapshot) p.previous_mappings = std::move(p.mappings);  // exec: keep the old image
    p.mappings = std::move(*maps);
    std::sort(p.mappings.begin(), p.mappings.end(),
              [](const model::Mapping& a, const model::Mapping& b) { return a.start < b.start; });
  }
  p.have_snapshot = true;
  p.exec_pending = false;
  p.unmapped_ips.clear();  // a new image
  ++p.generation;
}

void SessionAssembler::on_process_event(int32_t pid, bool exec) {
  if (pid <= 0) return;
  if (exec) {
    auto it = processes_.find(pid);
    if (it != processes_.end() && it->second.have_snapshot) it->second.exec_pending = true;
    return;
  }
  auto [it, inserted] = processes_.try_emplace(pid);
  if (inserted || !it->second.have_snapshot || it->second.exec_pending) take_snapshot(it->second, pid);
}

TrackedProcess& SessionAssembler::track(int32_t pid, const std::string& comm) {
  auto [it, inserted] = processes_.try_emplace(pid);
  TrackedProcess& p = it->second;
  // The announcement was lost or not sent, or the process exec'd since its snapshot (samples
  // of the old image drained now still find it in previous_mappings).
  if (pid > 0 && (inserted || p.exec_pending)) take_snapshot(p, pid);
  if (p.meta.pid == 0) {
    p.meta.pid = pid;
    p.meta.ns_pid = pid;
  }
  if (p.meta.comm.empty() && pid == 0) p.meta.comm = "swapper";
  if (p.meta.comm.empty()) p.meta.comm = comm;
  return p;
}

const model::Mapping* SessionAssembler::find_mapping(const std::vector<model::Mapping>& maps, uint64_t ip) {
  auto it = std::upper_bound(maps.begin(), maps.end(), ip,
                             [](uint64_t a, const model::Mapping& m) { return a < m.start; });
  if (it == maps.begin()) return nullptr;
  --it;
  return ip < it->end ? &*it : nullptr;
}

uint64_t SessionAssembler::user_location(TrackedProcess& p, int32_t pid, uint64_t ip, bool is_return) {
  const model::Mapping* m = find_mapping(p.mappings, ip);
  if (m == nullptr && pid > 0 && !p.unmapped_ips.contains(ip) && resnapshotted_this_drain_.insert(pid).second) {
    // Probably a library loaded after the last snapshot (dlopen): look again, once per drain.
    ++resnapshots_;
    auto maps = source_.mappings(pid);
    if (maps) {
      p.mappings = std::move(*maps);
      std::sort(p.mappings.begin(), p.mappings.end(),
                [](const model::Mapping& a, const model::Mapping& b) { return a.start < b.start; });
    }
    m = find_mapping(p.mappings, ip);
  }
  if (m == nullptr) m = find_mapping(p.previous_mappings, ip);  // taken before the last exec
  if (m == nullptr && pid > 0 && resnapshotted_this_drain_.contains(pid)) {
    if (p.unmapped_ips.size() >= kMaxUnmappedIps) p.unmapped_ips.clear();  // a bound, not a cache policy
    p.unmapped_ips.insert(ip);  // the mappings read this drain do not cover it
  }
  uint64_t mapping_id = m ? builder_->mapping(*m) : 0;
  return builder_->address_location(mapping_id, ip, model::FrameKind::native, is_return);
}

uint64_t SessionAssembler::kernel_location(uint64_t ip, bool is_return) {
  if (kernel_mapping_id_ == 0) kernel_mapping_id_ = builder_->mapping(kernel_mapping(kernel_build_id_));
  kernel_addresses_.insert(ip);
  return builder_->address_location(kernel_mapping_id_, ip, model::FrameKind::kernel, is_return);
}

void SessionAssembler::add(const RawSample& sample) {
  if (sample.count == 0 || (sample.user_ips.empty() && sample.kernel_ips.empty())) return;
  TrackedProcess& p = track(sample.pid, sample.comm);
  std::vector<uint64_t> ids;
  ids.reserve(sample.kernel_ips.size() + sample.user_ips.size());
  // Leaf first, kernel frames before user frames (formats/archive.capnp, Stack).
  for (size_t i = 0; i < sample.kernel_ips.size(); ++i) ids.push_back(kernel_location(sample.kernel_ips[i], i > 0));
  for (size_t i = 0; i < sample.user_ips.size(); ++i)
    ids.push_back(user_location(p, sample.pid, sample.user_ips[i], i > 0));

  auto [gen, first] = written_generation_.try_emplace(sample.pid, p.generation);
  if (first || gen->second != p.generation) {
    builder_->process(p.meta);
    gen->second = p.generation;
  }
  builder_->thread(sample.tid, sample.pid, sample.comm);
  builder_->add_sample(sample.pid, sample.tid, builder_->stack(ids), sample.count, 0, sample.cpu);
  sampled_pids_.insert(sample.pid);
}

void SessionAssembler::end_drain() {
  resnapshotted_this_drain_.clear();
  if (builder_) builder_->forget_samples();
}

}  // namespace gp::record
