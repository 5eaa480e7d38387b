// gp-runtime's registry: gProfiler's mode spellings, defaults, and how `auto` picks an adapter.
#include <gtest/gtest.h>

#include <algorithm>

#include "gp/runtime/registry.h"

namespace gp::runtime {
namespace {

// Adapters whose availability the test sets; they never profile.
class ProbeAdapter : public Adapter {
 public:
  ProbeAdapter(std::string name, std::string why) : name_(std::move(name)), why_(std::move(why)) {}
  std::string_view name() const override { return name_; }
  Runtime runtime() const override { return Runtime::java; }
  std::string unavailable_reason() const override { return why_; }
  Profile profile(const Target&, const SessionParams&, std::stop_token) override { return {}; }

 private:
  std::string name_, why_;
};

std::unique_ptr<Adapter> ap_missing() {
  return std::make_unique<ProbeAdapter>("async-profiler", "asprof is not installed (not on PATH)");
}
std::unique_ptr<Adapter> ap_ready() { return std::make_unique<ProbeAdapter>("async-profiler", ""); }
std::unique_ptr<Adapter> jfr_ready() { return std::make_unique<ProbeAdapter>("jfr", ""); }
std::unique_ptr<Adapter> jfr_missing() {
  return std::make_unique<ProbeAdapter>("jfr", "jcmd is not installed");
}

TEST(RuntimeRegistry, ModeSpellingsAsGprofiler) {
  EXPECT_EQ(*normalize_mode(Runtime::java, "none"), "disabled");
  EXPECT_EQ(*normalize_mode(Runtime::java, "jfr"), "jfr");
  EXPECT_EQ(*normalize_mode(Runtime::python, "py-spy"), "pyspy");
  EXPECT_EQ(*normalize_mode(Runtime::node, "attach-maps"), "attach-maps");
  EXPECT_EQ(*normalize_mode(Runtime::dotnet, "dotnet-trace"), "dotnet-trace");
  std::vector<std::string> warnings;
  EXPECT_EQ(*normalize_mode(Runtime::python, "pyperf", &warnings), "auto");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("pyperf"), std::string::npos);
}

TEST(RuntimeRegistry, BadModeNamesTheOptionAndTheChoices) {
  auto r = normalize_mode(Runtime::ruby, "pyspy");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "invalid --ruby-mode 'pyspy': expected one of auto, rbspy, gp, disabled, none");
  EXPECT_FALSE(normalize_mode(Runtime::java, "py-spy").ok());
  EXPECT_FALSE(normalize_mode(Runtime::php, "pyspy").ok());
}

TEST(RuntimeRegistry, PhpAutoIsPhpspyElseGpsSampler) {
  EXPECT_EQ(*normalize_mode(Runtime::php, "auto"), "auto");
  EXPECT_EQ(*normalize_mode(Runtime::php, "gp"), "gp");
  EXPECT_EQ(*normalize_mode(Runtime::php, "none"), "disabled");
  const auto& order = runtime_modes(Runtime::php).auto_order;
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0], "phpspy");
  EXPECT_EQ(order[1], "gp");
  // gp's sampler is built in and always available.
  auto c = choose_adapter(Runtime::php, "gp");
  ASSERT_NE(c.adapter, nullptr);
  EXPECT_EQ(c.adapter->name(), "gp-php");
}

TEST(RuntimeRegistry, DefaultsAsGprofiler) {
  EXPECT_EQ(runtime_modes(Runtime::java).default_mode, "auto");
  EXPECT_EQ(runtime_modes(Runtime::python).default_mode, "auto");
  EXPECT_EQ(runtime_modes(Runtime::ruby).default_mode, "auto");  // rbspy when installed, else gp
  EXPECT_EQ(runtime_modes(Runtime::php).default_mode, "disabled");
  EXPECT_EQ(runtime_modes(Runtime::dotnet).default_mode, "disabled");
  EXPECT_EQ(runtime_modes(Runtime::node).default_mode, "disabled");
  EXPECT_EQ(runtime_modes(Runtime::node).option, "nodejs");
  EXPECT_EQ(all_runtimes().size(), 6u);
}

