#include "import/perf_header.h"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <ctime>

namespace gp::import {
namespace {

uint64_t leading_u64(std::string_view s) {
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// The value after `key = ` up to the next ',' in an event line, or empty.
std::string_view attr_field(std::string_view line, std::string_view key) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return {};
  std::string_view rest = line.substr(at + key.size());
  return rest.substr(0, rest.find(','));
}

PerfEventAttr parse_event_line(std::string_view value) {
  PerfEventAttr a;
  a.name = std::string(attr_field(value, "name = "));
  std::string_view v = attr_field(value, "{ sample_period, sample_freq } = ");
  if (v.empty()) v = attr_field(value, "sample_freq = ");
  if (v.empty()) v = attr_field(value, "sample_period = ");
  a.value = leading_u64(v);
  a.freq = value.find(", freq = 1") != std::string_view::npos;
  return a;
}

// perf prints ctime() of the local time: "Sun Nov 22 04:31:51 2026".
int64_t parse_captured_on(std::string_view value) {
  std::string text(value);
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%a %b %d %H:%M:%S %Y", &tm);
  if (end == nullptr) return 0;
  tm.tm_isdst = -1;
  std::time_t t = std::mktime(&tm);
  // Years far beyond 2262 do not fit in int64 nanoseconds: treat them as unknown.
  constexpr int64_t kMaxSeconds = INT64_MAX / 1'000'000'000;
  if (t < 0 || t > kMaxSeconds) return 0;
  return static_cast<int64_t>(t) * 1'000'000'000;
}

// "1989.903 ms" → nanoseconds.
int64_t parse_duration_ms(std::string_view value) {
  double ms = 0;
  std::string text(value);
  if (std::sscanf(text.c_str(), "%lf", &ms) != 1 || !(ms >= 0) || ms > 9.2e12) return 0;
  return static_cast<int64_t>(ms * 1e6);
}

}  // namespace

void apply_header_comment(std::string_view key, std::string_view value, model::Header& header,
                          std::vector<PerfEventAttr>& events) {
  model::HostInfo& host = header.host;
  if (key == "hostname") host.hostname = std::string(value);
  else if (key == "os release") host.kernel_release = std::string(value);
  else if (key == "arch") host.machine = std::string(value);
  else if (key == "nrcpus avail") host.cpu_count = static_cast<uint32_t>(leading_u64(value));
  else if (key == "captured on") header.start_time_ns = parse_captured_on(value);
  else if (key == "sample duration") header.sampling.duration_ns = parse_duration_ms(value);
  else if (key == "event") events.push_back(parse_event_line(value));
}

void apply_event_attrs(const std::vector<PerfEventAttr>& events, model::Sampling& sampling) {
  for (const PerfEventAttr& a : events) {
    if (a.name != sampling.event) continue;
    if (a.freq) sampling.frequency_hz = static_cast<uint32_t>(a.value);
    else sampling.period = a.value;
    return;
  }
}

bool event_selected(std::string_view wanted, std::string_view printed) {
  if (printed == wanted) return true;
  return printed.size() > wanted.size() && printed.substr(0, wanted.size()) == wanted &&
         printed[wanted.size()] == ':';
}

}  // namespace gp::import
