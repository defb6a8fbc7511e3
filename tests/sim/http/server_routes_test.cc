// Tests for sim/http/server_routes.cc: the route table and vLLM paths every sim server shares.
#include "sim/http/server_routes.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace kvsweep::sim {
namespace {

class KeepingSink final : public Exchange::Sink {
 public:
  void send(std::string bytes) override { bytes_ += bytes; }
  void complete(bool) override {}
  int status() const { return std::stoi(bytes_.substr(9, 3)); }  // "HTTP/1.1 404 ..."
  std::string body() const { return bytes_.substr(bytes_.find("\r\n\r\n") + 4); }
  bool has_line(const std::string& line) const {
    return bytes_.find("\r\n" + line + "\r\n") != std::string::npos;
  }

 private:
  std::string bytes_;
};

std::shared_ptr<KeepingSink> call(const RouteTable& table, const std::string& method,
                                  const std::string& target) {
  auto sink = std::make_shared<KeepingSink>();
  table.dispatch(HttpRequest{method, target, "", {}}, std::make_shared<Exchange>(sink, true));
  return sink;
}

VllmSurface surface(std::string* seen) {
  return VllmSurface{
      [seen](ApiKind kind, const HttpRequest&, std::shared_ptr<Exchange> exchange) {
        *seen = kind == ApiKind::kChat ? "chat" : "completion";
        reply_empty(*exchange);
      },
      [](std::shared_ptr<Exchange> exchange) { reply_models(*exchange, {model_entry("m", 3)}); },
      [] { return std::string("up 1\n"); },
      [seen](std::shared_ptr<Exchange> exchange) {
        *seen = "reset";
        reply_empty(*exchange);
      }};
}

TEST(ServerRoutes, VllmPathsGoToTheServersHandlers) {
  std::string seen;
  const RouteTable table = vllm_routes(surface(&seen));
  EXPECT_EQ(call(table, "POST", "/v1/chat/completions")->status(), 200);
  EXPECT_EQ(seen, "chat");
  call(table, "POST", "/v1/completions");
  EXPECT_EQ(seen, "completion");
  call(table, "POST", "/reset_prefix_cache");
  EXPECT_EQ(seen, "reset");
  EXPECT_EQ(call(table, "GET", "/v1/models")->body(), models_body("m", 3));
  const auto health = call(table, "GET", "/health");
  EXPECT_EQ(health->status(), 200);
  EXPECT_EQ(health->body(), "");
  const auto metrics = call(table, "GET", "/metrics?name=up");  // the query is not the path
  EXPECT_EQ(metrics->body(), "up 1\n");
  EXPECT_TRUE(metrics->has_line("Content-Type: text/plain; version=0.0.4; charset=utf-8"));
}

TEST(ServerRoutes, UnknownPathsAndWrongMethodsAreOpenAiShaped404s) {
  std::string seen;
  RouteTable table = vllm_routes(surface(&seen));
  table.add("GET", "/admin/x",
            [](const HttpRequest&, std::shared_ptr<Exchange> exchange) { reply_empty(*exchange); });
  EXPECT_EQ(call(table, "GET", "/admin/x")->status(), 200);
  auto sink = call(table, "GET", "/v2/nothing?a=b");
  EXPECT_EQ(sink->status(), 404);
  EXPECT_EQ(sink->body(), R"({"error":{"message":"Not Found: GET /v2/nothing",)"
                          R"("type":"NotFoundError","param":null,"code":404}})");
  sink = call(table, "GET", "/reset_prefix_cache");
  EXPECT_EQ(sink->status(), 404);
  EXPECT_EQ(sink->body(), error_body(not_found_error("Not Found: GET /reset_prefix_cache")));
  EXPECT_EQ(seen, "");
}

}  // namespace
}  // namespace kvsweep::sim
