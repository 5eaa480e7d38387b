#pragma once
// UTF-8 helpers shared by the JSON writer/parser and text formats (internal to libcore).

#include <cstdint>
#include <string>
#include <string_view>

namespace gp::util {

// Appends the UTF-8 encoding of a code point (<= 0x10FFFF).
void append_utf8(uint32_t cp, std::string& out);

// Decodes one code point at s[pos], advancing pos. Invalid or truncated sequences (and
// overlong forms, surrogates) consume one byte and yield U+FFFD, as Python's "replace" does.
uint32_t next_code_point(std::string_view s, size_t& pos);

}  // namespace gp::util
