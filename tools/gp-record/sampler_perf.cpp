// The perf_event ring-buffer sampler: the fallback when BPF cannot be used (no BPF support,
// locked down) and the rootless mode (--pids of the user's own processes). The kernel writes one
// record per sample (callchain included) into an mmapped ring per CPU; samples are aggregated
// here, in user space, so drains look the same as the BPF sampler's.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>

#include "perf_events.h"
#include "sampler.h"

namespace gp::record_tool {
namespace {

constexpr size_t kRingPages = 64;  // data pages per CPU ring (a power of two)

// One mmapped ring: the metadata page plus kRingPages data pages.
class Ring {
 public:
  Ring(void* base, size_t bytes) : base_(base), bytes_(bytes) {}
  Ring(Ring&& o) noexcept : base_(o.base_), bytes_(o.bytes_) { o.base_ = nullptr; }
  Ring(const Ring&) = delete;
  ~Ring() {
    if (base_ != nullptr) munmap(base_, bytes_);
  }
  // Calls fn(header, bytes) for each complete record, then frees the space.
  template <typename Fn>
  void consume(Fn&& fn);

 private:
  void* base_;
  size_t bytes_;
  std::vector<char> scratch_;
};

template <typename Fn>
void Ring::consume(Fn&& fn) {
  auto* meta = static_cast<perf_event_mmap_page*>(base_);
  const char* data = static_cast<const char*>(base_) + meta->data_offset;
  uint64_t size = meta->data_size;
  uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;
  while (tail + sizeof(perf_event_header) <= head) {
    perf_event_header hdr;
    for (size_t i = 0; i < sizeof(hdr); ++i)
      reinterpret_cast<char*>(&hdr)[i] = data[(tail + i) % size];
    if (hdr.size < sizeof(hdr) || tail + hdr.size > head) break;
    scratch_.resize(hdr.size);
    uint64_t off = tail % size;
    size_t first = std::min<uint64_t>(hdr.size, size - off);  // records may wrap around the end
    std::memcpy(scratch_.data(), data + off, first);
    std::memcpy(scratch_.data() + first, data, hdr.size - first);
    fn(hdr, scratch_.data());
    tail += hdr.size;
  }
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

std::string thread_comm(int32_t pid, int32_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  std::string comm;
  std::getline(in, comm);
  return comm;
}

std::vector<int32_t> threads_of(int32_t pid) {
  std::vector<int32_t> tids;
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] >= '0' && e->d_name[0] <= '9') tids.push_back(std::atoi(e->d_name));
    closedir(d);
  }
  return tids;
}

class PerfSampler final : public Sampler {
 public:
  explicit PerfSampler(const SamplerConfig& config) : config_(config) {}
  const char* name() const override { return "perf"; }
  Status open(std::string* hint);
  Status poll(int timeout_ms, const EventSink& on_event, const sigset_t* wait_mask) override;
  Status drain(const EventSink& on_event, const SampleSink& on_sample) override;
  void stop() override { disable_events(fds_); }
  std::vector<model::Counter> counters() override;

 private:
  Status open_on_cpu(perf_event_attr& attr, int pid, int cpu, unsigned long flags,
                     std::string* hint);
  void read_rings(const EventSink& on_event);
  void on_record(const perf_event_header& hdr, const char* body, const EventSink& on_event);
  void on_sample(const char* body, size_t size, const EventSink& on_event);

  SamplerConfig config_;
  std::vector<PerfFd> fds_;
  std::map<int, size_t> ring_of_cpu_;  // cpu -> index in rings_ (events on a cpu share its ring)
  std::vector<Ring> rings_;
  std::vector<int> ring_fds_;
  std::set<int32_t> tid_filter_;
  std::set<int32_t> seen_pids_;
  std::unordered_map<int32_t, std::string> comms_;    // tid -> comm
  std::map<std::string, record::RawSample> pending_;  // aggregated since the last drain
  uint64_t samples_ = 0, lost_ = 0, filtered_ = 0;
};

