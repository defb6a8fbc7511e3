// Readiness gates shared by every target that serves an OpenAI-compatible endpoint.
#include "orchestrator/readiness.h"

#include <nlohmann/json.hpp>
#include <thread>

#include "driver/http_fetch.h"
#include "orchestrator/target.h"

namespace kvsweep::orchestrator {
namespace {

using std::chrono::steady_clock;

double seconds_left(steady_clock::time_point deadline) {
  return std::max(0.1, std::chrono::duration<double>(deadline - steady_clock::now()).count());
}

std::string describe(const driver::HttpResponse& r) {
  if (!r.error.empty()) return r.error;
  return "HTTP " + std::to_string(r.status) + ": " + r.body.substr(0, 200);
}

}  // namespace

void wait_healthy(const std::vector<std::string>& urls, steady_clock::time_point deadline) {
  for (const auto& url : urls) {
    while (true) {
      const auto r = driver::http_get(url + "/health", std::min(5.0, seconds_left(deadline)));
      if (r.error.empty() && r.status == 200) break;
      if (steady_clock::now() >= deadline) {
        throw TargetError("readiness gate 'health' failed: " + url + "/health: " + describe(r));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

void check_serves_model(const std::string& base_url, const std::string& model,
                        steady_clock::time_point deadline) {
  const auto models = driver::http_get(base_url + "/v1/models", seconds_left(deadline));
  if (!models.error.empty() || models.status != 200) {
    throw TargetError("readiness gate 'models' failed: " + base_url + "/v1/models: " +
                      describe(models));
  }
  bool listed = false;
  const auto parsed = nlohmann::json::parse(models.body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object() && parsed.contains("data") && parsed["data"].is_array()) {
    for (const auto& entry : parsed["data"]) {
      if (entry.is_object() && entry.value("id", "") == model) listed = true;
    }
  }
  if (!listed) {
    throw TargetError("readiness gate 'models' failed: " + base_url +
                      "/v1/models does not list model \"" + model + "\": " +
                      models.body.substr(0, 200));
  }

  const nlohmann::json probe{
      {"model", model},
      {"messages", {{{"role", "user"}, {"content", "kvsweep readiness probe"}}}},
      {"max_tokens", 1},
      {"stream", false}};
  const auto reply = driver::http_post_json(base_url + "/v1/chat/completions", probe.dump(),
                                            seconds_left(deadline));
  if (!reply.error.empty() || reply.status != 200) {
    throw TargetError("readiness gate 'completion' failed: a 1-token completion: " +
                      describe(reply));
  }
}

}  // namespace kvsweep::orchestrator
