// What `run` and `plan` say up front: the sweep's shape, and what every cell does.
#include "orchestrator/cli/sweep_preview.h"

#include <cstdio>
#include <stdexcept>

#include "orchestrator/targets/target_factory.h"

namespace kvsweep::orchestrator {
namespace {

std::string format_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string format_seconds(double s) { return format_number(s) + "s"; }

}  // namespace

std::string plan_headline(const ScenarioSpec& spec, const std::vector<CellPlan>& cells,
                          const std::string& target) {
  std::string shape;
  for (const auto& f : spec.factors) {
    shape += (shape.empty() ? "" : " x ") + std::to_string(f.levels.size()) + " " + f.name;
  }
  if (spec.repeats > 1) shape += " x " + std::to_string(spec.repeats) + " repeats";
  const int deployments = cells.empty() ? 0 : cells.back().deploy_group + 1;
  return "sweep " + spec.name + ": " + std::to_string(cells.size()) + " cells (" + shape + "), " +
         std::to_string(deployments) + " deployment" + (deployments == 1 ? "" : "s") + ", target " +
         target;
}

// What every cell does, so a rehearsal's cuts are in plain sight.
std::string cell_shape(const ScenarioSpec& spec, bool rehearsal) {
  const LoadSpec& l = spec.load;
  std::string text = "each cell: ";
  if (l.num_requests > 0) text += std::to_string(l.num_requests) + " requests";
  if (l.num_requests > 0 && l.duration_s > 0) text += " or ";
  if (l.duration_s > 0) text += format_seconds(l.duration_s);
  if (l.num_requests > 0 && l.duration_s > 0) text += ", whichever ends first";
  if (l.request_rate > 0) text += "; open loop at " + format_number(l.request_rate) + " req/s";
  text += "; max_tokens " + std::to_string(l.max_tokens);
  if (l.max_tokens_cap > 0) text += " (capped at " + std::to_string(l.max_tokens_cap) + ")";
  text += "; cache " + l.cache;
  if (l.warmup_requests > 0) text += "; " + std::to_string(l.warmup_requests) + " warm-up requests";
  const SimSpec& sim = spec.target.sim;
  if (rehearsal && (sim.duration_s > 0 || sim.num_requests > 0 || sim.max_tokens > 0)) {
    text += "  [cut by target.sim for the rehearsal]";
  }
  return text;
}

std::unique_ptr<Target> build_target(const ScenarioSpec& spec, const std::string& override_kind,
                                     const Log& log) {
  if (override_kind == "predict") return build_predict_target(spec, 0, log);
  try {
    return make_target(spec, override_kind == "sim", log);
  } catch (const TargetError& e) {
    throw std::invalid_argument(spec.path + ": " + e.what());
  }
}

std::unique_ptr<TreatmentPlanner> build_planner(const ScenarioSpec& spec,
                                                const std::string& override_kind) {
  if (override_kind == "predict") return build_predict_target(spec, 0, silent_log());
  try {
    return make_planner(spec, override_kind == "sim");
  } catch (const TargetError& e) {
    throw std::invalid_argument(spec.path + ": " + e.what());
  }
}

std::unique_ptr<PredictTarget> build_predict_target(const ScenarioSpec& spec,
                                                    double network_latency_s, const Log& log) {
  try {
    return std::make_unique<PredictTarget>(spec, network_latency_s, log);
  } catch (const TargetError& e) {
    throw std::invalid_argument(spec.path + ": " + e.what());
  }
}

}  // namespace kvsweep::orchestrator
