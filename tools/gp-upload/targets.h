#pragma once
// One upload target each (Studio, Pyroscope): sends one `.col` and says how it went.

#include <optional>
#include <string>

#include "cli.h"
#include "gp/upload/col_text.h"
#include "gp/upload/http.h"
#include "gp/upload/pyroscope.h"
#include "gp/upload/spool.h"
#include "gp/upload/studio.h"

namespace gp::upload_tool {

enum class Outcome { sent, transient, permanent };

struct SendResult {
  Outcome outcome = Outcome::sent;
  std::string why;  // redacted
};

struct Delivery {
  upload::RetryPolicy retry;
  double timeout = 120;
  bool verify = true;
  std::string ca_file;
  std::string secret;    // redacted from every message
  bool curlify = false;  // --curlify-requests: each request as a curl command line
  void apply(upload::HttpRequest& r) const;
  upload::HttpResponse send(const upload::HttpRequest& r, const std::string& what) const;
};

class StudioTarget {
 public:
  // gpid_path: where the gpid is kept between runs ("" = nowhere).
  StudioTarget(const UploadArgs& args, const Delivery& d, const upload::HostFacts& host,
               std::string gpid_path);
  // The health check; an error makes every upload fail with the same reason.
  SendResult check_health();
  SendResult send(const upload::ColText& col, std::optional<int64_t> start,
                  std::optional<int64_t> end);
  const std::string& gpid() const { return gpid_; }

 private:
  upload::StudioConfig config_;
  const Delivery& delivery_;
  const upload::HostFacts& host_;
  std::string gpid_path_;
  std::string gpid_;
};

class PyroscopeTarget {
 public:
  PyroscopeTarget(const UploadArgs& args, const Delivery& d);
  SendResult send(const upload::ColText& col, const upload::StudioTimes& times);

 private:
  upload::PyroscopeConfig config_;
  size_t chunk_bytes_;
  const Delivery& delivery_;
};

SendResult from_response(const upload::HttpResponse& r, const std::string& secret);

}  // namespace gp::upload_tool
