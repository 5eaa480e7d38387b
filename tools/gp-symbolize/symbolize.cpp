#include <sys/stat.h>

#include <cerrno>
#include <optional>
#include <thread>

#include "cli.h"
#include "gp/archive/reader.h"
#include "gp/archive/writer.h"
#include "gp/cli/progress.h"
#include "gp/ingest/input.h"
#include "gp/symbolize/elf_file.h"
#include "gp/symbolize/store_trust.h"
#include "gp/symbolize/stream_symbolizer.h"
#include "gp/symbolize/symbol_export.h"
#include "gp/symbolize/symbolizer.h"
#include "gp/util/version.h"

namespace gp::symbolize_tool {
namespace {

using model::SymbolStatus;
using symbolize::FindStatus;

// The sidecar store of an archive file: ARCHIVE.symbols, when that directory exists and may be
// believed (gp/symbolize/store_trust.h); an untrusted one is skipped with a warning.
std::string sidecar_of(const std::string& input) {
  if (input.empty() || input == "-") return {};
  std::string dir = input + ".symbols";
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return {};
  if (auto trusted = symbolize::check_store_trusted(dir); !trusted) {
    gp::cli::warning("skipped the sidecar store '" + dir + "': " + trusted.error().message);
    return {};
  }
  return dir;
}

symbolize::SymbolizeOptions make_options(const SymbolizeArgs& a) {
  symbolize::SymbolizeOptions o;
  o.finder.debug_dirs = a.debug_dirs;
  o.finder.sidecar = sidecar_of(a.input);
  o.finder.sysroot = a.sysroot;
  if (a.stores_only) {
    o.finder.use_recorded_path = false;
    o.finder.system_debug_root.clear();
  }
  o.finder.debuginfod = a.debuginfod;
  o.resolver.lines = a.lines;
  o.resolver.inlines = !a.no_inline;
  if (a.no_demangle) o.resolver.demangle = symbolize::DemangleMode::none;
  else symbolize::parse_demangle_mode(a.demangle, &o.resolver.demangle);
  unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  o.jobs = a.jobs != 0 ? a.jobs : std::min(cpus, 8u);
  o.on_binary_done = [](size_t done, size_t total) {  // a terminal's progress line
    gp::cli::show_progress(std::to_string(done) + " of " + std::to_string(total) +
                           " binaries named");
  };
  return o;
}

std::string describe(const symbolize::ModuleReport& m) {
  std::string id = m.build_id.empty() ? "no build-id" : "build-id " + symbolize::hex(m.build_id);
  return "'" + m.path + "' (" + id + ")";
}

// -v: where each binary came from; otherwise one hint naming the first binary not found.
void report_modules(const symbolize::SymbolizeReport& r) {
  size_t missing = 0;
  const symbolize::ModuleReport* first_missing = nullptr;
  for (const auto& m : r.modules) {
    const auto& f = m.files;
    if (!m.error.empty()) {
      gp::cli::warning("cannot use " + describe(m) + ": " + m.error);
    } else if (f.status == FindStatus::found) {
      std::string line = "resolved " + std::to_string(m.frames - m.unresolved) + "/" +
                         std::to_string(m.frames) + " frames of " + describe(m) + " from " +
                         f.binary_source + " '" + f.binary + "'";
      if (!f.debug.empty()) line += ", debug info from " + f.debug_source + " '" + f.debug + "'";
      gp::cli::info(1, line);
      continue;
    }
    ++missing;
    if (first_missing == nullptr) first_missing = &m;
    std::string why = f.status == FindStatus::build_id_mismatch
                          ? "build-id mismatch ('" + f.mismatched + "' has another)"
                          : "no file found";
    gp::cli::info(
        1, "no names for " + std::to_string(m.frames) + " frames of " + describe(m) + ": " + why);
  }
  if (missing > 0 && gp::cli::verbosity() < 1)
    gp::cli::hint(
        std::to_string(missing) + (missing == 1 ? " binary was" : " binaries were") +
        " not found (first: '" + first_missing->path +
        "'); pass --debug-dir with a store made by 'gp-symbolize --export-symbols' on the "
        "recording host, --sysroot or --debuginfod (-v lists them)");
}

void print_summary(const symbolize::SymbolizeReport& total) {
  uint64_t frames = 0;
  for (auto n : total.by_status) frames += n;
  std::string line = std::to_string(total.count(SymbolStatus::resolved)) + " of " +
                     std::to_string(frames) + " frames resolved (" +
                     std::to_string(total.newly_resolved) + " in this run)";
  for (SymbolStatus st :
       {SymbolStatus::no_file, SymbolStatus::build_id_mismatch, SymbolStatus::no_symbol,
        SymbolStatus::unmapped, SymbolStatus::unsymbolized}) {
    if (total.count(st) != 0)
      line += std::string(", ") + std::to_string(total.count(st)) + " " + model::to_string(st);
  }
  gp::cli::info(0, line);
}

void add_up(symbolize::SymbolizeReport& total, symbolize::SymbolizeReport&& r) {
  for (size_t i = 0; i < total.by_status.size(); ++i) total.by_status[i] += r.by_status[i];
  total.newly_resolved += r.newly_resolved;
  for (auto& m : r.modules) total.modules.push_back(std::move(m));
}

// Copies what one session needs into the store; returns the number of binaries not exported.
size_t export_session(const SymbolizeArgs& args, const model::Session& s, bool* failed) {
  auto o = make_options(args);
  auto report = symbolize::export_symbols({s}, o.finder, args.export_dir);
  if (!report) {
    gp::cli::error("cannot export symbols to '" + args.export_dir + "': " + report.error().message);
    *failed = true;
    return 0;
  }
  size_t problems = 0;
  for (const auto& m : report->modules) {
    if (m.problem.empty()) continue;
    ++problems;
    gp::cli::warning("cannot export '" + m.path + "': " + m.problem);
  }
  gp::cli::info(0, "exported " + std::to_string(report->modules.size() - problems) + " of " +
                       std::to_string(report->modules.size()) +
                       (report->modules.size() == 1 ? " binary" : " binaries") + " to '" +
                       args.export_dir + "' (" + std::to_string(report->files_copied) +
                       " files copied, " + std::to_string(report->bytes_copied) + " bytes; " +
                       std::to_string(report->files_present) + " already there)");
  return problems;
}

struct Output {
  std::unique_ptr<archive::OutputStream> stream;
  std::unique_ptr<archive::Writer> writer;
};

// The reader's problems as warnings, each once: a cut session, or bytes after the last complete
// session that are not an archive (formats/README.md §5); the sessions before them are kept,
// with exit 3. The reader keeps its last problem, so the stream's end would repeat a cut one.
class ProblemWarnings {
 public:
  // Warns of the reader's problem unless it was the last one warned; true when there is one.
  bool warn(const archive::Reader& reader) {
    if (reader.problem().empty()) return false;
    if (reader.problem() != last_) gp::cli::warning(reader.problem());
    last_ = reader.problem();
    return true;
  }

