// gp-upload's builders: what the Studio and Pyroscope receive, byte for byte.
#include <gtest/gtest.h>

#include "gp/fold/gzip.h"
#include "gp/upload/col_text.h"
#include "gp/upload/pyroscope.h"
#include "gp/upload/studio.h"
#include "gp/upload/url.h"

namespace gp::upload {
namespace {

const char* kCol =
    "# {\"containers\": [], \"metadata\": {\"hostname\": \"h1\", \"mac_address\": \"unknown\", "
    "\"api_token\": \"s3cret\", \"spawn_time\": \"2026-01-02T03:04:05\", \"current_time\": "
    "\"2026-01-02T03:05:05\", \"run_arguments\": {\"profile_api_version\": \"v2\"}}, "
    "\"application_metadata_enabled\": true, \"sampling_frequency\": 99}\n"
    "0;;python;main;work 7\n1;web;java;Main.run 3";

HostFacts facts() {
  HostFacts h;
  h.hostname = "uploader";
  h.mac_address = "02:00:00:00:00:01";
  h.processors = 4;
  h.memory_capacity_mb = 2048;
  h.pid = 42;
  h.now = 1767323045;  // 2026-01-02T03:04:05
  return h;
}

TEST(UploadCol, SplitsHeaderAndStacks) {
  auto col = split_col(kCol);
  ASSERT_TRUE(col.ok());
  ASSERT_TRUE(col->header.has_value());
  EXPECT_EQ(col->stacks, "0;;python;main;work 7\n1;web;java;Main.run 3");
  auto plain = split_col("a;b 1\n");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->header.has_value());
  EXPECT_EQ(plain->stacks, "a;b 1\n");
  EXPECT_FALSE(split_col("# {not json\na 1").ok());
}

TEST(UploadStudio, CompletesMetadataTheStudioValidates) {
  auto col = split_col(kCol);
  json::Value h = *col->header;
  complete_metadata(h, facts());
  const json::Value& md = *h.find("metadata");
  EXPECT_EQ(md.get_string("hostname"), "h1");                    // kept
  EXPECT_EQ(md.get_string("mac_address"), "02:00:00:00:00:01");  // "unknown" is no MAC
  EXPECT_EQ(md.get_string("agent_version"), "0.0.0");
  EXPECT_EQ(md.get_string("run_mode"), "standalone_executable");
  EXPECT_EQ(md.find("processors")->as_int(), 4);
  EXPECT_EQ(md.find("pid")->as_int(), 42);
  EXPECT_EQ(md.find("api_token"), nullptr);  // a token never travels
  for (const char* k :
       {"current_time", "spawn_time", "spawn_uptime_ms", "private_ip", "cloud_provider",
        "memory_capacity_mb", "system_name", "os_name", "os_release", "kernel_release",
        "kernel_version", "hardware_type", "libc_type", "libc_version", "python_version",
        "deployment_type", "run_arguments"})
    EXPECT_NE(md.find(k), nullptr) << k;
}

TEST(UploadStudio, TimesPreferFlagsThenHeader) {
  json::Value h = *split_col(kCol)->header;
  StudioTimes t = studio_times(h, 5, std::nullopt, std::nullopt);
  EXPECT_EQ(iso_utc(t.start), "2026-01-02T03:04:05");
  EXPECT_EQ(iso_utc(t.end), "2026-01-02T03:05:05");
  h.set("start_time", json::Value::from_string("2026-02-01T00:00:00"));
  h.set("end_time", json::Value::from_string("2026-02-01T00:01:00+00:00"));
  t = studio_times(h, 5, std::nullopt, std::nullopt);
  EXPECT_EQ(iso_utc(t.start), "2026-02-01T00:00:00");
  t = studio_times(h, 5, parse_iso("2026-03-01T01:00:00+01:00"), std::nullopt);
  EXPECT_EQ(iso_utc(t.start), "2026-03-01T00:00:00");
  EXPECT_EQ(studio_times(json::Value::object(), 5, std::nullopt, std::nullopt).start, 5);
}

TEST(UploadStudio, BodyIsTheAgentsJson) {
  std::string body =
      profile_body_json({0, 60}, "h\xC3\xA9", "# {}\na 1", "", "1970-01-01T00:00:00");
  EXPECT_EQ(body,
            "{\"start_time\": \"1970-01-01T00:00:00\", \"end_time\": \"1970-01-01T00:01:00\", "
            "\"hostname\": \"h\xC3\xA9\", \"profile\": \"# {}\\na 1\", \"cpu_avg\": null, "
            "\"mem_avg\": null, \"spawn_time\": \"1970-01-01T00:00:00\", \"gpid\": \"\"}");
}

TEST(UploadStudio, RequestCarriesHeadersQueryAndGzipBody) {
  StudioConfig c{"https://studio.example/", "t k+n", "svc", "host", "0.1.0"};
  auto r = profile_request(c, 0, "{\"a\": 1}");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->url,
            "https://studio.example/api/v2/profiles?key=t%20k%2Bn&service=svc&hostname=host&"
            "timestamp=1970-01-01T00%3A00%3A00&version=0.1.0");
  EXPECT_EQ(r->method, "POST");
  EXPECT_EQ(r->headers,
            (std::vector<std::string>{"GPROFILER-API-KEY: t k+n", "GPROFILER-SERVICE-NAME: svc",
                                      "Content-Encoding: gzip", "Content-Type: application/json"}));
  auto plain = fold::gunzip(r->body);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, "{\"a\": 1}");
  EXPECT_EQ(health_check_request(c, 0).url.substr(0, 44),
            "https://studio.example/api/v1/health_check?k");
  EXPECT_EQ(gpid_from_response("{\"message\": \"ok\", \"gpid\": 1234}"), "1234");
  EXPECT_EQ(gpid_from_response("oops"), "");
}

