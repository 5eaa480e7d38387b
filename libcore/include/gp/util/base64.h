#pragma once
// Base64 (RFC 4648, standard alphabet, '=' padding): the WebSocket handshake's keys and the
// .col header's gzipped PerfSpect page (htmlblob).

#include <string>
#include <string_view>

namespace gp::util {

std::string base64(std::string_view bytes);

}  // namespace gp::util
