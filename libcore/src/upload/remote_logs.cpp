// gProfiler's remote logs client (its glogger Sender, BatchRequestsHandler and MessagesBuffer).
#include "gp/upload/remote_logs.h"

#include <sys/random.h>
#include <time.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "gp/fold/gzip.h"

namespace gp::upload {
namespace {

using json::Value;
using Clock = std::chrono::steady_clock;

// datetime.utcfromtimestamp(t).isoformat(): microseconds (rounded) only when not zero.
std::string utc_isoformat(double t) {
  double whole = std::floor(t);
  auto secs = static_cast<time_t>(whole);
  auto micros = static_cast<long>(std::llround((t - whole) * 1e6));
  if (micros >= 1000000) {
    ++secs;
    micros -= 1000000;
  }
  struct tm tm {};
  ::gmtime_r(&secs, &tm);
  char buf[48];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  if (micros != 0) std::snprintf(buf + n, sizeof buf - n, ".%06ld", micros);
  return buf;
}

std::string compact(const Value& v) { return json::dump_compact(v); }

}  // namespace

std::string format_log_record(const LogRecord& r, uint64_t serial_no, size_t max_size) {
  Value text = Value::object();
  text.set("logger_name", Value::from_string(r.logger_name));
  text.set("serial_no", Value::from_uint(serial_no));
  text.set("message", Value::from_string(r.message));
  text.set("truncated", Value::from_bool(false));
  text.set("lineno", Value::from_int(r.lineno));
  text.set("pathname", Value::from_string(r.pathname));
  text.set("funcname", Value::from_string(r.funcname));
  text.set("thread", Value::from_int(r.thread));
  text.set("timestamp", Value::from_string(utc_isoformat(r.created)));
  text.set("exception", Value::from_string(r.exception));
  text.set("extra", r.extra.is_object() ? r.extra : Value::object());
  Value doc = Value::object();
  doc.set("severity", Value::from_int(static_cast<int>(r.severity)));
  doc.set("timestamp", Value::from_double(r.created * 1000));
  doc.set("text", std::move(text));
  std::string out = compact(doc);
  if (out.size() < max_size) return out;
  // glogger's _truncate_dict: drop exception, then extra, then message; then a constant text.
  Value& t = *doc.find("text");
  t.set("truncated", Value::from_bool(true));
  for (const char* key : {"exception", "extra", "message"}) {
    t.erase(key);
    out = compact(doc);
    if (out.size() < max_size) return out;
  }
  Value small = Value::object();
  small.set("serial_no", Value::from_uint(serial_no));
  small.set("truncated", Value::from_bool(true));
  doc.set("text", std::move(small));
  return compact(doc);
}

LogBuffer::LogBuffer(size_t max_total_length, double overflow_drop_factor)
    : max_(max_total_length == 0 ? 1 : max_total_length), drop_factor_(overflow_drop_factor) {}

bool LogBuffer::append(std::string item) {
  if (item.size() >= max_) return false;
  total_ += item.size();
  items_.push_back(std::move(item));
  if (total_ >= max_) {
    auto n = static_cast<size_t>(drop_factor_ * static_cast<double>(items_.size()));
    drop_oldest(std::max<size_t>(1, n));
  }
  return true;
}

void LogBuffer::drop_oldest(size_t n) {
  n = std::min(n, items_.size());
  for (size_t i = 0; i < n; ++i) {
    total_ -= items_.front().size();
    items_.pop_front();
  }
  head_ += n;
  dropped_ += n;
}

LogBuffer::Batch LogBuffer::make_batch(std::string id) const {
  Batch b;
  b.id = std::move(id);
  b.logs.assign(items_.begin(), items_.end());
  b.head_serial_no = head_;
  b.lost_logs_count = dropped_;
  return b;
}

void LogBuffer::drop_sent(const Batch& batch) {
  // The lost count the batch reported is settled. Records of the batch that overflow dropped
  // meanwhile were sent after all: they are not lost either.
  dropped_ -= std::min(dropped_, batch.lost_logs_count);
  uint64_t dropped_meanwhile = head_ - batch.head_serial_no;
  uint64_t sent = batch.logs.size();
  if (sent > dropped_meanwhile) {
    size_t remaining = static_cast<size_t>(sent - dropped_meanwhile);
    drop_oldest(remaining);
  }
  dropped_ -= std::min(dropped_, sent);
}

std::string logs_body(const LogBuffer::Batch& batch, const json::Value& metadata) {
  Value doc = Value::object();
  doc.set("batch_id", Value::from_string(batch.id));
  doc.set("metadata", metadata);
  doc.set("lost_logs_count", Value::from_uint(batch.lost_logs_count));
  doc.set("logs", Value::array());
  std::string out = compact(doc);
  // The records are JSON already: spliced in, as glogger joins its strings.
  std::string logs = "[";
  for (size_t i = 0; i < batch.logs.size(); ++i) {
    if (i != 0) logs += ',';
    logs += batch.logs[i];
  }
  logs += ']';
  out.replace(out.size() - 3, 2, logs);  // the "[]" before the closing brace
  return out;
}

Result<std::string> logs_url(std::string_view api_server) {
  size_t sep = api_server.find("://");
  if (sep == std::string_view::npos || sep == 0)
    return make_error("no scheme in the API server address '" + std::string(api_server) + "'");
  std::string_view rest = api_server.substr(sep + 3);
  std::string_view host = rest.substr(0, rest.find_first_of("/?#"));
  if (host.empty())
    return make_error("no host in the API server address '" + std::string(api_server) + "'");
  return std::string(api_server.substr(0, sep)) + "://" + std::string(host) + "/api/v1/logs";
}

Result<HttpRequest> logs_request(const std::string& url, const std::string& token,
                                 std::string_view body, bool verify_tls) {
  auto gz = fold::gzip(body, 6);
  if (!gz) return gz.error();
  HttpRequest r;
  r.method = "POST";
  r.url = url;
  r.headers = {"X-Token: " + token, "Content-Encoding: gzip", "Content-Type: application/json",
               "X-Application-Name: gprofiler"};
  r.body = std::move(*gz);
  r.connect_timeout_s = 1.5;
  r.timeout_s = 11.5;
  r.verify_tls = verify_tls;
  return r;
}

std::string random_uuid4_hex() {
  unsigned char b[16] = {0};
  size_t got = 0;
  while (got < sizeof b) {
    ssize_t n = ::getrandom(b + got, sizeof b - got, 0);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (got < sizeof b) {  // no entropy source: time and address, still unique enough per run
    auto t = static_cast<uint64_t>(Clock::now().time_since_epoch().count());
    for (size_t i = 0; i < sizeof b; ++i) b[i] ^= static_cast<unsigned char>(t >> ((i % 8) * 8));
  }
  b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : b) {
    out += hex[c >> 4];
    out += hex[c & 0xF];
  }
  return out;
}

std::string random_uuid4() {
  std::string h = random_uuid4_hex();
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20);
}

