#include "orchestrator/calibrate/stored_replay.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <utility>

#include "common/error_kinds.h"
#include "common/join.h"
#include "orchestrator/scenario/strategy_names.h"
#include "orchestrator/sweep/predict_wiring.h"
#include "orchestrator/sweep/runner.h"
#include "orchestrator/targets/predict_target.h"

namespace kvsweep::orchestrator {
namespace {

// An open loop's schedule as offsets from its first due time: the run's epoch is a wall time,
// the replay's a virtual one.
constexpr double kScheduleToleranceS = 1e-3;

struct Traffic {
  std::vector<std::pair<int, int>> turns;  // (conversation, turn), sorted
  std::vector<double> schedule;            // sorted offsets; empty for a closed loop
  bool conversations = false;              // some request was a later turn
  // Each (conversation, turn)'s prompt fingerprint, where recorded (rows of schema 13 on).
  std::map<std::pair<int, int>, std::uint64_t> fingerprints;
};

Traffic traffic_of(const std::vector<store::RequestRow>& rows) {
  Traffic t;
  for (const auto& r : rows) {
    if (r.warmup) continue;
    t.turns.emplace_back(r.conversation, r.turn);
    t.conversations = t.conversations || r.turn > 0;
    if (r.scheduled_s >= 0) t.schedule.push_back(r.scheduled_s);
    if (r.prompt_hash != 0) t.fingerprints[{r.conversation, r.turn}] = r.prompt_hash;
  }
  std::sort(t.turns.begin(), t.turns.end());
  std::sort(t.schedule.begin(), t.schedule.end());
  for (std::size_t i = t.schedule.size(); i-- > 0;) t.schedule[i] -= t.schedule.front();
  return t;
}

// "" when every (conversation, turn) both sent, with a fingerprint on both sides, asked the
// same text; else the first that did not. Compared for closed loops too: which turns a closed
// loop reaches depends on timing, what each turn asks does not.
std::string prompt_difference(const Traffic& run, const Traffic& replay) {
  for (const auto& [turn, hash] : run.fingerprints) {
    const auto other = replay.fingerprints.find(turn);
    if (other == replay.fingerprints.end() || other->second == hash) continue;
    return "conversation " + std::to_string(turn.first) + " turn " + std::to_string(turn.second) +
           " asked another prompt in the replay than in the run (its fingerprint differs)";
  }
  return "";
}

// "" when the two sent the same traffic, else what differs first.
std::string traffic_difference(const Traffic& run, const Traffic& replay) {
  if (run.turns.size() != replay.turns.size()) {
    return "the run sent " + std::to_string(run.turns.size()) + " measured requests, the replay " +
           std::to_string(replay.turns.size());
  }
  if (run.schedule.empty() && (run.conversations || replay.conversations)) return "";
  for (std::size_t i = 0; i < run.turns.size(); ++i) {
    if (run.turns[i] != replay.turns[i]) {
      const auto& [c, t] = run.turns[i];
      return "the run sent conversation " + std::to_string(c) + " turn " + std::to_string(t) +
             " where the replay sent conversation " + std::to_string(replay.turns[i].first) +
             " turn " + std::to_string(replay.turns[i].second);
    }
  }
  if (run.schedule.size() != replay.schedule.size()) {
    return "the run scheduled " + std::to_string(run.schedule.size()) + " requests, the replay " +
           std::to_string(replay.schedule.size());
  }
  for (std::size_t i = 0; i < run.schedule.size(); ++i) {
    if (std::abs(run.schedule[i] - replay.schedule[i]) > kScheduleToleranceS) {
      return "request " + std::to_string(i + 1) + " of the schedule was due at +" +
             std::to_string(run.schedule[i]) + " s in the run, +" +
             std::to_string(replay.schedule[i]) + " s in the replay";
    }
  }
  return "";
}

}  // namespace

ReplayResult replay_stored_run(store::Store& store, const StoredRun& run,
                               const ReplayOptions& options, SweepOutput& output) {
  std::optional<std::string> strategy;
  if (!options.strategy.empty()) {
    strategy = canonical_strategy(options.strategy);
    if (!strategy) {
      throw UsageError("--strategy " + options.strategy +
                       ": unknown; valid: " + join(known_strategy_spellings()));
    }
  }
  if (options.replicas < 0) throw UsageError("--replicas: expected at least 1");
  ScenarioSpec spec = run.spec;
  if (options.replicas > 0) spec.target.sim.replicas = options.replicas;
  const sim::TimingProfile* profile = options.profile ? &*options.profile : nullptr;
  ReplayResult result;
  result.fleet = (strategy ? *strategy : std::string("each cell's own strategy")) + " on " +
                 std::to_string(spec.target.sim.replicas) + " replicas (profile " +
                 (profile ? profile->name : spec.target.sim.profile) + ")";
  spec.name = run.spec.name + "-replay";
  spec.text = "# kvsweep replay of experiment " + std::to_string(run.experiment.id) + ": " +
              result.fleet + "\n" + run.spec.text;

  std::vector<CellPlan> plan;
  for (const auto& cell : run.cells) {
    CellPlan p = cell.plan;
    if (strategy) {
      auto& levels = p.treatment.levels;
      const auto at = std::find_if(levels.begin(), levels.end(),
                                   [](const auto& l) { return l.first == "strategy"; });
      if (at != levels.end()) {
        at->second = *strategy;
      } else {
        levels.emplace_back("strategy", *strategy);
      }
      if (p.arm != *strategy) p.arm = *strategy + " (was " + p.arm + ")";
    }
    p.key = scenario_hash(spec.text, "predict") + ":" + cell.plan.key;
    plan.push_back(std::move(p));
  }

  std::map<std::string, std::int64_t> replay_cell_of;  // plan key -> the replay's cell id
  // Each measured phase's routing opportunity, in the order the phases ran (plan order).
  std::vector<std::optional<predict::RoutingOpportunity>> opportunities;
  {
    PredictTarget target(spec, plan, 0, silent_log(), options.profile);
    target.track_routing_opportunity();
    RunnerOptions runner;
    wire_predict_target(target, runner);
    runner.stop = options.stop;
    runner.measured_samples = [&target, &opportunities] {
      opportunities.push_back(target.last_routing_opportunity());
      return target.measured_samples();
    };
    const SweepOutcome outcome = run_sweep(spec, plan, target, store, output, runner);
    result.experiment_id = outcome.experiment_id;
    for (const auto& cell : store.cells(outcome.experiment_id)) {
      replay_cell_of[cell.key] = cell.id;
    }
  }
  const std::map<std::int64_t, figures::CellMetrics> replayed =
      cell_figures(store, result.experiment_id);
  const bool run_pruned = store.prune_mark(run.experiment.id).has_value();
  for (std::size_t i = 0; i < run.cells.size(); ++i) {
    const CalibrationCell& cell = run.cells[i];
    ReplayedCell out;
    out.label = cell.label;
    out.arm = cell.plan.arm;
    out.measured = cell.measured;
    // Every cell measured: the phases map onto the cells one to one. (A cell that failed
    // before its measured phase shifts them: then none is shown rather than a wrong one.)
    if (opportunities.size() == run.cells.size()) out.opportunity = opportunities[i];
    const auto id = replay_cell_of.find(plan[i].key);
    if (id != replay_cell_of.end()) {
      const auto m = replayed.find(id->second);
      if (m != replayed.end() && m->second.ok > 0) out.replayed = figures_of(m->second);
    }
    result.cells.push_back(std::move(out));
    if (run_pruned) {
      result.traffic_unchecked.push_back(cell.label + ": the run's request rows were pruned");
      continue;
    }
    if (id == replay_cell_of.end()) continue;
    const Traffic sent = traffic_of(store.requests(cell.cell_id));
    const Traffic replayed_traffic = traffic_of(store.requests(id->second));
    // What each turn asked is compared in every cell, whatever bounded it.
    if (const std::string prompts = prompt_difference(sent, replayed_traffic); !prompts.empty()) {
      result.traffic_differs.push_back(cell.label + ": " + prompts);
      continue;
    }
    if (sent.fingerprints.empty() && !sent.turns.empty()) result.prompts_unrecorded = true;
    if (cell.plan.load.num_requests == 0) {
      result.traffic_unchecked.push_back(cell.label +
                                         ": bounded by duration, so its count is the server's");
      continue;
    }
    // A cell bounded by a count and a duration ends at whichever comes first: when the
    // duration ended either, its count was the servers' speed, not the traffic.
    const auto wanted = static_cast<std::size_t>(cell.plan.load.num_requests);
    if (cell.plan.load.duration_s > 0 &&
        (sent.turns.size() < wanted || replayed_traffic.turns.size() < wanted)) {
      result.traffic_unchecked.push_back(
          cell.label + ": its duration ended it (" + std::to_string(sent.turns.size()) +
          " requests in the run, " + std::to_string(replayed_traffic.turns.size()) +
          " in the replay, of " + std::to_string(wanted) + "), so its count is the servers'");
      continue;
    }
    const std::string differs = traffic_difference(sent, replayed_traffic);
    if (!differs.empty()) {
      result.traffic_differs.push_back(cell.label + ": " + differs);
    } else if (sent.schedule.empty() && (sent.conversations || replayed_traffic.conversations)) {
      result.traffic_unchecked.push_back(
          cell.label +
          ": a closed loop of conversations, whose next turn depends on which user "
          "is free first: only its count and each turn's prompt were compared");
    }
  }
  return result;
}

}  // namespace kvsweep::orchestrator
