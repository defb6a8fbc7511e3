// A scripted replica for router tests: both seams (backend.h), no engine and no sockets.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/http/backend.h"
#include "sim/http/openai_api.h"

namespace kvsweep::sim::testing {

// Answers completions with a fixed JSON body at once, or holds them (hold = true) until the
// test answers them; serves /v1/models and /reset_prefix_cache like a replica of `model`.
// Settings are switchable only when `controllable` (a simulated replica), else none are (a
// real server behind the proxy). Records what the router asked of it.
class FakeReplica final : public ServingBackend, public ReplicaControl {
 public:
  explicit FakeReplica(std::string model = "fake-model", bool controllable = true)
      : model_(std::move(model)), controllable_(controllable) {}

  void handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange) override {
    paths.push_back(request.method + " " + request.target);
    if (request.target == "/v1/models") {
      return exchange->respond(json_response(200, models_body(model_, 7)));
    }
    if (request.target == "/reset_prefix_cache") {
      ++resets;
      return exchange->respond(HttpResponse{reset_status, "", "", {}});
    }
    if (hold) return held.push_back(std::move(exchange));
    exchange->respond(json_response(200, R"({"served":true})"));
  }
  void check_health(std::chrono::milliseconds,
                    std::function<void(bool ok, std::string why)> done) override {
    done(up, up ? "" : "down");
  }

  bool available() const override { return up; }
  void restart() override { ++restarts; }
  ReplicaSettings settings() const override {
    if (!controllable_) return {};
    return ReplicaSettings{prefix_caching, faults};
  }
  bool apply(const ReplicaSettings& next) override {
    if (!controllable_ && (next.prefix_caching || next.faults)) return false;
    if (next.prefix_caching) prefix_caching = *next.prefix_caching;
    if (next.faults) faults = *next.faults;
    return true;
  }

  bool up = true;
  bool hold = false;
  bool prefix_caching = true;
  FaultOptions faults;
  int restarts = 0;
  int resets = 0;
  int reset_status = 200;                       // what /reset_prefix_cache answers
  std::vector<std::string> paths;               // "POST /v1/chat/completions", in order
  std::vector<std::shared_ptr<Exchange>> held;  // requests held open (hold = true)

 private:
  std::string model_;
  bool controllable_;
};

}  // namespace kvsweep::sim::testing
