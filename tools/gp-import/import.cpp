// gp-import's run(): input (stdin or a file: perf script text, or perf.data read natively or
// through `perf script`) → parser → archive writer, streaming text in big reads.
#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "cli.h"
#include "gp/archive/reader.h"
#include "gp/archive/writer.h"
#include "gp/cli/progress.h"
#include "gp/elf/build_id.h"
#include "gp/import/perf_data.h"
#include "gp/import/perf_runner.h"
#include "gp/import/perf_unwind_tables.h"
#include "gp/proc/kallsyms.h"
#include "gp/proc/process.h"
#include "gp/import/perf_script.h"
#include "gp/ingest/input.h"
#include "gp/util/version.h"

namespace gp::import_tool {
namespace {

using gp::cli::error;
using gp::cli::hint;
using gp::cli::info;
using gp::cli::warning;

constexpr size_t kReadBytes = 1u << 20;
// Aggregated samples kept before they go out as a chunk (bounds memory on huge inputs).
constexpr size_t kChunkSamples = 200'000;

std::string input_name(const ImportArgs& a) { return a.input == "-" ? "<stdin>" : a.input; }

// The terminal's progress line: "12.5 of 980.0 MiB read" (without "of" when the size is unknown:
// a pipe, or perf script's output).
void show_read_progress(uint64_t done, uint64_t size) {
  auto mib = [](uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", static_cast<double>(bytes) / (1 << 20));
    return std::string(text);
  };
  gp::cli::show_progress(mib(done) + (size > 0 ? " of " + mib(size) : "") + " MiB read");
}

// The input's size when it is a regular file, else 0.
uint64_t file_size(int fd) {
  struct stat st{};
  return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
}

// Reads up to n bytes, retrying short reads, so the first block is big enough to sniff.
ssize_t read_full(int fd, char* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return got > 0 ? static_cast<ssize_t>(got) : -1;
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(got);
}

// The archive side: opened at the first write, so a failed import leaves no output file.
class Output {
 public:
  explicit Output(const ImportArgs& a) : args_(a) {}
  // Writes what is new; the producer then forgets its samples (they were cleared).
  template <typename Producer>
  bool write_chunk(model::Session& s, Producer& producer) {
    if (!open(s)) return false;
    if (!check(writer_->write_chunk(s))) return false;
    producer.forget_samples();
    return true;
  }
  bool finish(model::Session& s) {
    if (!open(s)) return false;
    return check(writer_->end_session(s)) && check(out_->close());
  }
  bool broken_pipe() const { return out_ && out_->last_errno() == EPIPE; }

