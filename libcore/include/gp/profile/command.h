#pragma once
// `gp-profile -- COMMAND`: the command runs as `gp-record -- COMMAND` runs it (RecordedCommand,
// gp/record/command.h: held before its exec, in a cgroup of its own), and the session's
// gp-record samples that cgroup. The command is let go once gp-record is attached, and the
// recording ends once it has exited.

#include <sys/types.h>

#include <atomic>
#include <string>

#include "gp/profile/plan.h"
#include "gp/record/command.h"

namespace gp::profile {

// `options` with gp-record pointed at the command: its cgroup, or its pid alone when it has no
// cgroup (its children are then not recorded).
Options options_for_command(const Options& options, const record::RecordedCommand& command);

enum class RecorderStart { attached, exited, stopped };

// Waits until the recorder `pid` has created `output`: gp-record opens its output only once its
// sampler is attached (it writes nothing when it cannot sample), the moment `gp-record --
// COMMAND` lets its own command go. `exited` when gp-record ended first (it is not reaped: its
// caller waits for it and reads its status).
RecorderStart wait_attached(pid_t recorder, const std::string& output,
                            const std::atomic<bool>& stop);

}  // namespace gp::profile
