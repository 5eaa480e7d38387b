// Any profile input → Archive: the single dispatch over the formats a tool accepts.
#include "gp/ingest/input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "gp/archive/reader.h"
#include "gp/import/perf_line.h"
#include "gp/import/perf_script.h"
#include "gp/ingest/collapsed.h"

namespace gp::ingest {
namespace {

std::string_view first_line(std::string_view text, size_t from = 0) {
  size_t nl = text.find('\n', from);
  return text.substr(from, nl == std::string_view::npos ? std::string_view::npos : nl - from);
}

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// perf script prints a sample header line, then indented "<hex addr> sym (dso)" frame lines.
// Re-indented text may have lost the indentation: a header line naming its event decides too.
bool looks_like_perf_script(std::string_view text, size_t line_start) {
  import::PerfSampleHeader h;
  if (import::parse_sample_header(first_line(text, line_start), h) && !h.event.empty()) return true;
  size_t nl = text.find('\n', line_start);
  if (nl == std::string_view::npos) return false;
  std::string_view next = first_line(text, nl + 1);
  size_t i = 0;
  while (i < next.size() && (next[i] == ' ' || next[i] == '\t')) ++i;
  if (i == 0 || i >= next.size()) return false;
  size_t hex = i;
  while (i < next.size() && is_hex(next[i])) ++i;
  return i > hex && i < next.size() && next[i] == ' ';
}

struct Fd {
  int fd = -1;
  bool owned = false;
  ~Fd() {
    if (owned && fd >= 0) ::close(fd);
  }
};

// Reads until `want` bytes are in `data` (or EOF, or all of it when want == npos).
Status read_more(int fd, const std::string& name, std::string& data, size_t want) {
  char buf[1 << 16];
  while (data.size() < want) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error("cannot read '" + name + "': " + std::strerror(errno));
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  return ok_status();
}

// Reads the rest of a text input. A line longer than kMaxTextLineBytes is refused as soon as
// it is that long, before the rest of it is read: a 1 GB line costs 16 MiB, not gigabytes.
Status read_text(int fd, const std::string& name, std::string& data) {
  size_t line_no = 1;
  size_t line_start = 0;
  size_t scanned = 0;
  char buf[1 << 16];
  for (;;) {
    for (size_t nl; (nl = data.find('\n', scanned)) != std::string::npos; scanned = nl + 1) {
      ++line_no;
      line_start = nl + 1;
    }
    scanned = data.size();
    if (data.size() - line_start > kMaxTextLineBytes) {
      return make_error("cannot read '" + name + "': line " + std::to_string(line_no) +
                        " is longer than " + std::to_string(kMaxTextLineBytes >> 20) +
                        " MiB: not a profile line");
    }
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error("cannot read '" + name + "': " + std::strerror(errno));
    if (n == 0) return ok_status();
    data.append(buf, static_cast<size_t>(n));
  }
}

// `perf script` text, imported as gp-import does with its defaults (the first event).
Result<model::Archive> read_perf_script(std::string_view text, const std::string& path) {
  model::Archive archive;
  model::Session& s = archive.sessions.emplace_back();
  import::PerfScriptStats stats = import::import_perf_script(text, s);
  if (stats.samples == 0)
    return make_error("'" + path + "' has no perf script samples with call stacks");
  if (s.header.source == model::SourceKind::unknown) s.header.source = model::SourceKind::imported;
  if (stats.skipped_lines > 0) {  // as gp-import says it: the output is partial (exit 3)
    archive.truncated = true;
    archive.problem = "skipped " + std::to_string(stats.skipped_lines) + " line(s) of '" + path +
                      "' that are not perf script output (first: line " +
                      std::to_string(stats.first_skipped_line) + ")";
  }
  return archive;
}

}  // namespace

InputFormat sniff(std::string_view first_bytes) {
  if (archive::looks_like_archive(first_bytes)) return InputFormat::archive;
  if (first_bytes.substr(0, 3) == "# {") return InputFormat::collapsed;
  // The first line that is neither blank nor a comment decides.
  size_t pos = 0;
  while (pos < first_bytes.size()) {
    std::string_view line = first_line(first_bytes, pos);
    if (line.empty() || line[0] == '#' || line == "\r") {
      pos += line.size() + 1;
      continue;
    }
    if (looks_like_perf_script(first_bytes, pos)) return InputFormat::perf_script;
    if (line.back() == '\r') line.remove_suffix(1);
    size_t space = line.rfind(' ');
    if (space == std::string_view::npos || space + 1 == line.size()) return InputFormat::unknown;
    for (char c : line.substr(space + 1))
      if (c < '0' || c > '9') return InputFormat::unknown;
    if (line.find('\0') != std::string_view::npos) return InputFormat::unknown;
    return InputFormat::collapsed;
  }
  return first_bytes.empty() ? InputFormat::unknown : InputFormat::collapsed;
}

std::optional<std::string> not_an_archive(std::string_view first, const std::string& name) {
  if (first.empty() || archive::looks_like_archive(first)) return std::nullopt;
  std::string quoted = "'" + name + "'";
  if (import::looks_like_perf_data(first))
    return quoted + " is a perf.data file, not a gp archive: convert it with 'gp-import " + name +
           "' first";
  if (first.find('\0') != std::string_view::npos) return std::nullopt;  // binary: not ours to name
  switch (sniff(first)) {
    case InputFormat::perf_script:
      return quoted + " is perf script text, not a gp archive: convert it with 'gp-import " + name +
             "' first";
    case InputFormat::collapsed:
      return quoted +
             (first.substr(0, 3) == "# {" ? " is a gProfiler .col file" : " is folded text") +
             ", not a gp archive: gp-fold and gp-flame read it";
    default:
      return std::nullopt;
  }
}

std::optional<std::string> path_not_an_archive(const std::string& path) {
  if (path == "-") return std::nullopt;
  Fd in;
  in.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in.fd < 0) return std::nullopt;
  in.owned = true;
  std::string data;
  if (!read_more(in.fd, path, data, 64 << 10)) return std::nullopt;
  // A text cut mid-line at the window's end: sniffing looks at whole lines only.
  if (data.size() == (64u << 10) && data.find('\n') != std::string::npos)
    data.resize(data.rfind('\n') + 1);
  return not_an_archive(data, path);
}