// ---------------------------------------------------------------------------------------------

struct RemoteLogs::Shared {
  explicit Shared(RemoteLogsConfig c)
      : config(std::move(c)), buffer(config.max_total_length, 0.25) {}
  RemoteLogsConfig config;
  std::mutex mutex;
  std::condition_variable wake;  // stop asked
  std::condition_variable finished_cv;
  LogBuffer buffer;
  bool stopping = false;
  bool finished = false;
};

namespace {

// Sender.send's messages, by what went wrong.
std::string send_failure(const HttpResponse& r, const std::string& url) {
  if (r.status == 0) {
    if (r.timed_out) return "REMOTE_LOGGER: Timeout occurred while sending logs to server";
    return "REMOTE_LOGGER: Failed establishing connection to logs server, check log server url (" +
           r.error + ")";
  }
  if (r.status == 401)
    return "REMOTE_LOGGER: Authorization error while sending logs to server, check gprofiler "
           "token";
  if (r.status == 500)
    return "REMOTE_LOGGER: Received 500 from server, token is probably invalid / missing. error: "
           "500 Server Error for url: " +
           url;
  return "REMOTE_LOGGER: Unexpected HTTP error while posting logs to server: " +
         describe_failure(r);
}

// One attempt with everything queued. Called and returns with `lock` held; the request is made
// without it.
void send_once(RemoteLogs::Shared& s, std::unique_lock<std::mutex>& lock) {
  LogBuffer::Batch batch = s.buffer.make_batch(random_uuid4_hex());
  lock.unlock();
  std::string body = logs_body(batch, s.config.metadata);
  std::string failure;
  auto request = logs_request(s.config.url, s.config.token, body, s.config.verify_tls);
  bool sent = false;
  if (!request) {
    failure = "REMOTE_LOGGER: Unexpected error posting logs to server: " + request.error().message;
  } else {
    if (s.config.on_request) s.config.on_request(*request, body);
    HttpResponse response = perform(*request);
    sent = response.status >= 200 && response.status < 400;
    if (!sent) failure = send_failure(response, s.config.url);
  }
  if (!failure.empty() && s.config.on_error) s.config.on_error(failure);
  lock.lock();
  if (sent) s.buffer.drop_sent(batch);
}

void sender_loop(const std::shared_ptr<RemoteLogs::Shared>& shared) {
  auto& s = *shared;
  const auto interval = std::chrono::duration<double>(s.config.send_interval_s);
  const auto min_interval = std::chrono::duration<double>(s.config.send_min_interval_s);
  std::unique_lock<std::mutex> lock(s.mutex);
  auto last_send = Clock::now();
  while (!s.stopping) {
    bool due = Clock::now() - last_send >= interval;
    if (s.buffer.count() > 0 && (s.buffer.utilized() >= s.config.send_threshold || due)) {
      last_send = Clock::now();
      send_once(s, lock);
    }
    s.wake.wait_for(lock, min_interval, [&] { return s.stopping; });
  }
  if (s.buffer.count() > 0) send_once(s, lock);  // the rest, before stopping
  s.finished = true;
  s.finished_cv.notify_all();
}

}  // namespace

RemoteLogs::RemoteLogs(RemoteLogsConfig config)
    : shared_(std::make_shared<Shared>(std::move(config))) {
  thread_ = std::thread([s = shared_] { sender_loop(s); });
}

RemoteLogs::~RemoteLogs() { stop(); }

void RemoteLogs::add(const LogRecord& record) {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  if (shared_->finished) return;
  auto& buffer = shared_->buffer;
  buffer.append(
      format_log_record(record, buffer.next_serial_no(), shared_->config.max_message_size));
}

void RemoteLogs::stop(double timeout_s) {
  if (!thread_.joinable()) return;
  bool finished;
  {
    std::unique_lock<std::mutex> lock(shared_->mutex);
    shared_->stopping = true;
    shared_->wake.notify_all();
    finished = shared_->finished_cv.wait_for(lock, std::chrono::duration<double>(timeout_s),
                                             [&] { return shared_->finished; });
  }
  if (finished) {
    thread_.join();
  } else {
    thread_.detach();  // it owns its state; the request ends on its own timeout
  }
}

}  // namespace gp::upload