 private:
  std::string last_;
};

Result<Output> open_output(const SymbolizeArgs& args) {
  Output out;
  const std::string path = args.output.empty() ? "-" : args.output;
  auto stream =
      archive::OutputStream::open(path, !args.no_compress && !archive::output_is_pipe(path));
  if (!stream) return stream.error();
  out.stream = std::move(*stream);
  out.writer = std::make_unique<archive::Writer>(
      *out.stream, archive::WriterOptions{512u << 10, "gp-symbolize", kVersion});
  return out;
}

int write_failed(const Output& out, const Status& st) {
  if (out.stream->last_errno() == EPIPE) return gp::cli::kExitOk;
  gp::cli::error(st.error().message);
  return gp::cli::kExitFailure;
}

int finish(const SymbolizeArgs& args, Output& out, const symbolize::SymbolizeReport& total,
           bool truncated, bool write_archive, size_t not_exported) {
  gp::cli::clear_progress();
  if (out.stream) {
    auto st = out.stream->close();
    if (!st && out.stream->last_errno() != EPIPE) {
      gp::cli::error(st.error().message);
      return gp::cli::kExitFailure;
    }
  }
  if (write_archive) {
    report_modules(total);
    print_summary(total);
  }
  if (truncated) return gp::cli::kExitPartial;
  if (args.strict && write_archive && total.misses() > 0) {
    gp::cli::warning(std::to_string(total.misses()) + " frames unresolved (--strict)");
    return gp::cli::kExitPartial;
  }
  if (args.strict && not_exported > 0) return gp::cli::kExitPartial;
  return gp::cli::kExitOk;
}

// Streams each session: every input chunk is passed on as soon as it is read (samples and stacks
// are never held), and the session's frames are named at its end, binary by binary, as location
// updates (StreamSymbolizer), so memory does not grow with samples or stacks.
int stream_sessions(const SymbolizeArgs& args, archive::InputStream& in) {
  archive::Reader reader(in);
  Output out;
  symbolize::SymbolizeReport total;
  symbolize::StreamSymbolizer symbolizer(make_options(args));
  bool truncated = false;
  ProblemWarnings problems;
  size_t sessions = 0;
  for (;;) {
    auto ev = reader.next_event();
    if (!ev) {
      gp::cli::error(ev.error().message);
      if (sessions == 0) return gp::cli::kExitFailure;
      truncated = true;
      break;
    }
    Status st = ok_status();
    if (ev->kind == archive::ReadEvent::Kind::end_of_stream) {
      truncated |= problems.warn(reader);
      break;
    }
    if (ev->kind == archive::ReadEvent::Kind::header) {
      ++sessions;
      if (!out.stream) {
        auto opened = open_output(args);
        if (!opened) {
          gp::cli::error(opened.error().message);
          return gp::cli::kExitFailure;
        }
        out = std::move(*opened);
      }
      model::Session head;
      head.header = std::move(ev->header);
      symbolizer.begin_session(head.header);
      st = out.writer->begin_session(head);
    } else if (ev->kind == archive::ReadEvent::Kind::chunk) {
      symbolizer.symbolize_chunk(ev->chunk);
      st = out.writer->write_delta(ev->chunk);
    } else {  // end_of_session
      st = symbolizer.end_session(
          [&](archive::ChunkDelta& d) { return out.writer->write_delta(d); });
      model::Trailer trailer = ev->trailer.value_or(model::Trailer{});
      trailer.counters = symbolizer.counters();
      // A session that was cut stays marked as cut, so every later tool still reports it.
      if (st) st = out.writer->end_deltas(trailer, !ev->truncated);
      add_up(total, symbolizer.take_report());
      if (ev->truncated) {
        truncated = true;
        problems.warn(reader);
      }
    }
    if (!st) return write_failed(out, st);
  }
  return finish(args, out, total, truncated, true, 0);
}

}  // namespace

int run(const SymbolizeArgs& args) {
  bool write_archive = args.export_dir.empty() || !args.output.empty();
  if (write_archive && (args.output.empty() || args.output == "-") && gp::cli::is_terminal(1)) {
    gp::cli::error("refusing to write a binary archive to a terminal");
    gp::cli::hint("redirect standard output or use -o FILE");
    return gp::cli::kExitUsage;
  }
  if (auto why = ingest::path_not_an_archive(args.input)) {  // .col, perf.data, perf text
    gp::cli::error(*why);
    return gp::cli::kExitFailure;
  }
  if (args.debuginfod && !symbolize::debuginfod_available())
    gp::cli::warning(
        "--debuginfod: cannot load libdebuginfod.so.1 (Debian: libdebuginfod1): no "
        "files will be downloaded");
  auto in = archive::InputStream::open(args.input);
  if (!in) {
    gp::cli::error(in.error().message);
    return gp::cli::kExitFailure;
  }
  if (args.export_dir.empty()) return stream_sessions(args, **in);
  // --export-symbols looks at whole sessions (every binary a session refers to).
  archive::Reader reader(**in);
  Output out;
  symbolize::SymbolizeReport total;
  auto options = make_options(args);
  bool truncated = false, failed = false;
  ProblemWarnings problems;
  size_t sessions = 0, not_exported = 0;
  for (;;) {
    auto next = reader.next();
    if (!next) {
      gp::cli::error(next.error().message);
      if (sessions == 0) return gp::cli::kExitFailure;
      truncated = true;
      break;
    }
    if (!next->has_value()) {
      truncated |= problems.warn(reader);
      break;
    }
    model::Session& s = **next;
    ++sessions;
    if (!args.export_dir.empty()) not_exported += export_session(args, s, &failed);
    if (failed) return gp::cli::kExitFailure;
    if (write_archive) {
      if (!out.stream) {
        auto opened = open_output(args);
        if (!opened) {
          gp::cli::error(opened.error().message);
          return gp::cli::kExitFailure;
        }
        out = std::move(*opened);
      }
      add_up(total, symbolize::symbolize_session(s, options));
      auto st = out.writer->write_session(s);
      if (!st) return write_failed(out, st);
    }
    if (s.truncated) {
      truncated = true;
      problems.warn(reader);
    }
  }
  return finish(args, out, total, truncated, write_archive, not_exported);
}

}  // namespace gp::symbolize_tool
