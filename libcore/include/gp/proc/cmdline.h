#pragma once
// --redact-cmdline: hide secret-looking values in a process's argv before it is archived.
//
// Rule (values are replaced by "<redacted>", names are kept so the command stays recognisable):
//  1. An option whose name contains a secret word — password, passwd, pwd, secret, token, key
//     (apikey, api-key, access-key...), credential, auth, cookie, session, private (any case)
//     — gets its value hidden, whether written "--name=value", "-name=value", or "--name value"
//     (then the next argument, unless it starts with '-'). Short options are not judged by
//     letter ("-p" is a port as often as a password).
//  2. Environment-like assignments "NAME=value" (NAME of [A-Za-z_][A-Za-z0-9_.-]*), as in
//     `env FOO=bar cmd` or `make X=y`: the value is always hidden, secret word or not.
//  3. URLs with credentials ("scheme://user:pass@host..."): the "user:pass" part is hidden,
//     wherever the URL appears in an argument.
// argv[0] is never changed. The rule over-redacts on purpose: a lost value costs less than a
// leaked password.

#include <string>
#include <vector>

namespace gp::proc {

inline constexpr const char* kRedacted = "<redacted>";

std::vector<std::string> redact_cmdline(const std::vector<std::string>& argv);

}  // namespace gp::proc
