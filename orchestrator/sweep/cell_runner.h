// Running one cell of a sweep: its deployment when it changes, the cache policy, warm-up,
// the measured phase between /metrics scrapes, and storing it all.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "driver/workload.h"
#include "orchestrator/scenario/cell_load_options.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/prompt_repeats.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/sweep/cell_recorder.h"
#include "orchestrator/sweep/runner_options.h"
#include "orchestrator/sweep/sweep_output.h"
#include "orchestrator/targets/target.h"
#include "store/store.h"

namespace kvsweep::orchestrator {

// One workload of the sweep (CellPlan::workload), loaded once before the first cell.
struct Workloads {
  driver::Workload measured;
  driver::Workload warmup;
  bool warmup_replays_measured = false;  // a file dataset: the warm-up sends its first prompts
  std::string kind;                      // the dataset kind sent
  bool stand_in = false;                 // the stand-in of an absent file was sent
  // What it was loaded from: the cell's dataset section and seed.
  driver::DatasetOptions dataset;
  std::uint64_t seed = 0;
};

// Whether the sweep runs on the simulated fleet (the scenario's own `kind: sim`, or a
// rehearsal or prediction in a cluster target's place): a file dataset that is absent is then
// replaced by its stand_in.
bool runs_simulated(const ScenarioSpec& spec, const RunnerOptions& options);

// The workloads of one cell's dataset and seed (see load_workloads).
Workloads load_cell_workloads(const ScenarioSpec& spec, const driver::DatasetOptions& dataset,
                              std::uint64_t seed, bool simulated);

// What each workload holds, for experiment_repeats (orchestrator/scenario/prompt_repeats.h).
std::vector<WorkloadSize> workload_sizes(const std::vector<Workloads>& workloads);

// Every workload of `plan`, by CellPlan::workload index, each from the first cell that uses
// it. Warm-up traffic must not pre-cache measured turns: generated datasets get another seed;
// file datasets are what they are, so their warm-up replays the same file (and a trace's
// warm-up ignores its timestamps: warm-up is a closed loop). Throws std::invalid_argument
// "load.dataset: ..." for a dataset that cannot be loaded: one Workloads per distinct dataset of
// the plan (CellPlan::workload indexes them). `simulated`: the sweep runs on the simulated
// fleet, so a file dataset that is absent is replaced by the scenario's stand_in (the measured
// workload's description says so); on a real target an absent file is an error.
std::vector<Workloads> load_workloads(const ScenarioSpec& spec, const std::vector<CellPlan>& plan,
                                      bool simulated);

// Thread contract: the runner's thread only. Everything passed in outlives it.
class CellRunner {
 public:
  // `claimed_by`: the run id whose claim every cell must hold when it is stored ("" = none).
  CellRunner(const ScenarioSpec& spec, Target& target, store::Store& store, SweepOutput& output,
             const RunnerOptions& options, const std::vector<Workloads>& workloads,
             std::string claimed_by = "");

  // Target::start(); the commands it ran are stored with the first cell run. Throws
  // TargetError.
  void start_target();

  // Runs one cell and stores it in one transaction, whatever happened. Returns false when the
  // sweep should stop (interrupted). Throws store::ClaimLost when another run took the cell.
  bool run(store::CellRow& cell, const CellPlan& plan, const std::string& label);

  // Whether the last run() failed before sending load: applying, readiness or the cold cache.
  bool setup_failed() const { return setup_failed_; }

 private:
  static const char* phase_name(CellPhase phase);  // as progress snapshots name it

  void ensure_applied(const CellPlan& plan, CommandLogs& commands);
  void measure(const CellPlan& plan, const std::string& label, const Endpoints& endpoints,
               CellMeasurement& m);
  driver::LoadResult drive(const CellPlan& plan, const driver::Workload& workload, CellPhase phase,
                           const std::string& label, const std::string& base_url,
                           const std::function<void()>& on_measured_underway = {});
  bool finish(store::CellRow& cell, CellMeasurement& m, const std::string& status,
              const std::string& failure, const std::string& label);

  const ScenarioSpec& spec_;
  Target& target_;
  store::Store& store_;
  SweepOutput& output_;
  const RunnerOptions& options_;
  // The plan's workload for `plan`, or, when the cell's dataset section differs from it (a
  // capacity probe sized past the arm's cell: a random dataset's count follows the probe's),
  // that dataset with the workload's seed, loaded once.
  const Workloads& workloads_of(const CellPlan& plan);

  const std::vector<Workloads>& workloads_;
  std::deque<Workloads> resized_;  // loaded by workloads_of; a deque keeps references valid
  const std::string claimed_by_;
  std::optional<Treatment> applied_;  // what the target runs now, when known
  CommandLogs pending_;               // start()'s commands, until a cell is stored
  bool setup_failed_ = false;
  // The cell being run and its target's /metrics URLs, for its progress snapshots.
  std::int64_t current_cell_id_ = 0;
  std::vector<std::string> metrics_urls_;
  std::vector<store::CellShardRow> shards_;  // the measured phase's shards, when sharded
  std::int64_t current_experiment_id_ = 0;
  std::unique_ptr<ShardLauncher> make_shard_launcher(const std::string& work_dir);
  CommandLogs shard_commands();
};

}  // namespace kvsweep::orchestrator
