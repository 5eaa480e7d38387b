// gProfiler's remote logs: record format, the bounded buffer, the batch body, and the sender
// against a real loopback HTTP server.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "gp/fold/gzip.h"
#include "gp/upload/remote_logs.h"
#include "gp/util/json.h"

namespace gp::upload {
namespace {

LogRecord record(std::string message) {
  LogRecord r;
  r.severity = LogSeverity::warning;
  r.created = 1764255661.25;  // 2025-11-27T15:01:01.25 UTC
  r.logger_name = "gprofiler.gp-profile";
  r.message = std::move(message);
  r.lineno = 42;
  r.pathname = "tools/gp-profile/session.cpp";
  r.funcname = "run_session";
  r.thread = 77;
  r.extra.set("cycle_id", json::Value::from_string("c-1"));
  return r;
}

TEST(RemoteLogs, RecordIsGloggersCompactAsciiJson) {
  std::string s = format_log_record(record("caf\xc3\xa9 \"q\""), 5);
  EXPECT_EQ(s,
            "{\"severity\":4,\"timestamp\":1764255661250.0,\"text\":{\"logger_name\":\"gprofiler."
            "gp-profile\",\"serial_no\":5,\"message\":\"caf\\u00e9 \\\"q\\\"\",\"truncated\":false,"
            "\"lineno\":42,\"pathname\":\"tools/gp-profile/session.cpp\",\"funcname\":\"run_"
            "session\",\"thread\":77,\"timestamp\":\"2025-11-27T15:01:01.250000\",\"exception\":"
            "\"\",\"extra\":{\"cycle_id\":\"c-1\"}}}");
  LogRecord whole = record("x");
  whole.created = 1764255661;
  auto parsed = json::parse(format_log_record(whole, 0));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->find("text")->get_string("timestamp"), "2025-11-27T15:01:01");
}

TEST(RemoteLogs, OversizedRecordLosesExceptionExtraThenMessage) {
  LogRecord r = record(std::string(300, 'm'));
  r.exception = std::string(300, 'e');
  auto text = [](const std::string& s) { return *json::parse(s)->find("text"); };
  json::Value t = text(format_log_record(r, 1, 600));
  EXPECT_EQ(t.find("exception"), nullptr);
  EXPECT_NE(t.find("message"), nullptr);
  EXPECT_TRUE(t.find("truncated")->boolean);
  t = text(format_log_record(r, 1, 300));
  EXPECT_EQ(t.find("message"), nullptr);
  EXPECT_EQ(t.find("extra"), nullptr);
  t = text(format_log_record(r, 9, 100));
  EXPECT_EQ(json::dump_compact(t), "{\"serial_no\":9,\"truncated\":true}");
}

TEST(RemoteLogs, FullBufferDropsTheOldestQuarterAndCountsThem) {
  LogBuffer b(100);
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(b.append(std::string(10, 'a' + i)));
  EXPECT_EQ(b.count(), 9u);
  EXPECT_EQ(b.dropped(), 0u);
  ASSERT_TRUE(b.append(std::string(10, 'j')));  // total 100: drop int(0.25 * 10) = 2
  EXPECT_EQ(b.count(), 8u);
  EXPECT_EQ(b.dropped(), 2u);
  EXPECT_EQ(b.head_serial_no(), 2u);
  EXPECT_EQ(b.next_serial_no(), 10u);
  EXPECT_EQ(b.total_length(), 80u);
  EXPECT_FALSE(b.append(std::string(100, 'z')));  // never fits
  auto batch = b.make_batch("id");
  EXPECT_EQ(batch.lost_logs_count, 2u);
  EXPECT_EQ(batch.logs.front(), std::string(10, 'c'));
  b.append(std::string(5, 'k'));  // arrives while the batch is in flight
  b.drop_sent(batch);
  EXPECT_EQ(b.count(), 1u);
  EXPECT_EQ(b.dropped(), 0u);
  EXPECT_EQ(b.make_batch("n").logs.front(), std::string(5, 'k'));
}

TEST(RemoteLogs, RecordsDroppedWhileSendingAreNotCountedTwice) {
  LogBuffer b(100);
  for (int i = 0; i < 4; ++i) b.append(std::string(20, 'a'));
  auto batch = b.make_batch("id");
  b.append(std::string(20, 'b'));  // reaches 100: drops 1 of the batch's records
  EXPECT_EQ(b.dropped(), 1u);
  b.drop_sent(batch);  // the dropped one was sent after all
  EXPECT_EQ(b.dropped(), 0u);
  EXPECT_EQ(b.count(), 1u);
}

TEST(RemoteLogs, BatchBodySplicesTheRecords) {
  LogBuffer::Batch batch{"abc", {"{\"a\":1}", "{\"b\":2}"}, 0, 3};
  json::Value md = json::Value::object();
  md.set("run_id", json::Value::from_string("r"));
  EXPECT_EQ(logs_body(batch, md),
            "{\"batch_id\":\"abc\",\"metadata\":{\"run_id\":\"r\"},\"lost_logs_count\":3,"
            "\"logs\":[{\"a\":1},{\"b\":2}]}");
  batch.logs.clear();
  EXPECT_EQ(logs_body(batch, md),
            "{\"batch_id\":\"abc\",\"metadata\":{\"run_id\":\"r\"},\"lost_logs_count\":3,"
            "\"logs\":[]}");
}

TEST(RemoteLogs, UrlKeepsSchemeAndHostOnly) {
  EXPECT_EQ(*logs_url("https://api.granulate.io"), "https://api.granulate.io/api/v1/logs");
  EXPECT_EQ(*logs_url("http://127.0.0.1:8080/studio/?x=1"), "http://127.0.0.1:8080/api/v1/logs");
  EXPECT_FALSE(logs_url("api.example.com"));
  EXPECT_FALSE(logs_url("https:///path"));
}

TEST(RemoteLogs, RequestIsGzipWithGloggersHeaders) {
  auto r = logs_request("http://h/api/v1/logs", "T0K", "{\"x\":1}", true);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->method, "POST");
  auto has = [&](const std::string& h) {
    return std::find(r->headers.begin(), r->headers.end(), h) != r->headers.end();
  };
  EXPECT_TRUE(has("X-Token: T0K"));
  EXPECT_TRUE(has("X-Application-Name: gprofiler"));
  EXPECT_TRUE(has("Content-Encoding: gzip"));
  EXPECT_TRUE(has("Content-Type: application/json"));
  EXPECT_EQ(*fold::gunzip(r->body), "{\"x\":1}");
  EXPECT_EQ(r->connect_timeout_s, 1.5);
}

