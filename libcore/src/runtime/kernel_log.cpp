// The kernel log as gProfiler's Java safemode reads it (see kernel_log.h).
#include "gp/runtime/kernel_log.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <cctype>

namespace gp::runtime {
namespace {

constexpr size_t kCommMax = 15;  // TASK_COMM_LEN - 1

bool eat(std::string_view& s, std::string_view literal) {
  if (s.substr(0, literal.size()) != literal) return false;
  s.remove_prefix(literal.size());
  return true;
}

// One or more characters of `digits` ("0123456789" or lowercase hex), as the patterns' \d+ and
// [0-9a-f]+.
bool eat_run(std::string_view& s, std::string_view digits) {
  size_t n = 0;
  while (n < s.size() && digits.find(s[n]) != std::string_view::npos) ++n;
  if (n == 0) return false;
  s.remove_prefix(n);
  return true;
}

constexpr std::string_view kDec = "0123456789";
constexpr std::string_view kHex = "0123456789abcdef";

int to_pid(std::string_view digits) {
  long v = 0;
  for (char c : digits) {
    v = v * 10 + (c - '0');
    if (v > 0x7fffffff) return 0;
  }
  return static_cast<int>(v);
}

// "total-vm:NkB, anon-rss:NkB, file-rss:NkB, shmem-rss:NkB": the fields gProfiler's
// KILLED_PROCESS requires after the comm (later kernels print more after them).
bool oom_sizes(std::string_view s) {
  for (std::string_view field : {"total-vm:", ", anon-rss:", ", file-rss:", ", shmem-rss:"}) {
    if (!eat(s, field) || !eat_run(s, kDec) || !eat(s, "kB")) return false;
  }
  return true;
}

// KILLED_PROCESS: "Killed process (\d+) \((.{0,15})\) total-vm:..." anywhere in the message.
std::optional<KernelEvent> oom_kill(std::string_view m) {
  constexpr std::string_view kKilled = "Killed process ";
  for (size_t at = m.find(kKilled); at != std::string_view::npos; at = m.find(kKilled, at + 1)) {
    std::string_view s = m.substr(at + kKilled.size());
    std::string_view pid = s;
    if (!eat_run(s, kDec)) continue;
    pid = pid.substr(0, pid.size() - s.size());
    if (!eat(s, " (")) continue;
    // The comm is at most 15 characters and may itself hold ") ": the longest that fits, as
    // the pattern's greedy .{0,15}.
    for (size_t len = std::min(kCommMax, s.size()) + 1; len-- > 0;) {
      std::string_view rest = s.substr(len);
      if (eat(rest, ") ") && oom_sizes(rest))
        return KernelEvent{KernelEventKind::oom_kill, to_pid(pid), std::string(s.substr(0, len))};
    }
  }
  return std::nullopt;
}

// SHOW_SIGNAL_X86's tail after "COMM[PID]": ":? DESC ip[: ]HEX sp[: ]HEX error[: ]HEX" (fault.c's
// show_signal_msg "segfault at ADDR ip HEX sp HEX error N", traps.c's show_signal
// "DESC ip:HEX sp:HEX error:N").
bool x86_tail(std::string_view s) {
  eat(s, ":");
  if (!eat(s, " ")) return false;
  for (size_t at = s.find(" ip"); at != std::string_view::npos; at = s.find(" ip", at + 1)) {
    std::string_view r = s.substr(at + 3);
    auto sep = [&r] { return eat(r, ":") || eat(r, " "); };
    if (sep() && eat_run(r, kHex) && eat(r, " sp") && sep() && eat_run(r, kHex) &&
        eat(r, " error") && sep() && eat_run(r, kHex))
      return true;
  }
  return false;
}

// SHOW_SIGNAL_AARCH64's tail after "COMM[PID]": ": unhandled exception: [DESC ]in VMA" where VMA
// ends in "[HEX+HEX]" (arm64_show_signal, with print_vma_addr's " in %s[%lx+%lx]").
bool arm64_tail(std::string_view s) {
  if (!eat(s, ": unhandled exception: ")) return false;
  size_t in = s.substr(0, 3) == "in " ? 0 : s.find(" in ");
  if (in == std::string_view::npos) return false;
  std::string_view vma = s.substr(in + (in == 0 ? 3 : 4));
  for (size_t b = vma.find('[', 1); b != std::string_view::npos; b = vma.find('[', b + 1)) {
    std::string_view r = vma.substr(b + 1);
    if (eat_run(r, kHex) && eat(r, "+") && eat_run(r, kHex) && eat(r, "]")) return true;
  }
  return false;
}

// "[traps: ]COMM[PID]...": the first "[PID]" whose tail is an x86 or arm64 signal report.
std::optional<KernelEvent> fatal_signal(std::string_view m) {
  for (size_t b = m.find('['); b != std::string_view::npos; b = m.find('[', b + 1)) {
    std::string_view s = m.substr(b + 1);
    std::string_view pid = s;
    if (!eat_run(s, kDec)) continue;
    pid = pid.substr(0, pid.size() - s.size());
    if (!eat(s, "]") || !(x86_tail(s) || arm64_tail(s))) continue;
    // The comm: what precedes "[PID]" after the optional "traps: ", its last 15 characters.
    size_t from = m.substr(0, 7) == "traps: " && b >= 7 && b - 7 <= kCommMax ? 7
                  : b > kCommMax                                             ? b - kCommMax
                                                                             : 0;
    return KernelEvent{KernelEventKind::fatal_signal, to_pid(pid),
                       std::string(m.substr(from, b - from))};
  }
  return std::nullopt;
}

}  // namespace

std::string_view kmsg_message(std::string_view record) {
  size_t semi = record.find(';');
  if (semi != std::string_view::npos) record.remove_prefix(semi + 1);
  return record.substr(0, record.find('\n'));
}

std::optional<KernelEvent> parse_kernel_event(std::string_view message) {
  if (auto oom = oom_kill(message)) return oom;
  return fatal_signal(message);
}

Result<KernelLog> KernelLog::open(const std::string& path) {
  gp::proc::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return Error{"cannot read '" + path + "': " + strerror(errno)};
  // From the end: the messages logged before gp started are not its concern (gProfiler's
  // DevKmsgProvider seeks to the end too).
  if (::lseek(fd.get(), 0, SEEK_END) < 0)
    return Error{"cannot seek to the end of '" + path + "': " + strerror(errno)};
  return KernelLog(std::move(fd));
}

unsigned KernelLog::read_new(const std::function<void(std::string_view message)>& each) {
  unsigned missed = 0;
  // One read is one record; 8 KiB is the kernel's limit on a record (CONSOLE_EXT_LOG_MAX).
  char record[8192];
  for (;;) {
    ssize_t n = ::read(fd_.get(), record, sizeof record);
    if (n > 0) {
      each(kmsg_message(std::string_view(record, static_cast<size_t>(n))));
    } else if (n < 0 && errno == EPIPE) {
      ++missed;  // the next read gets the oldest record still kept
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return missed;  // EAGAIN: nothing more for now
    }
  }
}

}  // namespace gp::runtime
