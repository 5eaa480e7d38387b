// libFuzzer target for gp's JSON parser (gp/util/json.h): any bytes give a value or an Error
// with a message, never a crash, and a parsed value written back (dump) parses to the same value.
//
//   scripts/fuzz.sh json_fuzz

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "gp/util/json.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "json_fuzz: invariant violated: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto v = gp::json::parse(text);
  if (!v.ok()) {
    if (v.error().message.empty()) fail("error without a message");
    return 0;
  }
  const std::string again = gp::json::dump(*v);
  auto reparsed = gp::json::parse(again);
  if (!reparsed.ok()) fail("dump of a parsed value does not parse");
  if (gp::json::dump(*reparsed) != again) fail("dump -> parse -> dump changes the text");
  return 0;
}