 private:
  bool open(model::Session& s) {
    if (writer_) return true;
    auto out = archive::OutputStream::open(
        args_.output, !args_.no_compress && !archive::output_is_pipe(args_.output));
    if (!out) return check(out.error());
    out_ = std::move(*out);
    writer_ = std::make_unique<archive::Writer>(
        *out_, archive::WriterOptions{.producer = "gp-import", .producer_version = kVersion});
    return check(writer_->begin_session(s));
  }
  bool check(const Status& st) {
    if (st) return true;
    if (!broken_pipe()) error(st.error().message);
    return false;
  }
  const ImportArgs& args_;
  std::unique_ptr<archive::OutputStream> out_;
  std::unique_ptr<archive::Writer> writer_;
};

// Where the text comes from: an fd we read, and perf when we started it.
struct Source {
  int fd = -1;
  bool owns_fd = false;
  std::unique_ptr<import::PerfScriptProcess> perf;
  std::string first;  // bytes already read while sniffing
  bool perf_data = false;  // a perf.data file or stream, read natively
  ~Source() {
    if (owns_fd && fd >= 0) ::close(fd);
  }
};

// .col or folded text: what gp-fold's sniffing calls collapsed, with at least one stack line
// (a text of comments only is perf's header without samples as well).
bool is_collapsed_text(std::string_view first) {
  if (first.compare(0, 3, "# {") == 0) return true;
  size_t cut = first.rfind('\n');  // whole lines only
  std::string_view lines = first.substr(0, cut == std::string_view::npos ? first.size() : cut + 1);
  if (ingest::sniff(lines) != ingest::InputFormat::collapsed) return false;
  size_t pos = 0;
  while (pos < lines.size()) {
    size_t nl = lines.find('\n', pos);
    std::string_view line = lines.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    if (!line.empty() && line[0] != '#' && line != "\r") return true;
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return false;
}

std::string perf_exe() {
  const char* env = std::getenv("GP_PERF");
  return env && *env ? env : "perf";
}

// Opens the input and decides what it is. nullopt after reporting an error.
std::optional<int> open_source(const ImportArgs& a, Source& src) {
  std::string name = input_name(a);
  if (a.input == "-") {
    src.fd = STDIN_FILENO;
  } else {
    src.fd = ::open(a.input.c_str(), O_RDONLY | O_CLOEXEC);
    if (src.fd < 0) {
      error("cannot open '" + name + "': " + std::strerror(errno));
      return gp::cli::kExitFailure;
    }
    src.owns_fd = true;
  }
  src.first.resize(kReadBytes);
  ssize_t n = read_full(src.fd, src.first.data(), src.first.size());
  if (n < 0) {
    error("cannot read '" + name + "': " + std::strerror(errno));
    return gp::cli::kExitFailure;
  }
  src.first.resize(static_cast<size_t>(n));
  if (archive::looks_like_archive(src.first)) {
    error("cannot import '" + name + "': it is a gp archive already, not perf script text");
    return gp::cli::kExitFailure;
  }
  if (!import::looks_like_perf_data(src.first)) {
    // perf script prints text; a NUL byte in the first block means binary data, which could
    // otherwise match a sample line by chance and import noise.
    if (std::memchr(src.first.data(), '\0', src.first.size()) != nullptr) {
      error("cannot import '" + name + "': it is binary data, not perf script output");
      return gp::cli::kExitFailure;
    }
    // A .col or folded file would import as noise (or nothing) with a warning per line.
    if (is_collapsed_text(src.first)) {
      bool col = src.first.compare(0, 3, "# {") == 0;
      error("cannot import '" + name + "': it is " +
            (col ? "a gProfiler .col file" : "folded text") + ", not perf script output");
      hint("gp-fold and gp-flame read it as it is");
      return gp::cli::kExitFailure;
    }
    return std::nullopt;
  }
  if (!a.via_perf_script) {
    src.perf_data = true;
    return std::nullopt;
  }
  if (a.input == "-") {
    error("cannot import '<stdin>' with --via-perf-script: perf reads a perf.data file by its path");
    hint("give its path ('gp-import --via-perf-script perf.data')");
    return gp::cli::kExitFailure;
  }
  ::close(src.fd);
  src.owns_fd = false;
  src.first.clear();
  auto args = import::PerfScriptProcess::script_args(a.input);
  auto proc = import::PerfScriptProcess::start(perf_exe(), args);
  if (!proc) {
    error("cannot import '" + name + "': " + proc.error().message);
    hint(
        "gp-import needs Linux perf for perf.data files (Debian: apt install linux-perf), "
        "or set GP_PERF");
    return gp::cli::kExitFailure;
  }
  src.perf = std::move(*proc);
  src.fd = src.perf->stdout_fd();
  info(1, "running '" + perf_exe() + " script -i " + a.input + " --header -F +pid'");
  return std::nullopt;
}

// Feeds the whole input to the parser, writing chunks as samples pile up.
bool pump(const ImportArgs& a, Source& src, import::PerfScriptParser& parser, model::Session& s,
          Output& out) {
  const uint64_t size = file_size(src.fd);
  parser.reserve_for(size);
  parser.feed(src.first);
  uint64_t done = src.first.size();
  std::vector<char> buf(kReadBytes);
  for (;;) {
    ssize_t n = ::read(src.fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error("cannot read '" + input_name(a) + "': " + std::strerror(errno));
      return false;
    }
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
    show_read_progress(done, size);
    parser.feed({buf.data(), static_cast<size_t>(n)});
    if (s.samples.size() >= kChunkSamples && !out.write_chunk(s, parser)) return false;
  }
  parser.finish();
  return true;
}

std::string event_list(const std::vector<std::pair<std::string, uint64_t>>& events) {
  std::string list;
  for (const auto& [name, n] : events)
    list += (list.empty() ? "'" : ", '") + name + "' (" + std::to_string(n) + " samples)";
  return list;
}

// What was imported of which event, said the same for perf script text and perf.data. Returns
// an exit status when the event asked for has no samples.
std::optional<int> judge_events(const ImportArgs& a, const std::string& name, uint64_t samples,
                                const std::string& event,
                                const std::vector<std::pair<std::string, uint64_t>>& others) {
  if (samples == 0 && !a.event.empty()) {
    error("no samples of event '" + a.event + "' in '" + name + "'" +
          (others.empty() ? "" : " (it has " + event_list(others) + ")"));
    return gp::cli::kExitFailure;
  }
  if (samples == 0) warning("no samples in '" + name + "'");
  if (!others.empty() && a.event.empty()) {
    warning("'" + name + "' mixes events: imported '" + event + "' (" + std::to_string(samples) +
            " samples), skipped " + event_list(others));
    hint("choose one with --event NAME");
  }
  return std::nullopt;
}

// Diagnostics after parsing. Returns an exit status when the import failed as a whole.
std::optional<int> judge(const ImportArgs& a, const import::PerfScriptStats& st) {
  std::string name = input_name(a);
  if (st.samples == 0 && st.skipped_lines > 0) {
    error("cannot import '" + name + "': not perf script output (line " +
          std::to_string(st.first_skipped_line) + " is not understood)");
    return gp::cli::kExitFailure;
  }
  if (auto failed = judge_events(a, name, st.samples, st.event, st.other_events)) return failed;
  if (st.samples_without_pid > 0)
    info(1,
         "perf printed tids without pids: each thread counts as a process (use 'perf script "
         "-F +pid')");
  if (st.skipped_lines > 0)
    warning("skipped " + std::to_string(st.skipped_lines) + " line(s) of '" + name +
            "' that are not perf script output (first: line " +
            std::to_string(st.first_skipped_line) + ")");
  return std::nullopt;
}

// perf is quiet when all is well; what it says otherwise (lost samples, unreadable maps) is
// worth showing. The first lines only: perf can repeat itself per map.
void relay_perf_warnings(const std::string& text) {
  size_t start = 0, shown = 0;
  while (start < text.size() && shown < 10) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    warning("perf: " + line);
    ++shown;
  }
}

// The whole perf.data in memory: a regular file is mapped, a pipe read to its end.
class WholeInput {
 public:
  ~WholeInput() {
    if (map_ != MAP_FAILED) ::munmap(map_, size_);
  }
  bool load(const ImportArgs& a, Source& src) {
    struct stat st{};
    if (::fstat(src.fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      size_ = static_cast<size_t>(st.st_size);
      // Every page is read: mapped at once (up to 1 GiB), not a fault at a time.
      const int populate = size_ <= (size_t{1} << 30) ? MAP_POPULATE : 0;
      map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | populate, src.fd, 0);
      if (map_ != MAP_FAILED) {
        ::madvise(map_, size_, MADV_SEQUENTIAL);
        return true;
      }
    }
    data_ = std::move(src.first);
    std::vector<char> buf(kReadBytes);
    for (;;) {
      ssize_t n = ::read(src.fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error("cannot read '" + input_name(a) + "': " + std::strerror(errno));
        return false;
      }
      if (n == 0) return true;
      data_.append(buf.data(), static_cast<size_t>(n));
      show_read_progress(data_.size(), 0);
    }
  }
  std::span<const uint8_t> bytes() const {
    if (map_ != MAP_FAILED) return {static_cast<const uint8_t*>(map_), size_};
    return {reinterpret_cast<const uint8_t*>(data_.data()), data_.size()};
  }