TEST(RuntimeRegistry, AutoPicksTheFirstAvailable) {
  const AdapterEntry both_ready[] = {{Runtime::java, "ap", ap_ready},
                                     {Runtime::java, "jfr", jfr_ready}};
  auto c = choose_adapter(Runtime::java, "auto", both_ready);
  ASSERT_NE(c.adapter, nullptr);
  EXPECT_EQ(c.mode, "ap");

  const AdapterEntry ap_gone[] = {{Runtime::java, "jfr", jfr_ready},
                                  {Runtime::java, "ap", ap_missing}};
  c = choose_adapter(Runtime::java, "auto", ap_gone);
  ASSERT_NE(c.adapter, nullptr);
  EXPECT_EQ(c.mode, "jfr");
  EXPECT_EQ(c.adapter->name(), "jfr");
}

TEST(RuntimeRegistry, AutoWithNothingAvailableSaysWhy) {
  const AdapterEntry none_ready[] = {{Runtime::java, "ap", ap_missing},
                                     {Runtime::java, "jfr", jfr_missing}};
  auto c = choose_adapter(Runtime::java, "auto", none_ready);
  EXPECT_EQ(c.adapter, nullptr);
  EXPECT_EQ(
      c.skip_reason,
      "no java profiler can run: asprof is not installed (not on PATH); jcmd is not installed");
  c = choose_adapter(Runtime::java, "auto", std::span<const AdapterEntry>{});
  EXPECT_EQ(c.skip_reason, "java mode 'auto' is not available in this build");
}

TEST(RuntimeRegistry, ExplicitModeReportsItsOwnReason) {
  const AdapterEntry table[] = {{Runtime::java, "ap", ap_missing},
                                {Runtime::java, "jfr", jfr_ready}};
  auto c = choose_adapter(Runtime::java, "ap", table);
  EXPECT_EQ(c.adapter, nullptr);
  EXPECT_EQ(c.skip_reason, "asprof is not installed (not on PATH)");
  c = choose_adapter(Runtime::ruby, "rbspy", table);
  EXPECT_EQ(c.skip_reason, "ruby mode 'rbspy' is not available in this build");
  c = choose_adapter(Runtime::java, "disabled", table);
  EXPECT_EQ(c.adapter, nullptr);
  EXPECT_EQ(c.skip_reason, "java profiling is disabled (--java-mode disabled)");
}

// The lines adapter owners add to registry.cpp must name a real mode of their runtime and make
// an adapter of that runtime.
TEST(RuntimeRegistry, RegisteredAdaptersAreConsistent) {
  for (const auto& e : registered_adapters()) {
    const auto& modes = runtime_modes(e.runtime).modes;
    EXPECT_NE(std::find(modes.begin(), modes.end(), e.mode), modes.end()) << e.mode;
    EXPECT_NE(e.mode, "auto");
    EXPECT_NE(e.mode, "disabled");
    ASSERT_NE(e.factory, nullptr) << e.mode;
    auto adapter = e.factory();
    ASSERT_NE(adapter, nullptr) << e.mode;
    EXPECT_EQ(adapter->runtime(), e.runtime) << e.mode;
    EXPECT_FALSE(adapter->name().empty()) << e.mode;
  }
}

TEST(RuntimeRegistry, ErrorFramesAsGprofiler) {
  EXPECT_EQ(error_frame("process went down during profiling"),
            "[Profiling error: process went down during profiling]");
  EXPECT_EQ(skip_frame("x"), "[Profiling skipped: x]");
  EXPECT_EQ(runtime_name(Runtime::dotnet), "dotnet");
}

}  // namespace
}  // namespace gp::runtime
