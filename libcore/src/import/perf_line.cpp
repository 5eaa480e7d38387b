#include "gp/import/perf_line.h"

#include "gp/util/ascii.h"

#include <cstdint>

namespace gp::import {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!util::is_ascii_digit(c)) return false;
  return true;
}

// Parses a decimal int32 with an optional '-' (perf prints -1 for unknown pids).
bool parse_int(std::string_view s, int32_t& out) {
  bool neg = !s.empty() && s.front() == '-';
  if (neg) s.remove_prefix(1);
  if (!all_digits(s) || s.size() > 10) return false;
  int64_t v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  if (v > INT32_MAX) return false;
  out = static_cast<int32_t>(neg ? -v : v);
  return true;
}

bool parse_u64(std::string_view s, uint64_t& out) {
  if (!all_digits(s) || s.size() > 19) return false;
  uint64_t v = 0;
  for (char c : s) v = v * 10 + static_cast<uint64_t>(c - '0');
  out = v;
  return true;
}

// `PID` or `PID/TID`.
bool parse_pid_tid(std::string_view tok, int32_t& pid, int32_t& tid) {
  size_t slash = tok.find('/');
  if (slash == std::string_view::npos) {
    pid = -1;
    return parse_int(tok, tid);
  }
  return parse_int(tok.substr(0, slash), pid) && parse_int(tok.substr(slash + 1), tid);
}

// `[CPU]`.
bool parse_cpu(std::string_view tok, int32_t& cpu) {
  if (tok.size() < 3 || tok.front() != '[' || tok.back() != ']') return false;
  return parse_int(tok.substr(1, tok.size() - 2), cpu) && cpu >= 0;
}

