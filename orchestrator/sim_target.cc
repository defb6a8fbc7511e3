// The embedded target: a simulated fleet started in this process on loopback.
#include "orchestrator/sim_target.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "driver/http_fetch.h"
#include "orchestrator/readiness.h"
#include "orchestrator/strategy_names.h"

namespace kvsweep::orchestrator {
namespace {

constexpr double kAdminTimeoutS = 10;
// The fleet runs in this process: a gate that is not open within a minute never will be.
constexpr double kMaxGateS = 60;
constexpr double kPollS = 0.05;

// Factor name -> the admin parameter it sets on the router (/admin/strategy).
const std::vector<std::pair<std::string, std::string>>& router_knobs() {
  static const std::vector<std::pair<std::string, std::string>> knobs = {
      {"mean_load_factor", "meanLoadFactor"},
      {"prefix_char_length", "prefixCharLength"},
      {"replication", "replication"},
      {"overlap_score_weight", "overlap_score_weight"},
      {"router_temperature", "router_temperature"},
  };
  return knobs;
}

std::optional<bool> on_off(const std::string& level) {
  if (level == "on" || level == "true" || level == "enabled") return true;
  if (level == "off" || level == "false" || level == "disabled") return false;
  return std::nullopt;
}

std::optional<double> number(const std::string& level) {
  try {
    std::size_t used = 0;
    const double value = std::stod(level, &used);
    if (used == level.size() && std::isfinite(value)) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

sim::FleetOptions fleet_options(const ScenarioSpec& spec) {
  sim::FleetOptions options;
  options.replicas = spec.target.sim.replicas;
  options.profile = spec.target.sim.profile;
  options.model = spec.model;
  options.seed = spec.seed;
  return options;
}

std::string known_factors() {
  std::string text = "strategy, prefix_caching";
  for (const auto& [factor, param] : router_knobs()) text += ", " + factor;
  return text;
}

}  // namespace

SimTarget::SimTarget(const ScenarioSpec& spec, Log log)
    : spec_(spec), log_(std::move(log)), fleet_(fleet_options(spec)) {
  for (const auto& factor : spec.factors) {
    if (is_load_factor(factor.name)) continue;
    const bool knob = std::any_of(router_knobs().begin(), router_knobs().end(),
                                  [&](const auto& k) { return k.first == factor.name; });
    if (!knob && factor.name != "strategy" && factor.name != "prefix_caching") {
      throw TargetError("factor " + factor.name + ": the simulated fleet cannot apply it " +
                        "(it applies: " + known_factors() + ")");
    }
    for (const auto& level : factor.levels) {
      if (factor.name == "strategy" && !canonical_strategy(level)) {
        throw TargetError("factor strategy: the simulated fleet has no strategy \"" + level +
                          "\" (it has: random, round-robin, least-load, prefix-hash, kv-aware, "
                          "session, under KubeAI's and Dynamo's names too)");
      }
      if (factor.name == "prefix_caching" && !on_off(level)) {
        throw TargetError("factor prefix_caching: level \"" + level + "\" is not on or off");
      }
      if (knob && !number(level)) {
        throw TargetError("factor " + factor.name + ": level \"" + level +
                          "\" is not a finite number");
      }
    }
  }
}

SimTarget::~SimTarget() = default;

// An admin request, kept as the cell's command log like a kubectl call: argv is the method,
// URL and body; exit 0 for HTTP 200, else 1; out is the status line and the answer.
void SimTarget::post_or_throw(const std::string& url, const std::string& body,
                              const std::string& what) {
  log_->debug("POST {} {}", url, body);
  const auto started = std::chrono::steady_clock::now();
  const auto r = driver::http_post_json(url, body, kAdminTimeoutS);
  CommandLog log;
  log.step = "apply";
  log.argv = {"POST", url, body};
  log.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  log.exit_code = r.error.empty() && r.status == 200 ? 0 : 1;
  log.out = r.error.empty() ? "HTTP " + std::to_string(r.status) + ": " + r.body : "";
  log.err = r.error;
  log_->debug("POST {}: {} in {:.3f} s", url,
              r.error.empty() ? "HTTP " + std::to_string(r.status) : r.error, log.seconds);
  logs_.push_back(std::move(log));
  if (!r.error.empty()) throw TargetError(what + ": " + url + ": " + r.error);
  if (r.status != 200) {
    throw TargetError(what + ": " + url + ": HTTP " + std::to_string(r.status) + ": " +
                      r.body.substr(0, 300));
  }
}

std::vector<CommandLog> SimTarget::take_logs() { return std::exchange(logs_, {}); }

std::string SimTarget::describe() const {
  return "sim x" + std::to_string(spec_.target.sim.replicas) + " (" + spec_.target.sim.profile +
         ")";
}

void SimTarget::start() { fleet_.start(); }

SimTarget::Requests SimTarget::requests_for(const Treatment& t) const {
  nlohmann::json strategy = nlohmann::json::object();
  nlohmann::json engine = nlohmann::json::object();
  for (const auto& [factor, level] : t.levels) {
    if (factor == "strategy") strategy["strategy"] = *canonical_strategy(level);
    if (factor == "prefix_caching") engine["enable_prefix_caching"] = *on_off(level);
    for (const auto& [knob, param] : router_knobs()) {
      if (factor != knob) continue;
      const double value = *number(level);
      // Whole numbers go as JSON integers (the router reads replication as one); the range
      // check keeps the conversion defined.
      if (std::abs(value) < 1e15 && value == std::trunc(value)) {
        strategy[param] = static_cast<long long>(value);
      } else {
        strategy[param] = value;
      }
    }
  }
  return {strategy.empty() ? "" : strategy.dump(), engine.empty() ? "" : engine.dump()};
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
    post_or_throw(router + "/admin/engine", r.engine_body, "applying " + r.engine_body);
  }
  if (!r.strategy_body.empty()) {
    post_or_throw(router + "/admin/strategy", r.strategy_body, "applying " + r.strategy_body);
  }
  // The first apply follows a fresh start: there is nothing to redeploy yet.
  if (applied_ && changes_deploy_factor(*applied_, t)) {
    post_or_throw(router + "/admin/restart", "{}", "redeploying");
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
