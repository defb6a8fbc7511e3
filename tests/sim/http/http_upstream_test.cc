// Tests for parse_upstream_url (sim/http/http_upstream.cc): the one base-URL normal form.
#include "sim/http/http_upstream.h"

#include <gtest/gtest.h>

#include <string>

namespace kvsweep::sim {
namespace {

UpstreamAddress parsed(const std::string& url) {
  UpstreamAddress address;
  std::string error;
  EXPECT_TRUE(parse_upstream_url(url, &address, &error)) << url << ": " << error;
  return address;
}

TEST(UpstreamUrl, TakesAnyFormOfABaseUrlAsTheDriverDoes) {
  for (const char* url : {"http://h:8000", "http://h:8000/", "http://h:8000/v1",
                          "http://h:8000/v1/", "http://h:8000//v1//"}) {
    const UpstreamAddress a = parsed(url);
    EXPECT_EQ(a.host, "h") << url;
    EXPECT_EQ(a.port, "8000") << url;
    EXPECT_EQ(a.base_path, "") << url;  // requests go to /v1/..., never //v1/... or /v1/v1/...
  }
  const UpstreamAddress prefixed = parsed("http://kubeai/openai/v1/");
  EXPECT_EQ(prefixed.host, "kubeai");
  EXPECT_EQ(prefixed.port, "80");
  EXPECT_EQ(prefixed.base_path, "/openai");
  const UpstreamAddress v6 = parsed("http://[::1]:9000/v1");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, "9000");
  EXPECT_EQ(v6.base_path, "");
  EXPECT_EQ(parsed("http://v1").host, "v1");  // a host called v1 stays
}

TEST(UpstreamUrl, RejectsWhatItCannotReach) {
  UpstreamAddress address;
  std::string error;
  EXPECT_FALSE(parse_upstream_url("https://h:8000", &address, &error));
  EXPECT_EQ(error, "upstream \"https://h:8000\": only http:// URLs are supported");
  EXPECT_FALSE(parse_upstream_url("http://:8000/v1", &address, &error));
  EXPECT_EQ(error, "upstream \"http://:8000/v1\": expected http://host[:port]");
  EXPECT_FALSE(parse_upstream_url("http://[::1:8000", &address, &error));
  EXPECT_EQ(error, "upstream \"http://[::1:8000\": unterminated [");
}

}  // namespace
}  // namespace kvsweep::sim
