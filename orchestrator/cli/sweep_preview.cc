// What `run` and `plan` say up front: the sweep's shape, and what every cell does.
#include "orchestrator/cli/sweep_preview.h"

#include <cstdio>

#include "figures/slo_attainment.h"
#include "orchestrator/cli/dataset_preview.h"

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
  if (spec.search.enabled()) {
    // The probes are decided as the search goes: say what is searched, not a cell count.
    const SearchSpec& s = spec.search;
    std::string slo;
    for (const SloRequirement& q : spec.slo.requirements) {
      slo += (slo.empty() ? "" : ", ") + figures::requirement_label(q);
    }
    return "search " + spec.name + ": the capacity of " + std::to_string(cells.size()) + " arm" +
           (cells.size() == 1 ? "" : "s") + " in " + s.factor + " from " + format_number(s.low) +
           " to " + format_number(s.high) + " within " + format_number(s.precision * 100) +
           "%, guide " + (s.guide == SearchGuide::kNone ? "none" : "predict") +
           (spec.slo.empty()
                ? ", no SLO: the knee (throughput per unit of load under " +
                      format_number(s.knee_efficiency * 100) + "% of the lightest load's)"
                : ", SLO " + slo + " at " + format_number(spec.slo.confidence * 100) +
                      "% confidence") +
           (s.min_probe_s > 0 && (s.factor == "load.request_rate" || spec.load.request_rate > 0)
                ? ", each probe at least " + format_seconds(s.min_probe_s) + " of arrivals"
                : "") +
           "; " + std::to_string(deployments) + " deployment" + (deployments == 1 ? "" : "s") +
           ", target " + target;
  }
  return "sweep " + spec.name + ": " + std::to_string(cells.size()) + " cells (" + shape + "), " +
         std::to_string(deployments) + " deployment" + (deployments == 1 ? "" : "s") + ", target " +
         target;
}

// What every cell does, so a rehearsal's cuts are in plain sight.
bool shards_run_as_job(const ScenarioSpec& spec) {
  const std::string& runner = spec.load.shard_job.runner;
  const std::string& kind = spec.target.kind;
  return runner == "job" ||
         (runner.empty() && (kind == "kubeai" || kind == "dynamo" || kind == "kubectl"));
}

std::string cell_shape(const ScenarioSpec& spec, bool rehearsal) {
  const LoadSpec& l = spec.load;
  const auto by_factor = [&spec](const char* path) { return spec.factor_setting(path) != nullptr; };
  std::string text = "each cell: ";
  const bool requests = l.num_requests > 0 || by_factor("load.num_requests");
  const bool duration = l.duration_s > 0 || by_factor("load.duration");
  if (requests) {
    text += by_factor("load.num_requests") ? "requests by factor"
                                           : std::to_string(l.num_requests) + " requests";
  }
  if (requests && duration) text += " or ";
  if (duration)
    text += by_factor("load.duration") ? "duration by factor" : format_seconds(l.duration_s);
  if (requests && duration) text += ", whichever ends first";
  const bool open = l.request_rate > 0 || by_factor("load.request_rate");
  if (!open && l.dataset.kind == "mooncake") {
    // cell_load_options.h: a trace without a rate is sent on its own times (its generated
    // stand_in, which has none, as a closed loop).
    text += "; open loop on the trace's own arrival times";
  } else if (open) {
    text += by_factor("load.request_rate")
                ? "; open loop at each cell's rate"
                : "; open loop at " + format_number(l.request_rate) + " req/s";
    text += by_factor("load.turns")                              ? ", turns by factor"
            : l.turns == driver::LoadOptions::Turns::kSequential ? ", turns sequential"
                                                                 : ", turns independent";
  } else {
    text += "; closed loop";
  }
  if (l.think_time_s > 0) text += ", think time " + format_seconds(l.think_time_s);
  text += "; max_tokens " + max_tokens_text(l.dataset, by_factor("load.max_tokens")
                                                           ? std::string("by factor")
                                                           : std::to_string(l.max_tokens));
  if (l.max_tokens_cap > 0) text += " (capped at " + std::to_string(l.max_tokens_cap) + ")";
  text +=
      "; cache " + std::string(by_factor("load.cache") ? "by factor" : cache_policy_name(l.cache));
  if (l.cache == CachePolicy::kWarm && l.warm_passes > 1) {
    text += " (" + std::to_string(l.warm_passes) + " unmeasured passes first)";
  }
  if (l.warmup_requests > 0)
    text += "; " + std::to_string(l.warmup_requests) +
            (l.warmup_requests == 1 ? " warm-up request" : " warm-up requests");
  if (l.new_connection_per_request) text += "; a new connection per request";
  if (l.threads > 0) text += "; " + std::to_string(l.threads) + " driver threads";
  if (l.shards > 1) {
    text += "; measured phase in " + std::to_string(l.shards) + " load shards (" +
            (shards_run_as_job(spec) ? "pods of an Indexed Job" : "local processes") +
            "; each holds ceil(cap / " + std::to_string(l.shards) + ") of a cap)";
  }
  const SimSpec& sim = spec.target.sim;
  if (rehearsal && (sim.duration_s > 0 || sim.num_requests > 0 || sim.max_tokens > 0)) {
    text += "  [cut by target.sim for the rehearsal]";
  }
  return text;
}

std::vector<std::string> factor_lines(const ScenarioSpec& spec) {
  std::vector<std::string> lines;
  for (const auto& f : spec.factors) {
    std::string line = "factor " + f.name + " (" +
                       (f.phase == FactorPhase::kDeploy ? "deploy-time" : "run-time") + "): ";
    for (std::size_t i = 0; i < f.levels.size(); ++i) {
      const FactorLevel& level = f.levels[i];
      line += (i == 0 ? "" : ", ") + level.label;
      std::string sets;
      for (const auto& s : level.settings) {
        if (s.path == f.path) continue;
        sets += (sets.empty() ? "" : ", ") + s.path + ": " + s.value;
      }
      if (!sets.empty()) line += " {" + sets + "}";
    }
    lines.push_back(line);
  }
  return lines;
}

}  // namespace kvsweep::orchestrator
