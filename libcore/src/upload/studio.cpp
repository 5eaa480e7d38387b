// Performance Studio request builders (reference/upload-apis.md §1.2-1.4, gprofiler.md §8).
#include "gp/upload/studio.h"

#include <algorithm>
#include <cctype>
#include <regex>

#include "gp/fold/gzip.h"

namespace gp::upload {
namespace {

using json::Value;

bool is_nonempty_string(const Value* v) {
  return v != nullptr && v->is_string() && !v->text.empty();
}

bool is_positive_int(const Value* v) {
  return v != nullptr && v->is_number() && v->as_double() >= 1;
}

bool is_iso(const Value* v) {
  return v != nullptr && v->is_string() && parse_iso(v->text).has_value();
}

bool valid_mac(const Value* v) {
  static const std::regex re("^[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}$");
  return v != nullptr && v->is_string() && std::regex_match(v->text, re);
}

// db_manager splits agent_version on '.' into three ints; the patch may carry "-suffix".
bool valid_version(const Value* v) {
  static const std::regex re("^[0-9]+\\.[0-9]+\\.[0-9]+(-.*)?$");
  return v != nullptr && v->is_string() && std::regex_match(v->text, re);
}

bool one_of_ci(const Value* v, std::initializer_list<const char*> options) {
  if (v == nullptr || !v->is_string()) return false;
  std::string s = v->text;
  std::transform(s.begin(), s.end(), s.begin(), ::tolower);
  return std::any_of(options.begin(), options.end(), [&](const char* o) { return s == o; });
}

void ensure(Value& md, std::string_view key, bool valid, Value fallback) {
  if (!valid) md.set(key, std::move(fallback));
}

Value str(const std::string& s) { return Value::from_string(s); }

void complete_strings(Value& md, const HostFacts& h) {
  ensure(md, "hostname", is_nonempty_string(md.find("hostname")), str(h.hostname));
  ensure(md, "private_ip", is_nonempty_string(md.find("private_ip")), str(h.private_ip));
  ensure(md, "system_name", is_nonempty_string(md.find("system_name")), str("Linux"));
  ensure(md, "os_name", is_nonempty_string(md.find("os_name")), str(h.os_name));
  ensure(md, "os_release", is_nonempty_string(md.find("os_release")), str(h.os_release));
  ensure(md, "kernel_release", is_nonempty_string(md.find("kernel_release")),
         str(h.kernel_release));
  ensure(md, "kernel_version", is_nonempty_string(md.find("kernel_version")),
         str(h.kernel_version));
  ensure(md, "hardware_type", is_nonempty_string(md.find("hardware_type")), str(h.machine));
  for (const char* key : {"libc_type", "libc_version", "python_version", "deployment_type"})
    ensure(md, key, is_nonempty_string(md.find(key)), str("unknown"));
}

}  // namespace

json::Value minimal_header() {
  Value doc = Value::object();
  doc.set("containers", Value::array());
  doc.set("container_names_enabled", Value::from_bool(false));
  doc.set("metadata", Value::object());
  Value metrics = Value::object();
  metrics.set("cpu_avg", Value::null());
  metrics.set("mem_avg", Value::null());
  doc.set("metrics", std::move(metrics));
  doc.set("application_metadata", Value::array());
  doc.set("application_metadata_enabled", Value::from_bool(false));
  doc.set("profiling_mode", str("cpu"));
  return doc;
}

void complete_metadata(json::Value& header, const HostFacts& h) {
  json::remove_keys_containing(header, "token");
  if (header.find("metadata") == nullptr || !header.find("metadata")->is_object())
    header.set("metadata", Value::object());
  Value& md = *header.find("metadata");
  std::string now = iso_utc(h.now);
  ensure(md, "current_time", is_iso(md.find("current_time")), str(now));
  ensure(md, "spawn_time", is_iso(md.find("spawn_time")), str(now));
  const Value* up = md.find("spawn_uptime_ms");
  ensure(md, "spawn_uptime_ms", up != nullptr && up->is_number(), Value::from_int(0));
  complete_strings(md, h);
  ensure(md, "cloud_provider",
         one_of_ci(md.find("cloud_provider"), {"aws", "gcp", "azure", "unknown"}), str("unknown"));
  ensure(md, "processors", is_positive_int(md.find("processors")), Value::from_int(h.processors));
  ensure(md, "memory_capacity_mb", is_positive_int(md.find("memory_capacity_mb")),
         Value::from_int(h.memory_capacity_mb));
  const Value* pid = md.find("pid");
  ensure(md, "pid", pid != nullptr && pid->is_number(), Value::from_int(h.pid));
  ensure(md, "mac_address", valid_mac(md.find("mac_address")), str(h.mac_address));
  ensure(md, "agent_version", valid_version(md.find("agent_version")), str("0.0.0"));
  ensure(
      md, "run_mode",
      one_of_ci(md.find("run_mode"), {"k8s", "container", "standalone_executable", "local_python"}),
      str("standalone_executable"));
  const Value* ra = md.find("run_arguments");
  ensure(md, "run_arguments", ra != nullptr && ra->is_object(), Value::object());
}

StudioTimes studio_times(const json::Value& header, int64_t now, std::optional<int64_t> start,
                         std::optional<int64_t> end) {
  auto field = [](const Value* obj, std::string_view key) -> std::optional<int64_t> {
    const Value* v = obj != nullptr ? obj->find(key) : nullptr;
    return v != nullptr && v->is_string() ? parse_iso(v->text) : std::nullopt;
  };
  std::optional<int64_t> s = field(&header, "start_time"), e = field(&header, "end_time");
  if (!s || !e) {
    // gProfiler's upload-file: both or neither. gp's headers carry the span in metadata.
    s = field(header.find("metadata"), "spawn_time");
    e = field(header.find("metadata"), "current_time");
    if (!s || !e || *e < *s) s = e = now;
  }
  StudioTimes t{start.value_or(*s), end.value_or(*e)};
  if (start && !end) t.end = std::max(t.end, t.start);
  return t;
}

std::string profile_text(const json::Value& header, std::string_view stacks) {
  std::string out = "# ";
  json::dump(header, out);
  out += '\n';
  out += stacks;
  return out;
}

std::string profile_body_json(const StudioTimes& times, std::string_view hostname,
                              std::string_view profile, std::string_view gpid,
                              std::string_view spawn_time, json::Value cpu_avg,
                              json::Value mem_avg) {
  Value body = Value::object();
  body.set("start_time", str(iso_utc(times.start)));
  body.set("end_time", str(iso_utc(times.end)));
  body.set("hostname", Value::from_string(std::string(hostname)));
  body.set("profile", Value::from_string(std::string(profile)));
  body.set("cpu_avg", std::move(cpu_avg));
  body.set("mem_avg", std::move(mem_avg));
  body.set("spawn_time", Value::from_string(std::string(spawn_time)));
  // The agent sends back the gpid as the server returned it: an int (a string only if it was).
  bool numeric = !gpid.empty() && gpid.size() < 19 &&
                 std::all_of(gpid.begin(), gpid.end(), [](char c) { return c >= '0' && c <= '9'; });
  body.set("gpid", numeric ? Value::from_int(std::stoll(std::string(gpid)))
                           : Value::from_string(std::string(gpid)));
  return json::dump_utf8(body);
}

json::Value header_metric(const json::Value& header, std::string_view key) {
  const Value* metrics = header.find("metrics");
  const Value* v = metrics != nullptr && metrics->is_object() ? metrics->find(key) : nullptr;
  return v != nullptr && v->is_number() ? *v : Value::null();
}

QueryParams studio_query(const StudioConfig& c, int64_t now) {
  return {{"key", c.token},
          {"service", c.service_name},
          {"hostname", c.hostname},
          {"timestamp", iso_utc(now)}};
}

std::vector<std::string> studio_headers(const StudioConfig& c, bool post) {
  std::vector<std::string> h = {"GPROFILER-API-KEY: " + c.token,
                                "GPROFILER-SERVICE-NAME: " + c.service_name};
  if (post) {
    h.emplace_back("Content-Encoding: gzip");
    h.emplace_back("Content-Type: application/json");
  }
  return h;
}

HttpRequest health_check_request(const StudioConfig& c, int64_t now) {
  HttpRequest r;
  r.url = make_url(c.server_host, "/api/v1/health_check", studio_query(c, now));
  r.headers = studio_headers(c, false);
  r.timeout_s = 5;
  return r;
}

Result<HttpRequest> profile_request(const StudioConfig& c, int64_t now,
                                    std::string_view body_json) {
  auto gz = fold::gzip(body_json, 9);
  if (!gz) return gz.error();
  HttpRequest r;
  r.method = "POST";
  QueryParams q = studio_query(c, now);
  q.emplace_back("version", c.version);
  r.url = make_url(c.server_host, "/api/v2/profiles", q);
  r.headers = studio_headers(c, true);
  r.body = std::move(*gz);
  return r;
}

std::string gpid_from_response(std::string_view body) {
  auto parsed = json::parse(body);
  if (!parsed || !parsed->is_object()) return {};
  const Value* g = parsed->find("gpid");
  if (g == nullptr || g->is_null()) return {};
  return g->is_string() ? g->text : g->text;  // numbers keep their literal text
}

}  // namespace gp::upload
