// Options from GPROFILER_<OPTION> variables and config files, configargparse's way.
#include "gp/cli/env_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>

namespace {

using gp::cli::expand_env_and_config;
using gp::cli::OptionSources;
using gp::cli::parse_config_text;

struct Fixture {
  CLI::App app{"test", "test"};
  std::string duration, token, mode, config;
  std::vector<std::string> pids;
  bool continuous = false, upload = false;
  std::map<std::string, std::string> env;
  Fixture() {
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("-d,--profiling-duration", duration, "d");
    app.add_option("--token", token, "t");
    app.add_option("--mode", mode, "m");
    app.add_option("--pids", pids, "p")->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_flag("--continuous,-c", continuous, "c");
    app.add_flag("-u,--upload-results", upload, "u");
    app.add_option("--config", config, "config");
  }
  OptionSources sources(std::vector<std::string> defaults = {}) {
    return {"GPROFILER_", "--config", std::move(defaults),
            [this](const std::string& n) -> const char* {
              auto it = env.find(n);
              return it == env.end() ? nullptr : it->second.c_str();
            }};
  }
  // Expands and parses like gp-profile; returns the error text, "" on success.
  std::string parse(std::vector<std::string> args, std::vector<std::string> defaults = {}) {
    auto all = expand_env_and_config(app, args, sources(std::move(defaults)));
    if (!all) return all.error().message;
    std::vector<std::string> reversed(all->rbegin(), all->rend());
    app.parse(reversed);
    return "";
  }
};

std::string write_file(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name + "." + std::to_string(::getpid());
  std::ofstream(path) << text;
  return path;
}

TEST(EnvConfig, EnvNameIsPrefixAndFirstLongName) {
  Fixture f;
  EXPECT_EQ(gp::cli::env_name(*f.app.get_option("--profiling-duration"), "GPROFILER_"),
            "GPROFILER_PROFILING_DURATION");
  EXPECT_EQ(gp::cli::env_name(*f.app.get_option("--continuous"), "GPROFILER_"),
            "GPROFILER_CONTINUOUS");
  EXPECT_EQ(gp::cli::env_name(*f.app.get_option("--upload-results"), "GPROFILER_"),
            "GPROFILER_UPLOAD_RESULTS");
}

TEST(EnvConfig, EnvironmentSetsOptionsTheCommandLineLacks) {
  Fixture f;
  f.env = {{"GPROFILER_TOKEN", "abc"},
           {"GPROFILER_PROFILING_DURATION", "30"},
           {"GPROFILER_CONTINUOUS", "yes"},
           {"GPROFILER_UPLOAD_RESULTS", "0"}};
  ASSERT_EQ(f.parse({"-d", "5"}), "");
  EXPECT_EQ(f.token, "abc");
  EXPECT_EQ(f.duration, "5");  // the command line wins
  EXPECT_TRUE(f.continuous);
  EXPECT_FALSE(f.upload);  // "0" leaves the flag off
}

TEST(EnvConfig, ShortSpellingOnTheCommandLineAlsoWins) {
  Fixture f;
  f.env = {{"GPROFILER_PIDS", "[1, 2]"}};
  ASSERT_EQ(f.parse({"--pids", "7"}), "");
  EXPECT_EQ(f.pids, std::vector<std::string>{"7"});  // a list is not merged with the env's
}

TEST(EnvConfig, ListVariableGivesTheOptionSeveralTimes) {
  Fixture f;
  f.env = {{"GPROFILER_PIDS", "[1, 2]"}};
  ASSERT_EQ(f.parse({}), "");
  EXPECT_EQ(f.pids, (std::vector<std::string>{"1", "2"}));
}

TEST(EnvConfig, FlagVariableWithAnotherValueIsRefusedNamingIt) {
  Fixture f;
  f.env = {{"GPROFILER_CONTINUOUS", "maybe"}};
  std::string err = f.parse({});
  EXPECT_NE(err.find("GPROFILER_CONTINUOUS"), std::string::npos) << err;
  EXPECT_NE(err.find("'maybe'"), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos);
}

TEST(EnvConfig, PrecedenceCommandLineThenEnvironmentThenConfigThenDefault) {
  Fixture f;
  std::string cfg = write_file("prec.ini",
                               "# comment\n[gprofiler]\nprofiling-duration = 40\ntoken: from-file\n"
                               "mode cpu\n--pids [3,4]\ncontinuous\n");
  f.env = {{"GPROFILER_TOKEN", "from-env"}};
  ASSERT_EQ(f.parse({"--config", cfg, "--mode", "allocation"}), "");
  EXPECT_EQ(f.duration, "40");      // config (no env, no command line)
  EXPECT_EQ(f.token, "from-env");   // env beats config
  EXPECT_EQ(f.mode, "allocation");  // command line beats config
  EXPECT_EQ(f.pids, (std::vector<std::string>{"3", "4"}));
  EXPECT_TRUE(f.continuous);  // a bare key sets a flag
}

TEST(EnvConfig, NamedConfigFileBeatsTheDefaultOne) {
  Fixture f;
  std::string def = write_file("default.ini", "token = default\nmode = cpu\n");
  std::string mine = write_file("mine.ini", "token = mine\n");
  ASSERT_EQ(f.parse({"--config=" + mine}, {def, "/nonexistent/gprofiler.ini"}), "");
  EXPECT_EQ(f.token, "mine");
  EXPECT_EQ(f.mode, "cpu");  // the default file still supplies what the named one lacks
}

TEST(EnvConfig, QuotedValuesAndTrailingCommentsAreStripped) {
  auto items = parse_config_text("token = \"a b\"  # the key\nmode='cpu' ; x\nempty =\n", "f");
  ASSERT_TRUE(items) << items.error().message;
  ASSERT_EQ(items->size(), 3u);
  EXPECT_EQ((*items)[0].values, std::vector<std::string>{"a b"});
  EXPECT_EQ((*items)[1].values, std::vector<std::string>{"cpu"});
  EXPECT_EQ((*items)[2].values, std::vector<std::string>{""});
}

TEST(EnvConfig, MalformedConfigLineIsRefusedWithItsNumber) {
  Fixture f;
  std::string cfg = write_file("bad.ini", "token = x\n= 5\n");
  std::string err = f.parse({"--config", cfg});
  EXPECT_NE(err.find("unexpected line 2 in " + cfg), std::string::npos) << err;
}

TEST(EnvConfig, UnknownConfigKeyIsRefusedNamingIt) {
  Fixture f;
  std::string cfg = write_file("unknown.ini", "no-such-option = 1\n");
  std::string err = f.parse({"--config", cfg});
  EXPECT_NE(err.find("'no-such-option': unknown option"), std::string::npos) << err;
}

TEST(EnvConfig, ListForASingleValuedOptionIsRefused) {
  Fixture f;
  std::string cfg = write_file("list.ini", "token = [a, b]\n");
  std::string err = f.parse({"--config", cfg});
  EXPECT_NE(err.find("can't be set to a list"), std::string::npos) << err;
}

TEST(EnvConfig, MissingNamedConfigFileIsRefused) {
  Fixture f;
  std::string err = f.parse({"--config", "/nonexistent/x.ini"});
  EXPECT_NE(err.find("config file not found: '/nonexistent/x.ini'"), std::string::npos) << err;
}

}  // namespace
