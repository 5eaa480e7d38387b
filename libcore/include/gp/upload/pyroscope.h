#pragma once
// Pyroscope's legacy ingestion endpoint, POST /ingest?format=folded
// (reference/upload-apis.md §2.1): folded body without the gProfiler header and without the
// `<app-metadata idx>;<container>;` prefix frames, split under Pyroscope's limits.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gp/upload/col_text.h"
#include "gp/upload/http.h"

namespace gp::upload {

// Pyroscope's folded scanner stops silently at a line over 64 KiB; such lines are dropped.
inline constexpr size_t kPyroscopeMaxLine = 64 * 1024 - 1;
// One converted profile must stay under the 2 MiB ingestion burst and 16000 samples.
inline constexpr size_t kPyroscopeChunkBytes = 1024 * 1024;
inline constexpr size_t kPyroscopeChunkLines = 16000;

struct PyroscopeChunks {
  std::vector<std::string> bodies;  // each: lines joined by '\n'
  size_t lines = 0;                 // stack lines kept
  size_t dropped_long = 0;          // lines over kPyroscopeMaxLine
};

// How many leading frames of each line are gProfiler's index and container frames.
int prefix_frames(const ColText& col);

// The folded stacks of `col` cut into bodies of at most max_bytes / max_lines each.
PyroscopeChunks pyroscope_chunks(const ColText& col, size_t max_bytes = kPyroscopeChunkBytes,
                                 size_t max_lines = kPyroscopeChunkLines);

struct PyroscopeConfig {
  std::string url;       // server base, e.g. http://host:4040
  std::string app_name;  // with the type suffix, e.g. svc.cpu
  std::vector<std::pair<std::string, std::string>> labels;
  std::string spy_name = "gp";
  int64_t sample_rate = 11;
  std::string user, password;  // basic auth
  std::string bearer_token;
  std::string tenant;  // X-Scope-OrgID
};

// "app{k=v,k2=v2}" (labels in the given order; no braces without labels).
std::string pyroscope_name(const PyroscopeConfig& c);
// The sampling frequency recorded in a header (top-level sampling_frequency), else fallback.
int64_t header_sample_rate(const ColText& col, int64_t fallback);

HttpRequest ingest_request(const PyroscopeConfig& c, int64_t from, int64_t until, std::string body);

}  // namespace gp::upload
