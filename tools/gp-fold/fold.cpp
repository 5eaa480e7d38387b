// gp-fold's run(): inputs → one archive → filters → the chosen format on the output.
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>

#include "cli.h"
#include "gp/fold/col.h"
#include "gp/fold/external_metadata.h"
#include "gp/fold/filter.h"
#include "gp/fold/folded.h"
#include "gp/fold/pprof.h"
#include "gp/fold/speedscope.h"
#include "gp/fold/stacks.h"
#include "gp/fold/top.h"
#include "gp/fold/weight.h"
#include "gp/ingest/input.h"

namespace gp::fold_tool {
namespace {

using gp::cli::error;
using gp::cli::info;
using gp::cli::kExitFailure;
using gp::cli::kExitOk;
using gp::cli::kExitPartial;
using gp::cli::kExitUsage;
using gp::cli::warning;

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// async-profiler's rule: without --format, the output's extension names the format.
std::string format_for(const FoldArgs& args) {
  if (!args.format.empty()) return args.format;
  const std::string& o = args.output;
  if (ends_with(o, ".folded") || ends_with(o, ".collapsed")) return "folded";
  if (ends_with(o, ".pb.gz") || ends_with(o, ".pprof") || ends_with(o, ".pb")) return "pprof";
  if (ends_with(o, ".speedscope.json") || ends_with(o, ".speedscope")) return "speedscope";
  return "col";
}

// Switches that only make sense for some formats are usage errors elsewhere, not silently
// ignored options.
bool check_switches(const FoldArgs& a, const std::string& format) {
  auto refuse = [&](const char* option, const char* formats) {
    error(std::string("option ") + option + " applies to " + formats + " only, not --format " +
          format);
    std::cerr << "Try 'gp-fold --help' for more information.\n";
    return false;
  };
  bool top = a.top != 0;
  bool stacks_view = top || format == "folded" || format == "speedscope";
  if ((a.with_pid || a.with_tid) && !(format == "folded" || format == "speedscope"))
    return refuse(a.with_pid ? "--with-pid" : "--with-tid", "--format folded and speedscope");
  if ((a.user_only || a.kernel_only) && !stacks_view)
    return refuse(a.user_only ? "--user-only" : "--kernel-only",
                  "--format folded, speedscope and --top");
  if ((a.annotate || a.kernel_delimiter) && (top || format != "folded"))
    return refuse(a.annotate ? "--annotate" : "--kernel-delimiter", "--format folded");
  if ((a.profile_api_version != "v2" || a.no_app_metadata || !a.external_metadata.empty() ||
       a.no_container_names || a.no_metadata) &&
      (top || format != "col"))
    return refuse(a.no_app_metadata              ? "--no-app-metadata"
                  : !a.external_metadata.empty() ? "--external-metadata"
                  : a.no_container_names         ? "--no-container-names"
                  : a.no_metadata                ? "--no-metadata"
                                                 : "--profile-api-version",
                  "--format col");
  return true;
}

// Reads and concatenates every input's sessions. nullopt: reported error (exit 1).
std::optional<model::Archive> load(const std::vector<std::string>& inputs, bool& partial) {
  model::Archive all;
  bool told_unnamed = false;
  for (const std::string& path : inputs) {
    auto archive = ingest::read_profile(path);
    if (!archive) {
      error(archive.error().message);
      return std::nullopt;
    }
    if (!told_unnamed && fold::mostly_unsymbolized(*archive)) {
      told_unnamed = true;
      gp::cli::tell_unsymbolized(display_name(path));
    }
    if (archive->truncated) {
      warning(archive->problem.empty() ? "input '" + display_name(path) + "' is truncated"
                                       : archive->problem);
      partial = true;
    }
    for (model::Session& s : archive->sessions) all.sessions.push_back(std::move(s));
  }
  return all;
}

fold::StackOptions stack_options(const FoldArgs& a) {
  fold::StackOptions o;
  o.with_pid = a.with_pid;
  o.with_tid = a.with_tid;
  o.user_only = a.user_only;
  o.kernel_only = a.kernel_only;
  o.truncated_marker = !a.no_truncated_marker;
  o.insert_dso_name = a.insert_dso_name;
  return o;
}

Status write_format(const std::string& format, const model::Archive& archive, const FoldArgs& a,
                    const json::Value& external_static, std::ostream& out) {
  if (a.top != 0) {
    fold::StackOptions o = stack_options(a);
    o.process_frame = false;
    fold::write_top(fold::top_frames(fold::fold_stacks(archive, o), a.top), out);
    return ok_status();
  }
  if (format == "col") {
    fold::ColOptions o;
    o.profile_api_version = a.profile_api_version;
    o.application_metadata = !a.no_app_metadata;
    o.truncated_marker = !a.no_truncated_marker;
    o.insert_dso_name = a.insert_dso_name;
    o.external_metadata = external_static;
    o.container_names = !a.no_container_names;
    o.metadata_collection = !a.no_metadata;
    return fold::write_col(archive, o, out);
  }
  if (format == "folded") {
    fold::FoldedOptions o;
    o.annotate = a.annotate;
    o.kernel_delimiter = a.kernel_delimiter;
    fold::write_folded(archive, stack_options(a), o, out);
    return ok_status();
  }
  if (format == "pprof") {
    fold::PprofOptions o;
    o.truncated_marker = !a.no_truncated_marker;
    return fold::write_pprof(archive, out, o);
  }
  std::string name = a.inputs.size() == 1 ? display_name(a.inputs[0]) : "gp-fold";
  return fold::write_speedscope(fold::fold_stacks(archive, stack_options(a)), name, out);
}

// ".NAME.tmp.PID" in the directory of `path`.
std::string temp_name_for(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return dir + "." + base + ".tmp." + std::to_string(::getpid());
}

// Writes to stdout or a file; reports failures. Returns false on a reported error.
bool emit(const std::string& format, const model::Archive& archive, const FoldArgs& a,
          const json::Value& external_static) {
  if (a.output == "-") {
    if (format == "pprof" && a.top == 0 && gp::cli::is_terminal(STDOUT_FILENO)) {
      error("refusing to write gzipped pprof data to a terminal: use -o FILE or redirect");
      return false;
    }
    auto st = write_format(format, archive, a, external_static, std::cout);
    if (!st) {
      error(st.error().message);
      return false;
    }
    std::cout.flush();
    return gp::cli::finish_text_output(std::cout, "standard output");
  }
  // Written next to the output and renamed over it once complete: a failure (or a kill) never
  // leaves a partial or header-only FILE, and an earlier FILE stays until the new one is whole.
  // Devices, FIFOs and links (-o /dev/stdout) are written in place, as before.
  struct stat existing {};
  const bool in_place = ::lstat(a.output.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode);
  const std::string tmp = in_place ? a.output : temp_name_for(a.output);
  std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
  if (!file) {
    error("cannot create '" + a.output + "': " + std::strerror(errno));
    return false;
  }
  auto st = write_format(format, archive, a, external_static, file);
  file.close();
  if (!st || !file) {
    const int e = errno;
    if (!in_place) ::unlink(tmp.c_str());
    error(!st ? st.error().message : "cannot write '" + a.output + "': " + std::strerror(e));
    return false;
  }
  if (!in_place && ::rename(tmp.c_str(), a.output.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    error("cannot write '" + a.output + "': " + std::strerror(e));
    return false;
  }
  return true;
}

}  // namespace

int run(FoldArgs& args) {
  // Tables here grow by doubling to tens of MB. Above its mmap threshold glibc maps each new
  // block fresh and unmaps the old one, so every growth faults in new pages; on the heap the
  // freed blocks are reused (on 200k samples: a fifth fewer page faults).
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 256 << 20);
  std::string format = format_for(args);
  if (!check_switches(args, format)) return kExitUsage;
  json::Value external_static;  // null: none given
  std::optional<fold::ExternalMetadata> external;
  if (!args.external_metadata.empty()) {
    auto read = fold::read_external_metadata(args.external_metadata);
    if (!read) {
      error(read.error().message);
      return kExitFailure;
    }
    external = std::move(*read);
    external_static = external->static_part;
  }
  bool partial = false;
  auto archive = load(args.inputs, partial);
  if (!archive) return kExitFailure;
  if (external && !args.no_app_metadata) fold::apply_external_app_metadata(*archive, *external);
  fold::SampleFilter filter;
  filter.pids = args.pids;
  filter.comms = args.comms;
  filter.containers = args.containers;
  // Idle: gProfiler keeps swapper (col, pprof, speedscope); bcc and --top leave it out.
  bool idle_default = format != "folded" && args.top == 0;
  filter.exclude_idle = args.exclude_idle || (!args.include_idle && !idle_default);
  uint64_t total = 0;
  for (const auto& s : archive->sessions) total += s.total_samples();
  uint64_t kept = filter.empty() ? total : fold::filter_samples(*archive, filter);
  if (kept == 0 && total != 0 &&
      !(filter.pids.empty() && filter.comms.empty() && filter.containers.empty()))
    warning("no samples match the filters (" + std::to_string(total) + " samples read)");
  if (uint64_t cut = fold::truncated_samples(*archive); cut != 0)
    info(1, std::to_string(cut) + " of " + std::to_string(kept) +
                " samples have a truncated stack" +
                (args.no_truncated_marker ? "" : " (under a '[truncated]' frame)"));
  // pprof keeps both values (samples and the summed period); the other formats get one.
  fold::Weight weight = fold::Weight::period;
  fold::parse_weight(args.weight, weight);
  if (format != "pprof" || args.top != 0) fold::apply_weight(*archive, weight);
  bool written = emit(format, *archive, args, external_static);
  // The process ends right after: the OS takes the memory back at once, while the destructor
  // would free a few allocations per location and stack (hundreds of thousands on a 200k-sample
  // recording). Deliberately kept, not leaked by accident.
  static model::Archive* kept_until_exit = nullptr;
  kept_until_exit = new model::Archive(std::move(*archive));
  (void)kept_until_exit;
  if (!written) return kExitFailure;
  return partial ? kExitPartial : kExitOk;
}

}  // namespace gp::fold_tool
