// gProfiler's heartbeat client (dynamic_profiling_management/heartbeat.py, __init__.py).
#include "gp/upload/heartbeat.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace gp::upload {
namespace {

using json::Value;

constexpr size_t kMaxCommandHistory = 1000;

void remember(std::vector<std::string>& ids, const std::string& id) {
  if (std::find(ids.begin(), ids.end(), id) != ids.end()) return;
  ids.push_back(id);
  if (ids.size() > kMaxCommandHistory) ids.erase(ids.begin(), ids.end() - kMaxCommandHistory);
}

Value string_list(const std::vector<std::string>& ids) {
  Value out = Value::array();
  for (const auto& id : ids) out.push_back(Value::from_string(id));
  return out;
}

HttpRequest json_post(std::string_view api_server, std::string_view path, const std::string& token,
                      std::string body, bool verify_tls) {
  while (!api_server.empty() && api_server.back() == '/') api_server.remove_suffix(1);
  HttpRequest r;
  r.method = "POST";
  r.url = std::string(api_server) + std::string(path);
  r.headers = {"Authorization: Bearer " + token, "Content-Type: application/json"};
  r.body = std::move(body);
  r.timeout_s = 30;
  r.verify_tls = verify_tls;
  return r;
}

// A pid list as the Studio stores it: a JSON array of numbers, or "1,2" (empty: all).
Result<std::vector<int>> pids_of(const Value& v) {
  std::vector<int> out;
  auto add = [&](long long n) -> Status {
    if (n <= 0 || n > 0x7fffffff) return make_error("combined_config.pids: not a pid");
    out.push_back(static_cast<int>(n));
    return ok_status();
  };
  if (v.is_null()) return out;
  if (v.is_array()) {
    for (const Value& item : v.items) {
      if (item.is_number()) {
        if (auto st = add(item.as_int(-1)); !st) return st.error();
      } else if (item.is_string()) {
        char* end = nullptr;
        long long n = std::strtoll(item.text.c_str(), &end, 10);
        if (item.text.empty() || *end != 0) return make_error("combined_config.pids: not a pid");
        if (auto st = add(n); !st) return st.error();
      } else {
        return make_error("combined_config.pids: not a pid");
      }
    }
    return out;
  }
  if (v.is_string()) {
    size_t pos = 0;
    const std::string& s = v.text;
    while (pos < s.size()) {
      size_t comma = s.find(',', pos);
      std::string part =
          s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      pos = comma == std::string::npos ? s.size() : comma + 1;
      part.erase(0, part.find_first_not_of(' '));
      part.erase(part.find_last_not_of(' ') + 1);
      if (part.empty()) continue;
      char* end = nullptr;
      long long n = std::strtoll(part.c_str(), &end, 10);
      if (*end != 0) return make_error("combined_config.pids: not a pid list");
      if (auto st = add(n); !st) return st.error();
    }
    return out;
  }
  return make_error("combined_config.pids: not a pid list");
}

Result<std::optional<unsigned>> positive(const Value& config, std::string_view key) {
  const Value* v = config.find(key);
  if (v == nullptr || v->is_null()) return std::optional<unsigned>();
  int64_t n = v->is_number() ? v->as_int(-1) : -1;
  if (n <= 0 || n > 0xffffffffLL)
    return make_error("combined_config." + std::string(key) + ": not a positive integer");
  return std::optional<unsigned>(static_cast<unsigned>(n));
}

// _apply_profiler_configs: which profilers a config turns off.
std::set<std::string> disabled_profilers(const Value& configs) {
  std::set<std::string> off;
  if (!configs.is_object()) return off;
  auto text = [&](std::string_view key) -> std::string {
    const Value* v = configs.find(key);
    if (v == nullptr) return "";
    if (v->is_string()) return v->text;
    if (v->is_object()) {
      const Value* enabled = v->find("enabled");
      if (enabled != nullptr && enabled->type == json::Type::boolean && !enabled->boolean)
        return "disabled";
      return v->get_string("mode");
    }
    return "";
  };
  if (text("perf") == "disabled") off.insert("perf");
  // Python is off only when both of its profilers are.
  if (text("pyperf") == "disabled" && text("pyspy") == "disabled") off.insert("python");
  if (text("async_profiler") == "disabled") off.insert("java");
  if (text("phpspy") == "disabled") off.insert("php");
  if (text("rbspy") == "disabled") off.insert("ruby");
  if (text("dotnet_trace") == "disabled") off.insert("dotnet");
  if (text("nodejs_perf") == "disabled") off.insert("nodejs");
  return off;
}

}  // namespace

bool HeartbeatState::received(const std::string& id) const {
  return std::find(received_command_ids.begin(), received_command_ids.end(), id) !=
         received_command_ids.end();
}
void HeartbeatState::mark_received(const std::string& id) { remember(received_command_ids, id); }
void HeartbeatState::mark_executed(const std::string& id) { remember(executed_command_ids, id); }