TEST(UploadUrl, RedactsTheTokenPlainAndEncoded) {
  EXPECT_EQ(redact("key=t%20k%2Bn and t k+n", "t k+n"), "key=*** and ***");
  EXPECT_FALSE(parse_iso("yesterday").has_value());
  EXPECT_EQ(parse_iso("1970-01-01 00:01:00Z"), 60);
}

TEST(UploadPyroscope, StripsHeaderAndPrefixFrames) {
  auto col = split_col(kCol);
  EXPECT_EQ(prefix_frames(*col), 2);
  PyroscopeChunks c = pyroscope_chunks(*col);
  ASSERT_EQ(c.bodies.size(), 1U);
  EXPECT_EQ(c.bodies[0], "python;main;work 7\njava;Main.run 3");
  auto v1 = split_col(
      "# {\"metadata\": {\"run_arguments\": {\"profile_api_version\": \"v1\"}}}\npython;f 2");
  EXPECT_EQ(prefix_frames(*v1), 0);
  EXPECT_EQ(pyroscope_chunks(*v1).bodies[0], "python;f 2");
}

TEST(UploadPyroscope, SplitsLargeProfilesAndDropsOverlongLines) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "comm;frame" + std::to_string(i) + " 1\n";
  text += std::string(70000, 'x') + " 1\n";
  ColText col{std::nullopt, text};
  PyroscopeChunks c = pyroscope_chunks(col, 200, 1000);
  EXPECT_EQ(c.lines, 100U);
  EXPECT_EQ(c.dropped_long, 1U);
  EXPECT_GT(c.bodies.size(), 5U);
  std::string joined;
  for (const auto& b : c.bodies) {
    EXPECT_LE(b.size(), 200U);
    joined += b + "\n";
  }
  EXPECT_EQ(joined, text.substr(0, text.size() - 70003));
  EXPECT_EQ(pyroscope_chunks(col, 1 << 20, 30).bodies.size(), 4U);  // 100 lines / 30 per body
}

TEST(UploadPyroscope, IngestUrlAndAuth) {
  PyroscopeConfig c;
  c.url = "http://p:4040";
  c.app_name = "web.cpu";
  c.labels = {{"env", "prod"}, {"hostname", "h1"}};
  c.tenant = "team";
  c.bearer_token = "tok";
  c.sample_rate = 99;
  HttpRequest r = ingest_request(c, 100, 160, "a 1");
  EXPECT_EQ(r.url,
            "http://p:4040/ingest?name=web.cpu%7Benv%3Dprod%2Chostname%3Dh1%7D&from=100&until=160&"
            "format=folded&sampleRate=99&spyName=gp");
  EXPECT_EQ(r.headers, (std::vector<std::string>{"Content-Type: text/plain", "X-Scope-OrgID: team",
                                                 "Authorization: Bearer tok"}));
  EXPECT_EQ(r.body, "a 1");
}

}  // namespace
}  // namespace gp::upload
