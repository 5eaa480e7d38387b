// Pyroscope /ingest bodies and URLs (reference/upload-apis.md §2.1).
#include "gp/upload/pyroscope.h"

#include "gp/upload/url.h"

namespace gp::upload {

int prefix_frames(const ColText& col) {
  if (!col.header) return 0;
  const json::Value& h = *col.header;
  const json::Value* enabled = h.find("application_metadata_enabled");
  int n = enabled != nullptr && enabled->type == json::Type::boolean && enabled->boolean ? 1 : 0;
  std::string api = "v2";
  if (const json::Value* md = h.find("metadata"))
    if (const json::Value* ra = md->find("run_arguments"))
      api = ra->get_string("profile_api_version", "v2");
  return n + (api == "v1" ? 0 : 1);
}

namespace {

// The line without its first `skip` frames; empty when nothing of the stack remains.
std::string_view strip_frames(std::string_view line, int skip) {
  for (int i = 0; i < skip; ++i) {
    size_t semi = line.find(';');
    if (semi == std::string_view::npos) return {};
    line.remove_prefix(semi + 1);
  }
  return line;
}

}  // namespace

PyroscopeChunks pyroscope_chunks(const ColText& col, size_t max_bytes, size_t max_lines) {
  PyroscopeChunks out;
  int skip = prefix_frames(col);
  std::string current;
  size_t current_lines = 0;
  std::string_view rest = col.stacks;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#' || line.find(' ') == std::string_view::npos) continue;
    line = strip_frames(line, skip);
    if (line.empty() || line.front() == ' ') continue;
    if (line.size() > kPyroscopeMaxLine) {
      ++out.dropped_long;
      continue;
    }
    if (current_lines > 0 &&
        (current.size() + 1 + line.size() > max_bytes || current_lines >= max_lines)) {
      out.bodies.push_back(std::move(current));
      current.clear();
      current_lines = 0;
    }
    if (current_lines > 0) current += '\n';
    current += line;
    ++current_lines;
    ++out.lines;
  }
  if (current_lines > 0) out.bodies.push_back(std::move(current));
  return out;
}

std::string pyroscope_name(const PyroscopeConfig& c) {
  std::string name = c.app_name;
  if (c.labels.empty()) return name;
  name += '{';
  for (size_t i = 0; i < c.labels.size(); ++i) {
    if (i > 0) name += ',';
    name += c.labels[i].first + "=" + c.labels[i].second;
  }
  name += '}';
  return name;
}

int64_t header_sample_rate(const ColText& col, int64_t fallback) {
  if (!col.header) return fallback;
  const json::Value* f = col.header->find("sampling_frequency");
  return f != nullptr && f->is_number() && f->as_int() > 0 ? f->as_int() : fallback;
}

HttpRequest ingest_request(const PyroscopeConfig& c, int64_t from, int64_t until,
                           std::string body) {
  HttpRequest r;
  r.method = "POST";
  r.url = make_url(c.url, "/ingest",
                   {{"name", pyroscope_name(c)},
                    {"from", std::to_string(from)},
                    {"until", std::to_string(until)},
                    {"format", "folded"},
                    {"sampleRate", std::to_string(c.sample_rate)},
                    {"spyName", c.spy_name}});
  r.headers.emplace_back("Content-Type: text/plain");
  if (!c.tenant.empty()) r.headers.push_back("X-Scope-OrgID: " + c.tenant);
  if (!c.bearer_token.empty()) r.headers.push_back("Authorization: Bearer " + c.bearer_token);
  r.basic_user = c.user;
  r.basic_password = c.password;
  r.body = std::move(body);
  return r;
}

}  // namespace gp::upload
