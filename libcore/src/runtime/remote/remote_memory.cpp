// process_vm_readv wrapper (see remote_memory.h).
#include "runtime/remote/remote_memory.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

namespace gp::runtime::remote {

ReadStatus RemoteMemory::failed(ssize_t got) {
  int err = got < 0 ? errno : EFAULT;  // a short read means the range ended in unmapped memory
  last_failure_ = err == ESRCH                      ? ReadStatus::gone
                  : (err == EPERM || err == EACCES) ? ReadStatus::denied
                                                    : ReadStatus::fault;
  last_error_ = std::strerror(err);
  return last_failure_;
}

ReadStatus RemoteMemory::read(uint64_t address, void* out, size_t size) {
  ++reads_;
  if (size == 0) return ReadStatus::ok;
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  ssize_t n = process_vm_readv(pid_, &local, 1, &remote, 1, 0);
  if (n == static_cast<ssize_t>(size)) return ReadStatus::ok;
  return failed(n);
}

ReadStatus RemoteMemory::read_many(std::span<const ReadRequest> requests) {
  constexpr size_t kMaxPieces = IOV_MAX;
  std::vector<iovec> local, remote;
  for (size_t start = 0; start < requests.size(); start += kMaxPieces) {
    local.clear();
    remote.clear();
    size_t total = 0;
    for (const auto& r : requests.subspan(start, std::min(kMaxPieces, requests.size() - start))) {
      if (r.size == 0) continue;
      local.push_back({r.out, r.size});
      remote.push_back({reinterpret_cast<void*>(r.address), r.size});
      total += r.size;
    }
    if (total == 0) continue;
    ++reads_;
    ssize_t n = process_vm_readv(pid_, local.data(), local.size(), remote.data(), remote.size(), 0);
    if (n != static_cast<ssize_t>(total)) return failed(n);
  }
  return ReadStatus::ok;
}

}  // namespace gp::runtime::remote
