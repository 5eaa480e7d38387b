// gp-upload's transport policy and spool, against real sockets and a real directory.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

#include "gp/fold/gzip.h"
#include "gp/upload/http.h"
#include "gp/upload/spool.h"

namespace gp::upload {
namespace {

// A port with nothing listening: bind, read the port, close.
int closed_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

TEST(UploadHttp, ConnectionRefusedIsRetriedThenReported) {
  HttpRequest r;
  r.url = "http://127.0.0.1:" + std::to_string(closed_port()) + "/x";
  int retries = 0;
  HttpResponse resp = perform_with_retries(r, {2, 0.01, 0.01},
                                           [&](int, const HttpResponse&, double) { ++retries; });
  EXPECT_EQ(resp.status, 0);
  EXPECT_TRUE(resp.transient);
  EXPECT_EQ(retries, 2);
  EXPECT_FALSE(describe_failure(resp).empty());
}

TEST(UploadHttp, DescribesStudioErrors) {
  HttpResponse r;
  r.status = 400;
  r.body = "{\"message\":\"Invalid API key\"}";
  EXPECT_EQ(describe_failure(r), "HTTP 400: Invalid API key");
  HttpResponse d;
  d.status = 422;
  d.body = "{\"detail\": [1]}";
  EXPECT_EQ(describe_failure(d), "HTTP 422: [1]");
}

TEST(UploadSpool, KeepsCopiesOldestFirstAndTheGpid) {
  auto dir = std::filesystem::temp_directory_path() / ("gp-spool-" + std::to_string(getpid()));
  Spool s((dir / "a" / "b").string());
  ASSERT_TRUE(s.init().ok());
  EXPECT_EQ(s.load_gpid(), "");
  auto p1 = s.keep("/x/first.col", "one");
  auto p2 = s.keep("-", "two");
  ASSERT_TRUE(p1.ok() && p2.ok());
  EXPECT_EQ(s.pending(), (std::vector<std::string>{*p1, *p2}));
  ASSERT_TRUE(s.save_gpid("77").ok());
  EXPECT_EQ(s.load_gpid(), "77");
  ASSERT_TRUE(s.remove(*p1).ok());
  EXPECT_EQ(s.pending().size(), 1U);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gp::upload

namespace gp::upload {
namespace {

TEST(UploadHttp, CurlCommandUngzipsQuotesAndRedacts) {
  HttpRequest r;
  r.method = "POST";
  r.url = "https://user:pw@studio/api/v2/profiles?key=s3cret&service=svc";
  r.headers = {"GPROFILER-API-KEY: s3cret", "Content-Encoding: gzip",
               "Content-Type: application/json"};
  r.body = *fold::gzip("{\"profile\": \"it's\"}", 9);
  EXPECT_EQ(curl_command(r, "s3cret"),
            "curl -X POST -H 'GPROFILER-API-KEY: ***' -H 'Content-Type: application/json' -d "
            "'{\"profile\": \"it'\"'\"'s\"}' "
            "'https://***@studio/api/v2/profiles?key=***&service=svc'");
  HttpRequest g;
  g.url = "http://h/api/v1/health_check";
  EXPECT_EQ(curl_command(g, ""), "curl -X GET http://h/api/v1/health_check");
}

}  // namespace
}  // namespace gp::upload
