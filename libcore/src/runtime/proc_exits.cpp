// Task exits from the process events connector (see proc_exits.h).
#include "gp/runtime/proc_exits.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

namespace gp::runtime {
namespace {

std::string errno_text(const char* what) { return std::string(what) + ": " + strerror(errno); }

// The connector is registered in init_net only (drivers/connector/connector.c's cn_init): a
// thread of a process in another network namespace joins pid 1's for the socket.
void join_initial_net_namespace() {
  struct stat mine {
  }, init{};
  if (::stat("/proc/thread-self/ns/net", &mine) != 0 || ::stat("/proc/1/ns/net", &init) != 0 ||
      mine.st_ino == init.st_ino)
    return;
  gp::proc::UniqueFd ns(::open("/proc/1/ns/net", O_RDONLY | O_CLOEXEC));
  if (ns.valid()) ::setns(ns.get(), CLONE_NEWNET);
}

bool subscribe(int fd) {
  // nlmsghdr, then cn_msg (whose data is a flexible array), then the operation.
  alignas(nlmsghdr) char request[NLMSG_LENGTH(sizeof(cn_msg) + sizeof(uint32_t))] = {};
  auto* nl = reinterpret_cast<nlmsghdr*>(request);
  nl->nlmsg_len = sizeof request;
  nl->nlmsg_type = NLMSG_DONE;
  auto* cn = static_cast<cn_msg*>(NLMSG_DATA(nl));
  cn->id.idx = CN_IDX_PROC;
  cn->id.val = CN_VAL_PROC;
  cn->len = sizeof(uint32_t);
  uint32_t op = PROC_CN_MCAST_LISTEN;
  std::memcpy(cn->data, &op, sizeof op);
  return ::send(fd, request, sizeof request, 0) == static_cast<ssize_t>(sizeof request);
}

}  // namespace

Result<ProcExits> ProcExits::open() {
  join_initial_net_namespace();
  gp::proc::UniqueFd fd(
      ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR));
  if (!fd.valid()) return Error{errno_text("cannot open the process events connector")};
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = CN_IDX_PROC;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return Error{errno_text("cannot bind to the process events connector")};
  if (!subscribe(fd.get()))
    return Error{errno_text("cannot listen to the process events connector")};
  return ProcExits(std::move(fd));
}

bool ProcExits::read_new(const std::function<void(const ProcExit&)>& each) {
  alignas(nlmsghdr) char buf[4096];
  for (;;) {
    ssize_t n = ::recv(fd_.get(), buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      // ENOBUFS: events were dropped while the socket was full (gProfiler goes on, as the
      // next ones arrive); EAGAIN: none left.
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) return true;
      return false;
    }
    auto left = static_cast<size_t>(n);
    for (auto* nl = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(nl, left);
         nl = NLMSG_NEXT(nl, left)) {
      if (nl->nlmsg_type != NLMSG_DONE) continue;
      auto* cn = static_cast<cn_msg*>(NLMSG_DATA(nl));
      if (nl->nlmsg_len < NLMSG_LENGTH(sizeof(cn_msg) + offsetof(proc_event, event_data) +
                                       sizeof(proc_event::event_data.exit)))
        continue;
      proc_event ev{};
      std::memcpy(&ev, cn->data, std::min<size_t>(sizeof ev, cn->len));
      if (ev.what != proc_event::PROC_EVENT_EXIT) continue;
      each(ProcExit{ev.event_data.exit.process_pid, ev.event_data.exit.process_tgid,
                    ev.event_data.exit.exit_code});
    }
  }
}

}  // namespace gp::runtime
