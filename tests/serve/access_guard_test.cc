// Tests for serve/access_guard.cc: the bind policy, the token, sessions and
// one-time login codes.
#include "serve/access_guard.h"

#include <gtest/gtest.h>

namespace kvsweep::serve {
namespace {

constexpr const char* kToken = "0123456789abcdef-secret";

TEST(AccessGuard, LoopbackAddressesAreOnlyThisMachines) {
  for (const char* a : {"127.0.0.1", "127.8.9.10", "::1", "localhost"}) {
    EXPECT_TRUE(is_loopback_address(a)) << a;
  }
  for (const char* a :
       {"0.0.0.0", "::", "10.0.0.1", "192.168.1.2", "128.0.0.1", "example.com", ""}) {
    EXPECT_FALSE(is_loopback_address(a)) << a;
  }
}

TEST(AccessGuard, ANonLoopbackBindNeedsAToken) {
  EXPECT_EQ(bind_refusal("127.0.0.1", false), "");
  EXPECT_EQ(bind_refusal("0.0.0.0", true), "");
  const std::string refusal = bind_refusal("0.0.0.0", false);
  EXPECT_NE(refusal.find("--bind 0.0.0.0 is not a loopback address"), std::string::npos);
  EXPECT_NE(refusal.find("--token-env"), std::string::npos);
}

TEST(AccessGuard, ConstantTimeEqualsComparesWholeStrings) {
  EXPECT_TRUE(constant_time_equals("abc", "abc"));
  EXPECT_FALSE(constant_time_equals("abc", "abd"));
  EXPECT_FALSE(constant_time_equals("abc", "abcd"));
  EXPECT_FALSE(constant_time_equals("", "a"));
  EXPECT_TRUE(constant_time_equals("", ""));
}

TEST(AccessGuard, WithoutATokenEverythingIsAllowed) {
  const AccessGuard guard("");
  EXPECT_TRUE(guard.open());
  EXPECT_TRUE(guard.allows("", ""));
}

TEST(AccessGuard, TheBearerTokenOrASessionCookieIsNeeded) {
  AccessGuard guard(kToken);
  EXPECT_FALSE(guard.allows("", ""));
  EXPECT_FALSE(guard.allows("Bearer wrong", ""));
  EXPECT_FALSE(guard.allows(kToken, ""));  // not a Bearer header
  EXPECT_TRUE(guard.allows(std::string("Bearer ") + kToken, ""));
  EXPECT_FALSE(guard.allows("", std::string(kSessionCookie) + "=made-up"));

  const auto session = guard.login_with_token(kToken);
  ASSERT_TRUE(session);
  EXPECT_TRUE(guard.allows("", "a=1; " + std::string(kSessionCookie) + "=" + *session + "; b=2"));
  EXPECT_FALSE(guard.login_with_token("wrong"));
}

TEST(AccessGuard, AOneTimeCodeLogsInOnceAndExpires) {
  AccessGuard guard(kToken);
  const std::string code = guard.new_one_time_code();
  EXPECT_EQ(code.find(kToken), std::string::npos);  // the URL never carries the token
  const auto session = guard.login_with_code(code);
  ASSERT_TRUE(session);
  EXPECT_TRUE(guard.allows("", std::string(kSessionCookie) + "=" + *session));
  EXPECT_FALSE(guard.login_with_code(code));  // spent
  const std::string expired = guard.new_one_time_code(std::chrono::seconds(-1));
  EXPECT_FALSE(guard.login_with_code(expired));
  EXPECT_FALSE(guard.login_with_code(""));
}

}  // namespace
}  // namespace kvsweep::serve