TEST(RemoteLogs, Uuid4) {
  std::string u = random_uuid4();
  ASSERT_EQ(u.size(), 36u);
  EXPECT_EQ(u[14], '4');
  EXPECT_NE(u, random_uuid4());
  EXPECT_EQ(random_uuid4_hex().size(), 32u);
}

// A loopback HTTP server answering every request with `status`; keeps the bodies it got.
class Server {
 public:
  explicit Server(int status) : status_(status) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ::listen(fd_, 8);
    thread_ = std::thread([this] { serve(); });
  }
  ~Server() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/api/v1/logs"; }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> l(m_);
    return requests_;
  }

 private:
  void serve() {
    for (;;) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string in;
      char buf[4096];
      size_t need = std::string::npos;
      while (need == std::string::npos || in.size() < need) {
        ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
        size_t end = in.find("\r\n\r\n");
        if (need == std::string::npos && end != std::string::npos) {
          size_t cl = in.find("Content-Length: ");
          need = end + 4 + (cl == std::string::npos ? 0 : std::stoul(in.substr(cl + 16)));
        }
      }
      {
        std::lock_guard<std::mutex> l(m_);
        requests_.push_back(in);
      }
      std::string body = "{\"status\":\"ok\"}";
      std::string out = "HTTP/1.1 " + std::to_string(status_) +
                        " X\r\nContent-Length: " + std::to_string(body.size()) +
                        "\r\nConnection: close\r\n\r\n" + body;
      (void)!::write(c, out.data(), out.size());
      ::close(c);
    }
  }
  int status_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex m_;
  std::vector<std::string> requests_;
};

json::Value body_of(const std::string& request) {
  std::string gz = request.substr(request.find("\r\n\r\n") + 4);
  return *json::parse(*fold::gunzip(gz));
}

TEST(RemoteLogs, StopSendsWhatIsQueuedInOneBatch) {
  Server server(201);
  RemoteLogsConfig c;
  c.url = server.url();
  c.token = "tok";
  c.metadata.set("run_id", json::Value::from_string("run-1"));
  std::vector<std::string> errors;
  c.on_error = [&](const std::string& e) { errors.push_back(e); };
  {
    RemoteLogs logs(c);
    logs.add(record("one"));
    logs.add(record("two"));
    logs.stop();
  }
  EXPECT_TRUE(errors.empty());
  auto got = server.requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NE(got[0].find("POST /api/v1/logs HTTP/1.1"), std::string::npos);
  EXPECT_NE(got[0].find("X-Token: tok"), std::string::npos);
  json::Value body = body_of(got[0]);
  EXPECT_EQ(body.find("metadata")->get_string("run_id"), "run-1");
  EXPECT_EQ(body.find("lost_logs_count")->as_int(-1), 0);
  EXPECT_EQ(body.get_string("batch_id").size(), 32u);
  const json::Value& logs = *body.find("logs");
  ASSERT_EQ(logs.items.size(), 2u);
  EXPECT_EQ(logs.items[0].find("text")->get_string("message"), "one");
  EXPECT_EQ(logs.items[1].find("text")->find("serial_no")->as_int(-1), 1);
}

TEST(RemoteLogs, ARefusedBatchIsReportedAndKept) {
  Server server(500);
  RemoteLogsConfig c;
  c.url = server.url();
  std::vector<std::string> errors;
  c.on_error = [&](const std::string& e) { errors.push_back(e); };
  RemoteLogs logs(c);
  logs.add(record("kept"));
  logs.stop();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("REMOTE_LOGGER: Received 500 from server"), std::string::npos);
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(RemoteLogs, NoServerIsAConnectionErrorAndAddingNeverWaits) {
  int port;
  {
    Server gone(201);
    port = std::stoi(gone.url().substr(17));
  }
  RemoteLogsConfig c;
  c.url = "http://127.0.0.1:" + std::to_string(port) + "/api/v1/logs";
  std::vector<std::string> errors;
  c.on_error = [&](const std::string& e) { errors.push_back(e); };
  RemoteLogs logs(c);
  for (int i = 0; i < 1000; ++i) logs.add(record("r" + std::to_string(i)));
  logs.stop();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("Failed establishing connection to logs server"), std::string::npos);
}

}  // namespace
}  // namespace gp::upload
