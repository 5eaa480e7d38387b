#pragma once
// gProfiler options that gp-profile accepts (with gProfiler's types and checks) but that have no
// effect in it, and why: the reason ends the option's --help and is said once at start-up when
// the option is given ("--java-full-hserr has no effect: ...").
#include <optional>
#include <string>
#include <string_view>

namespace gp::profile_tool {

// The reason for the option of this long name (without dashes), or nullopt when it has effect
// or gp-profile has no word on it ("not implemented").
std::optional<std::string_view> no_effect_reason(std::string_view long_name);

// The start-up line for the option when it has no effect here, "" otherwise: for an option of
// gProfiler's async-profiler build, whether async-profiler is installed and where to get it.
std::string no_effect_at_run_time(std::string_view long_name);

}  // namespace gp::profile_tool
