// --redact-cmdline (rule documented in gp/proc/cmdline.h).

#include "gp/proc/cmdline.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace gp::proc {
namespace {

constexpr std::array<std::string_view, 11> kSecretWords = {
    "password",   "passwd", "pwd",    "secret",  "token",  "key",
    "credential", "auth",   "cookie", "session", "private"};

bool has_secret_word(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return std::any_of(kSecretWords.begin(), kSecretWords.end(),
                     [&](std::string_view w) { return lower.find(w) != std::string::npos; });
}

// "NAME=value" where NAME looks like an environment variable or make/dd-style key.
bool is_assignment(std::string_view arg, size_t& eq) {
  eq = arg.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  const auto c0 = static_cast<unsigned char>(arg[0]);
  if (!std::isalpha(c0) && c0 != '_') return false;
  return std::all_of(
      arg.begin(), arg.begin() + static_cast<std::ptrdiff_t>(eq),
      [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '.' || c == '-'; });
}

// Hides "user:pass" in every "scheme://user:pass@host" of arg.
std::string redact_url_credentials(std::string arg) {
  size_t pos = 0;
  while ((pos = arg.find("://", pos)) != std::string::npos) {
    const size_t auth_start = pos + 3;
    size_t auth_end = arg.find_first_of("/?# \t", auth_start);
    if (auth_end == std::string::npos) auth_end = arg.size();
    const size_t at = arg.rfind('@', auth_end == 0 ? 0 : auth_end - 1);
    if (at != std::string::npos && at >= auth_start && at < auth_end) {
      arg.replace(auth_start, at - auth_start, kRedacted);
      pos = auth_start + std::string_view(kRedacted).size() + 1;
    } else {
      pos = auth_start;
    }
  }
  return arg;
}

}  // namespace

std::vector<std::string> redact_cmdline(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  out.reserve(argv.size());
  bool hide_next = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (i == 0) {
      out.push_back(arg);
      continue;
    }
    const bool is_option = arg.size() > 1 && arg[0] == '-';
    if (hide_next && !is_option) {
      hide_next = false;
      out.emplace_back(kRedacted);
      continue;
    }
    hide_next = false;
    size_t eq = 0;
    if (is_option) {
      eq = arg.find('=');
      const std::string_view name = std::string_view(arg).substr(0, eq);
      // "-x" alone is a short option, not judged; "-token", "--token", "-Dapp.token" are.
      const bool is_named = name.find_first_not_of('-') != std::string_view::npos &&
                            name.size() - name.find_first_not_of('-') >= 2;
      if (is_named && has_secret_word(name)) {
        if (eq != std::string::npos) {
          out.push_back(arg.substr(0, eq + 1) + kRedacted);
          continue;
        }
        hide_next = true;
      }
    } else if (is_assignment(arg, eq)) {
      out.push_back(arg.substr(0, eq + 1) + kRedacted);
      continue;
    }
    out.push_back(redact_url_credentials(arg));
  }
  return out;
}

}  // namespace gp::proc
