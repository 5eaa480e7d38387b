// gp-record — system-wide CPU sampler that writes a gp archive.
//
// Samples every CPU (or the given pids/tids/cgroup/CPUs) with an eBPF program on a perf event,
// aggregates stacks in the kernel, and writes processes, build-ids, mappings, raw addresses,
// the covering kallsyms entries and JIT perf maps, so that the archive can be symbolized and
// folded on another machine:
//
//   gp-record -d 30 -o host.gpa        # on the production host (root)
//   gp-record -- ./prog args           # one command and what it starts, into gp.gpa
//   gp-symbolize host.gpa | gp-fold    # anywhere
//
// User stacks of code built without frame pointers are unwound in the kernel with tables compiled
// from each binary's .eh_frame (--unwind). SIGINT/SIGTERM end the recording normally; SIGUSR2
// ends the current session (with -c the next starts at once). Without
// BPF (or without root, for --pid of your own processes) a perf_event ring-buffer sampler takes
// over.
#include <malloc.h>

#include <string>
#include <vector>

#include "cli.h"
#include "gp/cli/tool.h"
#include "record.h"

int main(int argc, char** argv) {
  gp::cli::init_tool("gp-record");
  // A fixed threshold (glibc raises it after each large free otherwise): the interning tables'
  // key blocks and slot arrays are mmapped, so dropping them (exited processes) returns the
  // memory and RSS stays flat over long recordings.
  ::mallopt(M_MMAP_THRESHOLD, 256 << 10);
  // Each flush allocates and frees a few hundred KiB (the chunk's lists): with glibc's 128-KiB
  // trim threshold the heap shrank after every flush and grew again at the next, each page
  // faulted in and zeroed anew (a tenth of gp-record's CPU with a busy python3).
  ::mallopt(M_TRIM_THRESHOLD, 2 << 20);
  gp::record_tool::RecordArgs args;
  auto app = gp::cli::make_app(
      "gp-record", "Sample CPU stacks of the whole system (eBPF) into a gp archive.",
      "  gp-record -F 999 -- ./prog --its-args # prog and what it starts -> gp.gpa,\n"
      "                                          # exits with its status\n"
      "  gp-record -d 30 -o host.gpa           # 30 s, all CPUs, 11 Hz\n"
      "  gp-record -F 99 -p 1234 -d 10 > app.gpa\n"
      "  gp-record -c -d 60 --output-dir /var/lib/gp --rotating-output\n"
      "  kill -USR2 $(pidof gp-record)          # with -c: end this session now\n"
      "  gp-record -d 5 | gp-symbolize | gp-fold > out.col\n"
      "  gp-record --unwind fp -d 10 -o fp.gpa  # frame pointers only (whole stacks\n"
      "                                          # without them are the default)\n"
      "  gp-record --python-frames -p $(pidof python3) -d 10 -o py.gpa  # PyPerf-style stacks\n");
  gp::record_tool::add_cli(*app, args);
  std::vector<std::string> argv_copy(argv, argv + argc);
  return gp::cli::run(*app, argc, argv, [&] {
    gp::cli::set_verbosity(args.common);
    return gp::record_tool::run(args, argv_copy);
  });
}
