#pragma once
// The one UTF-8 validator of libcore, with the helpers built on it: the JSON writer/parser,
// the terminal escaper and the pprof/speedscope encoders (internal to libcore). Names in the
// archive are raw bytes (comm, paths, symbols); JSON text and proto3 `string` fields must be
// valid UTF-8, so invalid bytes become U+FFFD there, one per byte (as Python's "replace").

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gp::util {

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

// Length (1-4) of the well-formed UTF-8 sequence starting at s[i], or 0 when the byte there
// does not start one (truncated sequences, overlong forms, surrogates and code points above
// U+10FFFF are invalid). The Unicode standard's table of well-formed sequences (§3.9, 3-7).
size_t utf8_sequence_length(std::string_view s, size_t i);

bool is_valid_utf8(std::string_view s);

// `s` unchanged when valid, else a copy with each invalid byte replaced by U+FFFD.
std::string to_valid_utf8(std::string_view s);

// Decodes one code point at s[pos], advancing pos. An invalid byte is consumed alone and
// yields U+FFFD.
uint32_t next_code_point(std::string_view s, size_t& pos);

// Appends the UTF-8 encoding of a code point (<= 0x10FFFF).
void append_utf8(uint32_t cp, std::string& out);

}  // namespace gp::util
