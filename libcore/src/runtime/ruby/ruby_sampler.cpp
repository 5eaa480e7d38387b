// gp's CRuby sampler (see ruby_sampler.h).
#include "runtime/ruby/ruby_sampler.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "gp/proc/process.h"
#include "runtime/remote/mapped_symbols.h"
#include "runtime/ruby/line_numbers.h"

namespace gp::runtime::ruby {
namespace {

using remote::ReadStatus;

bool process_alive(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

uint64_t u64_at(const std::string& bytes, size_t offset) {
  uint64_t v = 0;
  if (offset + sizeof v <= bytes.size()) std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}
uint32_t u32_at(const std::string& bytes, size_t offset) {
  uint32_t v = 0;
  if (offset + sizeof v <= bytes.size()) std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

bool is_heap_object(uint64_t v) { return v != 0 && (v & 7) == 0; }

// glibc's struct pthread (nptl/descr.h, no public header) keeps the kernel tid after its
// tcbhead_t (0x2c0 bytes) and list node on x86-64, since glibc 2.26. Ruby before 3.1 has only
// the pthread_t; attach checks this offset against the main thread before trusting it.
constexpr uint32_t kGlibcPthreadTid = 0x2d0;

bool is_libruby(std::string_view name) { return name.starts_with("libruby"); }
bool is_ruby_exe(std::string_view name) { return name.starts_with("ruby"); }

}  // namespace

RubySampler::RubySampler(pid_t pid, RubyInterpreter info, RubyLayout layout, WalkLimits limits)
    : memory_(pid), info_(std::move(info)), layout_(std::move(layout)), limits_(limits) {}

std::variant<std::unique_ptr<RubySampler>, AttachFailure> RubySampler::attach(
    pid_t pid, const std::string& proc_root, WalkLimits limits) {
  using Kind = AttachFailure::Kind;
  const AttachFailure gone{Kind::gone, "process went down during profiling"};
  auto maps = remote::read_maps(pid, proc_root);
  if (!maps) return gone;
  const remote::MapsEntry* m = remote::lowest_mapping(*maps, is_libruby);
  if (m == nullptr) m = remote::lowest_mapping(*maps, is_ruby_exe);
  if (m == nullptr) return AttachFailure{Kind::not_ruby, "no ruby executable or libruby is mapped"};
  auto syms = remote::mapped_symbols(pid, *m,
                                     {"ruby_current_vm_ptr", "ruby_version", "ruby_global_symbols",
                                      "rb_id2str", "ruby_vm_at_exit"},
                                     proc_root);
  if (!syms) {
    if (!process_alive(pid)) return gone;
    return AttachFailure{Kind::not_ruby, syms.error().message};
  }
  auto vm_ptr = syms->address("ruby_current_vm_ptr");
  auto version_at = syms->address("ruby_version");
  auto at_exit = syms->address("ruby_vm_at_exit");
  const AttachFailure stripped{Kind::not_ruby,
                               "'" + m->path +
                                   "' has no ruby_current_vm_ptr / ruby_version symbol "
                                   "(not CRuby 2.5+, or stripped)"};
  if ((!vm_ptr && !at_exit) || !version_at) return stripped;
  remote::RemoteMemory memory(pid);
  char text[16] = {};
  ReadStatus st = memory.read(*version_at, text, sizeof text - 1);
  if (st == ReadStatus::gone || (st != ReadStatus::ok && !process_alive(pid))) return gone;
  if (st == ReadStatus::denied) {
    return AttachFailure{Kind::denied, "cannot read the process's memory: " + memory.last_error()};
  }
  std::string version_text(text, strnlen(text, sizeof text - 1));
  auto version = parse_ruby_version(version_text);
  if (!version) {
    return AttachFailure{Kind::unsupported, "cannot read the Ruby version of '" + m->path + "'"};
  }
  auto layout = layout_for_version(*version);
  if (!layout) {
    return AttachFailure{Kind::unsupported, "ruby " + version->text() +
                                                " is not supported by gp's sampler (" +
                                                supported_versions() + ")"};
  }
  if (!vm_ptr) {
    // 3.3+ libruby exports only the C API: the VM pointer is the one ruby_vm_at_exit reads.
    uint64_t found = find_vm_ptr(memory, *layout, *at_exit);
    if (found == 0) return stripped;
    vm_ptr = found;
  }
  RubyInterpreter info;
  info.path = m->path;
  info.version = *version;
  info.vm_ptr_address = *vm_ptr;
  if (layout->thread_pthread != 0) {
    info.pthread_tid_offset = pthread_tid_offset(memory, *layout, *vm_ptr, pid, proc_root);
  }
  if (auto s = syms->address("ruby_global_symbols")) {
    info.symbols_address = *s;
  } else if (auto id2str = syms->address("rb_id2str")) {
    info.symbols_address = find_global_symbols(memory, *layout, *id2str);
  }
  return std::make_unique<RubySampler>(pid, std::move(info), std::move(*layout), limits);
}

uint32_t RubySampler::pthread_tid_offset(remote::RemoteMemory& memory, const RubyLayout& layout,
                                         uint64_t vm_ptr_address, pid_t pid,
                                         const std::string& proc_root) {
  proc::SnapshotOptions options;
  options.proc_root = proc_root;
  options.resolve_container_names = false;
  auto process = proc::snapshot_process(pid, options);
  uint64_t vm = 0, main = 0, pthread = 0;
  int32_t tid = 0;
  if (!process || process->ns_pid <= 0 || !memory.read_value(vm_ptr_address, vm) ||
      !is_heap_object(vm) || !memory.read_value(vm + layout.vm_main_thread, main) ||
      !is_heap_object(main) || !memory.read_value(main + layout.thread_pthread, pthread) ||
      pthread == 0 || !memory.read_value(pthread + kGlibcPthreadTid, tid)) {
    return 0;
  }
  return tid == process->ns_pid ? kGlibcPthreadTid : 0;
}

WalkStatus RubySampler::sample(std::vector<RubyThreadSample>& out, int retries) {
  return remote::sample_with_retries([&] { return walk(out); }, retries, memory_.pid(), stats_);
}

WalkStatus RubySampler::torn(std::string why) {
  switch (memory_.last_failure()) {
    case ReadStatus::gone:
      return WalkStatus::gone;
    case ReadStatus::denied:
      return WalkStatus::denied;
    default:
      break;
  }
  torn_reason_ = std::move(why);
  return WalkStatus::torn;
}

bool RubySampler::over_time() const { return std::chrono::steady_clock::now() > deadline_; }

WalkStatus RubySampler::walk(std::vector<RubyThreadSample>& out) {
  out.clear();
  deadline_ = std::chrono::steady_clock::now() + limits_.max_snapshot_time;
  uint64_t vm = 0, owner = 0, running = 0, node = 0;
  if (!memory_.read_value(info_.vm_ptr_address, vm) || !is_heap_object(vm)) {
    return torn("no VM");
  }
  // The threads hang off the main ractor (3.0+) or the VM itself (2.x).
  owner = vm;
  if (layout_.vm_main_ractor != 0 &&
      (!memory_.read_value(vm + layout_.vm_main_ractor, owner) || !is_heap_object(owner))) {
    return torn("no main ractor");
  }
  // Who holds the GVL: an ec (3.0+) or a thread (2.x).
  memory_.read_value(
      owner + (layout_.running_ec != 0 ? layout_.running_ec : layout_.running_thread), running);
  const uint64_t head = owner + layout_.threads_head;
  if (!memory_.read_value(head, node)) return torn("no thread list");
  const size_t thread_bytes =
      std::max({layout_.thread_ec, layout_.thread_nt, layout_.thread_pthread,
                layout_.thread_nt == 0 ? layout_.thread_tid : 0}) +
      8;
  for (size_t n = 0; node != head; ++n) {
    if (n >= limits_.max_threads || !is_heap_object(node)) return torn("thread list does not end");
    std::string thread(thread_bytes, '\0');
    if (memory_.read(node, thread.data(), thread.size()) != ReadStatus::ok) {
      return torn("thread unreadable");
    }
    RubyThreadSample& t = out.emplace_back();
    if (layout_.thread_pthread != 0) {
      // Before 3.1: the tid in the thread's glibc struct pthread, when attach found it there.
      uint64_t pthread = u64_at(thread, layout_.thread_pthread);
      if (info_.pthread_tid_offset != 0 && pthread != 0 &&
          !memory_.read_value(pthread + info_.pthread_tid_offset, t.tid)) {
        return torn("thread's pthread unreadable");
      }
    } else if (layout_.thread_nt == 0) {
      t.tid = static_cast<int32_t>(u32_at(thread, layout_.thread_tid));
    } else {
      // 3.3+: the tid is the native thread's (none while the thread waits for one).
      uint64_t nt = u64_at(thread, layout_.thread_nt);
      uint32_t tid = 0;
      if (is_heap_object(nt) && !memory_.read_value(nt + layout_.thread_tid, tid)) {
        return torn("native thread unreadable");
      }
      t.tid = static_cast<int32_t>(tid);
    }
    uint64_t ec = u64_at(thread, layout_.thread_ec);
    t.holds_gvl = layout_.running_ec != 0 ? ec != 0 && ec == running : node == running;
    if (ec != 0) {
      if (WalkStatus st = walk_thread(ec, t); st != WalkStatus::ok) return st;
    }
    node = u64_at(thread, 0);  // lt_node.next
    if (over_time()) return torn("snapshot over its time budget");
  }
  return WalkStatus::ok;
}

WalkStatus RubySampler::walk_thread(uint64_t ec, RubyThreadSample& out) {
  std::string head(std::max({layout_.ec_vm_stack, layout_.ec_vm_stack_size, layout_.ec_cfp}) + 8,
                   '\0');
  if (memory_.read(ec, head.data(), head.size()) != ReadStatus::ok) return torn("ec unreadable");
  uint64_t stack = u64_at(head, layout_.ec_vm_stack);
  uint64_t stack_size = u64_at(head, layout_.ec_vm_stack_size);
  uint64_t cfp = u64_at(head, layout_.ec_cfp);
  if (stack_size > (uint64_t{1} << 32)) return torn("VM stack size out of range");
  uint64_t end = stack + stack_size * 8;
  if (cfp < stack || cfp > end || (end - cfp) % layout_.cfp_size != 0) {
    return torn("control frame outside its VM stack");
  }
  // The frame at the end of the stack is the VM's own (a new thread's dummy frame, the main
  // thread's top-level frame under <main>): Ruby's backtraces do not show it, nor does gp.
  size_t total = (end - cfp) / layout_.cfp_size;
  size_t count = std::min(total >= 1 ? total - 1 : 0, limits_.max_depth);
  std::string frames(count * layout_.cfp_size, '\0');
  if (memory_.read(cfp, frames.data(), frames.size()) != ReadStatus::ok) {
    return torn("control frames unreadable");
  }
  // Frames from the leaf (ec->cfp) towards the root. What they need is read in three gathered
  // reads (a system call each, not one per field): Ruby frames' iseq heads and the other
  // frames' environments; then iseq bodies and C frames' method entries; then the method
  // definitions' ids. A frame with an iseq but no pc is not shown (Ruby's backtraces skip it).
  const int32_t env_low = std::min(layout_.ep_me_cref, layout_.ep_flags);
  const size_t env_bytes = size_t(std::max(layout_.ep_me_cref, layout_.ep_flags) - env_low + 1) * 8;
  slots_.clear();
  for (size_t i = 0; i < count; ++i) {
    size_t base = i * layout_.cfp_size;
    uint64_t iseq = u64_at(frames, base + layout_.cfp_iseq);
    uint64_t pc = u64_at(frames, base + layout_.cfp_pc);
    if (iseq != 0 && pc == 0) continue;
    Slot& slot = slots_.emplace_back();
    slot.ruby = iseq != 0;
    slot.iseq = iseq;
    slot.pc = pc;
    uint64_t ep = u64_at(frames, base + layout_.cfp_ep);
    if (!slot.ruby && ep == 0) return torn("frame environment unreadable");
    slot.head.assign(slot.ruby ? layout_.iseq_body + 8 : env_bytes, '\0');
    slot.head_at = slot.ruby ? iseq : ep + int64_t{env_low} * 8;
  }
  requests_.clear();
  for (auto& slot : slots_) requests_.push_back({slot.head_at, slot.head.data(), slot.head.size()});
  if (memory_.read_many(requests_) != ReadStatus::ok) return torn("frames unreadable");
  requests_.clear();
  for (auto& slot : slots_) {
    if (slot.ruby) {
      uint64_t flags = u64_at(slot.head, 0);
      if ((flags & layout_.flags_type_mask) != layout_.type_imemo ||
          ((flags >> layout_.imemo_shift) & layout_.imemo_mask) != layout_.imemo_iseq) {
        return torn("a frame's iseq is not an iseq");
      }
      slot.body = u64_at(slot.head, layout_.iseq_body);
      if (!is_heap_object(slot.body)) return torn("iseq body unreadable");
      slot.detail.assign(layout_.body_read_size, '\0');
      requests_.push_back({slot.body, slot.detail.data(), slot.detail.size()});
    } else {
      uint64_t flags = u64_at(slot.head, size_t(layout_.ep_flags - env_low) * 8);
      slot.shown = (flags & layout_.frame_magic_mask) == layout_.frame_magic_cfunc;
      if (!slot.shown) continue;
      uint64_t me = u64_at(slot.head, size_t(layout_.ep_me_cref - env_low) * 8);
      if (!is_heap_object(me)) return torn("method entry unreadable");
      slot.detail.assign(layout_.me_def + 8, '\0');
      requests_.push_back({me, slot.detail.data(), slot.detail.size()});
    }
  }
  if (memory_.read_many(requests_) != ReadStatus::ok) return torn("iseqs or methods unreadable");
  requests_.clear();
  for (auto& slot : slots_) {
    if (slot.ruby || !slot.shown) continue;
    uint64_t flags = u64_at(slot.detail, 0);
    if ((flags & layout_.flags_type_mask) != layout_.type_imemo ||
        ((flags >> layout_.imemo_shift) & layout_.imemo_mask) != layout_.imemo_ment) {
      return torn("a C frame's method entry is not one");
    }
    uint64_t def = u64_at(slot.detail, layout_.me_def);
    if (!is_heap_object(def)) return torn("method definition unreadable");
    requests_.push_back({def + layout_.def_original_id, &slot.id, sizeof slot.id});
  }
  if (memory_.read_many(requests_) != ReadStatus::ok) return torn("method definitions unreadable");
  // Names and lines, root first.
  for (auto it = slots_.rbegin(); it != slots_.rend(); ++it) {
    if (!it->shown) continue;
    RubyFrame& f = out.frames.emplace_back();
    if (it->ruby) {
      if (WalkStatus st = ruby_frame(*it, f); st != WalkStatus::ok) return st;
    } else {
      f.cfunc = true;
      if (!id_name(it->id, f.label)) f.label = "(unknown)";
    }
    if (over_time()) return torn("snapshot over its time budget");
  }
  return WalkStatus::ok;
}

WalkStatus RubySampler::ruby_frame(const Slot& slot, RubyFrame& out) {
  auto it = iseqs_.find(slot.iseq);
  if (it == iseqs_.end() || it->second.body != slot.body || it->second.body_header != slot.detail) {
    IseqInfo info;
    if (!load_iseq(slot.body, slot.detail, info)) return torn("iseq fields unreadable");
    if (iseqs_.size() > 65536) iseqs_.clear();  // bound the cache (code reloaded over and over)
    it = iseqs_.insert_or_assign(slot.iseq, std::move(info)).first;
  }
  const IseqInfo& info = it->second;
  out.label = info.label;
  out.path = info.path;
  out.line = info.first_line;
  auto pos = instruction_index(slot.pc, info.iseq_encoded, info.iseq_size);
  if (!pos) return torn("pc outside its iseq");
  std::optional<uint32_t> index;
  uint32_t entries = static_cast<uint32_t>(info.entries.size() / layout_.insn_info_entry_size);
  if (entries == 1) {
    index = 0;
  } else if (!info.positions.empty()) {
    index = insn_info_from_positions(info.positions, *pos);
  } else {
    index = insn_info_from_succ_table(info.succ_table, *pos);
  }
  if (index && *index < entries) {
    int32_t line =
        static_cast<int32_t>(u32_at(info.entries, *index * layout_.insn_info_entry_size));
    if (line >= 0) out.line = static_cast<uint32_t>(line);
  }
  return WalkStatus::ok;
}

bool RubySampler::load_iseq(uint64_t body, const std::string& header, IseqInfo& info) {
  info.body = body;
  info.body_header = header;
  info.iseq_size = u32_at(header, layout_.body_iseq_size);
  info.iseq_encoded = u64_at(header, layout_.body_iseq_encoded);
  if (!read_string(u64_at(header, layout_.body_label), info.label)) return false;
  uint64_t pathobj = u64_at(header, layout_.body_pathobj);
  uint64_t path = pathobj;
  if (type_is(pathobj, layout_.type_array)) {
    uint64_t real = 0;
    if (!read_array_entry(pathobj, 0, path)) return false;
    if (read_array_entry(pathobj, 1, real) && type_is(real, layout_.type_string)) path = real;
  }
  if (!read_string(path, info.path)) return false;
  if (layout_.body_first_lineno_size == 8) {
    uint64_t first = u64_at(header, layout_.body_first_lineno);
    if ((first & 1) == 0) return false;  // a Fixnum
    info.first_line = static_cast<uint32_t>(static_cast<int64_t>(first) >> 1);
  } else {
    auto first = static_cast<int32_t>(u32_at(header, layout_.body_first_lineno));
    if (first < 0) return false;
    info.first_line = static_cast<uint32_t>(first);
  }
  uint32_t size = u32_at(header, layout_.body_insns_size);
  uint64_t entries = u64_at(header, layout_.body_insns_body);
  uint64_t positions = u64_at(header, layout_.body_insns_positions);
  uint64_t succ = u64_at(header, layout_.body_insns_succ_table);
  size_t entry_bytes = size_t{size} * layout_.insn_info_entry_size;
  if (size == 0 || entry_bytes > limits_.max_line_table) return true;  // first line only
  info.entries.resize(entry_bytes);
  if (memory_.read(entries, info.entries.data(), entry_bytes) != ReadStatus::ok) return false;
  if (size == 1) return true;
  if (positions != 0) {
    info.positions.resize(size);
    return memory_.read(positions, info.positions.data(), size_t{size} * 4) == ReadStatus::ok;
  }
  size_t succ_bytes = succ_table_bytes(info.iseq_size);
  if (succ == 0 || succ_bytes > limits_.max_line_table) {
    info.entries.clear();
    return true;
  }
  info.succ_table.resize(succ_bytes);
  return memory_.read(succ, info.succ_table.data(), succ_bytes) == ReadStatus::ok;
}

bool RubySampler::type_is(uint64_t value, uint32_t type, uint64_t* flags) {
  uint64_t f = 0;
  if (!is_heap_object(value) || !memory_.read_value(value, f)) return false;
  if (flags != nullptr) *flags = f;
  return (f & layout_.flags_type_mask) == type;
}

bool RubySampler::read_string(uint64_t value, std::string& out) {
  std::string obj(layout_.string_embed_data + 24, '\0');
  if (!is_heap_object(value) || memory_.read(value, obj.data(), obj.size()) != ReadStatus::ok) {
    return false;
  }
  uint64_t flags = u64_at(obj, 0);
  if ((flags & layout_.flags_type_mask) != layout_.type_string) return false;
  const bool embedded = (flags & layout_.string_noembed) == 0;
  int64_t len = static_cast<int64_t>(u64_at(obj, layout_.string_heap_len));
  if (embedded && layout_.string_embed_len_mask != 0) {
    len = static_cast<int64_t>((flags >> layout_.string_embed_len_shift) &
                               layout_.string_embed_len_mask);
  }
  if (len < 0) return false;
  const size_t n = std::min(static_cast<size_t>(len), limits_.max_string);
  if (embedded) {
    // Since 3.2 an embedded string may be longer than the bytes read (a larger heap slot).
    if (layout_.string_embed_data + n <= obj.size()) {
      out.assign(obj.data() + layout_.string_embed_data, n);
      return true;
    }
    if (layout_.string_embed_len_mask != 0) return false;
    out.resize(n);
    return memory_.read(value + layout_.string_embed_data, out.data(), n) == ReadStatus::ok;
  }
  uint64_t ptr = u64_at(obj, layout_.string_heap_ptr);
  if (ptr == 0) return false;
  out.resize(n);
  return memory_.read(ptr, out.data(), out.size()) == ReadStatus::ok;
}

bool RubySampler::read_array_entry(uint64_t value, uint64_t index, uint64_t& out) {
  std::string obj(std::max(layout_.array_heap_ptr, layout_.array_heap_len) + 8, '\0');
  if (!is_heap_object(value) || memory_.read(value, obj.data(), obj.size()) != ReadStatus::ok) {
    return false;
  }
  uint64_t flags = u64_at(obj, 0);
  if ((flags & layout_.flags_type_mask) != layout_.type_array) return false;
  if (flags & layout_.array_embed) {
    uint64_t len = (flags >> layout_.array_embed_len_shift) & layout_.array_embed_len_mask;
    if (index >= len) return false;
    out = u64_at(obj, layout_.array_embed_data + index * 8);
    return true;
  }
  int64_t len = static_cast<int64_t>(u64_at(obj, layout_.array_heap_len));
  uint64_t ptr = u64_at(obj, layout_.array_heap_ptr);
  if (len < 0 || index >= static_cast<uint64_t>(len) || ptr == 0) return false;
  return memory_.read_value(ptr + index * 8, out);
}

bool RubySampler::id_name(uint64_t id, std::string& out) {
  if (auto it = id_names_.find(id); it != id_names_.end()) {
    out = it->second;
    return true;
  }
  if (info_.symbols_address == 0) return false;
  uint64_t serial = id > layout_.last_op_id ? id >> layout_.id_scope_shift : id;
  uint32_t last_id = 0;
  uint64_t ids = 0, chunk = 0, str = 0;
  if (!memory_.read_value(info_.symbols_address + layout_.symbols_last_id, last_id) ||
      serial == 0 || serial > last_id ||
      !memory_.read_value(info_.symbols_address + layout_.symbols_ids, ids) ||
      !read_array_entry(ids, serial / layout_.id_entry_unit, chunk) ||
      !read_array_entry(chunk, (serial % layout_.id_entry_unit) * 2, str) ||
      !read_string(str, out)) {
    return false;
  }
  if (id_names_.size() < 65536) id_names_[id] = out;
  return true;
}

uint64_t find_vm_ptr(remote::RemoteMemory& memory, const RubyLayout& layout,
                     uint64_t ruby_vm_at_exit) {
  // ruby_vm_at_exit(func) is `vm = ruby_current_vm_ptr; ...; vm->at_exit = node`: its first
  // RIP-relative 64-bit load (REX.W 8B, ModRM mod=00 rm=101) is of ruby_current_vm_ptr, and
  // the code stores at vm->at_exit (a disp32 of this version's offset). Both or nothing.
  std::string code(64, '\0');
  if (layout.vm_at_exit == 0 ||
      memory.read(ruby_vm_at_exit, code.data(), code.size()) != ReadStatus::ok) {
    return 0;
  }
  char disp[4];
  std::memcpy(disp, &layout.vm_at_exit, sizeof disp);
  if (code.find(std::string_view(disp, sizeof disp)) == std::string::npos) return 0;
  for (size_t i = 0; i + 7 <= code.size(); ++i) {
    auto rex = static_cast<uint8_t>(code[i]);
    auto modrm = static_cast<uint8_t>(code[i + 2]);
    if ((rex & 0xf8) != 0x48 || static_cast<uint8_t>(code[i + 1]) != 0x8b ||
        (modrm & 0xc7) != 0x05) {
      continue;
    }
    int32_t rel = 0;
    std::memcpy(&rel, code.data() + i + 3, sizeof rel);
    uint64_t target = ruby_vm_at_exit + i + 7 + static_cast<int64_t>(rel);
    uint64_t vm = 0;
    // A live VM: the pointer holds a heap address whose first word is the VM object.
    if (!memory.read_value(target, vm) || !is_heap_object(vm)) return 0;
    return target;
  }
  return 0;
}

uint64_t find_global_symbols(remote::RemoteMemory& memory, const RubyLayout& layout,
                             uint64_t rb_id2str) {
  // Code regions: rb_id2str itself and what its first jumps/calls reach.
  std::vector<uint64_t> regions = {rb_id2str};
  std::string code(64, '\0');
  if (memory.read(rb_id2str, code.data(), code.size()) != ReadStatus::ok) return 0;
  for (size_t i = 0; i + 5 <= code.size(); ++i) {
    auto op = static_cast<uint8_t>(code[i]);
    if (op != 0xe9 && op != 0xe8) continue;
    int32_t rel = 0;
    std::memcpy(&rel, code.data() + i + 1, 4);
    uint64_t target = rb_id2str + i + 5 + static_cast<int64_t>(rel);
    if (target != rb_id2str && regions.size() < 8) regions.push_back(target);
  }
  // RIP-relative memory operands (ModRM mod=00 rm=101) of mov/cmp/lea: their targets.
  std::vector<uint64_t> candidates;
  for (uint64_t region : regions) {
    std::string bytes(192, '\0');
    if (memory.read(region, bytes.data(), bytes.size()) != ReadStatus::ok) continue;
    for (size_t i = 0; i + 6 <= bytes.size(); ++i) {
      auto op = static_cast<uint8_t>(bytes[i]);
      auto modrm = static_cast<uint8_t>(bytes[i + 1]);
      if ((op != 0x8b && op != 0x39 && op != 0x3b && op != 0x8d) || (modrm & 0xc7) != 0x05) {
        continue;
      }
      int32_t disp = 0;
      std::memcpy(&disp, bytes.data() + i + 2, 4);
      uint64_t target = region + i + 6 + static_cast<int64_t>(disp);
      for (uint64_t c : {target, target - layout.symbols_ids}) {
        if (std::find(candidates.begin(), candidates.end(), c) == candidates.end())
          candidates.push_back(c);
      }
    }
  }
  for (uint64_t c : candidates) {
    RubyInterpreter probe;
    probe.symbols_address = c;
    RubySampler s(memory.pid(), probe, layout, WalkLimits{});
    bool all = !layout.known_ids.empty();
    for (const auto& [id, name] : layout.known_ids) {
      std::string got;
      if (!s.id_name(id, got) || got != name) {
        all = false;
        break;
      }
    }
    if (all) return c;
  }
  return 0;
}

}  // namespace gp::runtime::ruby
