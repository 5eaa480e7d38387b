// The `.col` header object (reference/gprofiler.md §2.2-2.3; required metadata per §8.4).
#include <algorithm>
#include <cctype>
#include <ctime>

#include "fold/col_context.h"
#include "gp/util/version.h"

namespace gp::fold {
namespace {

using json::Value;

// gProfiler's get_iso8601_format_time: UTC, no microseconds, no timezone.
std::string iso_utc(int64_t ns) {
  std::time_t t = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

void set_default(Value& obj, std::string_view key, Value v) {
  if (obj.find(key) == nullptr) obj.set(key, std::move(v));
}

// "KEY=value" from /etc/os-release text, unquoted.
std::string os_release_field(const std::string& text, std::string_view key) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line(text.data() + pos, (nl == std::string::npos ? text.size() : nl) - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == '=') {
      std::string_view v = line.substr(key.size() + 1);
      if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
        v = v.substr(1, v.size() - 2);
      return std::string(v);
    }
  }
  return {};
}

Value or_unknown(const std::string& s) { return Value::from_string(s.empty() ? "unknown" : s); }

void add_sampling(const model::Sampling& sm, Value& obj) {
  // gProfiler's allocation profiles carry no sampling fields (profiling_mode says it).
  if (sm.event.empty() || sm.event == "alloc") return;
  bool period = sm.frequency_hz == 0 && sm.period != 0;
  // The archive spells gProfiler's default event "cpu-time" as "cpu-clock" (archive.capnp).
  obj.set("sampling_event", Value::from_string(sm.event == "cpu-clock" ? "cpu-time" : sm.event));
  obj.set("sampling_mode", Value::from_string(period ? "period" : "frequency"));
  if (period) obj.set("sampling_period", Value::from_uint(sm.period));
  else obj.set("sampling_frequency", Value::from_uint(sm.frequency_hz));
}

// gProfiler's `metadata`: the recorded object when there is one, completed from the header.
Value metadata(const model::Session* s, const ColOptions& options) {
  Value md = Value::object();
  if (s != nullptr && !s->header.metadata_json.empty()) {
    auto parsed = json::parse(s->header.metadata_json);
    if (parsed && parsed->is_object()) md = std::move(*parsed);
  }
  model::Header h = s != nullptr ? s->header : model::Header{};
  int64_t end_ns = h.start_time_ns + h.sampling.duration_ns;
  if (s != nullptr && s->trailer && s->trailer->end_time_ns != 0) end_ns = s->trailer->end_time_ns;
  const std::string& osr = h.host.os_release;
  bool os_release_text = osr.find('=') != std::string::npos;
  set_default(md, "cloud_provider", Value::from_string("unknown"));
  set_default(md, "agent_version", Value::from_string(kVersion));
  // Times, counts and pids we do not know are left out rather than invented (gp-upload
  // falls back as gProfiler's upload-file does).
  if (h.start_time_ns != 0)
    set_default(md, "spawn_time", Value::from_string(iso_utc(h.start_time_ns)));
  set_default(md, "python_version", Value::from_string("unknown"));
  set_default(md, "run_mode", Value::from_string("standalone_executable"));
  set_default(md, "deployment_type", Value::from_string("instances"));
  set_default(md, "kernel_release", or_unknown(h.host.kernel_release));
  set_default(md, "kernel_version", or_unknown(h.host.kernel_version));
  set_default(md, "system_name", Value::from_string("Linux"));
  if (h.host.cpu_count != 0) set_default(md, "processors", Value::from_uint(h.host.cpu_count));
  set_default(md, "hostname",
              Value::from_string(h.host.hostname.empty() ? "<unknown>" : h.host.hostname));
  set_default(md, "os_name", or_unknown(os_release_text ? os_release_field(osr, "NAME") : ""));
  set_default(md, "os_release",
              or_unknown(os_release_text ? os_release_field(osr, "VERSION_ID") : osr));
  set_default(md, "hardware_type", or_unknown(h.host.machine));
  set_default(md, "libc_type", Value::from_string("unknown"));
  set_default(md, "libc_version", Value::from_string("unknown"));
  set_default(md, "mac_address", Value::from_string("unknown"));
  set_default(md, "private_ip", Value::from_string("unknown"));
  // gProfiler's quirk: "spawn_uptime_ms" holds seconds (§2.3).
  if (h.monotonic_start_ns != 0)
    set_default(md, "spawn_uptime_ms", Value::from_double(h.monotonic_start_ns / 1e9));
  if (end_ns != 0) set_default(md, "current_time", Value::from_string(iso_utc(end_ns)));
  set_default(md, "run_arguments", Value::object());
  Value* args = md.find("run_arguments");
  if (!args->is_object()) *args = Value::object();
  // The indexer reads this key to know whether lines carry the container frame.
  args->set("profile_api_version", Value::from_string(options.profile_api_version));
  set_default(md, "profiling_mode", Value::from_string("cpu"));
  if (!options.external_metadata.is_null()) md.set("external_metadata", options.external_metadata);
  if (!options.metadata_collection) {
    // gProfiler's _snapshot without metadata collection: these keys only.
    Value few = Value::object();
    few.set("hostname", *md.find("hostname"));
    few.set("profiling_mode", *md.find("profiling_mode"));
    md = std::move(few);
  }
  add_sampling(h.sampling, md);
  json::remove_keys_containing(md, "token");
  return md;
}

}  // namespace

json::Value col_header(const model::Archive& archive, const ColOptions& options) {
  return detail::make_col_header(archive, options, detail::make_col_context(archive, options));
}

json::Value detail::make_col_header(const model::Archive& archive, const ColOptions& options,
                                    const ColContext& ctx) {
  const model::Session* first = archive.sessions.empty() ? nullptr : &archive.sessions.front();
  Value md = metadata(first, options);
  Value doc = Value::object();
  Value containers = Value::array();
  if (options.container_names)
    for (const std::string& c : ctx.containers) containers.push_back(Value::from_string(c));
  doc.set("containers", std::move(containers));
  doc.set("container_names_enabled",
          Value::from_bool(options.container_names && ctx.container_names_enabled));
  std::string mode = md.get_string("profiling_mode", "cpu");
  doc.set("metadata", std::move(md));
  Value metrics = Value::object();
  metrics.set("cpu_avg", Value::null());
  metrics.set("mem_avg", Value::null());
  doc.set("metrics", std::move(metrics));
  Value app = Value::array();
  app.items = ctx.app_metadata;
  doc.set("application_metadata", std::move(app));
  doc.set("application_metadata_enabled", Value::from_bool(options.application_metadata));
  doc.set("profiling_mode", Value::from_string(mode));
  doc.set("hwmetrics", Value::null());
  doc.set("htmlblob", Value::null());
  doc.set("flamegraph_html", Value::null());
  if (first != nullptr) add_sampling(first->header.sampling, doc);
  return doc;
}

}  // namespace gp::fold
