// The predicted target: the scenario's simulated fleet run in virtual time in this process.
#include "orchestrator/targets/predict_target.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "common/join.h"
#include "orchestrator/scenario/epp_settings.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/strategy_names.h"
#include "orchestrator/targets/router_admin_client.h"
#include "orchestrator/targets/target_kinds.h"
#include "sim/engine/profile.h"

namespace kvsweep::orchestrator {
namespace {

std::optional<bool> on_off(const std::string& level) {
  if (level == "on" || level == "true" || level == "enabled") return true;
  if (level == "off" || level == "false" || level == "disabled") return false;
  return std::nullopt;
}

sim::TimingProfile find_profile_or_throw(const std::string& name) {
  std::string error;
  std::optional<sim::TimingProfile> profile = sim::find_profile(name, {}, &error);
  if (profile) return *profile;
  if (!error.empty()) throw TargetError("profile \"" + name + "\": " + error);
  throw TargetError("profile: unknown \"" + name + "\"; valid: " + join(sim::profile_names()));
}

// A router knob's level as the sim's admin API takes it (sim/router/router_admin.cc): KubeAI's
// meanLoadFactor in percent (>= 100), whole replication and prefix lengths (>= 1), Dynamo's
// weight and temperature (>= 0). Throws TargetError otherwise.
void set_knob(const std::string& factor, const std::string& level, sim::StrategyParams& p) {
  const double value = *number_level(level);  // checked by check_router_levels
  const bool whole = value == std::trunc(value) && std::abs(value) < 1e9;
  auto fail = [&](const std::string& expected) {
    throw TargetError("factor " + factor + ": level \"" + level + "\": expected " + expected);
  };
  if (factor == "mean_load_factor") {
    if (value < 100) fail("a percentage >= 100");
    p.chwbl.mean_load_factor = value / 100;
  } else if (factor == "replication") {
    if (!whole || value < 1) fail("an integer >= 1");
    p.chwbl.virtual_nodes = static_cast<int>(value);
  } else if (factor == "prefix_char_length") {
    if (!whole || value < 1) fail("an integer >= 1");
    p.chwbl.prefix_chars = static_cast<int>(value);
  } else if (factor == "overlap_score_weight") {
    if (value < 0) fail("a number >= 0");
    p.kv_aware.overlap_weight = value;
  } else if (factor == "router_temperature") {
    if (value < 0) fail("a number >= 0");
    p.kv_aware.temperature = value;
  }
}

predict::VirtualFleetOptions fleet_options(const ScenarioSpec& spec,
                                           std::optional<sim::TimingProfile> profile) {
  predict::VirtualFleetOptions options;
  options.replicas = spec.target.sim.replicas;
  options.profile = profile ? std::move(*profile) : find_profile_or_throw(spec.target.sim.profile);
  options.model = spec.model;
  options.seed = spec.seed;
  return options;
}

}  // namespace

PredictTarget::PredictTarget(const ScenarioSpec& spec, const std::vector<CellPlan>& plan,
                             double network_latency_s, Log log,
                             std::optional<sim::TimingProfile> profile)
    : spec_(spec), log_(std::move(log)) {
  const std::vector<std::string>& applies = target_kind("predict").factors;
  // Every knob the plan's treatments set (a cluster scenario's arms through their sim
  // stand-ins, as a rehearsal), with every level it gets.
  std::map<std::string, std::vector<std::string>> levels;
  for (const auto& cell : plan) {
    for (const auto& [knob, level] : cell.treatment.levels) {
      auto& seen = levels[knob];
      if (std::find(seen.begin(), seen.end(), level) == seen.end()) seen.push_back(level);
    }
  }
  for (const auto& [knob, knob_levels] : levels) {
    if (std::find(applies.begin(), applies.end(), knob) == applies.end()) {
      throw TargetError("factor " + knob + ": the predicted fleet cannot apply it " +
                        "(it applies: " + join(applies) + ")");
    }
    check_router_levels(knob, knob_levels, "the predicted fleet", spec);
    for (const auto& level : knob_levels) {
      if (knob == "prefix_caching" && !on_off(level)) {
        throw TargetError("factor prefix_caching: level \"" + level + "\" is not on or off");
      }
      if (is_router_knob(knob)) {
        sim::StrategyParams scratch;
        set_knob(knob, level, scratch);
      }
    }
  }
  if (!(network_latency_s >= 0) || !std::isfinite(network_latency_s)) {
    throw TargetError("network latency: expected a duration >= 0");
  }
  load_options_.network_latency_s = network_latency_s;
  load_options_.sample_interval_s = spec.target.metrics.interval_s;
  try {
    fleet_ = std::make_unique<predict::VirtualFleet>(fleet_options(spec, std::move(profile)));
  } catch (const std::invalid_argument& e) {
    throw TargetError(std::string("the predicted fleet: ") + e.what());
  }
}

PredictTarget::~PredictTarget() = default;

std::string PredictTarget::describe() const {
  std::string text = "predict x" + std::to_string(spec_.target.sim.replicas) + " (" +
                     fleet_->profile().name + ", virtual time";
  if (load_options_.network_latency_s > 0) {
    text += ", network " +
            std::to_string(
                static_cast<long long>(std::llround(load_options_.network_latency_s * 1e6))) +
            " us each way";
  }
  return text + ")";
}

CommandLogs PredictTarget::start() { return {}; }

PredictTarget::Settings PredictTarget::settings_for(const Treatment& t) const {
  Settings s;
  s.strategy = fleet_->router().strategy();
  for (const auto& [factor, level] : t.levels) {
    if (factor == "strategy") {
      if (const auto epp = epp_config_for(spec_, t, level)) {
        s.strategy = "epp";
        s.params.epp = epp->config;
      } else {
        s.strategy = *canonical_strategy(level);
      }
    }
    if (factor == "prefix_caching") s.prefix_caching = on_off(level);
  }
  return s;
}

bool PredictTarget::changes_deploy_factor(const Treatment& previous, const Treatment& next) const {
  for (const auto& [factor, level] : next.levels) {
    const FactorSpec* spec = spec_.factor(factor);
    const std::string* before = previous.find(factor);
    if (spec && spec->phase == FactorPhase::kDeploy && (!before || *before != level)) return true;
  }
  return false;
}

std::vector<std::vector<std::string>> PredictTarget::planned_commands(const Treatment* previous,
                                                                      const Treatment& next) const {
  std::vector<std::vector<std::string>> commands;
  for (const auto& [factor, level] : next.levels) {
    commands.push_back({"predict", "set", factor + "=" + level});
  }
  if (previous != nullptr && changes_deploy_factor(*previous, next)) {
    commands.push_back({"predict", "restart"});
  }
  return commands;
}

CommandLogs PredictTarget::apply(const Treatment& t) {
  const Settings s = settings_for(t);
  // As the sim target: the engine flag, then the strategy (only when the treatment sets it or
  // a knob: a new strategy starts with empty state), then the restart of a redeploy. Knobs
  // stay as last set, as the router keeps them between patches.
  bool routing = false;
  sim::StrategyParams params = params_;
  for (const auto& [factor, level] : t.levels) {
    if (factor == "strategy") {
      routing = true;
      params.epp = s.params.epp;  // the EPP configuration a level names, else none
    }
    if (is_router_knob(factor)) {
      set_knob(factor, level, params);
      routing = true;
    }
  }
  CommandLogs commands;
  auto log = [&](std::vector<std::string> argv) {
    log_->debug("predict: {}", join(argv, " "));
    CommandLog c;
    c.step = "apply";
    c.argv = std::move(argv);
    c.exit_code = 0;
    commands.push_back(std::move(c));
  };
  if (s.prefix_caching) fleet_->set_prefix_caching(*s.prefix_caching);
  if (routing) {
    fleet_->set_strategy(s.strategy, params);
    params_ = params;
  }
  for (const auto& [factor, level] : t.levels) log({"predict", "set", factor + "=" + level});
  if (applied_ && changes_deploy_factor(*applied_, t)) {
    fleet_->restart();
    log({"predict", "restart"});
  }
  applied_ = t;
  return commands;
}

CommandLogs PredictTarget::wait_ready() { return {}; }

CommandLogs PredictTarget::make_cold() {
  fleet_->reset_prefix_caches();
  // llm-d's endpoint picker keeps its prefix index in memory, its own routing history: the llmd
  // target restarts it for a cold cell, so the picker is built afresh here too.
  if (fleet_->router().strategy() != "epp") return {};
  fleet_->set_strategy("epp", params_);
  CommandLog c;
  c.step = "cold";
  c.argv = {"predict", "set", "strategy=epp", "(the endpoint picker built afresh)"};
  c.exit_code = 0;
  return {c};
}

Endpoints PredictTarget::endpoints() const {
  Endpoints endpoints;
  endpoints.base_url = "predict://fleet";  // never dialled: run_load is the load step
  return endpoints;
}

driver::LoadResult PredictTarget::run_load(
    const driver::LoadOptions& options, const driver::Workload& workload,
    const std::function<void(const driver::Progress&)>& on_progress) {
  const auto before = fleet_->routing_opportunity();
  predict::VirtualLoadResult result =
      predict::run_virtual_load(*fleet_, options, workload, load_options_, on_progress);
  samples_ = std::move(result.samples);
  if (before) last_opportunity_ = *fleet_->routing_opportunity() - *before;
  return std::move(result.load);
}

std::vector<store::MetricSample> PredictTarget::measured_samples() { return std::move(samples_); }

}  // namespace kvsweep::orchestrator
