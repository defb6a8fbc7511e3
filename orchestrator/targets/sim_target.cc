// The embedded target: a simulated fleet started in this process on loopback.
#include "orchestrator/targets/sim_target.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/join.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/targets/readiness.h"
#include "orchestrator/targets/target_kinds.h"

namespace kvsweep::orchestrator {
namespace {

constexpr double kSimAdminTimeoutS = 10;
// The fleet runs in this process: a gate that is not open within a minute never will be.
constexpr double kMaxGateS = 60;
constexpr double kPollS = 0.05;

std::optional<bool> sim_on_off(const std::string& level) {
  if (level == "on" || level == "true" || level == "enabled") return true;
  if (level == "off" || level == "false" || level == "disabled") return false;
  return std::nullopt;
}

sim::FleetOptions sim_fleet_options(const ScenarioSpec& spec) {
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

// A stand-in for a cluster arm with its own server (target.base_url, seed 002's plain Service)
// must be told what the fleet does in its place: nothing applied would keep the previous
// arm's strategy, a silent wrong rehearsal.
void check_stand_in_for_own_servers(const std::vector<CellPlan>& plan) {
  for (const auto& cell : plan) {
    const auto own_server =
        std::find_if(cell.settings.begin(), cell.settings.end(),
                     [](const Setting& s) { return s.path == "target.base_url"; });
    if (own_server == cell.settings.end()) continue;
    const bool told = std::any_of(cell.settings.begin(), cell.settings.end(), [](const Setting& s) {
      return s.path.rfind("target.sim.", 0) == 0;
    });
    if (told) continue;
    throw TargetError("cells " + cell.arm +
                      ": their load goes to their own server (target.base_url " +
                      own_server->value +
                      "); say what the simulated fleet does in its place with target.sim.strategy "
                      "in the same level (random stands in for a Kubernetes Service: kube-proxy "
                      "picks a pod per connection)");
  }
}

}  // namespace

SimTarget::SimTarget(const ScenarioSpec& spec, const std::vector<CellPlan>& plan, Log log)
    : spec_(spec), log_(std::move(log)), fleet_(sim_fleet_options(spec)), admin_(log_) {
  const std::vector<std::string>& applies = target_kind("sim").factors;
  const bool stand_in = spec.target.kind != "sim";
  if (stand_in) check_stand_in_for_own_servers(plan);
  std::map<std::string, std::vector<std::string>> levels;  // knob -> every level it gets
  for (const auto& cell : plan) {
    for (const auto& [knob, level] : cell.treatment.levels) {
      auto& seen = levels[knob];
      if (std::find(seen.begin(), seen.end(), level) == seen.end()) seen.push_back(level);
    }
  }
  for (const auto& [knob, knob_levels] : levels) {
    if (std::find(applies.begin(), applies.end(), knob) == applies.end()) {
      throw TargetError("factor " + knob + ": the simulated fleet cannot apply it " +
                        "(it applies: " + join(applies) + ")");
    }
    check_router_levels(knob, knob_levels, "the simulated fleet", spec);
    for (const auto& level : knob_levels) {
      if (knob == "prefix_caching" && !sim_on_off(level)) {
        throw TargetError("factor prefix_caching: level \"" + level + "\" is not on or off");
      }
    }
  }
}

SimTarget::~SimTarget() = default;

CommandLogs SimTarget::cell_finished() { return admin_.health_events(fleet_.router_url()); }

std::string SimTarget::describe() const {
  return "sim x" + std::to_string(spec_.target.sim.replicas) + " (" + spec_.target.sim.profile +
         ")";
}

CommandLogs SimTarget::start() {
  fleet_.start();
  return {};
}

SimTarget::Requests SimTarget::requests_for(const Treatment& t) const {
  nlohmann::json engine = nlohmann::json::object();
  for (const auto& [factor, level] : t.levels) {
    if (factor == "prefix_caching") engine["enable_prefix_caching"] = *sim_on_off(level);
  }
  return {strategy_body(t, spec_), engine.empty() ? "" : engine.dump()};
}

bool SimTarget::changes_deploy_factor(const Treatment& previous, const Treatment& next) const {
  for (const auto& [knob, level] : next.levels) {
    // The factor that sets the knob, or the stand-in's value of it, decides its phase.
    const FactorSpec* factor = spec_.factor_setting(knob_path(knob));
    if (factor == nullptr) factor = spec_.factor_setting("target.sim." + knob);
    const std::string* before = previous.find(knob);
    if (factor && factor->phase == FactorPhase::kDeploy && (!before || *before != level)) {
      return true;
    }
  }
  return false;
}

std::vector<std::vector<std::string>> SimTarget::planned_commands(const Treatment* previous,
                                                                  const Treatment& next) const {
  std::vector<std::vector<std::string>> commands;
  const Requests r = requests_for(next);
  if (!r.engine_body.empty()) commands.push_back({"POST", "/admin/engine", r.engine_body});
  if (!r.strategy_body.empty()) commands.push_back({"POST", "/admin/strategy", r.strategy_body});
  if (previous != nullptr && changes_deploy_factor(*previous, next)) {
    commands.push_back({"POST", "/admin/restart", "{}"});
  }
  return commands;
}

CommandLogs SimTarget::apply(const Treatment& t) {
  const Requests r = requests_for(t);
  const std::string router = fleet_.router_url();
  CommandLogs commands = collect_commands([&](CommandLogs& ran) {
    if (!r.engine_body.empty()) {
      admin_.post(router, "/admin/engine", r.engine_body, "applying " + r.engine_body, ran);
    }
    if (!r.strategy_body.empty()) {
      admin_.post(router, "/admin/strategy", r.strategy_body, "applying " + r.strategy_body, ran);
    }
    // The first apply follows a fresh start: there is nothing to redeploy yet.
    if (applied_ && changes_deploy_factor(*applied_, t)) {
      admin_.post(router, "/admin/restart", "{}", "redeploying", ran);
    }
  });
  applied_ = t;
  return commands;
}

CommandLogs SimTarget::wait_ready() {
  const ReadinessSpec& r = spec_.target.readiness;
  std::vector<std::string> urls = fleet_.replica_urls();
  urls.insert(urls.begin(), fleet_.router_url());
  wait_healthy(urls, std::min(r.pods_s, kMaxGateS), kPollS, *log_);
  wait_model_listed(fleet_.router_url(), spec_.model, std::min(r.models_s, kMaxGateS), kPollS,
                    *log_);
  wait_completion(fleet_.router_url(), spec_.model, std::min(r.completion_s, kMaxGateS), kPollS,
                  *log_);
  return {};
}

CommandLogs SimTarget::make_cold() {
  reset_prefix_caches(fleet_.replica_urls(), kSimAdminTimeoutS, *log_);
  if (!applied_) return {};
  const std::string body = requests_for(*applied_).strategy_body;
  if (!runs_epp(body)) return {};
  return collect_commands([&](CommandLogs& ran) {
    admin_.post(fleet_.router_url(), "/admin/strategy", body,
                "cold: the endpoint picker built afresh, its prefix index empty", ran);
  });
}

Endpoints SimTarget::endpoints() const {
  Endpoints endpoints;
  endpoints.base_url = fleet_.router_url();
  for (const auto& url : fleet_.replica_urls()) endpoints.metrics_urls.push_back(url + "/metrics");
  // The router publishes llm-d's EPP series while it runs an EPP configuration: scraped as the
  // llmd target scrapes the EPP's pods, so a rehearsal reports what the picker believed.
  if (!spec_.epp_configs.empty())
    endpoints.metrics_urls.push_back(fleet_.router_url() + "/metrics");
  return endpoints;
}

}  // namespace kvsweep::orchestrator
