// Test double of a plain vLLM server (no VLLM_SERVER_DEV_MODE): serves /health, /v1/models,
// whole chat completions and /metrics, and answers 404 on /reset_prefix_cache as vLLM does.
// Header-only (cpp-httplib) so sim tests can use it without the orchestrator's support library.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace kvsweep::testing {

// Binds 127.0.0.1 on an ephemeral port in the constructor; stops and joins in the destructor.
// With `die_after_completions` > 0 it closes its port once it has answered that many chat
// completions (a server that crashes mid-sweep): later connections are refused.
class PlainVllmServer {
 public:
  explicit PlainVllmServer(std::string model, int die_after_completions = 0)
      : model_(std::move(model)), die_after_(die_after_completions) {
    server_.Get("/health",
                [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
    server_.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"object":"list","data":[{"id":")" + model_ +
                          R"(","object":"model","created":1,"owned_by":"vllm"}]})",
                      "application/json");
    });
    server_.Post("/v1/chat/completions", [this](const httplib::Request&, httplib::Response& res) {
      // stop() only closes the listening socket; this answer still goes out.
      if (++completions_ == die_after_) server_.stop();
      res.set_content(
          R"({"id":"chatcmpl-1","object":"chat.completion","created":1,"model":")" + model_ +
              R"(","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},)"
              R"("finish_reason":"length"}],"usage":{"prompt_tokens":5,)"
              R"("completion_tokens":1,"total_tokens":6}})",
          "application/json");
    });
    server_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content("vllm:prefix_cache_queries_total{model_name=\"" + model_ + "\"} 0\n",
                      "text/plain; version=0.0.4");
    });
    // FastAPI's answer for a route that is not mounted (vLLM mounts it only in dev mode).
    server_.Post("/reset_prefix_cache", [this](const httplib::Request&, httplib::Response& res) {
      ++resets_;
      res.status = 404;
      res.set_content(R"({"detail":"Not Found"})", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) throw std::runtime_error("PlainVllmServer: cannot bind 127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~PlainVllmServer() {
    server_.stop();
    thread_.join();
  }
  PlainVllmServer(const PlainVllmServer&) = delete;
  PlainVllmServer& operator=(const PlainVllmServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int resets() const { return resets_.load(); }
  int completions() const { return completions_.load(); }

 private:
  std::string model_;
  int die_after_ = 0;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<int> resets_{0};
  std::atomic<int> completions_{0};
};

}  // namespace kvsweep::testing
