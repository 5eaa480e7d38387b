#pragma once
// URL and time helpers shared by the Studio and Pyroscope clients.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gp::upload {

using QueryParams = std::vector<std::pair<std::string, std::string>>;

// RFC 3986 percent-encoding of everything but unreserved characters (so `{ } = , +` survive
// Go's and Python's query parsers).
std::string url_encode(std::string_view s);
// The server URL `base` with `path` appended to its own path (a trailing '/' dropped) and
// "k=v&..." (encoded) appended to its own query, parsed and joined by libcurl's URL API.
std::string make_url(std::string_view base, std::string_view path, const QueryParams& params);

// gProfiler's time format: naive UTC "YYYY-MM-DDTHH:MM:SS".
std::string iso_utc(int64_t unix_seconds);
// Parses "YYYY-MM-DDTHH:MM:SS[.frac][Z|+00:00|±HH:MM]" (or a space instead of 'T') into
// UNIX seconds; a string without zone is UTC.
std::optional<int64_t> parse_iso(std::string_view s);

// `text` with every occurrence of `secret` (and its URL-encoded form) replaced by "***":
// the token must never reach a log line or an error message.
std::string redact(std::string text, std::string_view secret);

// `url` with the credentials of its authority ("https://user:password@host/...") replaced by
// "***" (https://***@host/...); other URLs unchanged. For every URL that reaches a log line.
std::string hide_userinfo(std::string_view url);

}  // namespace gp::upload
