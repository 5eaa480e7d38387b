#pragma once
// Requests of the gProfiler Performance Studio agent API (reference/upload-apis.md §1):
// health check, POST /api/v2/profiles (gzip JSON), the metadata the Studio validates.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gp/upload/col_text.h"
#include "gp/upload/http.h"
#include "gp/upload/url.h"
#include "gp/util/json.h"
#include "gp/util/result.h"

namespace gp::upload {

// Facts about the uploading host, used where a `.col` lacks the Studio's required metadata.
struct HostFacts {
  std::string hostname = "unknown";
  std::string private_ip = "127.0.0.1";
  std::string mac_address = "00:00:00:00:00:00";
  std::string kernel_release = "unknown", kernel_version = "unknown", machine = "unknown";
  std::string os_name = "unknown", os_release = "unknown";
  int64_t processors = 1;
  int64_t memory_capacity_mb = 1;
  int64_t pid = 0;
  int64_t now = 0;  // UNIX seconds
};
HostFacts collect_host_facts();

// Fills the members of header.metadata that the Studio's AgentMetadata requires (§1.4) when
// they are missing or would be refused (a MAC that is not a MAC, a non-X.Y.Z version, a
// count <= 0, an unknown run_mode or cloud provider). Existing valid values are kept.
// Creates the header's "metadata" object if absent. Removes members whose key names a token.
void complete_metadata(json::Value& header, const HostFacts& host);

// A minimal gProfiler header for a `.col` without one (e.g. plain folded text).
json::Value minimal_header();

struct StudioTimes {
  int64_t start = 0, end = 0;  // UNIX seconds
};
// The profile's time span: --start-time/--end-time (already parsed) win; then the header's
// top-level start_time/end_time (as gProfiler's upload-file reads them); then metadata's
// spawn_time/current_time (gp writes the session's span there); else both are `now`.
StudioTimes studio_times(const json::Value& header, int64_t now, std::optional<int64_t> start,
                         std::optional<int64_t> end);

// "# " + header JSON + "\n" + stacks: the `profile` string the Studio stores.
std::string profile_text(const json::Value& header, std::string_view stacks);

// The JSON document of POST /api/v2/profiles (ensure_ascii=False, agent field order).
// cpu_avg/mem_avg: the header's "metrics" members (null when absent), as the agent sends them.
std::string profile_body_json(const StudioTimes& times, std::string_view hostname,
                              std::string_view profile, std::string_view gpid,
                              std::string_view spawn_time, json::Value cpu_avg = {},
                              json::Value mem_avg = {});

// The header's metrics.cpu_avg / metrics.mem_avg when they are numbers, else null.
json::Value header_metric(const json::Value& header, std::string_view key);

struct StudioConfig {
  std::string server_host;
  std::string token;
  std::string service_name;
  std::string hostname;  // for the query parameters
  std::string version;   // agent version (query parameter `version`)
};

// Query parameters the agent appends to every request (key, service, hostname, timestamp).
QueryParams studio_query(const StudioConfig& c, int64_t now);
// Headers of every Studio request (auth; plus gzip/JSON for POSTs).
std::vector<std::string> studio_headers(const StudioConfig& c, bool post);

HttpRequest health_check_request(const StudioConfig& c, int64_t now);
// The complete POST; the body is gzipped (level 9, as Python's gzip.open).
Result<HttpRequest> profile_request(const StudioConfig& c, int64_t now, std::string_view body_json);

// The gpid the Studio returned ("" when the answer has none).
std::string gpid_from_response(std::string_view body);

}  // namespace gp::upload