 private:
  void* map_ = MAP_FAILED;
  size_t size_ = 0;
  std::string data_;
};

// Where the kernel symbols of a perf.data come from: --kallsyms, perf's build-id cache, or this
// host's /proc/kallsyms when it runs the recorded kernel. Empty when none fits.
std::string kallsyms_path(const ImportArgs& a, const import::PerfDataImporter& imp) {
  if (!a.kallsyms.empty()) return a.kallsyms;
  const std::string& id = imp.kernel_build_id();
  const char* home = std::getenv("HOME");
  if (!id.empty() && home && *home) {
    std::string cached =
        std::string(home) + "/.debug/[kernel.kallsyms]/" + elf::build_id_hex(id) + "/kallsyms";
    if (::access(cached.c_str(), R_OK) == 0) return cached;
  }
  model::HostInfo host = proc::host_info();
  bool same = !id.empty() ? host.kernel_build_id == id
                          : !imp.os_release().empty() && host.kernel_release == imp.os_release();
  return same ? "/proc/kallsyms" : std::string();
}

void add_kernel_symbols(const ImportArgs& a, const import::PerfDataImporter& imp,
                        model::Session& s) {
  const auto& addresses = imp.kernel_addresses();
  if (addresses.empty()) return;
  std::string path = kallsyms_path(a, imp);
  if (path.empty()) {
    warning("kernel frames will stay unsymbolized: no kernel symbols of the recorded kernel");
    hint("give a copy of the recording host's /proc/kallsyms with --kallsyms FILE");
    return;
  }
  auto symbols = proc::KallsymsTable::covering_in_file(
      path, std::vector<uint64_t>(addresses.begin(), addresses.end()));
  if (!symbols) {
    if (!a.kallsyms.empty()) warning("cannot read '" + path + "': " + symbols.error().message);
    else warning("kernel frames will stay unsymbolized: " + symbols.error().message);
    return;
  }
  info(1, "kernel symbols from '" + path + "'");
  s.kernel_symbols.insert(s.kernel_symbols.end(), std::make_move_iterator(symbols->begin()),
                          std::make_move_iterator(symbols->end()));
}

// Where --call-graph dwarf samples' binaries are found: perf's build-id cache (perf record copies
// the binaries it saw there), then their recorded paths; tables in gp-record's cache when root.
import::BinaryTablesOptions unwind_table_options() {
  import::BinaryTablesOptions o;
  const char* home = std::getenv("HOME");
  if (home && *home) o.stores.push_back(std::string(home) + "/.debug");
  if (::geteuid() == 0) o.cache_dir = "/var/cache/gp/unwind";  // gp-record --unwind-cache
  o.warn = [](const std::string& why) { warning(why); };
  return o;
}

// How the --call-graph dwarf samples were unwound, and which binaries were missing.
void report_walks(const std::string& name, const import::PerfDataStats& st,
                  const import::BinaryTables& tables) {
  if (st.walked == 0) return;
  const auto& t = tables.stats();
  info(1, "unwound " + std::to_string(st.walked) + " user stacks from their copies: " +
              std::to_string(st.walked_complete) + " whole, " +
              std::to_string(st.walked_truncated) + " truncated; tables of " +
              std::to_string(t.binaries - t.missing) + " binaries (" + std::to_string(t.built) +
              " built, " + std::to_string(t.cache_hits) + " from the cache)");
  if (st.missing_binaries == 0) return;
  std::string list;
  for (const auto& [path, why] : st.missing)
    list += (list.empty() ? "'" : ", '") + path + "' (" + why + ")";
  if (st.missing_binaries > st.missing.size())
    list += " and " + std::to_string(st.missing_binaries - st.missing.size()) + " more";
  warning(std::to_string(st.walked_without_table) + " of the " + std::to_string(st.walked) +
          " stack copies of '" + name + "' met binaries with no unwind table: " + list);
  hint("their frames there were walked with frame pointers; stacks that stop short are marked "
       "[truncated]");
}

// A perf.data read by gp-import itself.
int import_perf_data(const ImportArgs& a, Source& src) {
  std::string name = input_name(a);
  WholeInput input;
  if (!input.load(a, src)) return gp::cli::kExitFailure;
  model::Session session;
  Output out(a);
  bool write_failed = false;
  import::PerfDataImporter* self = nullptr;
  import::PerfDataOptions opt;
  opt.event = a.event;
  import::BinaryTables tables(unwind_table_options());
  opt.unwind_tables = &tables;
  opt.on_progress = show_read_progress;
  opt.on_chunk = [&] {
    if (out.write_chunk(session, *self)) return true;
    write_failed = true;
    return false;
  };
  import::PerfDataImporter imp(session, opt);
  self = &imp;
  std::string why;
  if (!imp.import(input.bytes(), why)) {
    error("cannot import '" + name + "': " + why);
    if (why.find("compressed") != std::string::npos)
      hint("decompress it with 'perf inject -i IN -o OUT', or use --via-perf-script");
    return gp::cli::kExitFailure;
  }
  if (write_failed) return out.broken_pipe() ? gp::cli::kExitOk : gp::cli::kExitFailure;
  const import::PerfDataStats& st = imp.stats();
  if (st.samples == 0 && st.bad_records > 0) {
    error("cannot import '" + name + "': " + st.first_problem);
    return gp::cli::kExitFailure;
  }
  if (auto failed = judge_events(a, name, st.samples, st.event, st.other_events)) return *failed;
  if (st.truncated)
    warning("'" + name + "' is truncated at offset " +
            std::to_string(st.truncated_at) + ": kept the " + std::to_string(st.samples) +
            " samples before it");
  if (st.bad_records > 0)
    warning("skipped " + std::to_string(st.bad_records) + " record(s) of '" + name +
            "' that do not decode (first: " + st.first_problem + ")");
  if (st.lost_events > 0)
    warning("perf lost " + std::to_string(st.lost_events) + " events while recording '" + name +
            "'");
  if (st.bad_feature_sections > 0)
    info(1, "ignored " + std::to_string(st.bad_feature_sections) +
                " header section(s) that do not parse");
  report_walks(name, st, tables);
  add_kernel_symbols(a, imp, session);
  struct stat file{};
  if (a.input != "-" && ::stat(a.input.c_str(), &file) == 0)
    session.header.start_time_ns = static_cast<int64_t>(file.st_mtime) * 1'000'000'000 -
                                   session.header.sampling.duration_ns;
  if (!out.finish(session)) return out.broken_pipe() ? gp::cli::kExitOk : gp::cli::kExitFailure;
  info(1, "imported " + std::to_string(st.samples) + " samples, " + std::to_string(st.frames) +
              " frames from " + std::to_string(st.records) + " records" +
              (st.pipe ? " (pipe mode)" : ""));
  static model::Session* kept_until_exit = nullptr;  // freed by the exit, as run() does
  kept_until_exit = new model::Session(std::move(session));
  (void)kept_until_exit;
  bool partial = st.truncated || st.bad_records > 0;
  return partial ? gp::cli::kExitPartial : gp::cli::kExitOk;
}

}  // namespace

int run(const ImportArgs& a) {
  // Tables here grow by doubling to tens of MB. Above its mmap threshold glibc maps each new
  // block fresh and unmaps the old one, so every growth faults in new pages; on the heap the
  // freed blocks are reused (on 200k samples: 50k -> 35k page faults, a tenth of the CPU time).
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 256 << 20);
  if (a.output == "-" && !a.output_given && gp::cli::is_terminal(STDOUT_FILENO)) {
    error("refusing to write a binary archive to a terminal");
    hint("redirect standard output or pipe it into gp-fold, or give '-o FILE' ('-o -' forces it)");
    return gp::cli::kExitUsage;
  }
  Source src;
  if (auto status = open_source(a, src)) return *status;
  if (src.perf_data) return import_perf_data(a, src);
  model::Session session;
  import::PerfScriptParser parser(session, {.event = a.event});
  Output out(a);
  bool read_ok = pump(a, src, parser, session, out);
  if (out.broken_pipe()) return gp::cli::kExitOk;  // reader went away: quiet, as documented
  bool perf_failed = false;
  if (src.perf) {
    Status st = src.perf->wait();
    if (st) relay_perf_warnings(src.perf->stderr_text());
    if (!st) {
      perf_failed = true;
      if (parser.stats().samples == 0) {
        error("cannot import '" + input_name(a) + "': " + st.error().message);
        return gp::cli::kExitFailure;
      }
      warning(st.error().message + "; keeping the samples it printed");
    }
  }
  if (!read_ok) return gp::cli::kExitFailure;
  const import::PerfScriptStats& st = parser.stats();
  if (auto status = judge(a, st)) return *status;
  if (!out.finish(session)) return out.broken_pipe() ? gp::cli::kExitOk : gp::cli::kExitFailure;
  info(1, "imported " + std::to_string(st.samples) + " samples, " + std::to_string(st.frames) +
              " frames from " + std::to_string(st.lines) + " lines (" + std::to_string(st.bytes) +
              " bytes)");
  bool partial = perf_failed || st.skipped_lines > 0;
  // The process ends right after: the OS takes the memory back at once, while the destructor
  // would free an allocation or two per location and stack. Deliberately kept until exit.
  static model::Session* kept_until_exit = nullptr;
  kept_until_exit = new model::Session(std::move(session));
  (void)kept_until_exit;
  return partial ? gp::cli::kExitPartial : gp::cli::kExitOk;
}

}  // namespace gp::import_tool
