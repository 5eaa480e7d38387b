// --redact-cmdline rule (gp/proc/cmdline.h).

#include <gtest/gtest.h>

#include "gp/proc/cmdline.h"

namespace gp::test::proc {
namespace {

using gp::proc::redact_cmdline;
using V = std::vector<std::string>;

TEST(RedactCmdline, HidesValuesOfSecretOptionsInBothSpellings) {
  EXPECT_EQ(redact_cmdline({"app", "--password=hunter2", "--db-token", "abc", "--port", "80"}),
            (V{"app", "--password=<redacted>", "--db-token", "<redacted>", "--port", "80"}));
  EXPECT_EQ(redact_cmdline({"java", "-Djavax.net.ssl.keyStorePassword=s3cr3t", "-jar", "app.jar"}),
            (V{"java", "-Djavax.net.ssl.keyStorePassword=<redacted>", "-jar", "app.jar"}));
  EXPECT_EQ(redact_cmdline({"go-app", "-api-key", "XYZ", "-Secret=1", "--AUTH", "x"}),
            (V{"go-app", "-api-key", "<redacted>", "-Secret=<redacted>", "--AUTH", "<redacted>"}));
}

TEST(RedactCmdline, DoesNotSwallowTheNextOptionOrJudgeShortOptions) {
  EXPECT_EQ(redact_cmdline({"app", "--token", "--verbose", "file"}),
            (V{"app", "--token", "--verbose", "file"}));
  EXPECT_EQ(redact_cmdline({"ssh", "-p", "2222", "host"}), (V{"ssh", "-p", "2222", "host"}));
  EXPECT_EQ(redact_cmdline({"app", "--password"}), (V{"app", "--password"}));
}

TEST(RedactCmdline, HidesEnvironmentStyleAssignments) {
  EXPECT_EQ(
      redact_cmdline({"env", "AWS_SECRET_ACCESS_KEY=abc", "PATH=/bin", "cmd", "x=y"}),
      (V{"env", "AWS_SECRET_ACCESS_KEY=<redacted>", "PATH=<redacted>", "cmd", "x=<redacted>"}));
  EXPECT_EQ(redact_cmdline({"app", "=notanassignment", "1X=2"}),
            (V{"app", "=notanassignment", "1X=2"}));
}

TEST(RedactCmdline, HidesUrlCredentialsAnywhere) {
  EXPECT_EQ(redact_cmdline({"psql", "postgres://user:pw@db:5432/app", "--url=https://a:b@h/p?q=1"}),
            (V{"psql", "postgres://<redacted>@db:5432/app", "--url=https://<redacted>@h/p?q=1"}));
  EXPECT_EQ(redact_cmdline({"curl", "https://example.com/a@b", "ftp://u:p@h1 ftp://x:y@h2"}),
            (V{"curl", "https://example.com/a@b", "ftp://<redacted>@h1 ftp://<redacted>@h2"}));
}

TEST(RedactCmdline, NeverChangesArgv0OrHarmlessArguments) {
  EXPECT_EQ(redact_cmdline({"/usr/bin/password-tool=x", "run", "--verbose", "-j4"}),
            (V{"/usr/bin/password-tool=x", "run", "--verbose", "-j4"}));
  EXPECT_EQ(redact_cmdline({}), V{});
}

}  // namespace
}  // namespace gp::test::proc
