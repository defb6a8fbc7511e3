// Test fixture: a cpp-httplib server on 127.0.0.1 running on its own thread, plus SSE helpers.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace kvsweep::driver::test_support {

// Binds an ephemeral port in the constructor (so connections queue even before the accept loop
// runs) and stops and joins in the destructor. Handlers that wait should poll closing() so the
// destructor does not sit out their sleeps.
class LoopbackServer {
 public:
  explicit LoopbackServer(
      const std::function<void(httplib::Server&, const std::atomic<bool>&)>& routes) {
    routes(server_, closing_);
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) throw std::runtime_error("LoopbackServer: cannot bind 127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() before the accept loop starts would be lost and join() would hang.
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~LoopbackServer() {
    closing_ = true;
    server_.stop();
    thread_.join();
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  int port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  std::atomic<bool> closing_{false};
  int port_ = 0;
  std::thread thread_;
};

// Sleeps up to `ms`, returning early once the server is closing.
inline void sleep_unless_closing(int ms, const std::atomic<bool>& closing) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!closing && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

inline std::string sse(const std::string& json) { return "data: " + json + "\n\n"; }
inline std::string sse_role() {
  return sse(R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})");
}
inline std::string sse_content(const std::string& text) {
  return sse(R"({"choices":[{"index":0,"delta":{"content":")" + text + R"("}}]})");
}
inline std::string sse_usage(int prompt, int completion, int cached) {
  return sse(R"({"choices":[],"usage":{"prompt_tokens":)" + std::to_string(prompt) +
             R"(,"completion_tokens":)" + std::to_string(completion) +
             R"(,"prompt_tokens_details":{"cached_tokens":)" + std::to_string(cached) + "}}}");
}
inline const std::string kSseDone = "data: [DONE]\n\n";

struct StreamStep {
  int delay_ms = 0;  // sleep before writing
  std::string bytes;
};

// Streams the steps as chunked text/event-stream. With `finish` false the provider fails after
// the last step, and cpp-httplib closes the connection mid-body (no terminating chunk).
inline void stream_steps(httplib::Response& response, std::vector<StreamStep> steps,
                         const std::atomic<bool>& closing, bool finish = true) {
  response.set_chunked_content_provider(
      "text/event-stream",
      [steps = std::move(steps), &closing, finish](std::size_t, httplib::DataSink& sink) {
        for (const StreamStep& step : steps) {
          sleep_unless_closing(step.delay_ms, closing);
          if (!sink.write(step.bytes.data(), step.bytes.size())) return false;
        }
        if (!finish) return false;
        sink.done();
        return true;
      });
}

}  // namespace kvsweep::driver::test_support
