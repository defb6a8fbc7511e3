// Tests for sim/http/admin_auth.cc: what counts as loopback, when a token is required, and how
// a bearer token is checked.
#include "sim/http/admin_auth.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace kvsweep::sim {
namespace {

TEST(AdminAuth, LoopbackIsAll127Slash8AndColonColon1AndNothingElse) {
  for (const char* host : {"127.0.0.1", "127.0.0.2", "127.1.2.3", "127.255.255.254", "::1",
                           "::ffff:127.0.0.1", "::ffff:127.9.9.9"}) {
    EXPECT_TRUE(is_loopback_host(host)) << host;
  }
  for (const char* host :
       {"0.0.0.0", "::", "128.0.0.1", "126.255.255.255", "10.0.0.1", "192.168.1.2", "::2",
        "::ffff:10.0.0.1", "fe80::1", "localhost", "127.0.0.1.example", "", "127.0.0.256"}) {
    EXPECT_FALSE(is_loopback_host(host)) << host;
  }
}

TEST(AdminAuth, AHostBeyondLoopbackNeedsAToken) {
  EXPECT_NO_THROW(require_admin_token("127.0.0.1", ""));
  EXPECT_NO_THROW(require_admin_token("127.0.0.2", ""));
  EXPECT_NO_THROW(require_admin_token("::1", ""));
  EXPECT_NO_THROW(require_admin_token("0.0.0.0", "s3cret"));
  for (const char* host : {"0.0.0.0", "::", "10.1.2.3"}) {
    try {
      require_admin_token(host, "");
      ADD_FAILURE() << host << " accepted without a token";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("admin_token: host " + std::string(host), 0), 0u)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("--admin-token-env"), std::string::npos) << e.what();
    }
  }
}

HttpRequest with_authorization(std::string value) {
  return HttpRequest{"GET", "/admin/strategy", "", {{"Authorization", std::move(value)}}};
}

TEST(AdminAuth, OnlyTheExactBearerTokenPasses) {
  EXPECT_TRUE(bearer_token_matches(with_authorization("Bearer s3cret"), "s3cret"));
  EXPECT_TRUE(bearer_token_matches(with_authorization("bearer s3cret"), "s3cret"));
  for (const char* wrong : {"Bearer s3cre", "Bearer s3crett", "Bearer S3CRET", "Basic s3cret",
                            "s3cret", "Bearer", "Bearer ", ""}) {
    EXPECT_FALSE(bearer_token_matches(with_authorization(wrong), "s3cret")) << wrong;
  }
  EXPECT_FALSE(bearer_token_matches(HttpRequest{"GET", "/admin/x", "", {}}, "s3cret"));
  EXPECT_FALSE(bearer_token_matches(with_authorization("Bearer "), ""));  // no token, no pass
}

}  // namespace
}  // namespace kvsweep::sim