Status PerfSampler::open_on_cpu(perf_event_attr& attr, int pid, int cpu, unsigned long flags,
                                std::string* hint) {
  (void)flags;
  auto fd = open_perf_event(attr, pid, cpu, config_, hint);
  if (!fd) return fd.error();
  auto it = ring_of_cpu_.find(cpu);
  if (it != ring_of_cpu_.end()) {
    // Same CPU: write into that CPU's existing ring.
    if (ioctl(fd->get(), PERF_EVENT_IOC_SET_OUTPUT, ring_fds_[it->second]) != 0)
      return make_error("cannot share the perf ring on cpu " + std::to_string(cpu) + ": " +
                        std::strerror(errno));
  } else {
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t bytes = (kRingPages + 1) * page;
    void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd->get(), 0);
    if (base == MAP_FAILED) {
      if (errno == EPERM) *hint = "raise kernel.perf_event_mlock_kb, or run as root";
      return make_error("cannot map the perf ring on cpu " + std::to_string(cpu) + ": " +
                        std::strerror(errno));
    }
    ring_of_cpu_[cpu] = rings_.size();
    rings_.emplace_back(base, bytes);
    ring_fds_.push_back(fd->get());
  }
  fds_.push_back(std::move(*fd));
  return ok_status();
}

Status PerfSampler::open(std::string* hint) {
  auto base = sampling_attr(config_);
  if (!base) return base.error();
  perf_event_attr attr = *base;
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN;
  attr.comm = 1;
  attr.comm_exec = 1;  // PERF_RECORD_COMM with MISC_COMM_EXEC: re-snapshot on exec
  attr.task = 1;       // PERF_RECORD_EXIT: forget exited processes and threads
  attr.watermark = 1;
  attr.wakeup_watermark = static_cast<uint32_t>(kRingPages * sysconf(_SC_PAGESIZE) / 4);
  attr.exclude_callchain_kernel = config_.kernel_stacks ? 0 : 1;
  attr.exclude_callchain_user = config_.user_stacks ? 0 : 1;
  attr.exclude_user = config_.kernel_only ? 1 : 0;
  // Unprivileged users may not sample the kernel (kernel.perf_event_paranoid >= 2).
  attr.exclude_kernel = (geteuid() != 0 && !config_.kernel_only) ? 1 : 0;
  attr.exclude_hv = 1;
  std::vector<int> cpus = sampled_cpus(config_);
  std::vector<int32_t> targets;  // threads to open per CPU; empty: system-wide (pid -1)
  for (int32_t pid : config_.pids)
    for (int32_t tid : threads_of(pid)) targets.push_back(tid);
  for (int32_t tid : config_.tids) targets.push_back(tid), tid_filter_.insert(tid);
  if ((!config_.pids.empty() || !config_.tids.empty()) && targets.empty())
    return make_error("cannot sample: none of the given processes or threads exists");
  attr.inherit = config_.tids.empty() ? 1 : 0;  // threads started later by the targets
  if (!config_.cgroups.empty()) return make_error("--cgroup needs the BPF sampler");
  for (int cpu : cpus) {
    if (targets.empty()) {
      if (auto st = open_on_cpu(attr, -1, cpu, 0, hint); !st) {
        if (errno == ENODEV) continue;
        return st;
      }
      continue;
    }
    for (int32_t tid : targets)
      if (auto st = open_on_cpu(attr, tid, cpu, 0, hint); !st) {
        if (errno == ESRCH) continue;  // the thread ended meanwhile
        return st;
      }
  }
  if (fds_.empty()) return make_error("cannot sample: no perf event could be opened");
  return ok_status();
}