// `SECONDS.FRACTION:` (microseconds by default, nanoseconds with --ns).
bool parse_time(std::string_view tok, int64_t& ns) {
  if (tok.size() < 4 || tok.back() != ':') return false;
  tok.remove_suffix(1);
  size_t dot = tok.find('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  std::string_view sec = tok.substr(0, dot), frac = tok.substr(dot + 1);
  uint64_t s = 0, f = 0;
  if (!parse_u64(sec, s) || !parse_u64(frac, f) || frac.size() > 9 || s > 9'000'000'000ull)
    return false;
  for (size_t i = frac.size(); i < 9; ++i) f *= 10;
  ns = static_cast<int64_t>(s * 1'000'000'000ull + f);
  return true;
}

// `NAME:` where NAME is not a number (that would be a time or a pid).
bool parse_event(std::string_view tok, std::string_view& event) {
  if (tok.size() < 2 || tok.back() != ':') return false;
  tok.remove_suffix(1);
  bool has_alpha = false;
  for (char c : tok)
    if (!util::is_ascii_digit(c) && c != '.') has_alpha = true;
  if (!has_alpha) return false;
  event = tok;
  return true;
}

// Trivially constructible (no member initializers): the token array is not cleared per line.
struct Token {
  const char* data;
  uint32_t size;
  uint32_t pos;
  std::string_view text() const { return {data, size}; }
};
constexpr size_t kMaxTokens = 24;  // comm (<= 16 bytes) + the fixed fields fit easily
using Tokens = Token[kMaxTokens];

size_t tokenize(std::string_view line, Tokens& toks) {
  size_t n = 0, i = 0;
  while (i < line.size() && n < kMaxTokens) {
    while (i < line.size() && is_blank(line[i])) ++i;
    if (i == line.size()) break;
    size_t start = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    toks[n++] = {line.data() + start, static_cast<uint32_t>(i - start),
                 static_cast<uint32_t>(start)};
  }
  return n;
}

enum class Match { none, weak, strong };

// Tries the fields after COMM starting at token p. Strong: an event name was found, so the
// layout is certain. Weak: a plausible layout without an event (perf script -F without event).
Match match_fields(std::string_view line, const Tokens& toks, size_t n, size_t p,
                   PerfSampleHeader& out) {
  out = PerfSampleHeader{};
  if (!parse_pid_tid(toks[p].text(), out.pid, out.tid)) return Match::none;
  size_t i = p + 1;
  if (i < n && parse_cpu(toks[i].text(), out.cpu)) ++i;
  if (i < n && parse_time(toks[i].text(), out.time_ns)) {
    ++i;
    // A bare number after the time is the period (never before it: that would be ambiguous
    // with a numeric word in COMM).
    if (i < n && parse_u64(toks[i].text(), out.period)) ++i;
  }
  Match m = Match::weak;
  if (i < n && parse_event(toks[i].text(), out.event)) {
    ++i;
    m = Match::strong;
  }
  size_t end_of_fields = i < n ? toks[i].pos : line.size();
  out.rest = trim(line.substr(end_of_fields));
  if (m == Match::weak && !out.rest.empty()) {
    // Without an event name, what follows must be an inline ip frame: `ADDR [SYM] (DSO)`.
    PerfFrame f;
    if (!parse_frame_line(out.rest, f) || (f.dso.empty() && !f.symbol.empty())) return Match::none;
  }
  out.comm = trim(line.substr(0, toks[p].pos));
  return m;
}

}  // namespace

bool parse_hex(std::string_view text, uint64_t& out) {
  if (text.empty() || text.size() > 16) return false;
  uint64_t v = 0;
  for (char c : text) {
    unsigned d;
    if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
    else return false;
    v = (v << 4) | d;
  }
  out = v;
  return true;
}

std::string_view strip_symbol_offset(std::string_view sym) {
  size_t plus = sym.rfind("+0x");
  if (plus == std::string_view::npos || plus == 0 || plus + 3 == sym.size()) return sym;
  uint64_t ignored;
  if (!parse_hex(sym.substr(plus + 3), ignored)) return sym;
  return sym.substr(0, plus);
}

bool parse_frame_line(std::string_view line, PerfFrame& out) {
  line = trim(line);
  size_t sp = 0;
  while (sp < line.size() && !is_blank(line[sp])) ++sp;
  PerfFrame f;
  if (!parse_hex(line.substr(0, sp), f.address)) return false;
  std::string_view rest = trim(line.substr(sp));
  if (!rest.empty() && rest.back() == ')') {
    // The DSO is the last balanced (...) group preceded by a blank or starting the text;
    // it may hold parentheses itself: `(/tmp/x.so (deleted))`.
    int depth = 0;
    size_t k = rest.size();
    while (k-- > 0) {
      if (rest[k] == ')') ++depth;
      else if (rest[k] == '(' && --depth == 0) break;
    }
    if (k != static_cast<size_t>(-1) && (k == 0 || is_blank(rest[k - 1]))) {
      f.dso = rest.substr(k + 1, rest.size() - k - 2);
      rest = trim(rest.substr(0, k));
    }
  }
  f.symbol = strip_symbol_offset(rest);
  out = f;
  return true;
}

bool parse_sample_header(std::string_view line, PerfSampleHeader& out) {
  if (line.size() > UINT32_MAX) return false;  // token positions are 32-bit
  Tokens toks;
  size_t n = tokenize(line, toks);
  bool have_weak = false;
  PerfSampleHeader weak, h;
  for (size_t p = 1; p < n; ++p) {
    Match m = match_fields(line, toks, n, p, h);
    if (m == Match::strong) {
      out = h;
      return true;
    }
    if (m == Match::weak && !have_weak) {
      weak = h;
      have_weak = true;
    }
  }
  if (have_weak) out = weak;
  return have_weak;
}

bool parse_header_comment(std::string_view line, std::string_view& key, std::string_view& value) {
  if (line.empty() || line.front() != '#') return false;
  line.remove_prefix(1);
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return false;
  key = trim(line.substr(0, colon));
  value = trim(line.substr(colon + 1));
  return !key.empty();
}

}  // namespace gp::import
