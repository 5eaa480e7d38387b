// gp's PHP sampler for one process (see php_sampler.h).
#include "runtime/php/php_sampler.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "runtime/remote/mapped_symbols.h"

namespace gp::runtime::php {
namespace {

using remote::MapsEntry;

constexpr size_t kMaxCachedFunctions = 100000;

bool process_alive(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

template <typename T>
T field(const std::string& buf, uint32_t offset) {
  T v{};
  if (offset + sizeof v <= buf.size()) std::memcpy(&v, buf.data() + offset, sizeof v);
  return v;
}

std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

std::string base_name(std::string_view path) {
  auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string without_deleted(std::string_view path) {
  constexpr std::string_view kDeleted = " (deleted)";
  if (path.ends_with(kDeleted)) path.remove_suffix(kDeleted.size());
  return std::string(path);
}

// The file that holds the engine: libphp when mapped (apache's mod_php, embedding programs),
// else the process's executable (php, php-fpm, php-cgi); its lowest mapping.
const MapsEntry* pick_engine_mapping(const std::vector<MapsEntry>& maps, const std::string& exe) {
  const MapsEntry* lib = remote::lowest_mapping(
      maps, [](std::string_view name) { return name.starts_with("libphp"); });
  if (lib != nullptr || exe.empty()) return lib;
  std::string exe_name = base_name(exe);
  return remote::lowest_mapping(maps, [&](std::string_view name) { return name == exe_name; });
}

std::string read_exe(pid_t pid, const std::string& proc_root) {
  char buf[4096];
  std::string link = proc_root + "/" + std::to_string(pid) + "/exe";
  ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  return n > 0 ? without_deleted(std::string_view(buf, static_cast<size_t>(n))) : std::string();
}

AttachFailure gone() { return {AttachFailure::Kind::gone, "process went down during profiling"}; }

}  // namespace

std::string PhpFrame::text() const {
  if (file.empty()) return name + " <internal>:-1";
  return name + " " + file + ":" + std::to_string(line);
}

PhpSampler::PhpSampler(pid_t pid, InterpreterInfo info, PhpLayout layout, WalkLimits limits)
    : memory_(pid),
      info_(std::move(info)),
      layout_(layout),
      limits_(limits),
      head_(layout.fn_size, '\0') {}

std::variant<std::unique_ptr<PhpSampler>, AttachFailure> PhpSampler::attach(
    pid_t pid, const std::string& proc_root, WalkLimits limits) {
  using Kind = AttachFailure::Kind;
  auto maps = remote::read_maps(pid, proc_root);
  if (!maps) return gone();
  const MapsEntry* m = pick_engine_mapping(*maps, read_exe(pid, proc_root));
  if (m == nullptr) {
    return process_alive(pid)
               ? AttachFailure{Kind::not_php, "no php executable or libphp is mapped"}
               : gone();
  }
  auto elf = remote::open_mapped_file(pid, *m, proc_root);
  if (!elf) {
    if (!process_alive(pid)) return gone();
    return AttachFailure{Kind::not_php, "cannot read '" + m->path + "': " + elf.error().message};
  }
  auto rodata = elf->section(".rodata");
  auto version = rodata ? version_from_rodata(rodata->data) : std::nullopt;
  if (!version) {
    return AttachFailure{Kind::not_php, "no PHP engine in the process: '" + m->path +
                                            "' has no PHP version in its data"};
  }
  auto layout = layout_for_version(version->major, version->minor);
  if (!layout) {
    return AttachFailure{Kind::unsupported, "PHP " + version->text() +
                                                " is not supported by gp's sampler (" +
                                                std::string(supported_versions()) + ")"};
  }
  // A version text that lies (a patched or odd build) must not pick a table: the engine's own
  // module API number has to be the one that version's headers define.
  if (!rodata_has_api(rodata->data, *layout)) {
    return AttachFailure{Kind::unsupported, "'" + m->path + "' says PHP " + version->text() +
                                                " but lacks that version's Zend module API " +
                                                std::to_string(layout->api_no) + ": not walked"};
  }
  auto syms = remote::mapped_symbols(pid, *m, {"executor_globals"}, proc_root);
  if (!syms) {
    if (!process_alive(pid)) return gone();
    return AttachFailure{Kind::not_php, syms.error().message};
  }
  auto eg = syms->address("executor_globals");
  if (!eg) {
    return AttachFailure{Kind::unsupported, "'" + m->path + "' (PHP " + version->text() +
                                                ") has no executor_globals symbol (a ZTS build, "
                                                "or stripped)"};
  }
  InterpreterInfo info;
  info.path = m->path;
  info.version = *version;
  info.bias = syms->bias;
  info.executor_globals = *eg;
  RemoteMemory memory(pid);
  uint64_t current = 0;
  if (!memory.read_value(info.executor_globals + layout->eg_current_execute_data, current)) {
    if (memory.last_failure() == ReadStatus::gone || !process_alive(pid)) return gone();
    if (memory.last_failure() == ReadStatus::denied) {
      return AttachFailure{Kind::denied,
                           "cannot read the process's memory: " + memory.last_error()};
    }
    return AttachFailure{Kind::not_php, "cannot read executor_globals at " +
                                            hex(info.executor_globals) + ": " +
                                            memory.last_error()};
  }
  return std::make_unique<PhpSampler>(pid, std::move(info), *layout, limits);
}

WalkStatus PhpSampler::sample(std::vector<PhpFrame>& out, int retries) {
  return remote::sample_with_retries([&] { return walk(out); }, retries, memory_.pid(), stats_);
}

WalkStatus PhpSampler::fail(const std::string& what, uint64_t address) {
  WalkStatus st = remote::walk_status_of(memory_.last_failure());
  problem_ = "cannot read " + what + " at " + hex(address) + ": " + memory_.last_error();
  return st;
}

WalkStatus PhpSampler::walk(std::vector<PhpFrame>& out) {
  out.clear();
  const auto deadline = std::chrono::steady_clock::now() + limits_.max_time;
  uint64_t ex = 0;
  uint64_t eg_field = info_.executor_globals + layout_.eg_current_execute_data;
  if (!memory_.read_value(eg_field, ex)) return fail("executor_globals", eg_field);
  std::vector<PhpFrame> leaf_first;
  std::string buf(layout_.ex_size, '\0');
  for (size_t steps = 0; ex != 0; ++steps) {
    if (leaf_first.size() >= limits_.max_depth) break;  // cut at the root end
    if (std::chrono::steady_clock::now() > deadline) {
      problem_ =
          "one snapshot took longer than " + std::to_string(limits_.max_time.count()) + " us";
      return WalkStatus::torn;
    }
    if (memory_.read(ex, buf.data(), buf.size()) != ReadStatus::ok) {
      return fail("execute_data (depth " + std::to_string(steps) + ")", ex);
    }
    uint64_t func = field<uint64_t>(buf, layout_.ex_func);
    uint64_t opline = field<uint64_t>(buf, layout_.ex_opline);
    uint64_t prev = field<uint64_t>(buf, layout_.ex_prev);
    if (prev == ex) {
      problem_ = "execute_data at " + hex(ex) + " is its own caller";
      return WalkStatus::torn;
    }
    // A frame without a function: a dummy frame of a call from internal code (no PHP frame).
    if (func != 0) {
      // The function's header and, for a function already known to be user code, the line of
      // its opline in one system call (an internal function's opline is not set: never read).
      auto known = functions_.find(func);
      bool line_too = opline != 0 && known != functions_.end() && known->second.user;
      uint32_t line = 0;
      const remote::ReadRequest reads[] = {{func, head_.data(), head_.size()},
                                           {opline + layout_.op_lineno, &line, sizeof line}};
      if (memory_.read_many(std::span(reads, line_too ? 2 : 1)) != ReadStatus::ok) {
        return fail(line_too ? "zend_function or opline" : "zend_function", func);
      }
      WalkStatus status = WalkStatus::ok;
      const FunctionInfo* fn = function(func, status);
      if (fn == nullptr) return status;
      PhpFrame& f = leaf_first.emplace_back();
      f.name = fn->name;
      if (fn->user) {
        f.file = fn->file;
        if (opline != 0 && !line_too && !memory_.read_value(opline + layout_.op_lineno, line)) {
          return fail("the opline of " + fn->name, opline);
        }
        f.line = opline != 0 ? line : fn->line_start;
      }
    }
    ex = prev;
  }
  // Every chain starts in PHP code (a script, or a callback the engine calls from C when no
  // PHP code runs). An internal function at the root was read while a call was being set up
  // (the callee already current, its link to the caller not yet visible): torn.
  if (ex == 0 && !leaf_first.empty() && leaf_first.back().file.empty() &&
      leaf_first.back().name != "<main>") {
    problem_ = "the outermost frame is an internal function (" + leaf_first.back().name + ")";
    return WalkStatus::torn;
  }
  out.assign(std::make_move_iterator(leaf_first.rbegin()),
             std::make_move_iterator(leaf_first.rend()));
  return WalkStatus::ok;
}

// The function whose header (head_) was just read at `address`: from the cache when the header
// is unchanged, else its names read anew.
const PhpSampler::FunctionInfo* PhpSampler::function(uint64_t address, WalkStatus& status) {
  const std::string& head = head_;
  uint8_t type = field<uint8_t>(head, layout_.fn_type);
  if (type != kUserFunction && type != kInternalFunction && type != kEvalCode) {
    problem_ = "zend_function at " + hex(address) + " has type " + std::to_string(type) +
               " (not user, internal or eval code)";
    status = WalkStatus::torn;
    return nullptr;
  }
  // eval()'d code (and `php -r` code) has no file of its own: phpspy shows it "<internal>:-1".
  bool user = type == kUserFunction;
  uint64_t name = field<uint64_t>(head, layout_.fn_name);
  uint64_t scope = field<uint64_t>(head, layout_.fn_scope);
  uint64_t file = user ? field<uint64_t>(head, layout_.fn_filename) : 0;
  uint32_t line_start = user ? field<uint32_t>(head, layout_.fn_line_start) : 0;
  std::string key(29, '\0');
  key[0] = static_cast<char>(type);
  std::memcpy(key.data() + 1, &name, 8);
  std::memcpy(key.data() + 9, &scope, 8);
  std::memcpy(key.data() + 17, &file, 8);
  std::memcpy(key.data() + 25, &line_start, 4);
  auto it = functions_.find(address);
  if (it != functions_.end() && it->second.header == key) return &it->second;

  FunctionInfo fi;
  fi.header = std::move(key);
  fi.user = user;
  fi.line_start = line_start;
  std::string function_name = "<main>";  // top-level code of a file has no name
  if (name != 0 && (status = read_string(name, function_name, "function name")) != WalkStatus::ok) {
    return nullptr;
  }
  if (scope != 0) {
    uint64_t class_name = 0;
    if (!memory_.read_value(scope + layout_.ce_name, class_name)) {
      status = fail("zend_class_entry", scope);
      return nullptr;
    }
    std::string cls;
    if ((status = read_string(class_name, cls, "class name")) != WalkStatus::ok) return nullptr;
    function_name = cls + "::" + function_name;
  }
  fi.name = std::move(function_name);
  if (user && (status = read_string(file, fi.file, "file name")) != WalkStatus::ok) return nullptr;
  if (functions_.size() >= kMaxCachedFunctions) functions_.clear();
  return &(functions_[address] = std::move(fi));
}

// A zend_string, cut at max_string bytes. Torn (problem_ set) when its pointer is null or its
// length is not plausible (a torn or corrupt pointer); the read's status when it fails.
WalkStatus PhpSampler::read_string(uint64_t address, std::string& out, const char* what) {
  uint64_t length = 0;
  if (address == 0) {
    problem_ = std::string(what) + " is a null pointer";
    return WalkStatus::torn;
  }
  if (!memory_.read_value(address + layout_.str_len, length)) return fail(what, address);
  if (length > (1u << 20)) {  // no PHP name or path is a MiB long
    problem_ = std::string(what) + " at " + hex(address) + " has length " + std::to_string(length);
    return WalkStatus::torn;
  }
  out.assign(std::min<uint64_t>(length, limits_.max_string), '\0');
  if (memory_.read(address + layout_.str_val, out.data(), out.size()) != ReadStatus::ok) {
    return fail(what, address);
  }
  return WalkStatus::ok;
}

}  // namespace gp::runtime::php