void PerfSampler::on_sample(const char* body, size_t size, const EventSink& on_event) {
  struct Head {
    uint32_t pid, tid, cpu, reserved;
    uint64_t nr;
  };
  if (size < sizeof(Head)) return;
  Head h;
  std::memcpy(&h, body, sizeof(h));
  if (size < sizeof(Head) + h.nr * 8) return;
  auto pid = static_cast<int32_t>(h.pid), tid = static_cast<int32_t>(h.tid);
  if ((tid == 0 && !config_.include_idle) || (!tid_filter_.empty() && !tid_filter_.count(tid))) {
    ++filtered_;
    return;
  }
  record::RawSample s;
  s.pid = pid;
  s.tid = tid;
  const char* ips = body + sizeof(Head);
  bool user = false;
  for (uint64_t i = 0; i < h.nr; ++i) {
    uint64_t ip;
    std::memcpy(&ip, ips + i * 8, 8);
    if (ip >= static_cast<uint64_t>(PERF_CONTEXT_MAX)) {  // context markers
      user = ip == static_cast<uint64_t>(PERF_CONTEXT_USER);
      continue;
    }
    (user ? s.user_ips : s.kernel_ips).push_back(ip);
  }
  if (config_.kernel_only && s.kernel_ips.empty()) {
    ++filtered_;
    return;
  }
  ++samples_;
  if (pid != 0 && seen_pids_.insert(pid).second) on_event(ProcessEvent{pid, false});
  auto [c, fresh] = comms_.try_emplace(tid);
  if (fresh) c->second = pid == 0 ? "swapper" : thread_comm(pid, tid);
  std::string key(reinterpret_cast<const char*>(&h), 8);
  key.append(ips, h.nr * 8);
  auto [it, inserted] = pending_.try_emplace(std::move(key));
  if (inserted) {
    s.comm = c->second;
    it->second = std::move(s);
  }
  ++it->second.count;
}

void PerfSampler::on_record(const perf_event_header& hdr, const char* body,
                            const EventSink& on_event) {
  body += sizeof(perf_event_header);
  size_t size = hdr.size - sizeof(perf_event_header);
  if (hdr.type == PERF_RECORD_SAMPLE) {
    on_sample(body, size, on_event);
  } else if (hdr.type == PERF_RECORD_LOST && size >= 16) {
    uint64_t lost;
    std::memcpy(&lost, body + 8, 8);
    lost_ += lost;
  } else if (hdr.type == PERF_RECORD_COMM && size > 8) {
    uint32_t ids[2];
    std::memcpy(ids, body, 8);
    comms_[static_cast<int32_t>(ids[1])] = std::string(body + 8, strnlen(body + 8, size - 8));
    if ((hdr.misc & PERF_RECORD_MISC_COMM_EXEC) && ids[0] == ids[1])
      on_event(ProcessEvent{static_cast<int32_t>(ids[0]), true});
  } else if (hdr.type == PERF_RECORD_EXIT && size >= 16) {
    uint32_t ids[4];  // pid, ppid, tid, ptid
    std::memcpy(ids, body, 16);
    auto pid = static_cast<int32_t>(ids[0]), tid = static_cast<int32_t>(ids[2]);
    comms_.erase(tid);
    if (pid == tid && pid != 0 && seen_pids_.erase(pid) != 0)
      on_event(ProcessEvent{pid, false, true});
  }
}

void PerfSampler::read_rings(const EventSink& on_event) {
  for (Ring& ring : rings_)
    ring.consume(
        [&](const perf_event_header& hdr, const char* rec) { on_record(hdr, rec, on_event); });
}

Status PerfSampler::poll(int timeout_ms, const EventSink& on_event, const sigset_t* wait_mask) {
  std::vector<pollfd> pfds;
  for (int fd : ring_fds_) pfds.push_back(pollfd{fd, POLLIN, 0});
  timespec timeout{timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
  if (::ppoll(pfds.data(), pfds.size(), timeout_ms < 0 ? nullptr : &timeout, wait_mask) < 0 &&
      errno != EINTR)
    return make_error(std::string("cannot wait for perf events: ") + std::strerror(errno));
  read_rings(on_event);
  return ok_status();
}

Status PerfSampler::drain(const EventSink& on_event, const SampleSink& on_sample) {
  read_rings(on_event);
  for (auto& [key, sample] : pending_) on_sample(sample);
  pending_.clear();
  return ok_status();
}

std::vector<model::Counter> PerfSampler::counters() {
  return {
      model::Counter{"samples.kernel", static_cast<int64_t>(samples_)},
      model::Counter{"samples.filtered", static_cast<int64_t>(filtered_)},
      model::Counter{"samples.lost", static_cast<int64_t>(lost_)},
  };
}

}  // namespace

Result<std::unique_ptr<Sampler>> open_perf_sampler(const SamplerConfig& config, std::string* hint) {
  auto sampler = std::make_unique<PerfSampler>(config);
  if (auto st = sampler->open(hint); !st) return st.error();
  return std::unique_ptr<Sampler>(std::move(sampler));
}

}  // namespace gp::record_tool
