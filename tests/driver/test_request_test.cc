// Tests for driver/test_request.cc: one short request before a run, the server's answer back.
#include "driver/test_request.h"

#include <gtest/gtest.h>

#include <mutex>
#include <nlohmann/json.hpp>

#include "tests/driver/test_server.h"

namespace kvsweep::driver {
namespace {

// Answers /v1/chat/completions with `status` and `body`, keeping every request body.
class OneAnswerServer {
 public:
  OneAnswerServer(int status, std::string body)
      : server_([this, status, body](httplib::Server& server, const std::atomic<bool>&) {
          server.Post("/v1/chat/completions", [this, status, body](const httplib::Request& request,
                                                                   httplib::Response& response) {
            {
              std::lock_guard<std::mutex> lock(mutex_);
              bodies_.push_back(nlohmann::json::parse(request.body, nullptr, false));
            }
            response.status = status;
            response.set_content(body, status == 200 ? "text/event-stream" : "application/json");
          });
        }) {}
  std::string base_url() const { return server_.base_url(); }
  std::vector<nlohmann::json> bodies() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return bodies_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<nlohmann::json> bodies_;
  test_support::LoopbackServer server_;  // last: stopped before the members it uses go away
};

LoadOptions run_options(const std::string& base_url) {
  LoadOptions options;
  options.base_url = base_url;
  options.model = "wrong-model";
  options.max_tokens = 128;
  options.concurrency = 64;  // the run's shape: the test request ignores it
  options.num_requests = 400;
  options.warmup_requests = 16;
  options.connect_timeout_s = 5;
  options.request_timeout_s = 20;
  return options;
}

TEST(TestRequest, OneShortRequestAndTheServersRefusal) {
  OneAnswerServer server(404, R"({"object":"error","message":"The model `wrong-model` does )"
                              R"(not exist.","type":"NotFoundError","param":null,"code":404})");
  const RequestRecord record = send_test_request(run_options(server.base_url() + "/v1"));
  EXPECT_FALSE(record.ok);
  EXPECT_EQ(record.error_kind, kErrorHttpStatus);
  EXPECT_EQ(record.http_status, 404);
  EXPECT_EQ(record.error, "HTTP 404: The model `wrong-model` does not exist.");

  const auto bodies = server.bodies();
  ASSERT_EQ(bodies.size(), 1u);  // one request, whatever the run's shape
  EXPECT_EQ(bodies[0]["model"], "wrong-model");
  EXPECT_EQ(bodies[0]["max_tokens"], 1);
  ASSERT_EQ(bodies[0]["messages"].size(), 1u);
  EXPECT_EQ(bodies[0]["messages"][0]["content"], kTestRequestPrompt);
}

TEST(TestRequest, AnAnsweringServerPasses) {
  OneAnswerServer server(200, test_support::sse_content("ok") + test_support::sse_usage(9, 1, 0) +
                                  test_support::kSseDone);
  const RequestRecord record = send_test_request(run_options(server.base_url()));
  EXPECT_TRUE(record.ok) << record.error;
  EXPECT_EQ(record.http_status, 200);
  EXPECT_FALSE(record.warmup);
  EXPECT_EQ(server.bodies().size(), 1u);
}

}  // namespace
}  // namespace kvsweep::driver
