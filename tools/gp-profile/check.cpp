// gp-profile's parsed arguments → gp::profile::Options, with gProfiler's checks and messages
// (parse_cmd_args in gprofiler/main.py; argparse's "argument X: invalid ... value" wording).
// Every refusal is a CLI::ValidationError: one line, exit 2.
#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include <unistd.h>

#include "cli.h"
#include "gp/profile/hw_events.h"
#include "gp/runtime/discovery.h"
#include "gp/runtime/java_safemode.h"
#include "gp/runtime/registry.h"

namespace gp::profile_tool {
namespace {

using gp::profile::Options;

[[noreturn]] void refuse(const std::string& message) { throw CLI::ValidationError(message); }

std::string repr(const std::string& s) {
  return s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? "\"" + s + "\""
                                                                               : "'" + s + "'";
}

// Python's int(): blanks around, an optional sign, digits (underscores between them).
std::optional<long> python_int(const std::string& text) {
  size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  std::string digits;
  bool negative = false;
  if (b < e && (text[b] == '+' || text[b] == '-')) negative = text[b++] == '-';
  for (size_t i = b; i < e; ++i) {
    char c = text[i];
    if (c == '_' && i > b && i + 1 < e && std::isdigit(static_cast<unsigned char>(text[i - 1])) &&
        std::isdigit(static_cast<unsigned char>(text[i + 1])))
      continue;
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    digits += c;
  }
  if (digits.empty() || digits.size() > 18) return std::nullopt;
  long v = std::strtol(digits.c_str(), nullptr, 10);
  return negative ? -v : v;
}

// humanfriendly.parse_size(binary=True): a number and an optional unit (b, k, kb, kib, m, ...).
std::optional<long> parse_size(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  size_t start = i;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (i == start) return std::nullopt;
  double number = std::strtod(text.substr(start, i - start).c_str(), nullptr);
  std::string unit;
  for (; i < text.size(); ++i) {
    if (!std::isspace(static_cast<unsigned char>(text[i])))
      unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  }
  static const char* const kPrefixes = "kmgtpezy";
  double scale = 1;
  if (!unit.empty() && unit != "b" && unit != "byte" && unit != "bytes") {
    const char* p = std::strchr(kPrefixes, unit[0]);
    std::string rest = unit.substr(1);
    if (p == nullptr || !(rest.empty() || rest == "b" || rest == "ib")) return std::nullopt;
    for (const char* q = kPrefixes; q <= p; ++q) scale *= 1024;
  }
  return static_cast<long>(number * scale);
}

struct Checked {
  CLI::App& app;
  ProfileArgs& args;

