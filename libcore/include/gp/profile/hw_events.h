#pragma once
// gProfiler's --hw-events-file (gprofiler/utils/hw_events.py): custom PMU events by name, with
// the raw event of each CPU platform, so that --perf-event NAME samples an event perf has no
// name for. The file is a JSON object:
//   {"_comment": "...", "NAME": {"ICX": {"raw": "r01b7"}, "SPR": {"raw": "r02b7"}, ...}, ...}
// (members starting with '_' are not events). The platform is gProfiler's code of the host CPU
// (gprofiler/platform.py: ICX, SPR, EMR, GNR, else UNKNOWN, which a file may list too).

#include <string>
#include <string_view>

#include "gp/util/result.h"

namespace gp::profile {

// gProfiler's platform code of the CPU /proc/cpuinfo's text describes: Intel family 6 models
// 106 ICX, 143 SPR, 207 EMR, 173 GNR; anything else "UNKNOWN".
std::string cpu_platform(std::string_view cpuinfo);

// True when /proc/cpuinfo's flags include "hypervisor" (a virtual machine).
bool under_hypervisor(std::string_view cpuinfo);

// gp-record's --event for custom event `name` of the file `path` holding `json_text`, on
// `platform`: its raw event with gProfiler's precise modifier for custom events (bare metal:
// ":pp", ":p" for ocr.* events; in a VM none: gProfiler tries ":p" and falls back to none,
// and a VM's virtual PMU samples nothing precisely; none either for an event of the software or
// tracepoint PMU). Errors are gProfiler's: the name in no list, the platform not in the event's
// entry, no "raw" field, a file that is not a JSON object.
Result<std::string> custom_event(std::string_view json_text, const std::string& path,
                                 const std::string& name, const std::string& platform, bool vm);

}  // namespace gp::profile
