// gProfiler's custom PMU events (--hw-events-file) resolved to gp-record's --event.
#include "gp/profile/hw_events.h"

#include <cstdlib>
#include <vector>

#include "gp/util/json.h"

namespace gp::profile {
namespace {

// The value of the first "key : value" line of /proc/cpuinfo whose key is `key`.
std::string cpuinfo_field(std::string_view cpuinfo, std::string_view key) {
  size_t at = 0;
  while (at < cpuinfo.size()) {
    size_t end = cpuinfo.find('\n', at);
    if (end == std::string_view::npos) end = cpuinfo.size();
    std::string_view line = cpuinfo.substr(at, end - at);
    size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      std::string_view k = line.substr(0, colon);
      while (!k.empty() && (k.back() == ' ' || k.back() == '\t')) k.remove_suffix(1);
      if (k == key) {
        std::string_view v = line.substr(colon + 1);
        while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
        return std::string(v);
      }
    }
    at = end + 1;
  }
  return {};
}

std::string list_of(const std::vector<std::string>& names) {
  std::string s = "[";
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", '" : "'") + names[i] + "'";
  return s + "]";
}

}  // namespace

std::string cpu_platform(std::string_view cpuinfo) {
  std::string family = cpuinfo_field(cpuinfo, "cpu family");
  std::string model = cpuinfo_field(cpuinfo, "model");
  if (family != "6" || model.empty()) return "UNKNOWN";
  switch (std::atoi(model.c_str())) {
    case 106:
      return "ICX";
    case 143:
      return "SPR";
    case 207:
      return "EMR";
    case 173:
      return "GNR";
    default:
      return "UNKNOWN";
  }
}

bool under_hypervisor(std::string_view cpuinfo) {
  std::string flags = " " + cpuinfo_field(cpuinfo, "flags") + " ";
  return flags.find(" hypervisor ") != std::string::npos;
}

Result<std::string> custom_event(std::string_view json_text, const std::string& path,
                                 const std::string& name, const std::string& platform, bool vm) {
  auto doc = json::parse(json_text);
  if (!doc) return make_error("Invalid JSON in hardware events file: " + doc.error().message);
  if (!doc->is_object()) return make_error("Hardware events file must contain a JSON object");
  std::vector<std::string> names;
  const json::Value* entry = nullptr;
  for (const auto& [key, value] : doc->members) {
    if (!key.empty() && key[0] == '_') continue;
    names.push_back(key);
    if (key == name) entry = &value;
  }
  if (entry == nullptr)
    return make_error("Event '" + name +
                      "' not found in perf built-in events or custom events file (" + path +
                      "). Available custom events: " + list_of(names));
  const json::Value* config = entry->is_object() ? entry->find(platform) : nullptr;
  if (config == nullptr) {
    std::vector<std::string> platforms;
    if (entry->is_object())
      for (const auto& [key, value] : entry->members)
        if (!key.empty() && key[0] != '_') platforms.push_back(key);
    return make_error("Custom event '" + name + "' not supported on platform '" + platform +
                      "'. Supported platforms: " + list_of(platforms));
  }
  std::string raw = config->is_object() ? config->get_string("raw") : std::string();
  if (raw.empty())
    return make_error("Custom event '" + name + "' missing 'raw' field for platform '" + platform +
                      "'");
  bool software = raw.rfind("software/", 0) == 0 || raw.rfind("tracepoint/", 0) == 0;
  if (vm || software) return raw;
  return raw + (name.rfind("ocr.", 0) == 0 || name.rfind("OCR.", 0) == 0 ? ":p" : ":pp");
}

}  // namespace gp::profile
