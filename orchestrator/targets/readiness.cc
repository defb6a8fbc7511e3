// Readiness gates shared by every target that serves an OpenAI-compatible endpoint.
#include "orchestrator/targets/readiness.h"

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/duration.h"
#include "driver/http_fetch.h"
#include "orchestrator/targets/target.h"

namespace kvsweep::orchestrator {
namespace {

using Clock = std::chrono::steady_clock;

std::string describe(const driver::HttpResponse& r) {
  if (!r.error.empty()) return r.error;
  std::string body = r.body.substr(0, 200);
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
  return "HTTP " + std::to_string(r.status) + (body.empty() ? "" : ": " + body);
}

// A single HTTP call inside a gate may take at most this long, so a hung server still lets
// the gate poll again and report its reason at the deadline.
constexpr double kMaxCallSeconds = 10;

}  // namespace

void wait_for_gate(const std::string& gate, double timeout_s, double poll_s,
                   const std::function<std::optional<std::string>()>& check, spdlog::logger& log) {
  const auto start = Clock::now();
  const auto deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  std::string last_reason = "never checked";
  while (true) {
    std::optional<std::string> reason;
    try {
      reason = check();
    } catch (const TargetError& e) {
      log.debug("readiness gate {}: failed: {}", gate, e.what());
      throw TargetError("readiness gate " + gate + ": " + e.what());
    }
    const auto now = Clock::now();
    if (!reason) {
      log.debug("readiness gate {}: open after {}", gate,
                format_duration_s(std::chrono::duration<double>(now - start).count()));
      return;
    }
    log.debug("readiness gate {}: closed: {}", gate, *reason);
    last_reason = *reason;
    if (now >= deadline) {
      throw TargetError("readiness gate " + gate + ": not open after " +
                        format_duration_s(std::chrono::duration<double>(now - start).count()) +
                        ": " + last_reason);
    }
    const auto pause = std::min<Clock::duration>(
        deadline - now,
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(poll_s)));
    std::this_thread::sleep_for(pause);
  }
}

void wait_healthy(const std::vector<std::string>& urls, double timeout_s, double poll_s,
                  spdlog::logger& log) {
  for (const auto& url : urls) {
    wait_for_gate(
        "health", timeout_s, poll_s,
        [&]() -> std::optional<std::string> {
          const auto r = driver::http_get(url + "/health", std::min(timeout_s, kMaxCallSeconds));
          if (r.error.empty() && r.status == 200) return std::nullopt;
          return url + "/health: " + describe(r);
        },
        log);
  }
}

void wait_model_listed(const std::string& base_url, const std::string& model, double timeout_s,
                       double poll_s, spdlog::logger& log) {
  const auto check = [&]() -> std::optional<std::string> {
    const auto r = driver::http_get(base_url + "/v1/models", std::min(timeout_s, kMaxCallSeconds));
    if (!r.error.empty() || r.status != 200) return base_url + "/v1/models: " + describe(r);
    const auto parsed = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
    std::string ids;
    if (parsed.is_object() && parsed.contains("data") && parsed["data"].is_array()) {
      for (const auto& entry : parsed["data"]) {
        if (!entry.is_object() || !entry.contains("id") || !entry["id"].is_string()) continue;
        const std::string id = entry["id"].get<std::string>();
        if (id == model) return std::nullopt;
        ids += (ids.empty() ? "" : ", ") + id;
      }
    }
    return base_url + "/v1/models does not list \"" + model +
           "\" (it lists: " + (ids.empty() ? "nothing" : ids) + ")";
  };
  wait_for_gate("models", timeout_s, poll_s, check, log);
}

void wait_completion(const std::string& base_url, const std::string& model, double timeout_s,
                     double poll_s, spdlog::logger& log) {
  const nlohmann::json probe{
      {"model", model},
      {"messages", {{{"role", "user"}, {"content", "kvsweep readiness probe"}}}},
      {"max_tokens", 1},
      {"stream", false}};
  const std::string body = probe.dump();
  const auto check = [&]() -> std::optional<std::string> {
    const auto r = driver::http_post_json(base_url + "/v1/chat/completions", body,
                                          std::min(timeout_s, kMaxCallSeconds * 3));
    if (r.error.empty() && r.status == 200) return std::nullopt;
    return "a 1-token chat completion at " + base_url + ": " + describe(r);
  };
  wait_for_gate("completion", timeout_s, poll_s, check, log);
}

// An OpenAI-shaped error's whole message (kvsweep's router names every upstream in it, so it
// must not be cut), else the answer as describe() shows it.
std::string describe_refusal(const driver::HttpResponse& r) {
  const auto parsed = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (r.error.empty() && parsed.is_object() && parsed.contains("error") &&
      parsed["error"].is_object() && parsed["error"].contains("message") &&
      parsed["error"]["message"].is_string()) {
    return "HTTP " + std::to_string(r.status) + ": " +
           parsed["error"]["message"].get<std::string>();
  }
  return describe(r);
}

void reset_prefix_caches(const std::vector<std::string>& replica_urls, double timeout_s,
                         spdlog::logger& log) {
  for (const auto& url : replica_urls) {
    log.debug("POST {}/reset_prefix_cache", url);
    const auto r = driver::http_post_json(url + "/reset_prefix_cache", "", timeout_s);
    log.debug("POST {}/reset_prefix_cache: {}", url, describe(r));
    if (!r.error.empty() || r.status / 100 != 2) {
      std::string why = "POST " + url + "/reset_prefix_cache: " + describe_refusal(r);
      if (r.status == 404) {
        why +=
            " (vLLM serves this route only with VLLM_SERVER_DEV_MODE=1; or set "
            "target.cold_method: restart, or load.cache: as-is)";
      }
      throw TargetError("cold cache: " + why);
    }
  }
}

}  // namespace kvsweep::orchestrator
