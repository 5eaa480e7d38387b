// gProfiler's heartbeat protocol: request bodies, answers, command settings.
#include <gtest/gtest.h>

#include "gp/upload/heartbeat.h"

namespace gp::upload {
namespace {

json::Value command(const std::string& config_json) {
  return *json::parse("{\"command_type\": \"start\", \"combined_config\": " + config_json + "}");
}

TEST(Heartbeat, BodyIsGprofilersJson) {
  HeartbeatState st;
  HeartbeatIdentity id{"10.0.0.5", "web-1", "svc"};
  EXPECT_EQ(heartbeat_body(st, id, "2026-11-27T16:00:00.000001"),
            "{\"ip_address\": \"10.0.0.5\", \"hostname\": \"web-1\", \"service_name\": \"svc\", "
            "\"last_command_id\": null, \"status\": \"active\", \"timestamp\": "
            "\"2026-11-27T16:00:00.000001\", \"received_command_ids\": [], "
            "\"executed_command_ids\": []}");
  st.mark_received("a");
  st.mark_received("a");
  st.mark_executed("a");
  st.last_command_id = "a";
  auto doc = json::parse(heartbeat_body(st, id, "t"));
  EXPECT_EQ(doc->get_string("last_command_id"), "a");
  EXPECT_EQ(doc->find("received_command_ids")->items.size(), 1u);
}

TEST(Heartbeat, IdHistoryKeepsTheNewestThousand) {
  HeartbeatState st;
  for (int i = 0; i < 1005; ++i) st.mark_received("c" + std::to_string(i));
  EXPECT_EQ(st.received_command_ids.size(), 1000u);
  EXPECT_EQ(st.received_command_ids.front(), "c5");
  EXPECT_TRUE(st.received("c1004"));
  EXPECT_FALSE(st.received("c0"));
}

TEST(Heartbeat, RequestsKeepTheApiServersPath) {
  auto r = heartbeat_request("http://studio:8080/base/", "T", "{}", true);
  EXPECT_EQ(r.url, "http://studio:8080/base/api/metrics/heartbeat");
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.headers, (std::vector<std::string>{"Authorization: Bearer T",
                                                 "Content-Type: application/json"}));
  EXPECT_EQ(r.timeout_s, 30);
  EXPECT_EQ(completion_request("http://s", "T", "{}", true).url,
            "http://s/api/metrics/command_completion");
}

TEST(Heartbeat, CompletionBody) {
  EXPECT_EQ(completion_body("cmd-1", "web-1", "completed", 0),
            "{\"command_id\": \"cmd-1\", \"hostname\": \"web-1\", \"status\": \"completed\", "
            "\"execution_time\": 0, \"error_message\": null, \"results_path\": null}");
  auto failed = json::parse(completion_body("c", "h", "failed", 0, "Unknown command type: x"));
  EXPECT_EQ(failed->get_string("error_message"), "Unknown command type: x");
}

TEST(Heartbeat, CommandOnlyFromASuccessfulAnswerWithOne) {
  HttpResponse r;
  r.status = 200;
  r.body =
      "{\"success\": true, \"message\": \"m\", \"profiling_command\": {\"command_type\": "
      "\"start\", \"combined_config\": {\"continuous\": true}}, \"command_id\": \"c-9\"}";
  auto c = command_from_response(r);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->command_id, "c-9");
  EXPECT_EQ(c->command_type, "start");
  EXPECT_TRUE(c->continuous);
  r.body =
      "{\"success\": true, \"message\": \"m\", \"profiling_command\": null, \"command_id\": null}";
  EXPECT_FALSE(command_from_response(r));
  r.body = "{\"success\": false, \"profiling_command\": {\"command_type\": \"stop\"}}";
  EXPECT_FALSE(command_from_response(r));
  r.body = "not json";
  EXPECT_FALSE(command_from_response(r));
  r.status = 500;
  r.body =
      "{\"success\": true, \"profiling_command\": {\"command_type\": \"stop\"}, \"command_id\": "
      "\"x\"}";
  EXPECT_FALSE(command_from_response(r));
}

TEST(Heartbeat, SettingsFromTheCombinedConfig) {
  auto s = command_settings(
      command(
          "{\"duration\": 30, \"frequency\": 49, \"profiling_mode\": \"cpu\", \"pids\": [12, 34], "
          "\"continuous\": true, \"max_processes\": 10, \"profiler_configs\": {\"perf\": "
          "\"disabled\", \"async_profiler\": {\"enabled\": false, \"time\": \"cpu\"}, "
          "\"pyperf\": \"disabled\", \"pyspy\": \"disabled\", \"rbspy\": \"enabled\"}}"),
      "h");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->duration_s, 30u);
  EXPECT_EQ(s->frequency, 49u);
  EXPECT_EQ(s->profiling_mode, "cpu");
  EXPECT_EQ(s->pids, (std::vector<int>{12, 34}));
  EXPECT_TRUE(s->continuous);
  EXPECT_TRUE(s->for_this_host);
  EXPECT_EQ(s->disabled, (std::set<std::string>{"java", "perf", "python"}));
  // pyspy alone disabled keeps Python (gProfiler falls back to its other profiler).
  s = command_settings(command("{\"profiler_configs\": {\"pyspy\": \"disabled\"}}"), "h");
  EXPECT_TRUE(s->disabled.empty());
  s = command_settings(command("{\"pids\": \"7, 8\", \"target_hostnames\": [\"a\", \"b\"]}"), "h");
  EXPECT_EQ(s->pids, (std::vector<int>{7, 8}));
  EXPECT_FALSE(s->for_this_host);
  EXPECT_FALSE(s->continuous);
  EXPECT_FALSE(s->duration_s);
  s = command_settings(command("{\"pids\": \"\", \"target_hostnames\": []}"), "h");
  EXPECT_TRUE(s->pids.empty());
  EXPECT_TRUE(s->for_this_host);
  EXPECT_FALSE(command_settings(command("{\"duration\": \"sixty\"}"), "h"));
  EXPECT_FALSE(command_settings(command("{\"pids\": [\"x\"]}"), "h"));
  EXPECT_FALSE(command_settings(command("{\"frequency\": 0}"), "h"));
}

TEST(Heartbeat, LocalIpIsAnAddress) {
  std::string ip = local_ip_address();
  EXPECT_NE(ip.find('.'), std::string::npos) << ip;
}

}  // namespace
}  // namespace gp::upload
