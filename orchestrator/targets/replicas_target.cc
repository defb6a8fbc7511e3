// Plain OpenAI-compatible servers with kvsweep's own router in front of them, on loopback.
#include "orchestrator/targets/replicas_target.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "common/join.h"
#include "orchestrator/targets/readiness.h"
#include "orchestrator/targets/target_kinds.h"

namespace kvsweep::orchestrator {
namespace {

// The reset waits for every upstream, each of which may be busy finishing a cell.
constexpr double kResetTimeoutS = 60;

std::chrono::milliseconds to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000 + 0.5));
}

// Validates what the router must apply before anything is built, then its options.
sim::ProxyOptions router_options(const ScenarioSpec& spec) {
  const std::vector<std::string>& applies = target_kind("replicas").factors;
  for (const auto& knob : spec.knobs()) {
    if (std::find(applies.begin(), applies.end(), knob) == applies.end()) {
      throw TargetError("factor " + knob + ": kind replicas cannot apply it (kvsweep's " +
                        "router applies " + join(applies) +
                        "; the servers' own settings are theirs)");
    }
    check_router_levels(knob, spec.knob_levels(knob), "kvsweep's router", spec);
  }
  if (spec.target.upstreams.empty()) {
    throw TargetError("target.upstreams: required for kind replicas: the servers' base URLs");
  }
  sim::ProxyOptions options;
  options.upstreams = spec.target.upstreams;
  options.host = "127.0.0.1";
  options.port = 0;
  options.seed = spec.seed;
  options.approx_ttl = std::chrono::seconds(static_cast<std::int64_t>(spec.target.kv_ttl_s));
  options.health.probe_interval = to_ms(spec.target.health.interval_s);
  options.health.failure_threshold = spec.target.health.failures;
  return options;
}

sim::Proxy make_router(const ScenarioSpec& spec) {
  sim::ProxyOptions options = router_options(spec);
  try {
    return sim::Proxy(std::move(options));
  } catch (const std::invalid_argument& e) {
    throw TargetError(std::string("target.upstreams: ") + e.what());
  }
}

// "http://host:port[/path]" without a trailing "/v1": where /health and /metrics live.
std::string server_root(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.size() >= 3 && url.compare(url.size() - 3, 3, "/v1") == 0) url.resize(url.size() - 3);
  return url;
}

}  // namespace

ReplicasTarget::ReplicasTarget(const ScenarioSpec& spec, Log log)
    : spec_(spec), log_(std::move(log)), router_(make_router(spec)), admin_(log_) {}

ReplicasTarget::~ReplicasTarget() = default;

std::string ReplicasTarget::describe() const {
  std::string text =
      "replicas x" + std::to_string(spec_.target.upstreams.size()) + " behind kvsweep's router (";
  for (std::size_t i = 0; i < spec_.target.upstreams.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(i) + "=" + spec_.target.upstreams[i];
  }
  return text + ")";
}

CommandLogs ReplicasTarget::start() {
  try {
    router_.start();
  } catch (const std::exception& e) {
    throw TargetError(std::string("starting kvsweep's router on 127.0.0.1: ") + e.what());
  }
  return {};
}

std::vector<std::vector<std::string>> ReplicasTarget::planned_commands(
    const Treatment* /*previous*/, const Treatment& next) const {
  const std::string body = strategy_body(next, spec_);
  if (body.empty()) return {};
  return {{"POST", "/admin/strategy", body}};
}

CommandLogs ReplicasTarget::apply(const Treatment& t) {
  const std::string body = strategy_body(t, spec_);
  CommandLogs commands = collect_commands([&](CommandLogs& ran) {
    if (!body.empty()) admin_.post(router_.url(), "/admin/strategy", body, "applying " + body, ran);
  });
  if (!body.empty()) applied_strategy_body_ = body;
  return commands;
}

CommandLogs ReplicasTarget::wait_ready() {
  const ReadinessSpec& r = spec_.target.readiness;
  std::vector<std::string> roots;
  for (const auto& url : spec_.target.upstreams) roots.push_back(server_root(url));
  wait_healthy(roots, r.pods_s, r.poll_s, *log_);
  wait_model_listed(router_.url(), spec_.model, r.models_s, r.poll_s, *log_);
  wait_completion(router_.url(), spec_.model, r.completion_s, r.poll_s, *log_);
  return {};
}

CommandLogs ReplicasTarget::make_cold() {
  reset_prefix_caches({router_.url()}, kResetTimeoutS, *log_);
  if (!runs_epp(applied_strategy_body_)) return {};
  return collect_commands([&](CommandLogs& ran) {
    admin_.post(router_.url(), "/admin/strategy", applied_strategy_body_,
                "cold: the endpoint picker built afresh, its prefix index empty", ran);
  });
}

Endpoints ReplicasTarget::endpoints() const {
  Endpoints endpoints;
  endpoints.base_url = router_.url();
  endpoints.metrics_urls = spec_.target.metrics.urls;
  if (endpoints.metrics_urls.empty()) {
    for (const auto& url : spec_.target.upstreams) {
      endpoints.metrics_urls.push_back(server_root(url) + spec_.target.metrics.path);
    }
  }
  // kvsweep's proxy runs the EPP configurations: its /metrics carries the EPP's series then.
  if (!spec_.epp_configs.empty()) endpoints.metrics_urls.push_back(router_.url() + "/metrics");
  return endpoints;
}

CommandLogs ReplicasTarget::cell_finished() { return admin_.health_events(router_.url()); }

}  // namespace kvsweep::orchestrator
