// gProfiler's --external-metadata file: parsed, and merged into an archive's app metadata.
#include "gp/fold/external_metadata.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

namespace gp::fold {

Result<ExternalMetadata> parse_external_metadata(std::string_view text) {
  auto doc = json::parse(text);
  if (!doc) return make_error("not JSON: " + doc.error().message);
  if (!doc->is_object()) return make_error("not a JSON object");
  ExternalMetadata out;
  if (const json::Value* s = doc->find("static"); s != nullptr && !s->is_null()) {
    if (!s->is_object()) return make_error("\"static\" is not an object");
    out.static_part = *s;
  }
  const json::Value* app = doc->find("application");
  if (app == nullptr || app->is_null()) return out;
  if (!app->is_object()) return make_error("\"application\" is not an object");
  for (const auto& [key, value] : app->members) {
    int32_t pid = 0;
    auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), pid);
    if (ec != std::errc() || end != key.data() + key.size() || pid <= 0)
      return make_error("\"application\" key \"" + key + "\" is not a pid");
    if (!value.is_object())
      return make_error("\"application\" entry of pid " + key + " is not an object");
    out.by_pid[pid] = value;
  }
  return out;
}

Result<ExternalMetadata> read_external_metadata(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot read '" + path + "': " + std::strerror(errno));
  // Read in pieces up to one byte past the limit: a small file costs a small buffer.
  std::string text;
  char piece[64 * 1024];
  while (text.size() <= kMaxExternalMetadataBytes && in.read(piece, sizeof piece).gcount() > 0)
    text.append(piece, static_cast<size_t>(in.gcount()));
  if (in.bad()) return make_error("cannot read '" + path + "'");
  if (text.size() > kMaxExternalMetadataBytes)
    return make_error("'" + path + "' is larger than " +
                      std::to_string(kMaxExternalMetadataBytes >> 20) + " MiB");
  auto parsed = parse_external_metadata(text);
  if (!parsed) return make_error("'" + path + "': " + parsed.error().message);
  return parsed;
}

void apply_external_app_metadata(model::Archive& archive, const ExternalMetadata& external) {
  if (external.by_pid.empty()) return;
  for (model::Session& s : archive.sessions) {
    for (model::Process& p : s.processes) {
      auto entry = external.by_pid.find(p.pid);
      if (entry == external.by_pid.end()) continue;
      json::Value merged = json::Value::object();
      if (!p.app_metadata_json.empty()) {
        auto collected = json::parse(p.app_metadata_json);
        if (collected && collected->is_object()) merged = std::move(*collected);
      }
      for (const auto& [key, value] : entry->second.members) merged.set(key, value);
      p.app_metadata_json = json::dump(merged);
    }
  }
}

}  // namespace gp::fold