  bool given(const std::string& key) const {
    const CLI::Option* o = app.get_option_no_throw("--" + key);
    return o != nullptr && o->count() > 0;
  }
  bool flag(const std::string& key) const {
    auto it = args.flags.find(key);
    return it != args.flags.end() && it->second;
  }
  const std::string& text(const std::string& key) const { return args.values.at(key); }
  long integer(const std::string& key, long fallback) const {
    if (!given(key)) return fallback;
    return python_int(text(key)).value_or(fallback);
  }
  // True when option `a` was given after option `b` (argparse: the last one wins).
  bool later(const std::string& a, const std::string& b) const {
    const CLI::Option* oa = app.get_option_no_throw(a);
    const CLI::Option* ob = app.get_option_no_throw(b);
    long ia = -1, ib = -1, i = 0;
    for (const CLI::Option* o : app.parse_order()) {
      if (o == oa) ia = i;
      if (o == ob) ib = i;
      ++i;
    }
    return ia > ib;
  }
};

void check_one(const ValueCheck& c, const std::string& v) {
  const std::string arg = "argument " + c.display + ": ";
  switch (c.type) {
    case ValueType::text:
      return;
    case ValueType::positive_integer: {
      auto n = python_int(v);
      if (!n) refuse(arg + "invalid positive_integer value: " + repr(v));
      if (*n <= 0) refuse(arg + "invalid positive integer value: " + std::to_string(*n));
      return;
    }
    case ValueType::nonnegative_integer: {
      auto n = python_int(v);
      if (!n) refuse(arg + "invalid nonnegative_integer value: " + repr(v));
      if (*n < 0) refuse(arg + "invalid non-negative integer value: " + std::to_string(*n));
      return;
    }
    case ValueType::integer:
      if (!python_int(v)) refuse(arg + "invalid int value: " + repr(v));
      return;
    case ValueType::integer_range: {
      auto n = python_int(v);
      if (!n) refuse(arg + "invalid integer_range_check value: " + repr(v));
      if (*n < c.lo || *n >= c.hi)
        refuse(arg + "invalid integer value " + std::to_string(*n) + " (out of range " +
               std::to_string(c.lo) + "-" + std::to_string(c.hi) + ")");
      return;
    }
    case ValueType::integers_list: {
      size_t start = 0;
      while (true) {
        size_t comma = v.find(',', start);
        if (!python_int(v.substr(start, comma == std::string::npos ? comma : comma - start)))
          refuse(arg +
                 "Integer list should be a single integer, or comma separated list of integers "
                 "f.e. 13,452,2388");
        if (comma == std::string::npos) return;
        start = comma + 1;
      }
    }
    case ValueType::choice: {
      for (const auto& ch : c.choices)
        if (ch == v) return;
      std::string all;
      for (const auto& ch : c.choices) all += (all.empty() ? "" : ", ") + repr(ch);
      refuse(arg + "invalid choice: " + repr(v) + " (choose from " + all + ")");
    }
    case ValueType::enum_list: {
      std::string all;
      for (const auto& ch : c.choices) all += (all.empty() ? "" : ", ") + repr(ch);
      size_t start = 0;
      while (true) {
        size_t comma = v.find(',', start);
        std::string item = v.substr(start, comma == std::string::npos ? comma : comma - start);
        bool ok = false;
        for (const auto& ch : c.choices) ok |= ch == item;
        if (!ok) refuse(arg + "invalid value " + repr(item) + " (allowed values: [" + all + "])");
        if (comma == std::string::npos) return;
        start = comma + 1;
      }
    }
    case ValueType::size:
      if (!parse_size(v)) refuse(arg + "invalid size value: " + repr(v));
      return;
  }
}

void check_types(const Checked& k) {
  for (const ValueCheck& c : k.args.checks) {
    if (!k.given(c.key)) continue;
    auto list = k.args.lists.find(c.key);
    if (list != k.args.lists.end()) {
      for (const std::string& v : list->second) check_one(c, v);
    } else if (!(c.type == ValueType::text && k.text(c.key).empty())) {
      check_one(c, k.text(c.key));
    }
  }
}

void set_runtimes(const Checked& k, Options& o) {
  o.runtimes.clear();
  const auto runtimes = gp::runtime::all_runtimes();
  for (size_t i = 0; i < runtimes.size(); ++i) {
    const auto& rt = k.args.runtimes[i];
    std::string option = "--" + rt.option + "-mode";
    bool off =
        rt.disabled && !(k.given(rt.option + "-mode") && k.later(option, "--no-" + rt.option));
    std::string mode = "disabled";
    if (!off) {
      auto canonical = gp::runtime::normalize_mode(runtimes[i], rt.mode);
      if (!canonical) {
        std::string all;
        for (const auto& v : gp::runtime::accepted_mode_values(runtimes[i]))
          all += (all.empty() ? "" : ", ") + repr(v);
        refuse("argument " + option + ": invalid choice: " + repr(rt.mode) + " (choose from " +
               all + ")");
      }
      mode = *canonical;
    }
    o.runtimes.push_back({rt.option, mode});
  }
}

// --python-mode pyperf: gProfiler's eBPF Python profiler. gp-record walks Python frames in its BPF
// program (--python-frames) and gp-runtime leaves Python processes alone; without gp-record's BPF
// sampler (no system recorder, --rootless) Python goes to gp-runtime's own choice (auto).
void set_python_frames(const Checked& k, Options& o) {
  for (size_t i = 0; i < o.runtimes.size() && i < k.args.runtimes.size(); ++i) {
    auto& r = o.runtimes[i];
    if (r.option != "python" || r.mode == "disabled" || k.args.runtimes[i].mode != "pyperf")
      continue;
    if (o.perf_mode == gp::profile::PerfMode::disabled || o.rootless) continue;
    o.python_frames = true;
    r.mode = "disabled";
  }
}

// --python-mode auto: gProfiler's auto tries PyPerf and resorts to py-spy when it fails. Here
// gp-record walks Python frames where the kernel and the process's CPython allow
// (--python-frames=auto never fails the recording) and gp-runtime's sampler still runs: gp-merge
// keeps gp-record's stacks of the processes it walked and takes the sampler's for the others.
void set_python_frames_auto(Options& o) {
  if (o.python_frames || o.perf_mode == gp::profile::PerfMode::disabled || o.rootless) return;
  for (const auto& r : o.runtimes)
    if (r.option == "python" && r.mode == "auto") o.python_frames_auto = true;
}

// --perf-dwarf-stack-size: the stack perf copies per sample for DWARF unwinding. gp-record
// unwinds in the kernel and copies stacks only for samples taken before their process's tables
// are loaded: their copies take this much (within gp-record's bounds, said when it is moved).
constexpr long kMinCopySize = 512, kMaxCopySize = 16384;  // gp-record --unwind-copy-size
void set_unwind_copy_size(const Checked& k, ProfileArgs& args) {
  if (!k.given("perf-dwarf-stack-size")) return;
  long asked = k.integer("perf-dwarf-stack-size", 8192);
  long size = std::clamp(asked, kMinCopySize, kMaxCopySize);
  args.options.unwind_copy_size = static_cast<uint32_t>(size);
  if (args.options.perf_mode == gp::profile::PerfMode::fp)
    args.start_notes.push_back(
        "--perf-dwarf-stack-size has no effect with --perf-mode fp: no stack is copied");
  else if (size != asked)
    args.start_notes.push_back("--perf-dwarf-stack-size " + std::to_string(asked) +
                               ": gp-record copies " + std::to_string(kMinCopySize) + " to " +
                               std::to_string(kMaxCopySize) + " bytes of stack; it copies " +
                               std::to_string(size));
}

// --pyperf-user-stacks-pages: the user stack PyPerf copies per sample for its native frames.
// gp-record unwinds native frames in the kernel and copies stacks only for samples taken before
// their process's tables are loaded: their copies take this many pages, when PyPerf runs and
// --perf-dwarf-stack-size (the same copy) is not given.
void set_pyperf_stack_pages(const Checked& k, ProfileArgs& args) {
  if (!k.given("pyperf-user-stacks-pages") || k.text("pyperf-user-stacks-pages").empty()) return;
  Options& o = args.options;
  long pages = k.integer("pyperf-user-stacks-pages", 0);
  const std::string name = "--pyperf-user-stacks-pages " + std::to_string(pages);
  if (!o.python_frames && !o.python_frames_auto) {
    args.start_notes.push_back(name + " has no effect: PyPerf (gp-record's Python frames) does "
                                      "not run (--python-mode pyperf or auto runs it)");
  } else if (pages == 0) {
    args.start_notes.push_back(name + ": gp-record keeps Python processes' native frames (it "
                                      "has no switch to drop them)");
  } else if (k.given("perf-dwarf-stack-size")) {
    args.start_notes.push_back(name + " has no effect: --perf-dwarf-stack-size sets the "
                                      "same stack copy");
  } else if (o.perf_mode == gp::profile::PerfMode::fp) {
    args.start_notes.push_back(name + " has no effect with --perf-mode fp: no stack is copied");
  } else {
    long size = std::clamp(pages * 4096, kMinCopySize, kMaxCopySize);
    o.unwind_copy_size = static_cast<uint32_t>(size);
    if (size != pages * 4096)
      args.start_notes.push_back(name + ": gp-record copies at most " +
                                 std::to_string(kMaxCopySize / 4096) + " pages of stack; it copies " +
                                 std::to_string(size / 4096));
  }
}

// The pids of a list option of gProfiler's integers_list type (--pids, --python-pyspy-process).
std::vector<int> pids_of(const Checked& k, const std::string& key = "pids") {
  std::vector<int> pids;
  for (const std::string& item : k.args.lists[key]) {
    size_t start = 0;
    while (true) {
      size_t comma = item.find(',', start);
      long v = python_int(item.substr(start, comma == std::string::npos ? comma : comma - start))
                   .value_or(0);
      if (v > 0 && v <= INT_MAX) pids.push_back(static_cast<int>(v));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return pids;
}

// parse_cmd_args's rules, in its order and with its messages.
void check_rules(const Checked& k, const std::string& mode, bool frequency_given) {
  const ProfileArgs& a = k.args;
  bool period = k.given("perf-event-period") && k.integer("perf-event-period", 0) != 0;
  if (period && frequency_given)
    refuse(
        "--perf-event-period and -f/--frequency are mutually exclusive. Use "
        "--perf-event-period for period-based sampling or -f for frequency-based sampling.");
  if (mode == "cpu" && k.given("alloc-interval") && !k.text("alloc-interval").empty())
    refuse("--alloc-interval is only allowed in allocation profiling (--mode=allocation)");
  if (mode == "allocation" && frequency_given)
    refuse("-f|--frequency is only allowed in cpu profiling (--mode=cpu)");
  const Options& o = a.options;
  if (o.upload) {
    if (o.token.empty()) refuse("Must provide --token when --upload-results is passed");
    if (o.service_name.empty() && !k.flag("databricks-job-name-as-service-name"))
      refuse("Must provide --service-name when --upload-results is passed");
  }
  if (!o.upload && o.output_dir.empty() && !a.extract_resources)
    refuse("Must pass at least one output method (--upload-results / --output-dir)");
  if (a.extract_resources && a.resources_dest.empty())
    refuse("Must provide --resources-dest when extract-resources");
  if (a.upload_file && k.given("external-metadata") && !k.text("external-metadata").empty())
    refuse("--external-metadata cannot be used with upload-file");
  for (const std::string& filter : k.args.lists["app-id-args-filter"]) {
    try {
      std::regex r(filter);
    } catch (const std::regex_error& e) {
      refuse("argument --app-id-args-filter: invalid regex '" + filter + "': " + e.what());
    }
  }
  if (k.integer("perf-dwarf-stack-size", 8192) > 65528)
    refuse("--perf-dwarf-stack-size maximum size is 65528");
  if (o.profile_spawned_processes && k.given("pids"))
    refuse("--pids is not allowed when profiling spawned processes");
  if (k.flag("enable-heartbeat-server")) {
    if (!o.upload) refuse("--enable-heartbeat-server requires --upload-results to be enabled");
    if (o.token.empty()) refuse("--enable-heartbeat-server requires --token to be provided");
    if (o.service_name.empty())
      refuse("--enable-heartbeat-server requires --service-name to be provided");
  }
  bool event = k.given("perf-event") && !k.text("perf-event").empty();
  if (k.given("perf-event-period") && k.integer("perf-event-period", 0) < 0)
    refuse("--perf-event-period must not be negative");
  if (period && !event) refuse("--perf-event-period requires --perf-event to be specified");
  if (k.given("hw-events-file") && !k.text("hw-events-file").empty() && !event)
    refuse("--hw-events-file requires --perf-event to be specified");
  if (event && mode != "cpu")
    refuse("--perf-event is only supported in cpu profiling mode (--mode=cpu)");
  const auto& events = gp::profile::perf_events();
  if (event && std::find(events.begin(), events.end(), k.text("perf-event")) == events.end() &&
      !k.given("hw-events-file")) {
    std::string names;
    for (const auto& e : events) names += (names.empty() ? "" : ", ") + e;
    refuse("--perf-event '" + k.text("perf-event") + "' is not an event gp-record can sample (" +
           names + ")");
  }
}

// --perf-event NAME of --hw-events-file FILE: gp-record's --event for it on this host (gProfiler's
// validate_and_get_event_args; its messages).
std::string custom_event(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  if (!in) refuse("Failed to load hardware events file: Hardware events file not found: " + path);
  std::stringstream text;
  text << in.rdbuf();
  std::ifstream cpuinfo_file("/proc/cpuinfo");
  std::stringstream cpuinfo;
  cpuinfo << cpuinfo_file.rdbuf();
  auto event =
      gp::profile::custom_event(text.str(), path, name, gp::profile::cpu_platform(cpuinfo.str()),
                                gp::profile::under_hypervisor(cpuinfo.str()));
  if (!event) refuse(event.error().message);
  return *event;
}

// gProfiler's run_arguments: its argparse namespace. Ours: each option under its long name with
// '_' for '-', flags as booleans, lists as arrays, others as the text typed or the default.
json::Value run_arguments(const CLI::App& app) {
  json::Value out = json::Value::object();
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_lnames().empty() || o->get_group().empty()) continue;
    std::string name = o->get_lnames().front();
    if (name == "help" || name == "version" || name == "color" || name == "quiet" ||
        name == "config" || name.find("token") != std::string::npos)
      continue;
    for (char& c : name) c = c == '-' ? '_' : c;
    const auto& results = o->results();
    if (o->get_type_size_max() == 0 || o->get_expected_max() == 0) {
      out.set(name, json::Value::from_bool(o->count() > 0));
    } else if (o->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll) {
      json::Value list = json::Value::array();
      for (const auto& r : results) list.push_back(json::Value::from_string(r));
      out.set(name, o->count() > 0 ? std::move(list) : json::Value::null());
    } else if (o->count() > 0 && !results.empty()) {
      out.set(name, json::Value::from_string(results.back()));
    } else {
      const std::string& d = o->get_default_str();
      out.set(name, d.empty() ? json::Value::null() : json::Value::from_string(d));
    }
  }
  return out;
}

}  // namespace

void finish(CLI::App& app, ProfileArgs& args) {
  Checked k{app, args};
  check_types(k);
  Options& o = args.options;
  args.upload_file = app.got_subcommand("upload-file");
  args.extract_resources = app.got_subcommand("extract-resources");
  const std::string mode = k.given("mode") ? k.text("mode") : "cpu";
  const bool frequency_given = k.given("profiling-frequency");
  o.frequency = static_cast<unsigned>(k.integer("profiling-frequency", 11));
  o.duration_s = static_cast<unsigned>(k.integer("profiling-duration", 60));
  o.upload_timeout_s = static_cast<double>(k.integer("server-upload-timeout", 120));
  o.spool_max_bytes = static_cast<uint64_t>(k.integer("spool-max-size", 104857600));
  o.flamegraph = !(k.flag("no-flamegraph") &&
                   !(k.flag("flamegraph") && k.later("--flamegraph", "--no-flamegraph")));
  // smart by default: gProfiler's default is fp because its smart mode runs a second, DWARF perf;
  // gp-record's whole stacks cost about what its frame-pointer walk does.
  std::string perf_mode = k.given("perf-mode") ? k.text("perf-mode") : "smart";
  bool no_perf =
      k.flag("no-perf") && !(k.given("perf-mode") && k.later("--perf-mode", "--no-perf"));
  o.perf_mode =
      no_perf ? gp::profile::PerfMode::disabled : gp::profile::parse_perf_mode(perf_mode).value();
  set_runtimes(k, o);
  if (k.given("perf-event") && !k.text("perf-event").empty()) {
    // gProfiler's custom-event runs: the system profiler alone, walking frame pointers.
    o.perf_event = k.text("perf-event");
    const auto& events = gp::profile::perf_events();
    if (k.given("hw-events-file") && !k.text("hw-events-file").empty() &&
        std::find(events.begin(), events.end(), o.perf_event) == events.end())
      o.perf_event = custom_event(k.text("hw-events-file"), o.perf_event);
    o.perf_event_period = static_cast<uint64_t>(k.integer("perf-event-period", 0));
    o.perf_mode = gp::profile::PerfMode::fp;
    for (auto& r : o.runtimes) r.mode = "disabled";
  }
  // gProfiler's allocation mode (or async-profiler's alloc event, which gProfiler runs with
  // 1e9/f as the byte interval): Java allocations only, as gProfiler's profilers other than
  // Java's do not support the mode.
  bool ap_alloc =
      k.given("java-async-profiler-mode") && k.text("java-async-profiler-mode") == "alloc";
  if (mode == "allocation" || ap_alloc) {
    o.alloc_interval = std::max<uint64_t>(
        1, mode == "allocation" ? static_cast<uint64_t>(parse_size(k.given("alloc-interval")
                                                                       ? k.text("alloc-interval")
                                                                       : std::string("2mb"))
                                                            .value_or(kDefaultAllocInterval))
                                : 1000000000ull / std::max(o.frequency, 1u));
    o.perf_mode = gp::profile::PerfMode::disabled;
    for (auto& r : o.runtimes)
      if (r.option != "java") r.mode = "disabled";
  }
  if (mode == "none") {
    // No profiler supports the mode "none": gProfiler ends with "All profilers are disabled!".
    o.perf_mode = gp::profile::PerfMode::disabled;
    for (auto& r : o.runtimes) r.mode = "disabled";
  }
  set_python_frames(k, o);
  set_python_frames_auto(o);
  set_unwind_copy_size(k, args);
  set_pyperf_stack_pages(k, args);
  o.pids = pids_of(k);
  o.pyperf_verbose = k.flag("python-pyperf-verbose");
  if (o.pyperf_verbose && !o.python_frames && !o.python_frames_auto)
    args.start_notes.push_back(
        "--python-pyperf-verbose has no effect: PyPerf (gp-record's Python frames) does not run");
  o.python_pyspy_pids = pids_of(k, "python-pyspy-process");
  if (!o.python_pyspy_pids.empty() && o.python_frames)
    args.start_notes.push_back(
        "--python-pyspy-process has no effect with --python-mode pyperf: no py-spy runs (as "
        "gProfiler)");
  o.application_identifiers = !k.flag("disable-application-identifiers");
  o.application_metadata = !k.flag("disable-application-metadata");
  o.truncated_marker = !k.flag("no-truncated-marker");
  o.insert_dso_name = k.flag("insert-dso-name");
  o.profile_spawned_processes = k.flag("profile-spawned-processes");
  o.python_versions = !k.flag("no-python-versions");
  if (k.given("php-proc-filter")) {
    o.php_proc_filter = k.text("php-proc-filter");
    if (auto st = gp::runtime::check_php_proc_filter(o.php_proc_filter); !st)
      refuse(st.error().message);
  }
  o.collect_metrics = !k.flag("disable-metrics-collection");
  if (k.given("external-metadata")) o.external_metadata = k.text("external-metadata");
  o.container_names = !k.flag("disable-container-names");
  o.min_duration_s = static_cast<unsigned>(k.integer("min-duration", 0));
  o.max_processes_per_runtime =
      static_cast<unsigned>(k.integer("max-processes-runtime-profiler", 0));
  o.skip_system_above = static_cast<size_t>(k.integer("skip-system-profilers-above", 0));
  o.perf_use_cgroups = k.flag("perf-use-cgroups");
  o.perf_max_cgroups = static_cast<size_t>(std::max(0L, k.integer("perf-max-cgroups", 50)));
  o.perf_max_docker_containers =
      static_cast<size_t>(std::max(0L, k.integer("perf-max-docker-containers", 0)));
  if (k.given("java-async-profiler-mode") && k.text("java-async-profiler-mode") != "alloc")
    o.ap_mode = k.text("java-async-profiler-mode");
  if (k.given("java-async-profiler-features"))
    o.ap_features = k.text("java-async-profiler-features");
  if (k.given("java-async-profiler-args")) o.ap_args = k.text("java-async-profiler-args");
  o.java_jattach_timeout_s =
      static_cast<unsigned>(std::min(k.integer("java-jattach-timeout", 30), 86400L));
  o.java_method_modifiers = k.flag("java-include-method-modifiers");
  o.java_line_numbers =
      k.given("java-line-numbers") && k.text("java-line-numbers") == "line-of-function";
  o.java_thread_names = k.flag("java-collect-thread-names");
  if (k.given("java-collect-jvm-flags")) o.java_jvm_flags = k.text("java-collect-jvm-flags");
  o.app_id_args_filters = k.args.lists["app-id-args-filter"];
  o.java_spark_app_name = k.flag("java-collect-spark-app-name-as-appid");
  o.java_version_check = !k.flag("java-no-version-check");
  o.java_full_hserr = k.flag("java-full-hserr");
  if (k.given("java-safemode")) {
    // gProfiler's _init_java_safemode: '""' is taken as empty (DaemonSet args keep the quotes).
    o.java_safemode = k.text("java-safemode") == "\"\"" ? "" : k.text("java-safemode");
    std::vector<std::string> unknown;
    auto causes = gp::runtime::java_safemode_causes(o.java_safemode, &unknown);
    if (!unknown.empty()) {
      std::string list;
      for (const auto& item : unknown) list += (list.empty() ? "'" : ", '") + item + "'";
      refuse("unknown options given in Java safemode: [" + list + "]");
    }
    std::string unwatched;
    for (const auto& cause : causes)
      if (cause == "java-extended-version-checks" || cause == "ap-loaded-check")
        unwatched += (unwatched.empty() ? "" : ",") + cause;
    if (!unwatched.empty())
      args.start_notes.push_back("--java-safemode: gp-profile does not act on " + unwatched +
                                 " (gProfiler's checks before loading async-profiler)");
  }
  o.metadata_collection = !k.flag("disable-metadata-collection");
  if (k.given("profile-api-version")) o.profile_api_version = k.text("profile-api-version");
  args.log_rotate_max_size = k.integer("log-rotate-max-size", args.log_rotate_max_size);
  args.log_rotate_backup_count = k.integer("log-rotate-backup-count", args.log_rotate_backup_count);
  args.controller_pid = k.integer("controller-pid", 0);
  // --glogger-server is --api-server's old name (one destination: the later one wins).
  bool glogger = k.given("glogger-server") &&
                 !(k.given("api-server") && k.later("--api-server", "--glogger-server"));
  args.api_server = glogger                 ? k.text("glogger-server")
                    : k.given("api-server") ? k.text("api-server")
                                            : std::string(kDefaultApiServer);
  args.heartbeat_server = k.flag("enable-heartbeat-server");
  o.curlify_requests = k.flag("curlify-requests");
  args.heartbeat_interval_s = k.integer("heartbeat-interval", 30);
  // gProfiler: the variable's presence alone turns remote logs off, whatever its value.
  args.send_logs = o.upload && !k.flag("dont-send-logs") &&
                   std::getenv("GPROFILER_DONT_SEND_LOGS") == nullptr &&
                   o.profile_api_version != "v1";
  if (k.given("heartbeat-file")) args.heartbeat_file = k.text("heartbeat-file");
  args.disable_core_files = !k.flag("dont-disable-core-files");
  args.log_usage = k.flag("log-usage");
  args.diagnostics = k.flag("diagnostics");
  args.pid_ns_check = !k.flag("disable-pidns-check");
  args.memory_restart = !k.flag("perf-no-memory-restart");
  args.pyperf_skip_above = k.integer("python-skip-pyperf-profiler-above", 0);
  args.hw_metrics = k.flag("enable-hw-metrics-collection");
  if (k.given("perfspect-path")) args.perfspect_path = k.text("perfspect-path");
  args.perfspect_duration_s = k.integer("perfspect-duration", 60);
  if (args.hw_metrics && args.perfspect_path.empty())
    args.start_notes.push_back(
        "--enable-hw-metrics-collection: no hardware metrics without --perfspect-path: they need "
        "Intel PerfSpect, installed separately (https://github.com/intel/PerfSpect)");
  else if (!args.hw_metrics && !args.perfspect_path.empty())
    args.start_notes.push_back(
        "--perfspect-path has no effect without --enable-hw-metrics-collection");
  if (k.given("perfspect-duration") && (!args.hw_metrics || args.perfspect_path.empty()))
    args.start_notes.push_back("--perfspect-duration has no effect: PerfSpect does not run");
  if (args.upload_file || args.extract_resources) o.upload = o.upload || args.upload_file;
  check_rules(k, mode, frequency_given);
  args.not_implemented.clear();
  for (const auto& [name, opt] : args.unimplemented_options) {
    if (opt->count() > 0) args.not_implemented.push_back(name);
  }
  args.run_arguments = run_arguments(app);
  if (args.upload_file || args.extract_resources) return;
  if (auto problem = gp::profile::validate(o, ::geteuid() == 0)) refuse(*problem);
}

}  // namespace gp::profile_tool
