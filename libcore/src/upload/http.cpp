// libcurl transfers and the retry loop.
#include "gp/upload/http.h"

#include <curl/curl.h>

#include <cctype>
#include <chrono>
#include <mutex>
#include <thread>

#include "gp/fold/gzip.h"
#include "gp/upload/url.h"
#include "gp/util/json.h"

namespace gp::upload {
namespace {

size_t collect(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Easy {
  CURL* h = curl_easy_init();
  curl_slist* headers = nullptr;
  ~Easy() {
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);
  }
};

void configure(Easy& e, const HttpRequest& r, HttpResponse& out, char* errbuf) {
  CURL* h = e.h;
  curl_easy_setopt(h, CURLOPT_URL, r.url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &out.body);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout_s * 1000));
  if (r.connect_timeout_s > 0)
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(r.connect_timeout_s * 1000));
  curl_easy_setopt(h, CURLOPT_USERAGENT, "gp-upload");
  if (r.method == "POST") {
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, r.body.data());
    // Studio and proxies: no "Expect: 100-continue" round trip.
    e.headers = curl_slist_append(e.headers, "Expect:");
  }
  for (const std::string& hdr : r.headers) e.headers = curl_slist_append(e.headers, hdr.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, e.headers);
  if (!r.verify_tls) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!r.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, r.ca_file.c_str());
  if (!r.basic_user.empty()) {
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(h, CURLOPT_USERNAME, r.basic_user.c_str());
    curl_easy_setopt(h, CURLOPT_PASSWORD, r.basic_password.c_str());
  }
}

}  // namespace

HttpResponse perform(const HttpRequest& request) {
  global_init();
  HttpResponse out;
  Easy e;
  if (e.h == nullptr) {
    out.error = "cannot initialise libcurl";
    return out;
  }
  char errbuf[CURL_ERROR_SIZE] = {0};
  configure(e, request, out, errbuf);
  CURLcode rc = curl_easy_perform(e.h);
  if (rc != CURLE_OK) {
    out.status = 0;
    out.error = errbuf[0] != 0 ? errbuf : curl_easy_strerror(rc);
    out.timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    // TLS verification failures and bad URLs will not get better by retrying.
    out.transient = rc == CURLE_COULDNT_CONNECT || rc == CURLE_OPERATION_TIMEDOUT ||
                    rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY ||
                    rc == CURLE_GOT_NOTHING || rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR ||
                    rc == CURLE_PARTIAL_FILE;
    return out;
  }
  curl_easy_getinfo(e.h, CURLINFO_RESPONSE_CODE, &out.status);
  out.transient = out.status >= 500 || out.status == 429;
  curl_off_t retry_after = 0;  // seconds; libcurl also converts an HTTP-date
  if (curl_easy_getinfo(e.h, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK && retry_after > 0)
    out.retry_after_s = static_cast<double>(retry_after);
  return out;
}

HttpResponse perform_with_retries(
    const HttpRequest& request, const RetryPolicy& policy,
    const std::function<void(int, const HttpResponse&, double)>& on_retry) {
  double delay = policy.initial_delay_s;
  for (int attempt = 0;; ++attempt) {
    HttpResponse r = perform(request);
    if (r.ok() || !r.transient || attempt >= policy.retries) return r;
    if (r.retry_after_s > policy.max_delay_s) return r;  // too long to wait here
    double wait = r.retry_after_s > 0 ? r.retry_after_s : delay;
    if (on_retry) on_retry(attempt + 1, r, wait);
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    delay = std::min(delay * 2, policy.max_delay_s);
  }
}

namespace {

// shlex.quote: safe words as they are, anything else in single quotes.
std::string shell_quote(std::string_view s) {
  bool safe = !s.empty();
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) ||
          std::string_view("@%+=:,./-_").find(c) != std::string_view::npos))
      safe = false;
  if (safe) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\"'\"'";
    } else {
      out += c;
    }
  }
  return out + "'";
}

bool is_gzip_header(const std::string& h) {
  std::string lower;
  for (char c : h) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.rfind("content-encoding:", 0) == 0 && lower.find("gzip") != std::string::npos;
}

}  // namespace

std::string curl_command(const HttpRequest& r, std::string_view secret) {
  std::string body = r.body;
  bool gzipped = false;
  for (const auto& h : r.headers) gzipped = gzipped || is_gzip_header(h);
  if (gzipped) {
    auto plain = fold::gunzip(r.body);
    if (plain) body = std::move(*plain);
  }
  std::string out = "curl -X " + r.method;
  for (const auto& h : r.headers) {
    if (gzipped && is_gzip_header(h)) continue;
    out += " -H " + shell_quote(h);
  }
  if (r.method != "GET" || !body.empty()) out += " -d " + shell_quote(body);
  out += " " + shell_quote(hide_userinfo(r.url));
  return secret.empty() ? out : redact(out, secret);
}

std::string describe_failure(const HttpResponse& r) {
  if (r.status == 0) return r.error;
  std::string text = "HTTP " + std::to_string(r.status);
  auto parsed = json::parse(r.body);
  std::string message;
  if (parsed && parsed->is_object()) {
    message = parsed->get_string("message");
    if (message.empty() && parsed->find("detail") != nullptr)
      message = json::dump(*parsed->find("detail"));
  } else if (!r.body.empty() && r.body.size() < 200 && r.body.find('\n') == std::string::npos) {
    message = r.body;  // the agent falls back to the raw text
  }
  if (!message.empty()) text += ": " + message;
  return text;
}

}  // namespace gp::upload
