#include "unwind_announcer.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

extern "C" {
#include "profile.h"
}

namespace gp::record_tool {

Result<std::unique_ptr<UnwindAnnouncer>> UnwindAnnouncer::start(bpf_map* ring, Unwinder& unwinder) {
  std::unique_ptr<UnwindAnnouncer> a(new UnwindAnnouncer(unwinder));
  a->ring_.reset(ring_buffer__new(bpf_map__fd(ring), on_event, a.get(), nullptr));
  if (!a->ring_)
    return make_error(std::string("cannot create the unwinder's event ring buffer: ") +
                      std::strerror(errno));
  a->stop_event_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  a->wait_set_.reset(epoll_create1(EPOLL_CLOEXEC));
  if (!a->stop_event_.valid() || !a->wait_set_.valid())
    return make_error(std::string("cannot set up the unwinder's event wait: ") +
                      std::strerror(errno));
  for (int fd : {ring_buffer__epoll_fd(a->ring_.get()), a->stop_event_.get()}) {
    epoll_event interest{};
    interest.events = EPOLLIN;
    interest.data.fd = fd;
    if (epoll_ctl(a->wait_set_.get(), EPOLL_CTL_ADD, fd, &interest) != 0)
      return make_error(std::string("cannot set up the unwinder's event wait: ") +
                        std::strerror(errno));
  }
  a->thread_ = std::thread([p = a.get()] { p->run(); });
  return a;
}

UnwindAnnouncer::~UnwindAnnouncer() {
  stop_ = true;
  const uint64_t one = 1;
  if (thread_.joinable()) {
    [[maybe_unused]] ssize_t written =
        ::write(stop_event_.get(), &one, sizeof(one));  // cannot fail once
    thread_.join();
  }
}

int UnwindAnnouncer::on_event(void* ctx, void* data, size_t size) {
  if (size < sizeof(uint32_t)) return 0;
  uint32_t news;
  std::memcpy(&news, data, sizeof(news));
  auto* self = static_cast<UnwindAnnouncer*>(ctx);
  const auto pid = static_cast<int32_t>(news & ~GP_UNWIND_NEWS_EXEC);
  // An exec: the old image's tables go before any read asked for after it loads the new one's.
  if (news & GP_UNWIND_NEWS_EXEC) self->unwinder_.forget(pid, false);
  else self->read(pid, 1);
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

// Sleeps until the ring has records, the destructor writes stop_event_, or timeout_ms (-1: no
// limit) passes; then reads what the ring holds.
void UnwindAnnouncer::wait(int timeout_ms) {
  epoll_event ready[2];
  epoll_wait(wait_set_.get(), ready, 2, timeout_ms);  // EINTR: consume and look again
  ring_buffer__consume(ring_.get());
}

void UnwindAnnouncer::run() {
  while (!stop_) {
    int timeout_ms = -1;
    if (!again_.empty())
      timeout_ms = static_cast<int>(std::max<int64_t>(
          0, std::chrono::ceil<std::chrono::milliseconds>(again_.front().due -
                                                          std::chrono::steady_clock::now())
                 .count()));
    wait(timeout_ms);
    const auto now = std::chrono::steady_clock::now();
    while (!again_.empty() && again_.front().due <= now) {
      LookAgain due = again_.front();
      again_.pop_front();
      read(due.pid, due.reads);
    }
  }
}

}  // namespace gp::record_tool
