#pragma once
// Parser of py-spy's `record --format raw` output (collapsed stacks, one line per stack:
// "frame;frame;... COUNT", root first). Each frame is "name (file:line)", "name (file)" or
// "name" (py-spy's flamegraph.rs); gProfiler's py-spy fork (Granulate/py-spy) appends "_[p]"
// to Python frames and "_[pn]" to native ones (--native). With -F the line is the function's
// first line, which is what gProfiler passes.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gp/runtime/adapter.h"

namespace gp::runtime::python {

// One frame text → Frame (kind python, or python_native for "_[pn]", pseudo for py-spy's
// "thread (0x...)" / "process N:..." frames).
Frame parse_py_spy_frame(std::string_view text);

struct PySpyParse {
  std::vector<Stack> stacks;
  uint64_t bad_lines = 0;  // lines without a positive count
};

PySpyParse parse_py_spy_output(std::string_view text);

// gProfiler's py-spy command line: `py-spy record -r HZ -d SECONDS --nonblocking --format raw
// -F --output FILE -p PID --full-filenames --gil` (seconds rounded up, at least 1).
std::vector<std::string> py_spy_command(const std::string& program, pid_t pid, int hz,
                                        std::chrono::milliseconds duration,
                                        const std::string& output);

}  // namespace gp::runtime::python
