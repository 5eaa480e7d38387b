#pragma once
// UTF-8 checks for the encoders: names in the archive are raw bytes (comm, paths, symbols),
// but proto3 `string` fields and JSON text must be valid UTF-8 (Go's protobuf runtime and
// browsers reject or mangle anything else). Invalid bytes become U+FFFD, one per byte.

#include <cstddef>
#include <string>
#include <string_view>

namespace gp::fold {

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

// Length (1-4) of the well-formed UTF-8 sequence starting at s[i], or 0 when the byte there
// does not start one (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t utf8_sequence_length(std::string_view s, size_t i);

bool is_valid_utf8(std::string_view s);

// `s` unchanged when valid, else a copy with each invalid byte replaced by U+FFFD.
std::string to_valid_utf8(std::string_view s);

}  // namespace gp::fold
