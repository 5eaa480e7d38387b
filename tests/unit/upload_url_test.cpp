// make_url: a server URL that already has a path or a query keeps both (libcurl's URL API
// splits it); the plain cases read as before.

#include <gtest/gtest.h>

#include "gp/upload/url.h"

namespace gp::test::upload {
namespace {

using gp::upload::make_url;

TEST(UploadUrl, PlainServerUrlGetsThePathAndAnEncodedQuery) {
  EXPECT_EQ(make_url("http://127.0.0.1:8080/", "/api/v2/profiles",
                     {{"key", "a b{}"}, {"service", "web"}}),
            "http://127.0.0.1:8080/api/v2/profiles?key=a%20b%7B%7D&service=web");
  EXPECT_EQ(make_url("https://studio.example", "/api/v1/health_check", {}),
            "https://studio.example/api/v1/health_check");
}

TEST(UploadUrl, ServerUrlWithAPathAndAQueryKeepsBoth) {
  EXPECT_EQ(
      make_url("https://proxy.example/gprofiler/?tenant=a", "/api/v2/profiles", {{"key", "k"}}),
      "https://proxy.example/gprofiler/api/v2/profiles?tenant=a&key=k");
  EXPECT_EQ(make_url("http://127.0.0.1:4040/pyro", "/ingest", {{"name", "app{x=y}"}}),
            "http://127.0.0.1:4040/pyro/ingest?name=app%7Bx%3Dy%7D");
}

}  // namespace
}  // namespace gp::test::upload
