// gProfiler options gp-profile accepts but that change nothing in it, each with the reason said in
// its --help and, once at start-up, when it is given (no_effect.h).
#include "no_effect.h"

#include <utility>

namespace gp::profile_tool {
namespace {

constexpr std::pair<std::string_view, std::string_view> kReasons[] = {
    {"java-no-version-check",
     "gp-runtime has no JDK version check to skip (JFR or stock asprof profile any JVM that "
     "answers)"},
    {"java-async-profiler-safemode",
     "an option of gProfiler's async-profiler build; stock asprof and JFR have no such setting"},
    {"java-async-profiler-mcache",
     "an option of gProfiler's async-profiler build; stock asprof and JFR have no such setting"},
    {"java-async-profiler-no-report-meminfo",
     "an option of gProfiler's async-profiler build; stock asprof and JFR report no meminfo"},
    {"java-safemode",
     "gp-profile does not stop Java profiling after a profiled JVM's OOM, fatal signal or hs_err "
     "file"},
    {"java-full-hserr", "gp-profile reads no hs_err files"},
};

}  // namespace

std::optional<std::string_view> no_effect_reason(std::string_view long_name) {
  for (const auto& [name, reason] : kReasons)
    if (name == long_name) return reason;
  return std::nullopt;
}

}  // namespace gp::profile_tool
