#pragma once
// RubySampler: gp's CRuby sampler for one process. It finds the interpreter (libruby*.so, or a
// ruby executable that has the VM linked in) among the process's mappings, reads its version
// (the ruby_version constant) and picks that version's layout (ruby_layout.h); then each
// snapshot follows ruby_current_vm_ptr -> main ractor (3.0+; before, the VM itself) -> its
// thread list -> each thread's execution context -> the control frames between ec->cfp and the
// end of the VM stack, read
// with process_vm_readv while the target runs (runtime/remote). Every frame is named as
// Thread#backtrace_locations names it: Ruby frames by their iseq's label, path and the line of
// their pc (line_numbers.h); C-function frames by their method entry's original_id, resolved
// through the global symbol table. Only the main ractor's threads are walked (other ractors
// keep their own thread lists).
//
// A snapshot can be torn (a thread moved while it was read): failed reads, objects whose type
// bits are wrong, a frame chain outside its VM stack, a snapshot over its time budget all
// report `torn`, and the caller retries or drops the tick. iseqs are cached by address and
// revalidated on every use (their body pointer and body header must be unchanged). Not
// thread-safe: one sampler per sampling thread.

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "runtime/remote/remote_memory.h"
#include "runtime/ruby/ruby_layout.h"

namespace gp::runtime::ruby {

struct RubyFrame {
  std::string label;  // method or block label ("fib", "block in run", "<main>"), cfunc name
  std::string path;   // realpath when Ruby knows it, else the path it was loaded by
  uint32_t line = 0;
  bool cfunc = false;
};

struct RubyThreadSample {
  int32_t tid = 0;                // kernel tid
  bool holds_gvl = false;         // its ec is the ractor's running_ec
  std::vector<RubyFrame> frames;  // root first
};

using remote::WalkStatus;

struct WalkLimits {
  size_t max_threads = 4096;
  size_t max_depth = 2048;          // deeper stacks are cut at the root end
  size_t max_string = 4096;         // bytes of a label or path
  size_t max_line_table = 1 << 20;  // bytes of one iseq's line table
  std::chrono::milliseconds max_snapshot_time{200};
};

struct RubyInterpreter {
  std::string path;  // the mapped file holding the VM, as /proc/PID/maps prints it
  RubyVersion version;
  uint64_t vm_ptr_address = 0;   // &ruby_current_vm_ptr
  uint64_t symbols_address = 0;  // &ruby_global_symbols; 0 when not found (cfuncs unnamed)
  // Before 3.1 (layout.thread_pthread): where glibc's struct pthread keeps the kernel tid, once
  // the main thread's was found there at attach; 0: the tids are unknown (reported as 0).
  uint32_t pthread_tid_offset = 0;
};

struct AttachFailure {
  enum class Kind { gone, not_ruby, unsupported, denied } kind;
  std::string reason;  // one line, no trailing period
};

using remote::SamplerStats;

// &ruby_current_vm_ptr for a libruby that does not export it (3.3+), read from the code of
// the exported ruby_vm_at_exit (see ruby_sampler.cpp); 0 when that code is not as expected.
uint64_t find_vm_ptr(remote::RemoteMemory& memory, const RubyLayout& layout,
                     uint64_t ruby_vm_at_exit);

class RubySampler;
uint64_t find_global_symbols(remote::RemoteMemory& memory, const struct RubyLayout& layout,
                             uint64_t rb_id2str);

class RubySampler {
 public:
  static std::variant<std::unique_ptr<RubySampler>, AttachFailure> attach(
      pid_t pid, const std::string& proc_root = "/proc", WalkLimits limits = {});

  // One snapshot of every thread; retries a torn read up to `retries` times. `gone`/`denied`
  // are final; `torn` after all retries means this tick has no sample.
  WalkStatus sample(std::vector<RubyThreadSample>& out, int retries = 3);

  const RubyInterpreter& interpreter() const { return info_; }
  const SamplerStats& stats() const { return stats_; }
  uint64_t reads() const { return memory_.reads(); }
  // Why the last torn snapshot was torn (for messages).
  const std::string& last_torn_reason() const { return torn_reason_; }

  RubySampler(pid_t pid, RubyInterpreter info, RubyLayout layout, WalkLimits limits);

 private:
  // attach: kGlibcPthreadTid if the VM's main thread's struct pthread holds the process's own
  // tid (in its namespace) there, else 0.
  static uint32_t pthread_tid_offset(remote::RemoteMemory& memory, const RubyLayout& layout,
                                     uint64_t vm_ptr_address, pid_t pid,
                                     const std::string& proc_root);
  struct IseqInfo {
    std::string body_header;  // raw body bytes the fields came from, for revalidation
    uint64_t body = 0;
    uint64_t iseq_encoded = 0;
    uint32_t iseq_size = 0;
    std::string label, path;
    uint32_t first_line = 0;
    std::string entries;              // insns_info.body: line_no at each entry's start
    std::vector<uint32_t> positions;  // when the iseq has no succinct table
    std::string succ_table;
  };

  // One shown control frame while a thread is walked.
  struct Slot {
    bool ruby = false;  // an iseq frame; else a frame whose environment says if it is a C one
    bool shown = true;
    uint64_t iseq = 0, pc = 0, body = 0;
    uint64_t head_at = 0;
    std::string head;    // iseq: flags, wrapper, body / environment: me_cref, specval, flags
    std::string detail;  // iseq body header / method entry: flags, defined_class, def
    uint64_t id = 0;     // C frame: its method's original_id
  };

  WalkStatus walk(std::vector<RubyThreadSample>& out);
  WalkStatus walk_thread(uint64_t ec, RubyThreadSample& out);
  WalkStatus ruby_frame(const Slot& slot, RubyFrame& out);
  bool load_iseq(uint64_t body, const std::string& header, IseqInfo& info);
  bool read_string(uint64_t value, std::string& out);
  bool read_array_entry(uint64_t value, uint64_t index, uint64_t& out);
  bool type_is(uint64_t value, uint32_t type, uint64_t* flags = nullptr);
  bool id_name(uint64_t id, std::string& out);
  WalkStatus torn(std::string why);
  bool over_time() const;

  friend uint64_t find_global_symbols(remote::RemoteMemory&, const RubyLayout&, uint64_t);

  remote::RemoteMemory memory_;
  RubyInterpreter info_;
  RubyLayout layout_;
  WalkLimits limits_;
  SamplerStats stats_;
  std::unordered_map<uint64_t, IseqInfo> iseqs_;
  std::vector<Slot> slots_;  // reused from thread to thread
  std::vector<remote::ReadRequest> requests_;
  std::unordered_map<uint64_t, std::string> id_names_;
  std::chrono::steady_clock::time_point deadline_;
  std::string torn_reason_;
};

// Finds ruby_global_symbols in a stripped libruby: the rb_symbols_t that rb_id2str's code
// (and the function it jumps to) addresses RIP-relatively, confirmed by resolving IDs whose
// names every Ruby of the layout's version has. 0 when no candidate resolves them.
uint64_t find_global_symbols(remote::RemoteMemory& memory, const RubyLayout& layout,
                             uint64_t rb_id2str);

}  // namespace gp::runtime::ruby
