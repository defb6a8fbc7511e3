// `kvsweep replay`: a stored run's traffic in virtual time under another routing strategy or
// fleet size. Each cell keeps its load shape (an open loop its schedule, a closed loop its
// users and think time, conversations their turn order), regenerated from the scenario's
// dataset and seed; the replay is stored as a predicted experiment of its own and compared
// with what the run measured.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/calibrate/stored_run.h"
#include "orchestrator/sweep/sweep_output.h"
#include "predict/routing_opportunity.h"
#include "sim/engine/profile.h"
#include "store/store.h"

namespace kvsweep::orchestrator {

struct ReplayOptions {
  std::string strategy;  // a strategy level (canonical_strategy); "" = each cell's own
  int replicas = 0;      // > 0: the fleet's size; 0 = the scenario's target.sim.replicas
  std::optional<sim::TimingProfile> profile;  // nullopt: the scenario's target.sim.profile
  const std::atomic<bool>* stop = nullptr;
};

struct ReplayedCell {
  std::string label;  // the run's cell, "least-load@8"
  std::string arm;    // the run's arm
  predict::CalibrationFigures measured;
  std::optional<predict::CalibrationFigures> replayed;  // nullopt: the replay's cell failed
  // The replay's measured phase: where each prompt's blocks could have hit. The KV hit rate
  // splits into chosen_cached (hit), best - chosen (routing lost: cached on another replica),
  // computed - best (eviction lost: computed before, evicted everywhere) of prompt_blocks.
  std::optional<predict::RoutingOpportunity> opportunity;
};

struct ReplayResult {
  std::int64_t experiment_id = 0;   // the replay, a predicted experiment in the same store
  std::string fleet;                // "prefix-hash on 4 replicas (profile l4-llama3.1-8b-fp8)"
  std::vector<ReplayedCell> cells;  // run.cells' order
  // The traffic check. In every cell, each (conversation, turn) both sent asked the same
  // prompt (its fingerprint, driver::turn_fingerprint). Then, not for a cell its duration ended
  // in the run or the replay (its count is the servers' speed): each count-bounded cell's replay
  // sent as many measured requests as the run, the same conversations and turns (an open loop,
  // also on the same schedule); a closed loop of conversations has only its count compared
  // (which turn goes next depends on which user is free first). Empty: it did.
  std::vector<std::string> traffic_differs;
  std::vector<std::string> traffic_unchecked;  // cells the check could not judge, and why
  // The run's rows carry no prompt fingerprints (stored before schema 13): its conversations and
  // turns were compared, not what they asked.
  bool prompts_unrecorded = false;
};

// Runs the replay into `store` (which holds `run`) and compares it. The replay's experiment is
// named "<scenario>-replay" and its scenario text is the run's with a first comment line
// saying what was replayed, so it never resumes or joins the run's own history. Throws
// std::invalid_argument for an unknown strategy or replicas < 1 (nothing stored), and
// std::runtime_error when the predicted sweep cannot run.
ReplayResult replay_stored_run(store::Store& store, const StoredRun& run,
                               const ReplayOptions& options, SweepOutput& output);

}  // namespace kvsweep::orchestrator
