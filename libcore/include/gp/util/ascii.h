#pragma once
// Character classes of the C locale, independent of the process's locale (std::isdigit is not,
// and takes an int that must not be a negative char).

namespace gp::util {

inline constexpr bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace gp::util
