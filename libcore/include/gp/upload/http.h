#pragma once
// HTTP(S) requests through libcurl, with gp-upload's retry policy: connection errors,
// timeouts, 5xx and 429 (Too Many Requests) are retried, after the server's Retry-After when it
// gives one, else with exponential back-off; other 4xx never are (the request has to change).
// libcurl picks proxies from http_proxy/https_proxy/HTTPS_PROXY/no_proxy.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gp/util/result.h"

namespace gp::upload {

struct HttpRequest {
  std::string method = "GET";  // GET or POST
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // POST body, sent with Content-Length
  double timeout_s = 120;            // whole transfer
  double connect_timeout_s = 0;      // connection set-up; 0: libcurl's default
  bool verify_tls = true;
  std::string ca_file;                     // PEM bundle; empty = system default
  std::string basic_user, basic_password;  // HTTP basic auth when basic_user is set
};

struct HttpResponse {
  long status = 0;  // 0 when no response arrived
  std::string body;
  bool transient = false;    // connection error, timeout, 5xx or 429: worth retrying
  bool timed_out = false;    // no complete answer within the timeouts
  double retry_after_s = 0;  // the server's Retry-After (seconds), 0 when absent
  std::string error;         // transport error text (no URL, no secrets)
  bool ok() const { return status >= 200 && status < 300; }
};

// One attempt. Never fails as a Result: a transport error is a response with status 0.
HttpResponse perform(const HttpRequest& request);

struct RetryPolicy {
  int retries = 3;             // extra attempts after the first
  double initial_delay_s = 1;  // doubled after each attempt
  double max_delay_s = 30;
};

// Attempts until success, a non-transient answer, or retries run out. A Retry-After longer
// than policy.max_delay_s ends the attempts (the caller spools the request). `on_retry(attempt,
// response, delay)` is called before each wait (for -v logs).
HttpResponse perform_with_retries(
    const HttpRequest& request, const RetryPolicy& policy,
    const std::function<void(int, const HttpResponse&, double)>& on_retry = {});

// The request as a shell command line of curl, as the `curlify` package writes it (gProfiler's
// --curlify-requests): `curl -X METHOD -H 'Name: value' ... -d 'BODY' 'URL'`, each argument
// quoted for a POSIX shell. A gzip body is shown un-gzipped and its Content-Encoding header left
// out (as gProfiler does before curlify). Every occurrence of `secret` (and its URL-encoded
// form) is replaced by "***".
std::string curl_command(const HttpRequest& request, std::string_view secret);

// Short description of a failed response: "HTTP 400: Invalid API key" or the transport error.
std::string describe_failure(const HttpResponse& response);

}  // namespace gp::upload
