// gp-profile's option mapping: gProfiler's options and validation rules (reference/gprofiler.md
// §9.1–§9.3) → the command lines of gp-record, gp-runtime, gp-merge, gp-fold, gp-flame, gp-upload.

#include <gtest/gtest.h>

#include <algorithm>

#include "gp/profile/plan.h"

namespace gp::test::profile_plan {
namespace {

using gp::profile::Options;
using gp::profile::PerfMode;
using Args = std::vector<std::string>;

Options with_output() {
  Options o;
  o.output_dir = "out";
  o.runtimes = {{"java", "auto"}, {"python", "auto"}, {"php", "disabled"}};
  return o;
}

TEST(ProfilePlan, DefaultsAreGProfilersButWholeStacks) {
  Options o;
  EXPECT_EQ(o.duration_s, 60u);
  EXPECT_EQ(o.frequency, 11u);
  // gProfiler's default is fp; gp's smart (gp-record --unwind auto) costs about what fp does.
  EXPECT_EQ(o.perf_mode, PerfMode::smart);
  EXPECT_EQ(o.server_host, "https://profiler.granulate.io");
  EXPECT_TRUE(o.flamegraph);
}

TEST(ProfilePlan, PerfModeNamesIncludeTheLegacyNone) {
  EXPECT_EQ(*gp::profile::parse_perf_mode("none"), PerfMode::disabled);
  EXPECT_EQ(*gp::profile::parse_perf_mode("smart"), PerfMode::smart);
  EXPECT_FALSE(gp::profile::parse_perf_mode("lbr"));
}

TEST(ProfilePlan, ValidationFollowsGProfilersMessages) {
  Options o;
  EXPECT_EQ(gp::profile::validate(o, true),
            "Must pass at least one output method (--upload-results / --output-dir)");
  o.upload = true;
  EXPECT_EQ(gp::profile::validate(o, true), "Must provide --token when --upload-results is passed");
  o.token = "t";
  EXPECT_EQ(gp::profile::validate(o, true),
            "Must provide --service-name when --upload-results is passed");
  o.service_name = "web";
  EXPECT_EQ(gp::profile::validate(o, true), std::nullopt);
}

TEST(ProfilePlan, DwarfAndSmartAreGpRecordsUnwinderAtAnyFrequency) {
  Options o = with_output();
  for (PerfMode mode : {PerfMode::dwarf, PerfMode::smart, PerfMode::fp}) {
    o.perf_mode = mode;
    o.frequency = 999;  // gProfiler's 100-Hz limit is for perf's stack copies
    EXPECT_EQ(gp::profile::validate(o, true), std::nullopt);
  }
}

TEST(ProfilePlan, PerfModeChoosesGpRecordsUnwinding) {
  Options o = with_output();
  auto unwind = [&](PerfMode mode) {
    o.perf_mode = mode;
    auto args = gp::profile::record_command(o, "s.gpa").args;
    auto it = std::find(args.begin(), args.end(), "--unwind");
    return it == args.end() || it + 1 == args.end() ? std::string("(none)") : *(it + 1);
  };
  EXPECT_EQ(unwind(PerfMode::fp), "fp");
  EXPECT_EQ(unwind(PerfMode::dwarf), "dwarf");
  EXPECT_EQ(unwind(PerfMode::smart), "auto");
}

TEST(ProfilePlan, NodejsPerfModesNeedPerf) {
  Options o = with_output();
  o.runtimes.push_back({"nodejs", "attach-maps"});
  EXPECT_EQ(gp::profile::validate(o, true), std::nullopt);
  o.perf_mode = PerfMode::disabled;
  EXPECT_EQ(gp::profile::validate(o, true),
            "--nodejs-mode perf or attach-maps requires --perf-mode 'fp' or 'smart'");
}

TEST(ProfilePlan, RootlessNeedsPidsAndANonRootUser) {
  Options o = with_output();
  o.rootless = true;
  EXPECT_EQ(gp::profile::validate(o, false), "--rootless requires --pids");
  o.pids = {42};
  EXPECT_EQ(gp::profile::validate(o, false), std::nullopt);
  EXPECT_EQ(gp::profile::validate(o, true), "--rootless cannot be used when running as root");
}

TEST(ProfilePlan, EverythingDisabledIsAnError) {
  Options o = with_output();
  o.perf_mode = PerfMode::disabled;
  for (auto& r : o.runtimes) r.mode = "disabled";
  EXPECT_EQ(gp::profile::validate(o, true), "All profilers are disabled!");
  EXPECT_FALSE(gp::profile::runtimes_enabled(o));
  EXPECT_FALSE(gp::profile::system_enabled(o));
}

TEST(ProfilePlan, RecordAndRuntimeShareDurationFrequencyAndPids) {
  Options o = with_output();
  o.duration_s = 5;
  o.frequency = 99;
  o.pids = {12, 34};
  auto rec = gp::profile::record_command(o, "s.gpa");
  EXPECT_EQ(rec.tool, "gp-record");
  EXPECT_EQ(rec.args,
            (Args{"-F", "99", "-d", "5", "-o", "s.gpa", "-p", "12,34", "--unwind", "auto"}));
  o.application_identifiers = false;
  o.application_metadata = false;
  auto rt = gp::profile::runtime_command(o, "r.gpa");
  EXPECT_EQ(rt.tool, "gp-runtime");
  EXPECT_EQ(rt.args,
            (Args{"-d", "5", "-F", "99", "-o", "r.gpa", "-p", "12,34", "--java-mode", "auto",
                  "--python-mode", "auto", "--no-php", "--no-profile-spawned-processes",
                  "--disable-application-identifiers", "--disable-application-metadata"}));
  o.profile_spawned_processes = true;
  rt = gp::profile::runtime_command(o, "r.gpa");
  EXPECT_EQ(std::count(rt.args.begin(), rt.args.end(), "--no-profile-spawned-processes"), 0);
  o.min_duration_s = 30;
  o.max_processes_per_runtime = 4;
  rt = gp::profile::runtime_command(o, "r.gpa");
  EXPECT_EQ(std::vector<std::string>(rt.args.end() - 4, rt.args.end()),
            (Args{"--min-duration", "30", "--max-processes", "4"}));
}

TEST(ProfilePlan, PerfEventAndPeriodReachGpRecord) {
  Options o = with_output();
  o.duration_s = 5;
  o.perf_event = "task-clock";
  EXPECT_EQ(gp::profile::record_command(o, "s.gpa").args,
            (Args{"-F", "11", "-e", "task-clock", "-d", "5", "-o", "s.gpa", "--unwind", "auto"}));
  o.perf_event_period = 250000;  // a period replaces the frequency
  EXPECT_EQ(gp::profile::record_command(o, "s.gpa").args,
            (Args{"--period", "250000", "-e", "task-clock", "-d", "5", "-o", "s.gpa", "--unwind",
                  "auto"}));
}

// --python-mode pyperf: gp-record walks the Python frames (gp-runtime is told --no-python by the
// runtime list).
TEST(ProfilePlan, PythonFramesReachGpRecord) {
  Options o = with_output();
  o.duration_s = 5;
  o.python_frames = true;
  EXPECT_EQ(gp::profile::record_command(o, "s.gpa").args,
            (Args{"-F", "11", "-d", "5", "-o", "s.gpa", "--unwind", "auto", "--python-frames"}));
}

// --python-mode auto: gp-record walks the Python frames where it can, without failing where it
// cannot (gp-runtime's sampler runs too, and gp-merge picks per process).
TEST(ProfilePlan, PythonFramesWherePossibleReachGpRecord) {
  Options o = with_output();
  o.duration_s = 5;
  o.python_frames_auto = true;
  EXPECT_EQ(gp::profile::record_command(o, "s.gpa").args,
            (Args{"-F", "11", "-d", "5", "-o", "s.gpa", "--unwind", "auto",
                  "--python-frames=auto"}));
  EXPECT_EQ(gp::profile::continuous_record_command(o, "/w/system").args.back(),
            "--python-frames=auto");
}

// gProfiler's --no-python-versions holds for PyPerf's stacks too (python_ebpf.py: add_versions):
// gp-record leaves the labels out of the frames it walks; without a Python walk it is not passed.
TEST(ProfilePlan, NoPythonVersionsReachesGpRecordWithPythonFrames) {
  Options o = with_output();
  o.duration_s = 5;
  o.python_versions = false;
  EXPECT_EQ(gp::profile::record_command(o, "s.gpa").args.back(), "auto");
  o.python_frames_auto = true;
  EXPECT_EQ(gp::profile::record_command(o, "s.gpa").args.back(), "--no-python-versions");
  o.python_frames_auto = false;
  o.python_frames = true;
  EXPECT_EQ(gp::profile::continuous_record_command(o, "/w/system").args.back(),
            "--no-python-versions");
}

// Continuous mode runs one gp-record for the whole run, as gProfiler runs perf: sessions in a
// directory, each ended by SIGUSR2, and -d three sessions long as the safety net.
TEST(ProfilePlan, ContinuousRecordKeepsTheSessionOptionsAndSwitchesBySignal) {
  Options o = with_output();
  o.duration_s = 60;
  o.pids = {7, 9};
  o.perf_mode = PerfMode::dwarf;
  EXPECT_EQ(gp::profile::continuous_record_command(o, "/w/system").args,
            (Args{"-F", "11", "-c", "-d", "180", "--output-dir", "/w/system", "-p", "7,9",
                  "--unwind", "dwarf"}));
}

TEST(ProfilePlan, ExternalMetadataReachesGpFoldUnlessAppMetadataIsOff) {
  Options o = with_output();
  o.external_metadata = "/etc/ext.json";
  EXPECT_EQ(gp::profile::fold_command(o, "in.gpa", "out.col").args,
            (Args{"-f", "col", "-o", "out.col", "--external-metadata", "/etc/ext.json", "in.gpa"}));
  o.application_metadata = false;
  EXPECT_EQ(gp::profile::fold_command(o, "in.gpa", "out.col").args,
            (Args{"-f", "col", "-o", "out.col", "--no-app-metadata", "in.gpa"}));
}

TEST(ProfilePlan, AsyncProfilerOptionsReachGpRuntimeWhileJavaIsOn) {
  Options o = with_output();
  o.ap_mode = "itimer";
  o.ap_features = "vtable,comptask";
  o.ap_args = "--cstack dwarf";
  auto args = gp::profile::runtime_command(o, "r.gpa").args;
  auto at = std::find(args.begin(), args.end(), "--java-async-profiler-mode");
  ASSERT_NE(at, args.end());
  EXPECT_EQ(std::vector<std::string>(at, at + 6),
            (Args{"--java-async-profiler-mode", "itimer", "--java-async-profiler-features",
                  "vtable,comptask", "--java-async-profiler-args", "--cstack dwarf"}));
  for (auto& r : o.runtimes)
    if (r.option == "java") r.mode = "disabled";
  args = gp::profile::runtime_command(o, "r.gpa").args;
  EXPECT_EQ(std::count(args.begin(), args.end(), "--java-async-profiler-mode"), 0);
}

TEST(ProfilePlan, AllocationIntervalReachesGpRuntime) {
  Options o = with_output();
  auto args = gp::profile::runtime_command(o, "r.gpa").args;
  EXPECT_EQ(std::count(args.begin(), args.end(), "--alloc-interval"), 0);
  o.alloc_interval = 1 << 20;
  args = gp::profile::runtime_command(o, "r.gpa").args;
  auto at = std::find(args.begin(), args.end(), "--alloc-interval");
  ASSERT_NE(at, args.end());
  EXPECT_EQ(*(at + 1), "1048576");
}

TEST(ProfilePlan, RuntimeFrequencyIsClampedToWhatGpRuntimeTakes) {
  Options o = with_output();
  o.frequency = 4999;
  EXPECT_EQ(gp::profile::record_command(o, "s.gpa").args[1], "4999");
  EXPECT_EQ(gp::profile::runtime_command(o, "r.gpa").args[3], "1000");
}

TEST(ProfilePlan, MergeIsSkippedWithoutRuntimeStacksAndPerfLessWithoutSystem) {
  Options o = with_output();
  EXPECT_FALSE(gp::profile::merge_command(o, "s.gpa", "", "m.gpa"));
  auto both = gp::profile::merge_command(o, "s.gpa", "r.gpa", "m.gpa");
  ASSERT_TRUE(both);
  EXPECT_EQ(both->args, (Args{"-o", "m.gpa", "s.gpa", "r.gpa"}));
  auto perf_less = gp::profile::merge_command(o, "", "r.gpa", "m.gpa");
  ASSERT_TRUE(perf_less);
  EXPECT_EQ(perf_less->args, (Args{"--perf-less", "-o", "m.gpa", "r.gpa"}));
}

TEST(ProfilePlan, FoldPassesTheColVariants) {
  Options o = with_output();
  EXPECT_EQ(gp::profile::fold_command(o, "in.gpa", "p.col").args,
            (Args{"-f", "col", "-o", "p.col", "in.gpa"}));
  o.profile_api_version = "v1";
  o.application_metadata = false;
  EXPECT_EQ(gp::profile::fold_command(o, "in.gpa", "p.col").args,
            (Args{"-f", "col", "-o", "p.col", "--profile-api-version", "v1", "--no-app-metadata",
                  "in.gpa"}));
  o.truncated_marker = false;
  EXPECT_EQ(gp::profile::fold_command(o, "in.gpa", "p.col").args,
            (Args{"-f", "col", "-o", "p.col", "--profile-api-version", "v1", "--no-app-metadata",
                  "--no-truncated-marker", "in.gpa"}));
  o.insert_dso_name = true;
  EXPECT_EQ(gp::profile::fold_command(o, "in.gpa", "p.col").args,
            (Args{"-f", "col", "-o", "p.col", "--profile-api-version", "v1", "--no-app-metadata",
                  "--no-truncated-marker", "--insert-dso-name", "in.gpa"}));
}

TEST(ProfilePlan, UploadCarriesTheStudioOptionsAndSessionTimes) {
  Options o = with_output();
  o.upload = true;
  o.token = "s3cret";
  o.service_name = "web";
  o.server_host = "http://127.0.0.1:1";
  o.no_verify = true;
  o.upload_timeout_s = 2.5;
  o.spool_dir = "/var/spool/x";
  o.spool_max_bytes = 1000;
  o.gpid_file = "/tmp/w/gpid";
  auto up = gp::profile::upload_command(o, "p.col", {"2026-01-01T00:00:00", "2026-01-01T00:01:00"});
  EXPECT_EQ(up.tool, "gp-upload");
  // The token goes through the environment (GPROFILER_TOKEN), never argv.
  EXPECT_EQ(up.args,
            (Args{"--server-host", "http://127.0.0.1:1", "--service-name", "web", "--no-verify",
                  "--timeout", "2.5", "--no-health-check", "--gpid-file", "/tmp/w/gpid", "--spool",
                  "/var/spool/x", "--spool-max-bytes", "1000", "--start-time",
                  "2026-01-01T00:00:00", "--end-time", "2026-01-01T00:01:00", "p.col"}));
  auto health = gp::profile::health_check_command(o);
  EXPECT_EQ(health.args.back(), "--health-check");
  EXPECT_EQ(std::count(health.args.begin(), health.args.end(), "s3cret"), 0);
  auto file = gp::profile::upload_file_command(o, "old.col");
  EXPECT_EQ(file.args.back(), "old.col");
  EXPECT_EQ(std::count(file.args.begin(), file.args.end(), "--start-time"), 0);
}

TEST(ProfilePlan, DescribeNeverShowsTheTokenNorUrlCredentials) {
  Options o = with_output();
  o.token = "s3cret";
  o.service_name = "my web";
  o.server_host = "https://agent:pa55@studio.example:8443/base";
  auto line = gp::profile::describe(gp::profile::upload_file_command(o, "p.col"));
  EXPECT_EQ(line.find("s3cret"), std::string::npos) << line;
  EXPECT_EQ(line.find("pa55"), std::string::npos) << line;
  EXPECT_NE(line.find("https://***@studio.example:8443/base"), std::string::npos) << line;
  EXPECT_NE(line.find("'my web'"), std::string::npos) << line;
  line = gp::profile::describe({"gp-upload", {"--token", "s3cret", "x.col"}});
  EXPECT_NE(line.find("--token ***"), std::string::npos) << line;
}

TEST(ProfilePlan, PhpProcFilterReachesGpRuntimeWhenPhpIsOn) {
  Options o = with_output();
  o.php_proc_filter = "php";
  // PHP disabled (gProfiler's default): nothing to filter.
  auto rt = gp::profile::runtime_command(o, "r.gpa");
  EXPECT_EQ(std::count(rt.args.begin(), rt.args.end(), "--php-proc-filter"), 0);
  o.runtimes = {{"php", "gp"}};
  rt = gp::profile::runtime_command(o, "r.gpa");
  auto at = std::find(rt.args.begin(), rt.args.end(), "--php-proc-filter");
  ASSERT_NE(at, rt.args.end());
  EXPECT_EQ(*(at + 1), "php");
  // gProfiler's default (php-fpm) is gp-runtime's too: not repeated.
  o.php_proc_filter = "php-fpm";
  rt = gp::profile::runtime_command(o, "r.gpa");
  EXPECT_EQ(std::count(rt.args.begin(), rt.args.end(), "--php-proc-filter"), 0);
}

}  // namespace
}  // namespace gp::test::profile_plan
