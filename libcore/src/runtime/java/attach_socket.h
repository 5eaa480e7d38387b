#pragma once
// The JVM's attach socket, /tmp/.java_pid<NSPID> in its mount namespace. jcmd and asprof
// (jattach) connect to that file when it exists and only otherwise ask the JVM to create it;
// jcmd also refuses one owned by another user. A socket left by an earlier, killed process that
// had the same pid (pid reuse on a long-lived host) therefore costs the live JVM its profile.

#include <sys/types.h>

#include <string>

#include "jvm_process.h"

namespace gp::runtime::java {

enum class AttachSocket {
  absent,   // no file at the attach path
  current,  // a file that may be the live JVM's (or is no socket): left alone
  removed,  // a socket older than the JVM's start, removed
};

// Removes the attach socket of `jvm` when it provably belongs to an earlier process: it is a
// socket (not a link, not a regular file) whose ctime and mtime are both more than a second
// older than the JVM's start (the live JVM creates its socket after it starts, and a ctime
// cannot be set back). Every step works on a descriptor of the JVM's /tmp and never follows a
// link; the socket is first renamed to a private name and removed only if it is still the
// inode that was checked.
AttachSocket remove_stale_attach_socket(const JvmProcess& jvm,
                                        const std::string& proc_root = "/proc");

}  // namespace gp::runtime::java
