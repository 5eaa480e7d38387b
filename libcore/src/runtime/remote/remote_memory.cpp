// process_vm_readv wrapper (see remote_memory.h).
#include "runtime/remote/remote_memory.h"

#include <sys/uio.h>

#include <cerrno>
#include <cstring>

namespace gp::runtime::remote {

ReadStatus RemoteMemory::read(uint64_t address, void* out, size_t size) {
  ++reads_;
  if (size == 0) return ReadStatus::ok;
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  ssize_t n = process_vm_readv(pid_, &local, 1, &remote, 1, 0);
  if (n == static_cast<ssize_t>(size)) return ReadStatus::ok;
  int err = n < 0 ? errno : EFAULT;  // a short read means the range ended in unmapped memory
  last_failure_ = err == ESRCH                      ? ReadStatus::gone
                  : (err == EPERM || err == EACCES) ? ReadStatus::denied
                                                    : ReadStatus::fault;
  last_error_ = std::strerror(err);
  return last_failure_;
}

}  // namespace gp::runtime::remote