Result<model::Archive> read_profile(const std::string& path) {
  Fd in;
  if (path == "-") {
    in.fd = STDIN_FILENO;
  } else {
    in.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (in.fd < 0) return make_error("cannot open '" + path + "': " + std::strerror(errno));
    in.owned = true;
  }
  std::string data;
  struct stat st_buf {};
  // Text is read whole: no regrowth (up to 1 GiB; a sparse file may claim anything).
  if (::fstat(in.fd, &st_buf) == 0 && S_ISREG(st_buf.st_mode) && st_buf.st_size > 0)
    data.reserve(std::min<size_t>(static_cast<size_t>(st_buf.st_size), size_t{1} << 30));
  if (auto st = read_more(in.fd, path, data, 8); !st) return st.error();
  if (archive::looks_like_archive(data)) {
    // Regular files stream through the archive reader; so does a pipe, after the bytes that
    // were read from it to sniff (gathering it whole first cost gp-fold a third of its time in
    // copies and page faults as the buffer doubled).
    if (path != "-") return archive::read_archive(path);
    auto stream = archive::InputStream::from_fd(in.fd, "-", data);
    return archive::read_archive(*stream);
  }
  if (import::looks_like_perf_data(data))
    return make_error("'" + path + "' is a perf.data file: convert it with 'gp-import " + path +
                      "' first");
  if (auto st = read_text(in.fd, path, data); !st) return st.error();
  if (data.empty()) return make_error("'" + path + "' is empty: not a profile");
  switch (sniff(data)) {
    case InputFormat::perf_script:
      return read_perf_script(data, path);
    case InputFormat::unknown:
      return make_error("'" + path + "' is not a profile (gp archive, .col or folded text)");
    default:
      return parse_collapsed(data, path);
  }
}

}  // namespace gp::ingest