std::string local_isoformat_now() {
  struct timeval tv {};
  ::gettimeofday(&tv, nullptr);
  struct tm tm {};
  time_t secs = tv.tv_sec;
  ::localtime_r(&secs, &tm);
  char buf[48];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  if (tv.tv_usec != 0)
    std::snprintf(buf + n, sizeof buf - n, ".%06ld", static_cast<long>(tv.tv_usec));
  return buf;
}

std::string heartbeat_body(const HeartbeatState& state, const HeartbeatIdentity& id,
                           const std::string& timestamp) {
  Value doc = Value::object();
  doc.set("ip_address", Value::from_string(id.ip_address));
  doc.set("hostname", Value::from_string(id.hostname));
  doc.set("service_name", Value::from_string(id.service_name));
  doc.set("last_command_id",
          state.last_command_id ? Value::from_string(*state.last_command_id) : Value::null());
  doc.set("status", Value::from_string("active"));
  doc.set("timestamp", Value::from_string(timestamp));
  doc.set("received_command_ids", string_list(state.received_command_ids));
  doc.set("executed_command_ids", string_list(state.executed_command_ids));
  return json::dump(doc);
}

HttpRequest heartbeat_request(std::string_view api_server, const std::string& token,
                              std::string body, bool verify_tls) {
  return json_post(api_server, "/api/metrics/heartbeat", token, std::move(body), verify_tls);
}

HttpRequest completion_request(std::string_view api_server, const std::string& token,
                               std::string body, bool verify_tls) {
  return json_post(api_server, "/api/metrics/command_completion", token, std::move(body),
                   verify_tls);
}

std::optional<ProfilingCommand> command_from_response(const HttpResponse& response) {
  if (response.status != 200) return std::nullopt;
  auto doc = json::parse(response.body);
  if (!doc || !doc->is_object()) return std::nullopt;
  const Value* success = doc->find("success");
  const Value* command = doc->find("profiling_command");
  if (success == nullptr || success->type != json::Type::boolean || !success->boolean ||
      command == nullptr || !command->is_object() || command->members.empty())
    return std::nullopt;
  const Value* id = doc->find("command_id");
  ProfilingCommand out;
  out.command_id = id == nullptr ? "" : id->is_string() ? id->text : json::dump(*id);
  out.command_type = command->get_string("command_type", "start");
  out.profiling_command = *command;
  const Value* config = command->find("combined_config");
  const Value* continuous = config != nullptr ? config->find("continuous") : nullptr;
  out.continuous =
      continuous != nullptr && continuous->type == json::Type::boolean && continuous->boolean;
  return out;
}

std::string completion_body(const std::string& command_id, const std::string& hostname,
                            const std::string& status, int64_t execution_time,
                            const std::string& error_message) {
  Value doc = Value::object();
  doc.set("command_id", Value::from_string(command_id));
  doc.set("hostname", Value::from_string(hostname));
  doc.set("status", Value::from_string(status));
  doc.set("execution_time", Value::from_int(execution_time));
  doc.set("error_message",
          error_message.empty() ? Value::null() : Value::from_string(error_message));
  doc.set("results_path", Value::null());
  return json::dump(doc);
}

Result<CommandSettings> command_settings(const json::Value& profiling_command,
                                         const std::string& hostname) {
  CommandSettings s;
  const Value* found = profiling_command.find("combined_config");
  Value empty = Value::object();
  const Value& config = found != nullptr && found->is_object() ? *found : empty;
  auto duration = positive(config, "duration");
  if (!duration) return duration.error();
  s.duration_s = *duration;
  auto frequency = positive(config, "frequency");
  if (!frequency) return frequency.error();
  s.frequency = *frequency;
  if (const Value* mode = config.find("profiling_mode"); mode != nullptr && mode->is_string())
    s.profiling_mode = mode->text;
  if (const Value* targets = config.find("target_hostnames");
      targets != nullptr && targets->is_array() && !targets->items.empty()) {
    s.for_this_host =
        std::any_of(targets->items.begin(), targets->items.end(),
                    [&](const Value& t) { return t.is_string() && t.text == hostname; });
  }
  if (const Value* pids = config.find("pids"); pids != nullptr) {
    auto list = pids_of(*pids);
    if (!list) return list.error();
    s.pids = std::move(*list);
  }
  const Value* continuous = config.find("continuous");
  s.continuous =
      continuous != nullptr && continuous->type == json::Type::boolean && continuous->boolean;
  if (const Value* configs = config.find("profiler_configs"); configs != nullptr)
    s.disabled = disabled_profilers(*configs);
  return s;
}

std::string local_ip_address() {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "127.0.0.1";
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(80);
  ::inet_pton(AF_INET, "8.8.8.8", &to.sin_addr);
  std::string out = "127.0.0.1";
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0) {
    sockaddr_in me{};
    socklen_t len = sizeof me;
    char buf[INET_ADDRSTRLEN] = {0};
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&me), &len) == 0 &&
        ::inet_ntop(AF_INET, &me.sin_addr, buf, sizeof buf) != nullptr)
      out = buf;
  }
  ::close(fd);
  return out;
}

}  // namespace gp::upload
