// Tests for driver/http_fetch.cc: blocking GET/POST, errors as values.
#include "driver/http_fetch.h"

#include <gtest/gtest.h>

#include "tests/driver/test_server.h"

namespace kvsweep::driver {
namespace {

TEST(HttpFetch, GetAndPostReturnStatusAndBody) {
  test_support::LoopbackServer server([](httplib::Server& s, const std::atomic<bool>&) {
    s.Get("/metrics", [](const httplib::Request&, httplib::Response& r) {
      r.set_content("vllm:prefix_cache_hits_total 3\n", "text/plain");
    });
    s.Post("/echo", [](const httplib::Request& q, httplib::Response& r) {
      r.status = 201;
      r.set_content(q.get_header_value("Content-Type") + " " + q.body, "text/plain");
    });
  });
  const HttpResponse get = http_get(server.base_url() + "/metrics", 10);
  EXPECT_EQ(get.status, 200);
  EXPECT_EQ(get.body, "vllm:prefix_cache_hits_total 3\n");
  EXPECT_EQ(get.error, "");
  const HttpResponse post = http_post_json(server.base_url() + "/echo", R"({"a":1})", 10);
  EXPECT_EQ(post.status, 201);
  EXPECT_EQ(post.body, R"(application/json {"a":1})");
  const HttpResponse missing = http_get(server.base_url() + "/nope", 10);
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.error, "");
}

TEST(HttpFetch, NetworkTroubleComesBackAsError) {
  test_support::LoopbackServer server([](httplib::Server& s, const std::atomic<bool>& closing) {
    s.Get("/slow", [&closing](const httplib::Request&, httplib::Response& r) {
      test_support::sleep_unless_closing(3000, closing);
      r.set_content("late", "text/plain");
    });
  });
  const HttpResponse slow = http_get(server.base_url() + "/slow", 0.3);
  EXPECT_EQ(slow.status, 0);
  EXPECT_NE(slow.error, "");
  const HttpResponse refused = http_get("http://127.0.0.1:1/", 5);
  EXPECT_EQ(refused.status, 0);
  EXPECT_NE(refused.error, "");
}

}  // namespace
}  // namespace kvsweep::driver
