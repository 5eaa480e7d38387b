#include "unwind_announcer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace gp::record_tool {

Result<std::unique_ptr<UnwindAnnouncer>> UnwindAnnouncer::start(bpf_map* ring, Unwinder& unwinder) {
  std::unique_ptr<UnwindAnnouncer> a(new UnwindAnnouncer(unwinder));
  a->ring_.reset(ring_buffer__new(bpf_map__fd(ring), on_event, a.get(), nullptr));
  if (!a->ring_)
    return make_error(std::string("cannot create the unwinder's event ring buffer: ") +
                      std::strerror(errno));
  a->thread_ = std::thread([p = a.get()] { p->run(); });
  return a;
}

UnwindAnnouncer::~UnwindAnnouncer() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

int UnwindAnnouncer::on_event(void* ctx, void* data, size_t size) {
  if (size < sizeof(uint32_t)) return 0;
  uint32_t pid;
  std::memcpy(&pid, data, sizeof(pid));
  static_cast<UnwindAnnouncer*>(ctx)->read(static_cast<int32_t>(pid), 1);
  return 0;
}

void UnwindAnnouncer::read(int32_t pid, int reads) {
  // A process gone meanwhile has nothing to load (the recorder forgets it).
  auto maps = proc::executable_mappings(pid, proc::SnapshotOptions{}, &cache_);
  if (!maps || maps->empty()) return;
  unwinder_.on_mappings(pid, *maps);
  if (reads < kMaxReads && proc::loader_still_mapping(*maps))
    again_.push_back(LookAgain{std::chrono::steady_clock::now() + kLookAgain, pid, reads + 1});
}

void UnwindAnnouncer::run() {
  // Polled with a short timeout: stop_ is seen within it, and the next look-again is due.
  constexpr auto kPoll = std::chrono::milliseconds(50);
  while (!stop_) {
    auto wait = kPoll;
    if (!again_.empty())
      wait = std::clamp(std::chrono::ceil<std::chrono::milliseconds>(
                            again_.front().due - std::chrono::steady_clock::now()),
                        std::chrono::milliseconds(0), kPoll);
    ring_buffer__poll(ring_.get(), static_cast<int>(wait.count()));
    const auto now = std::chrono::steady_clock::now();
    while (!again_.empty() && again_.front().due <= now) {
      LookAgain due = again_.front();
      again_.pop_front();
      read(due.pid, due.reads);
    }
  }
}

}  // namespace gp::record_tool
