#pragma once
// Untrusted text in diagnostics. Paths, comm names, symbol names and server answers come from
// files and processes an attacker may control; printed raw, a newline forges another
// "gp-x: error:" line and an escape sequence reaches the terminal. Every diagnostic line goes
// through escape_for_terminal (gp::cli's error/warning/hint/info do it), so no message can
// hold a raw control character, whoever built it.

#include <string>
#include <string_view>

namespace gp::util {

// `text` as one printable line: \n \r \t \e for those characters, \xNN for every other
// control byte (C0, DEL), for the C1 controls U+0080..U+009F, and for each byte that is not
// part of valid UTF-8. Everything else (printable ASCII, backslashes included, and valid
// UTF-8) stays as it is, so messages about honest input read exactly as before.
std::string escape_for_terminal(std::string_view text);

}  // namespace gp::util
