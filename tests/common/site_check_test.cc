// Tests for common/site_check.cc: Host parsed whole, the names a server answers to, cross-site
// marks, UTF-8 validation.
#include "common/site_check.h"

#include <gtest/gtest.h>

#include "common/utf8_prefix.h"

namespace kvsweep {
namespace {

TEST(SiteCheck, AHostHeaderIsParsedWhole) {
  EXPECT_EQ(host_header_name("127.0.0.1:8765"), "127.0.0.1");
  EXPECT_EQ(host_header_name("LocalHost"), "localhost");
  EXPECT_EQ(host_header_name("[::1]:80"), "::1");
  EXPECT_EQ(host_header_name("[::1]"), "::1");
  for (const char* bad : {"127.0.0.1:evil.com", "127.0.0.1:", "127.0.0.1:80:80", "", ":80", "[::1",
                          "[::1]x", "[evil.com]:80", "a b", "evil.com/x", "1.2.3.4:123456"}) {
    EXPECT_EQ(host_header_name(bad), std::nullopt) << bad;
  }
}

TEST(SiteCheck, OnlyThisServersNamesPass) {
  const SiteNames loopback{"127.0.0.1", {"kvsweep.internal"}};
  EXPECT_EQ(host_refusal({"127.0.0.1:1"}, loopback), "");
  EXPECT_EQ(host_refusal({"127.9.9.9"}, loopback), "");
  EXPECT_EQ(host_refusal({"localhost:1"}, loopback), "");
  EXPECT_EQ(host_refusal({"[::1]:1"}, loopback), "");
  EXPECT_EQ(host_refusal({"KVSWEEP.internal:1"}, loopback), "");
  EXPECT_NE(host_refusal({"evil.example"}, loopback), "");
  EXPECT_NE(host_refusal({"10.0.0.5"}, loopback), "") << "not the bind address";
  EXPECT_NE(host_refusal({"127.0.0.1:evil.com"}, loopback), "");
  EXPECT_NE(host_refusal({}, loopback), "");
  EXPECT_NE(host_refusal({"127.0.0.1", "127.0.0.1"}, loopback), "");
  EXPECT_EQ(host_refusal({"10.0.0.5:80"}, SiteNames{"10.0.0.5", {}}), "");
  // A wildcard bind answers every IP literal (rebinding needs a name), never a name.
  EXPECT_EQ(host_refusal({"10.0.0.5:80"}, SiteNames{"0.0.0.0", {}}), "");
  EXPECT_EQ(host_refusal({"[fe80::1]:80"}, SiteNames{"::", {}}), "");
  EXPECT_NE(host_refusal({"evil.example"}, SiteNames{"0.0.0.0", {}}), "");
}

TEST(SiteCheck, CrossSiteMarksAreRefused) {
  EXPECT_EQ(cross_site_refusal("127.0.0.1:80", "", ""), "");
  EXPECT_EQ(cross_site_refusal("127.0.0.1:80", "http://127.0.0.1:80", "same-origin"), "");
  EXPECT_EQ(cross_site_refusal("127.0.0.1:80", "", "none"), "");
  EXPECT_NE(cross_site_refusal("127.0.0.1:80", "http://127.0.0.1:81", ""), "");
  EXPECT_NE(cross_site_refusal("127.0.0.1:80", "null", ""), "");
  EXPECT_NE(cross_site_refusal("127.0.0.1:80", "https://evil.example", ""), "");
  EXPECT_NE(cross_site_refusal("127.0.0.1:80", "", "cross-site"), "");
  EXPECT_NE(cross_site_refusal("127.0.0.1:80", "", "same-site"), "");
}

TEST(SiteCheck, Utf8IsValidatedStrictly) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain"));
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xff"));
  EXPECT_FALSE(is_valid_utf8("\xc3"));                     // cut short
  EXPECT_FALSE(is_valid_utf8("\xc3\x28"));                 // bad continuation
  EXPECT_EQ(first_invalid_utf8("ok \xc3\xa9 \xff!"), 6u);  // where it stops being UTF-8
  EXPECT_EQ(first_invalid_utf8("ok \xc3\xa9"), std::nullopt);
  // A byte budget cuts before a character, never inside one.
  EXPECT_EQ(utf8_prefix("ab\xc3\xa9", 3), "ab");
  EXPECT_EQ(utf8_prefix("ab\xc3\xa9", 4), "ab\xc3\xa9");
  EXPECT_EQ(utf8_prefix("\xe2\x82\xac\xe2\x82\xac", 5), "\xe2\x82\xac");
  EXPECT_EQ(utf8_prefix("plain", 2), "pl");
  EXPECT_TRUE(is_valid_utf8(utf8_prefix("x\xf0\x9f\x98\x80", 3)));
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
}

}  // namespace
}  // namespace kvsweep
