#pragma once
// Opening a file for writing as root in a directory other users can write (/tmp, /var/tmp),
// without letting them choose what gets written. gp applies the kernel's fs.protected_symlinks
// and fs.protected_regular rules itself, since a host may have them off:
//  - in a sticky, world-writable directory, a symbolic link is followed only when it belongs to
//    the caller (effective uid) or to the directory's owner;
//  - there, with O_CREAT, an existing file is opened only when it belongs to the caller or to
//    the directory's owner (a planted file, or a hard link to someone else's file, is refused).
// Elsewhere paths are opened as open(2) would. Only the last component is checked: the
// directories on the way are the caller's choice.

#include <sys/types.h>

#include <string>

#include "gp/util/result.h"

namespace gp::util {

// open(path, flags | O_CLOEXEC, mode) under the rules above. Returns the fd (the caller closes
// it). Errors: "cannot open 'PATH': <strerror>" or "refused 'PATH': <why>".
Result<int> open_for_writing(const std::string& path, int flags, mode_t mode = 0644);

}  // namespace gp::util
