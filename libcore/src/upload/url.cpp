// URL encoding, ISO times, redaction.
#include "gp/upload/url.h"

#include <curl/curl.h>

#include <cctype>
#include <cstdio>
#include <ctime>

namespace gp::upload {

std::string url_encode(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

namespace {

// base (trailing '/' dropped) + path + "?k=v&...": what is used when libcurl cannot parse base
// (no scheme); the transfer then reports the bad URL.
std::string concatenate(std::string_view base, std::string_view path, const QueryParams& params) {
  while (!base.empty() && base.back() == '/') base.remove_suffix(1);
  std::string url(base);
  url += path;
  char sep = '?';
  for (const auto& [k, v] : params) {
    url += sep;
    url += url_encode(k);
    url += '=';
    url += url_encode(v);
    sep = '&';
  }
  return url;
}

struct CurlUrl {
  CURLU* u = curl_url();
  ~CurlUrl() { curl_url_cleanup(u); }
};

}  // namespace

std::string make_url(std::string_view base, std::string_view path, const QueryParams& params) {
  // libcurl's URL API splits the server URL, so one that already has a path or a query
  // ("https://host/gprofiler/?tenant=a") keeps both: the path is extended, the query appended.
  // The query is joined here, as encoded (libcurl would rewrite %2B as %2b).
  CurlUrl url;
  char* part = nullptr;
  if (url.u == nullptr ||
      curl_url_set(url.u, CURLUPART_URL, std::string(base).c_str(), 0) != CURLUE_OK ||
      curl_url_get(url.u, CURLUPART_PATH, &part, 0) != CURLUE_OK)
    return concatenate(base, path, params);
  std::string joined = part;
  curl_free(part);
  while (!joined.empty() && joined.back() == '/') joined.pop_back();
  joined += path;
  std::string query;
  if (curl_url_get(url.u, CURLUPART_QUERY, &part, 0) == CURLUE_OK) {
    query = part;
    curl_free(part);
  }
  if (curl_url_set(url.u, CURLUPART_PATH, joined.c_str(), 0) != CURLUE_OK ||
      curl_url_set(url.u, CURLUPART_QUERY, nullptr, 0) != CURLUE_OK ||
      curl_url_set(url.u, CURLUPART_FRAGMENT, nullptr, 0) != CURLUE_OK ||
      curl_url_get(url.u, CURLUPART_URL, &part, 0) != CURLUE_OK)
    return concatenate(base, path, params);
  std::string out = part;
  curl_free(part);
  for (const auto& [k, v] : params) {
    query += query.empty() ? "" : "&";
    query += url_encode(k) + "=" + url_encode(v);
  }
  if (!query.empty()) out += "?" + query;
  return out;
}

std::string iso_utc(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

std::optional<int64_t> parse_iso(std::string_view s) {
  std::string str(s);
  std::tm tm{};
  int used = 0;
  char sep = 0;
  if (std::sscanf(str.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &sep, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &used) != 7 ||
      (sep != 'T' && sep != ' '))
    return std::nullopt;
  std::string_view rest = s.substr(static_cast<size_t>(used));
  if (!rest.empty() && rest.front() == '.') {
    size_t i = 1;
    while (i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i]))) ++i;
    rest.remove_prefix(i);
  }
  int64_t offset = 0;
  if (rest == "Z" || rest.empty()) {
  } else if ((rest.front() == '+' || rest.front() == '-') && rest.size() == 6 && rest[3] == ':') {
    int hh = 0, mm = 0;
    if (std::sscanf(std::string(rest.substr(1)).c_str(), "%2d:%2d", &hh, &mm) != 2)
      return std::nullopt;
    offset = (hh * 3600 + mm * 60) * (rest.front() == '+' ? 1 : -1);
  } else {
    return std::nullopt;
  }
  if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31) return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm)) - offset;
}

std::string redact(std::string text, std::string_view secret) {
  if (secret.empty()) return text;
  for (const std::string& needle : {std::string(secret), url_encode(secret)}) {
    size_t pos = 0;
    while ((pos = text.find(needle, pos)) != std::string::npos) {
      text.replace(pos, needle.size(), "***");
      pos += 3;
    }
  }
  return text;
}

std::string hide_userinfo(std::string_view url) {
  size_t scheme = url.find("://");
  size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  size_t end = url.find_first_of("/?#", start);
  if (end == std::string_view::npos) end = url.size();
  size_t at = url.rfind('@', end == 0 ? 0 : end - 1);
  if (at == std::string_view::npos || at < start || at >= end) return std::string(url);
  return std::string(url.substr(0, start)) + "***" + std::string(url.substr(at));
}

}  // namespace gp::upload
