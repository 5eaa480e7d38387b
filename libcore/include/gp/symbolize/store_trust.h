#pragma once
// Whether a .build-id store found next to an archive (the sidecar, ARCHIVE.symbols) may be
// believed. A store's files give the names of every frame whose build-id they claim, so a store
// another user can write lets them forge stacks. It is trusted when every entry in it (the
// directory itself included, symbolic links not followed) belongs to the caller (effective uid)
// or root, and neither others nor a group other than root's or the caller's can write it.

#include <string>

#include "gp/util/result.h"

namespace gp::symbolize {

// ok, or why the store at `dir` is not trusted ("'PATH' is owned by uid N", ...).
Status check_store_trusted(const std::string& dir);

}  // namespace gp::symbolize
