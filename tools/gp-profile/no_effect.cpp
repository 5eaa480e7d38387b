// gProfiler options gp-profile accepts but that change nothing in it, each with the reason said in
// its --help and, once at start-up, when it is given (no_effect.h).
#include "no_effect.h"

#include <utility>

#include "gp/runtime/adapters.h"

namespace gp::profile_tool {
namespace {

constexpr std::string_view kGprofilerBuild =
    "needs async-profiler: an option of gProfiler's own build of it "
    "(https://github.com/Granulate/async-profiler); stock asprof and JFR have no such setting";

constexpr std::pair<std::string_view, std::string_view> kReasons[] = {
    {"java-async-profiler-safemode", kGprofilerBuild},
    {"java-async-profiler-mcache", kGprofilerBuild},
    {"java-async-profiler-no-report-meminfo", kGprofilerBuild},
};

}  // namespace

std::optional<std::string_view> no_effect_reason(std::string_view long_name) {
  for (const auto& [name, reason] : kReasons)
    if (name == long_name) return reason;
  return std::nullopt;
}

std::string no_effect_at_run_time(std::string_view long_name) {
  auto reason = no_effect_reason(long_name);
  if (!reason) return {};
  std::string option = "--" + std::string(long_name);
  if (*reason != kGprofilerBuild) return option + " has no effect: " + std::string(*reason);
  std::string missing = gp::runtime::make_async_profiler_adapter()->unavailable_reason();
  if (!missing.empty()) {
    return option + " has no effect: it needs async-profiler, and " + missing +
           "; get it from https://github.com/async-profiler/async-profiler/releases (only "
           "gProfiler's build of it has this setting; JFR has none)";
  }
  return option +
         " has no effect: only gProfiler's build of async-profiler has this setting, not the "
         "stock asprof gp-runtime runs, nor JFR";
}

}  // namespace gp::profile_tool
