// The embedded target: a simulated fleet started in this process on loopback.
#include "orchestrator/targets/sim_target.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "orchestrator/targets/readiness.h"

namespace kvsweep::orchestrator {
namespace {

constexpr double kAdminTimeoutS = 10;
// The fleet runs in this process: a gate that is not open within a minute never will be.
constexpr double kMaxGateS = 60;
constexpr double kPollS = 0.05;

std::optional<bool> on_off(const std::string& level) {
  if (level == "on" || level == "true" || level == "enabled") return true;
  if (level == "off" || level == "false" || level == "disabled") return false;
  return std::nullopt;
}

sim::FleetOptions fleet_options(const ScenarioSpec& spec) {
  sim::FleetOptions options;
  options.replicas = spec.target.sim.replicas;
  options.profile = spec.target.sim.profile;
  options.model = spec.model;
  options.seed = spec.seed;
  // A stand-in (--target sim) checks its replicas as the real kind's router would: the
  // scenario's target.health when its kind has one, else the defaults.
  options.health.probe_interval =
      std::chrono::milliseconds(static_cast<std::int64_t>(spec.target.health.interval_s * 1000));
  options.health.failure_threshold = spec.target.health.failures;
  return options;
}

std::string known_factors() {
  std::string text = "strategy, prefix_caching";
  for (const auto& [factor, param] : router_knobs()) text += ", " + factor;
  return text;
}

}  // namespace

SimTarget::SimTarget(const ScenarioSpec& spec, Log log)
    : spec_(spec), log_(std::move(log)), fleet_(fleet_options(spec)), admin_(log_) {
  for (const auto& factor : spec.factors) {
    if (is_load_factor(factor.name)) continue;
    if (!is_router_knob(factor.name) && factor.name != "strategy" &&
        factor.name != "prefix_caching") {
      throw TargetError("factor " + factor.name + ": the simulated fleet cannot apply it " +
                        "(it applies: " + known_factors() + ")");
    }
    check_router_levels(factor, "the simulated fleet");
    for (const auto& level : factor.levels) {
      if (factor.name == "prefix_caching" && !on_off(level)) {
        throw TargetError("factor prefix_caching: level \"" + level + "\" is not on or off");
      }
    }
  }
}

SimTarget::~SimTarget() = default;

std::vector<CommandLog> SimTarget::take_logs() { return admin_.take_logs(fleet_.router_url()); }

std::string SimTarget::describe() const {
  return "sim x" + std::to_string(spec_.target.sim.replicas) + " (" + spec_.target.sim.profile +
         ")";
}

void SimTarget::start() { fleet_.start(); }

SimTarget::Requests SimTarget::requests_for(const Treatment& t) const {
  nlohmann::json engine = nlohmann::json::object();
  for (const auto& [factor, level] : t.levels) {
    if (factor == "prefix_caching") engine["enable_prefix_caching"] = *on_off(level);
  }
  return {strategy_body(t), engine.empty() ? "" : engine.dump()};
}

bool SimTarget::changes_deploy_factor(const Treatment& previous, const Treatment& next) const {
  for (const auto& [factor, level] : next.levels) {
    const FactorSpec* spec = spec_.factor(factor);
    const std::string* before = previous.find(factor);
    if (spec && spec->phase == FactorPhase::kDeploy && (!before || *before != level)) return true;
  }
  return false;
}

std::vector<std::vector<std::string>> SimTarget::planned_commands(const Treatment& t) const {
  std::vector<std::vector<std::string>> commands;
  const Requests r = requests_for(t);
  if (!r.engine_body.empty()) commands.push_back({"POST", "/admin/engine", r.engine_body});
  if (!r.strategy_body.empty()) commands.push_back({"POST", "/admin/strategy", r.strategy_body});
  return commands;
}

std::vector<std::vector<std::string>> SimTarget::planned_redeploy(const Treatment& previous,
                                                                  const Treatment& next) const {
  if (!changes_deploy_factor(previous, next)) return {};
  return {{"POST", "/admin/restart", "{}"}};
}

void SimTarget::apply(const Treatment& t) {
  const Requests r = requests_for(t);
  const std::string router = fleet_.router_url();
  if (!r.engine_body.empty()) {
    admin_.post(router, "/admin/engine", r.engine_body, "applying " + r.engine_body);
  }
  if (!r.strategy_body.empty()) {
    admin_.post(router, "/admin/strategy", r.strategy_body, "applying " + r.strategy_body);
  }
  // The first apply follows a fresh start: there is nothing to redeploy yet.
  if (applied_ && changes_deploy_factor(*applied_, t)) {
    admin_.post(router, "/admin/restart", "{}", "redeploying");
  }
  applied_ = t;
}

void SimTarget::wait_ready() {
  const ReadinessSpec& r = spec_.target.readiness;
  std::vector<std::string> urls = fleet_.replica_urls();
  urls.insert(urls.begin(), fleet_.router_url());
  wait_healthy(urls, std::min(r.pods_s, kMaxGateS), kPollS, *log_);
  wait_model_listed(fleet_.router_url(), spec_.model, std::min(r.models_s, kMaxGateS), kPollS,
                    *log_);
  wait_completion(fleet_.router_url(), spec_.model, std::min(r.completion_s, kMaxGateS), kPollS,
                  *log_);
}

void SimTarget::make_cold() { reset_prefix_caches(fleet_.replica_urls(), kAdminTimeoutS, *log_); }

std::string SimTarget::base_url() const { return fleet_.router_url(); }

std::vector<std::string> SimTarget::metrics_urls() const {
  std::vector<std::string> urls;
  for (const auto& url : fleet_.replica_urls()) urls.push_back(url + "/metrics");
  return urls;
}

}  // namespace kvsweep::orchestrator
