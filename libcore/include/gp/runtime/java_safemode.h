#pragma once
// gProfiler's Java safemode causes (JavaSafemodeOptions in gprofiler/profilers/java.py) and how
// its --java-safemode value reads, shared by gp-profile and gp-runtime.

#include <string>
#include <string_view>
#include <vector>

namespace gp::runtime {

inline constexpr std::string_view kJavaSafemodeCauses[] = {
#include "gp/runtime/java_safemode_causes.inc"
};

// The causes a --java-safemode value names, as gProfiler's _init_java_safemode reads it: "all"
// every cause; "" or '""' (DaemonSet arguments keep the quotes) none; else the comma-separated
// list. Items that are not causes (an empty one too) go to *unknown, in order.
std::vector<std::string> java_safemode_causes(std::string_view value,
                                              std::vector<std::string>* unknown = nullptr);

}  // namespace gp::runtime
