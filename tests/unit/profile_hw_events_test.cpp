// gp-profile --hw-events-file: gProfiler's custom PMU events (gprofiler/utils/hw_events.py and
// gprofiler/platform.py's get_cpu_model), resolved to gp-record's --event.
#include "gp/profile/hw_events.h"

#include <gtest/gtest.h>

namespace gp::profile {
namespace {

const char* const kIceLake =
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 106\n"
    "model name\t: Intel(R) Xeon(R) Platinum 8375C CPU\nflags\t\t: fpu vme hypervisor lm\n";

// The template gProfiler ships (gprofiler/resources/hw_events_template.json), trimmed.
const char* const kFile = R"({
  "_comment": "Custom PMU events", "_supported_platforms": ["ICX", "SPR"],
  "offcore": {"description": "x", "ICX": {"raw": "r01b7"}, "SPR": {"raw": "r02b7"}},
  "ocr.demand": {"ICX": {"raw": "r04b7"}},
  "sw": {"UNKNOWN": {"raw": "software/config=1/"}, "ICX": {"raw": "software/config=1/"}},
  "empty": {"ICX": {"description": "no raw"}}
})";

TEST(HwEvents, PlatformIsGprofilersCodeOfTheCpu) {
  EXPECT_EQ(cpu_platform(kIceLake), "ICX");
  EXPECT_EQ(cpu_platform("cpu family\t: 6\nmodel\t\t: 143\n"), "SPR");
  EXPECT_EQ(cpu_platform("cpu family\t: 6\nmodel\t\t: 207\n"), "EMR");
  EXPECT_EQ(cpu_platform("cpu family\t: 6\nmodel\t\t: 173\n"), "GNR");
  EXPECT_EQ(cpu_platform("cpu family\t: 6\nmodel\t\t: 85\n"), "UNKNOWN");
  EXPECT_EQ(cpu_platform("cpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC\n"), "UNKNOWN");
  EXPECT_EQ(cpu_platform(""), "UNKNOWN");
  EXPECT_TRUE(under_hypervisor(kIceLake));
  EXPECT_FALSE(under_hypervisor("flags\t\t: fpu vme lm hypervisorx\n"));
}

TEST(HwEvents, RawEventOfThePlatformWithGprofilersModifier) {
  EXPECT_EQ(custom_event(kFile, "f.json", "offcore", "SPR", false).value(), "r02b7:pp");
  EXPECT_EQ(custom_event(kFile, "f.json", "ocr.demand", "ICX", false).value(), "r04b7:p");
  EXPECT_EQ(custom_event(kFile, "f.json", "offcore", "ICX", true).value(), "r01b7");
  EXPECT_EQ(custom_event(kFile, "f.json", "sw", "ICX", false).value(), "software/config=1/");
  EXPECT_EQ(custom_event(kFile, "f.json", "sw", "UNKNOWN", false).value(), "software/config=1/");
}

TEST(HwEvents, RefusalsSayWhatIsMissing) {
  auto unknown = custom_event(kFile, "f.json", "nosuch", "ICX", false);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message,
            "Event 'nosuch' not found in perf built-in events or custom events file (f.json). "
            "Available custom events: ['offcore', 'ocr.demand', 'sw', 'empty']");
  auto platform = custom_event(kFile, "f.json", "offcore", "GNR", false);
  ASSERT_FALSE(platform.ok());
  EXPECT_EQ(platform.error().message,
            "Custom event 'offcore' not supported on platform 'GNR'. Supported platforms: "
            "['description', 'ICX', 'SPR']");
  auto raw = custom_event(kFile, "f.json", "empty", "ICX", false);
  ASSERT_FALSE(raw.ok());
  EXPECT_EQ(raw.error().message, "Custom event 'empty' missing 'raw' field for platform 'ICX'");
  EXPECT_FALSE(custom_event("[1, 2]", "f.json", "x", "ICX", false).ok());
  EXPECT_FALSE(custom_event("{", "f.json", "x", "ICX", false).ok());
}

}  // namespace
}  // namespace gp::profile
