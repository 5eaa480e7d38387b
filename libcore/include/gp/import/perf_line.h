#pragma once
// Parsing single lines of `perf script` text. Pure functions over string_views (no allocation,
// no regex): the streaming importer (perf_script.h) calls them for every line.
//
// What perf prints (perf 5.x–6.x, any -F field set that keeps comm and tid/pid):
//   sample header   `COMM PID[/TID] [CPU] TIME: [PERIOD] EVENT: [payload or inline ip frame]`
//                   with every field after PID optional; COMM may hold spaces and may be
//                   right-aligned (leading blanks) by older perf versions.
//   frame line      `<TAB><blanks>ADDR [SYMBOL[+0xOFF]] [(DSO)]`, leaf first; DSO may itself
//                   contain parentheses (`/x.so (deleted)`), SYMBOL may contain blanks.
//                   Re-indented text has any blanks, or none, before ADDR.
//   header comment  `# key : value` lines from `perf script --header`.
// Lines are given without their '\n' (a trailing '\r' is tolerated).

#include <cstdint>
#include <string_view>

namespace gp::import {

struct PerfFrame {
  uint64_t address = 0;
  std::string_view symbol;  // as printed, offset removed; empty when perf printed none
  std::string_view dso;     // without the outer parentheses; empty when perf printed none
};

struct PerfSampleHeader {
  std::string_view comm;  // trimmed; may contain blanks
  int32_t pid = -1;       // -1 when perf printed only the tid (its default without -F +pid)
  int32_t tid = -1;
  int32_t cpu = -1;        // -1 when absent
  int64_t time_ns = -1;    // perf timestamp, -1 when absent
  uint64_t period = 0;     // 0 when absent
  std::string_view event;  // without the final ':'; empty when absent
  std::string_view rest;   // what follows the event: an inline ip frame or tracepoint payload
};

// Parses a frame line (leading blanks allowed). False when the line is not one.
bool parse_frame_line(std::string_view line, PerfFrame& out);

// Parses a sample header line. False when the line is not one.
bool parse_sample_header(std::string_view line, PerfSampleHeader& out);

// Removes a trailing `+0x<hex>` offset from a symbol. Only the last one, so `operator+` and
// `operator++0x33` (operator+ at offset 0x33) both come out right.
std::string_view strip_symbol_offset(std::string_view symbol);

// A `# key : value` line of `perf script --header`; key and value trimmed. False otherwise.
bool parse_header_comment(std::string_view line, std::string_view& key, std::string_view& value);

// Parses an unsigned hexadecimal number (no prefix). False on an empty, non-hex or too long text.
bool parse_hex(std::string_view text, uint64_t& out);

}  // namespace gp::import
