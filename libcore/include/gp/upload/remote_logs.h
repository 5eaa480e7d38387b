#pragma once
// gProfiler's remote logs (gprofiler.md §8.3; its glogger client): every log record of the
// agent goes to POST <scheme>://<host of --api-server>/api/v1/logs in batches of compact JSON,
// gzip level 6, headers X-Token and X-Application-Name: gprofiler. The body is
// {"batch_id":<uuid hex>,"metadata":{...},"lost_logs_count":N,"logs":[<record>,...]}.
//
// Records wait in a buffer bounded by the total length of their JSON (4 MiB): when it is full
// the oldest quarter is dropped and counted, and the next batch reports the count as
// lost_logs_count. A sender thread checks every 10 s and sends the whole buffer when it is 80%
// full or 30 s passed since the last send; a batch the server took is removed from the buffer,
// a failed one stays for the next attempt (one request per attempt: the buffer is the retry).
// Adding a record never waits for the network.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gp/upload/http.h"
#include "gp/util/json.h"
#include "gp/util/result.h"

namespace gp::upload {

// glogger's severities: 1 debug-below, 2 debug, 3 info, 4 warning, 5 error, 6 critical.
enum class LogSeverity : int { debug = 2, info = 3, warning = 4, error = 5, critical = 6 };

// One log record, as Python's logging.LogRecord gives glogger its fields.
struct LogRecord {
  LogSeverity severity = LogSeverity::info;
  double created = 0;  // UNIX seconds, with fraction
  std::string logger_name;
  std::string message;
  int64_t lineno = 0;
  std::string pathname;
  std::string funcname;
  int64_t thread = 0;
  std::string exception;  // a traceback; "" when none
  json::Value extra = json::Value::object();
};

inline constexpr size_t kLogMaxMessageSize = 1024 * 1024;       // one record's JSON
inline constexpr size_t kLogMaxBufferLength = 4 * 1024 * 1024;  // all queued records' JSON

// The JSON of one record with serial number `serial_no` (glogger's BatchRequestsHandler
// format). A record whose JSON reaches `max_size` loses, in turn, its exception, extra and
// message (text.truncated becomes true), and at last keeps only serial_no and truncated.
std::string format_log_record(const LogRecord& record, uint64_t serial_no,
                              size_t max_size = kLogMaxMessageSize);

// glogger's MessagesBuffer: records in order, bounded by their total length; serial numbers
// count every record ever added (head_serial_no is the oldest one still held). Not
// thread-safe (RemoteLogs locks it).
class LogBuffer {
 public:
  explicit LogBuffer(size_t max_total_length = kLogMaxBufferLength,
                     double overflow_drop_factor = 0.25);

  size_t count() const { return items_.size(); }
  size_t total_length() const { return total_; }
  double utilized() const { return static_cast<double>(total_) / static_cast<double>(max_); }
  uint64_t head_serial_no() const { return head_; }
  uint64_t next_serial_no() const { return head_ + items_.size(); }
  // Records dropped and not yet reported to the server (the next batch's lost_logs_count).
  uint64_t dropped() const { return dropped_; }

  // Appends; when the total reaches the bound, drops max(1, factor * count) oldest records.
  // A record as long as the bound itself is refused (false), as glogger asserts.
  bool append(std::string item);

  struct Batch {
    std::string id;  // uuid4 hex
    std::vector<std::string> logs;
    uint64_t head_serial_no = 0;
    uint64_t lost_logs_count = 0;
  };
  // Everything held now, to send.
  Batch make_batch(std::string id) const;
  // After the server accepted `batch`: its records leave the buffer (those still held) and its
  // lost count is settled.
  void drop_sent(const Batch& batch);

 private:
  void drop_oldest(size_t n);

  size_t max_;
  double drop_factor_;
  std::deque<std::string> items_;
  size_t total_ = 0;
  uint64_t head_ = 0;
  uint64_t dropped_ = 0;
};

// The request body of a batch: compact JSON, metadata as given.
std::string logs_body(const LogBuffer::Batch& batch, const json::Value& metadata);

// `<scheme>://<host[:port]>/api/v1/logs` from --api-server (its path is not used, as
// gProfiler's urlparse(...).netloc); an error when the address has no scheme or host.
Result<std::string> logs_url(std::string_view api_server);

// The POST of one batch (gzip level 6; 1.5 s to connect, 10 s more to answer).
Result<HttpRequest> logs_request(const std::string& url, const std::string& token,
                                 std::string_view body, bool verify_tls);

// A random UUID version 4: "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx" (Python's str(uuid4())).
std::string random_uuid4();
// The same without dashes (uuid4().hex).
std::string random_uuid4_hex();

struct RemoteLogsConfig {
  std::string url;  // from logs_url()
  std::string token;
  bool verify_tls = true;
  json::Value metadata = json::Value::object();  // the batch's "metadata"
  double send_interval_s = 30;                   // send at least this often when records wait
  double send_min_interval_s = 10;               // the sender looks this often
  double send_threshold = 0.8;                   // ... and sends early from this buffer use on
  size_t max_total_length = kLogMaxBufferLength;
  size_t max_message_size = kLogMaxMessageSize;
  // A send that failed (called on the sender thread; must not add records).
  std::function<void(const std::string&)> on_error;
  // Each request before it is made (e.g. to log it as a curl command; sender thread).
  std::function<void(const HttpRequest&, std::string_view body_json)> on_request;
};

class RemoteLogs {
 public:
  explicit RemoteLogs(RemoteLogsConfig config);
  ~RemoteLogs();
  RemoteLogs(const RemoteLogs&) = delete;
  RemoteLogs& operator=(const RemoteLogs&) = delete;

  // Formats the record with the next serial number and queues it. Never waits for the network.
  void add(const LogRecord& record);
  // Stops the sender after one last send of what is queued; waits at most `timeout_s` for it
  // (gProfiler's 10 s), then leaves the request to finish alone.
  void stop(double timeout_s = 10);

  struct Shared;  // the buffer and the sender thread's state (remote_logs.cpp)

 private:
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

}  // namespace gp::upload
