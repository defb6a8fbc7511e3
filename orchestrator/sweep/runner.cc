// Runs a scenario's plan on a target, cell by cell, storing every cell and request: the sweep
// loop (experiment, resume, deployment groups).
#include "orchestrator/sweep/runner.h"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>

#include "common/utf8_prefix.h"
#include "common/wall_clock.h"
#include "figures/units.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/prompt_repeats.h"
#include "orchestrator/sweep/cell_claims.h"
#include "orchestrator/sweep/cell_recorder.h"
#include "orchestrator/sweep/cell_runner.h"
#include "orchestrator/sweep/cell_text.h"
#include "orchestrator/sweep/predict_wiring.h"
#include "orchestrator/targets/target_factory.h"
#include "store/space_reserve.h"
#include "store/sqlite_handles.h"

namespace kvsweep::orchestrator {
namespace {

const char* turn_order_name(driver::LoadOptions::Turns turns) {
  return turns == driver::LoadOptions::Turns::kSequential ? "sequential" : "independent";
}

// The load section as written (factors' levels are in "factors"); "by factor" where a factor
// sets the field.
// `timed_trace`: the measured workload carries its own arrival times (a trace, not its
// stand-in), which a cell without a rate is sent on (cell_load_options.h).
store::LoadSetup load_setup(const ScenarioSpec& spec, const std::string& dataset,
                            bool timed_trace) {
  const LoadSpec& l = spec.load;
  const auto by_factor = [&spec](const char* path) { return spec.factor_setting(path) != nullptr; };
  store::LoadSetup load;
  if (timed_trace && l.request_rate <= 0 && !by_factor("load.request_rate")) {
    load.shape = "open loop on the trace's own arrival times, concurrency level = in-flight cap";
  } else if (by_factor("load.request_rate")) {
    load.shape = "open loop at each cell's rate (a factor), concurrency level = in-flight cap";
  } else if (l.request_rate > 0) {
    load.shape = "open loop at " + figures::format_rate(l.request_rate) + " req/s (burstiness " +
                 figures::format_rate(l.burstiness) + "), concurrency level = in-flight cap";
  } else {
    load.shape = "closed loop, one request in flight per user";
  }
  if (l.request_rate > 0 || by_factor("load.request_rate")) load.turns = turn_order_name(l.turns);
  if (l.think_time_s > 0) load.think_time_s = l.think_time_s;
  load.dataset = dataset;
  // Seed 004's canonical table has a prefix_regime column: the shared prefix's length.
  if (l.dataset.kind == "shared-prefix" && !by_factor("load.dataset.prefix_tokens")) {
    load.prefix_regime = std::to_string(l.dataset.prefix_tokens);
  }
  load.endpoint = l.endpoint + (l.stream ? ", streaming" : ", not streaming");
  load.max_tokens = l.max_tokens;
  if (l.num_requests > 0) load.num_requests = l.num_requests;
  if (l.duration_s > 0) load.duration_s = l.duration_s;
  load.warmup_requests = l.warmup_requests;
  load.cache = cache_policy_name(l.cache);
  if (l.cache == CachePolicy::kWarm) load.warm_passes = l.warm_passes;
  load.timeout_s = l.timeout_s;
  if (l.new_connection_per_request) load.connections = "one per request";
  if (l.threads > 0) load.threads = l.threads;
  return load;
}

// What the report's setup block shows; ordered as a reader scans it.
store::ExperimentSetup experiment_setup(const ScenarioSpec& spec, const std::vector<CellPlan>& plan,
                                        const std::string& dataset, bool timed_trace,
                                        const Target& target, const RunnerOptions& options) {
  store::ExperimentSetup setup;
  // The embedded fleet, live (sim) or predicted in virtual time (predict), runs target.sim.
  const bool predict = options.target_override == "predict";
  const bool sim = predict || options.target_override == "sim" || spec.target.kind == "sim";
  store::TargetSetup& t = setup.target.emplace();
  t.kind = predict ? "predict" : sim ? "sim" : spec.target.kind;
  t.replicas = sim ? spec.target.sim.replicas : spec.target.replicas;
  t.profile = sim ? spec.target.sim.profile : "";
  t.description = target.describe();
  if (sim && spec.target.kind != "sim") t.stands_in_for = spec.target.kind;
  setup.model = spec.model;
  setup.description = spec.description;
  setup.seed = spec.seed;
  std::vector<store::FactorSetup>& factors = setup.factors.emplace();
  for (const auto& f : spec.factors) {
    store::FactorSetup factor;
    factor.name = f.name;
    for (const auto& level : f.levels) {
      store::FactorLevelSetup& stored = factor.levels.emplace_back();
      stored.label = level.label;
      for (const auto& s : level.settings) stored.settings.emplace_back(s.path, s.value);
    }
    factor.phase = f.phase == FactorPhase::kDeploy ? "deploy" : "run";
    factors.push_back(std::move(factor));
  }
  setup.arms = arm_labels(spec);
  std::vector<int>& concurrency = setup.concurrency.emplace();
  for (const auto& cell : plan) {
    if (std::find(concurrency.begin(), concurrency.end(), cell.concurrency) == concurrency.end()) {
      concurrency.push_back(cell.concurrency);
    }
  }
  setup.repeats = spec.repeats;
  setup.load = load_setup(spec, dataset, timed_trace);
  if (spec.search.enabled()) {
    setup.search = search_setup(spec);
    if (options.guide_experiment_id > 0) {
      setup.search->guide_experiment = options.guide_experiment_id;
    }
  }
  // The verdicts' thresholds, when the scenario changed any (reports judge by
  // ExperimentSetup::validity_rules(); without them, by the defaults).
  if (const ValidityRules& v = spec.load.validity; !(v == ValidityRules{})) setup.validity = v;
  return setup;
}

// The experiment's cell rows, in plan order: the resumed experiment's, or new ones.
std::vector<store::CellRow> prepare_cells(const std::vector<CellPlan>& plan, store::Store& store,
                                          std::int64_t experiment_id, bool resumed) {
  std::map<std::string, store::CellRow> existing;
  if (resumed) {
    for (auto& cell : store.cells(experiment_id)) existing[cell.key] = cell;
  }
  std::vector<store::CellRow> cells;
  for (const auto& p : plan) {
    if (auto it = existing.find(p.key); it != existing.end()) {
      if (it->second.status != "done") {
        store.reset_cell(it->second.id);  // whatever it half-measured is gone
        it->second.status = "pending";
      }
      cells.push_back(it->second);
      continue;
    }
    store::CellRow cell;
    cell.experiment_id = experiment_id;
    cell.ordinal = p.ordinal;
    cell.key = p.key;
    cell.arm = p.arm;
    cell.concurrency = p.concurrency;
    cell.repeat = p.repeat;
    cell.factors = store::decode_factors(p.factors_json);
    cell.status = "pending";
    cell.id = store.add_cell(cell);
    cells.push_back(cell);
  }
  return cells;
}

// Refuses (ClaimedByAnotherRun) when another live run holds a cell of the experiment; says
// which dead runs' claims this run takes over.
void check_claims(const store::ExperimentRow& experiment, store::Store& store, SweepOutput& output,
                  const store::ClaimOwner& me, double timeout_s) {
  const double now = unix_now_s();
  std::vector<std::string> taken_from;
  for (const store::CellClaim& claim : store.claims(experiment.id)) {
    const std::string owner = describe_claim(claim, now);
    if (claim_is_live(claim, me, now, timeout_s)) {
      throw ClaimedByAnotherRun(
          "experiment " + std::to_string(experiment.id) + " (" + experiment.name +
          ") is being run by another kvsweep: " + owner +
          "; not resuming it. Let that run finish; if it is dead, resume once its heartbeat is "
          "older than --claim-timeout (" +
          figures::format_fixed(timeout_s, 0) + " s).");
    }
    if (std::find(taken_from.begin(), taken_from.end(), owner) == taken_from.end()) {
      taken_from.push_back(owner);
    }
  }
  for (const std::string& owner : taken_from) {
    output.line("taking over from a run that is gone: " + owner);
  }
}

// The latest unfinished experiment of the scenario when resuming and there is one, else a
// new experiment. Sets outcome.experiment_id and outcome.resumed.
void open_experiment(const ScenarioSpec& spec, const std::string& hash,
                     const store::ExperimentSetup& setup, store::Store& store, SweepOutput& output,
                     const RunnerOptions& options, const store::ClaimOwner& me,
                     SweepOutcome& outcome) {
  std::optional<store::ExperimentRow> previous;
  if (options.resume) previous = store.latest_unfinished(hash);
  if (previous) {
    check_claims(*previous, store, output, me, options.claim_timeout_s);
    outcome.experiment_id = previous->id;
    outcome.resumed = true;
    store.reopen_experiment(previous->id);
    output.line("resuming experiment " + std::to_string(previous->id) + " (" + previous->status +
                ", started " + previous->started_at + ")");
    return;
  }
  if (options.resume) {
    output.line("nothing to resume: no unfinished experiment of this scenario in " + store.path() +
                "; starting a new one");
  }
  store::ExperimentRow row = new_experiment_row(spec.name, spec.path, spec.text, hash, setup);
  row.baseline = spec.baseline;
  outcome.experiment_id = store.add_experiment(row);
}

// What stopped a sweep, as its experiment's status says it after "failed: ".
std::string stop_reason(const std::exception& e) {
  const auto* sqlite = dynamic_cast<const store::SqliteError*>(&e);
  return (sqlite != nullptr && sqlite->disk_full() ? "disk full: " : "") + std::string(e.what());
}

// A stored status is at most this long, so the room kept to store it is known before the run
// (a reason can be as long as a command's whole output; the console shows it whole).
constexpr std::size_t kMaxStatusBytes = 1024;

std::string status_to_store(const std::string& status) {
  if (status.size() <= kMaxStatusBytes) return status;
  return std::string(utf8_prefix(status, kMaxStatusBytes - 3)) + "...";
}

// Room for the transaction that ends the run (its status, its claims released), kept free on
// the store's disk until then: when a write fails on a full disk, giving it back lets that
// transaction still be stored. Sized from what the experiment row and the claims can grow to.
store::SpaceReserve reserve_room_to_end(const store::RunReader& store, const ScenarioSpec& spec,
                                        const store::ExperimentSetup& setup, std::size_t cells) {
  // The row's short columns (times, hash, version, host) fit in a few hundred bytes.
  constexpr std::size_t kShortColumnsBytes = 512;
  const std::size_t row_bytes = spec.name.size() + spec.path.size() + spec.text.size() +
                                store::encode_setup(setup).size() + kShortColumnsBytes +
                                kMaxStatusBytes;
  return store::SpaceReserve::beside(store.path(),
                                     store.bytes_to_end_a_run(static_cast<std::int64_t>(row_bytes),
                                                              static_cast<std::int64_t>(cells)));
}

// The cell loop, group by group. State shared by its steps lives here.
class SweepLoop {
 public:
  SweepLoop(const ScenarioSpec& spec, const std::vector<CellPlan>& plan,
            std::vector<store::CellRow>& cells, store::Store& store, SweepOutput& output,
            const RunnerOptions& options, CellRunner& runner, const std::string& run_id)
      : spec_(spec),
        plan_(plan),
        cells_(cells),
        store_(store),
        output_(output),
        options_(options),
        runner_(runner),
        run_id_(run_id),
        groups_(plan.empty() ? 0 : plan.back().deploy_group + 1) {}

  void run(SweepOutcome& outcome) {
    outcome.status = "done";
    for (std::size_t i = 0; i < cells_.size(); ++i) {
      if (options_.stop && options_.stop->load()) {
        outcome.status = "interrupted";
        return;
      }
      if (i == 0 || plan_[i - 1].deploy_group != plan_[i].deploy_group) start_group(i);
      if (!run_cell(i, outcome)) {
        outcome.status = "interrupted";
        return;
      }
    }
  }

 private:
  // A new deployment group: said on the console, with "skipped" when every cell is done.
  void start_group(std::size_t first) {
    const CellPlan& p = plan_[first];
    bool all_done = true;
    for (std::size_t j = first; j < cells_.size() && plan_[j].deploy_group == p.deploy_group; ++j) {
      all_done = all_done && cells_[j].status == "done";
    }
    if (groups_ > 1) {
      output_.line("deployment " + std::to_string(p.deploy_group + 1) + "/" +
                   std::to_string(groups_) + ": " + describe_treatment(p.treatment) +
                   (all_done ? ": every cell already done, skipped" : ""));
    }
  }

  // Returns false when the sweep must stop.
  bool run_cell(std::size_t i, SweepOutcome& outcome) {
    store::CellRow& cell = cells_[i];
    const CellPlan& p = plan_[i];
    if (cell.status == "done") {
      ++outcome.cells_skipped;
      return true;
    }
    const std::string label =
        cell_label(cell.ordinal, cells_.size(), p.arm, p.repeat, spec_.repeats, p.concurrency);
    if (const std::string* failure = arm_failure(p.treatment)) {
      // The deployment this cell needs never became ready: do not wait on every gate again.
      cell.status = "failed";
      cell.error = "not run: its deployment failed: " + *failure;
      cell.started_at = cell.finished_at = utc_now_iso8601();
      store_.record_cell(cell, {}, {}, {}, run_id_);
      output_.line("  " + label + ": not run, its deployment failed");
      ++outcome.cells_failed;
      return true;
    }
    const bool go_on = runner_.run(cell, p, label);
    if (cell.status == "done") ++outcome.cells_done;
    if (cell.status == "failed") {
      ++outcome.cells_failed;
      // A treatment that failed to apply or to become ready (after readiness.retries more
      // tries) sinks the rest of its arm, deploy-time or a live patch: waiting out every
      // gate's time limit again for each of its cells would find the same.
      if (runner_.setup_failed()) failed_arms_.emplace_back(p.treatment, cell.error);
    }
    return go_on;
  }

  // Why `t` failed earlier in this sweep, or nullptr when it did not.
  const std::string* arm_failure(const Treatment& t) const {
    for (const auto& [failed, why] : failed_arms_) {
      if (failed == t) return &why;
    }
    return nullptr;
  }

  const ScenarioSpec& spec_;
  const std::vector<CellPlan>& plan_;
  std::vector<store::CellRow>& cells_;
  store::Store& store_;
  SweepOutput& output_;
  const RunnerOptions& options_;
  CellRunner& runner_;
  const std::string& run_id_;
  const int groups_;
  // The treatments whose apply or gates failed, each with why.
  std::vector<std::pair<Treatment, std::string>> failed_arms_;
};

// The predictor's guidance of a capacity search (search.guide: predict, the default): every
// arm's search first runs in virtual time, stored as its own predicted experiment, and each
// arm's real probes then start at its predicted capacity (options.search_guide, and
// options.guide_experiment_id). Nothing for a scenario that does not search, for search.guide:
// none, and when the sweep is itself a prediction (its own guide, or --target predict).
void guide_search(const ScenarioSpec& spec, store::Store& store, SweepOutput& output,
                  RunnerOptions& options) {
  if (!spec.search.enabled() || options.target_override == "predict" ||
      spec.search.guide == SearchGuide::kNone) {
    return;
  }
  output.line("guide: each arm's search in virtual time first (search.guide: predict)");
  RunnerOptions predicting;
  predicting.stop = options.stop;
  predicting.log = options.log;
  predicting.claim_timeout_s = options.claim_timeout_s;
  const std::vector<CellPlan> plan = expand_plan(spec, "predict");
  // The target owns the predicted fleet; it outlives the sweep run on it.
  const std::unique_ptr<PredictTarget> target = build_predict_target(spec, plan, 0, options.log);
  wire_predict_target(*target, predicting);
  const SweepOutcome predicted = run_sweep(spec, plan, *target, store, output, predicting);
  for (const ArmCapacity& arm : predicted.capacities) {
    // No passing load predicted: start from the lowest failing one (the bound, at worst).
    const std::optional<double> start =
        arm.result.capacity ? arm.result.capacity : arm.result.first_failing;
    if (start) options.search_guide[arm.key] = *start;
  }
  options.guide_experiment_id = predicted.experiment_id;
  output.line("guide: predicted experiment " + std::to_string(predicted.experiment_id) + " (" +
              predicted.status + ")");
}

}  // namespace

SweepOutcome run_sweep(const ScenarioSpec& spec, const std::vector<CellPlan>& plan, Target& target,
                       store::Store& store, SweepOutput& output, const RunnerOptions& given) {
  RunnerOptions options = given;
  guide_search(spec, store, output, options);
  // A bad dataset fails before anything runs.
  const std::vector<Workloads> workloads =
      load_workloads(spec, plan, runs_simulated(spec, options));
  // Said once, before anything runs: a prompt sent again is found in the prefix cache whatever
  // the strategy, so the cells' hit rates are partly their own repeats.
  const std::vector<WorkloadSize> sizes = workload_sizes(workloads);
  for (const auto& line :
       repeats_warnings(plan, experiment_repeats(plan, sizes), sizes, spec.search.enabled())) {
    output.line("warning: " + line);
  }
  const std::string hash = scenario_hash(spec.text, options.target_override);
  const store::ClaimOwner me = this_process_owner();
  CellRunner runner(spec, target, store, output, options, workloads, me.run_id);
  try {
    runner.start_target();
  } catch (const TargetError& e) {
    throw std::runtime_error("starting the target: " + std::string(e.what()));
  }

  // One transaction from reading the claims to taking the cells: a second runner waits for it,
  // then sees this run's claims.
  SweepOutcome outcome;
  std::string datasets;
  bool timed_trace = false;
  for (const auto& w : workloads) {
    datasets += (datasets.empty() ? "" : " | ") + w.measured.description;
    timed_trace = timed_trace || !w.measured.arrival_s.empty();
  }
  std::vector<store::CellRow> cells;
  const store::ExperimentSetup setup =
      experiment_setup(spec, plan, datasets, timed_trace, target, options);
  const std::size_t most_cells =
      spec.search.enabled() ? plan.size() * static_cast<std::size_t>(spec.search.max_probes)
                            : plan.size();
  store::SpaceReserve reserve = reserve_room_to_end(store, spec, setup, most_cells);
  store.in_transaction([&] {
    open_experiment(spec, hash, setup, store, output, options, me, outcome);
    // A search adds its probe cells as it decides them.
    if (!spec.search.enabled()) {
      cells = prepare_cells(plan, store, outcome.experiment_id, outcome.resumed);
    }
    std::vector<std::int64_t> to_run;
    for (const auto& cell : cells) {
      if (cell.status != "done") to_run.push_back(cell.id);
    }
    store.claim_cells(to_run, me, unix_now_s());
  });
  try {
    const Heartbeat heartbeat(store.path(), me.run_id,
                              heartbeat_interval_s(options.claim_timeout_s), options.log);
    if (spec.search.enabled()) {
      SearchLoopResult searched =
          run_search_loop(spec, plan, store, outcome.experiment_id, output, options, runner, me);
      outcome.status = searched.interrupted ? "interrupted" : "done";
      outcome.cells_done = searched.cells_done;
      outcome.cells_failed = searched.cells_failed;
      outcome.cells_skipped = searched.cells_skipped;
      outcome.capacities = std::move(searched.arms);
    } else {
      SweepLoop(spec, plan, cells, store, output, options, runner, me.run_id).run(outcome);
    }
  } catch (const store::ClaimLost& e) {
    // The cells are another run's now, and so is the experiment's status.
    throw ClaimedByAnotherRun("experiment " + std::to_string(outcome.experiment_id) +
                              " was taken over by another run while this one could not beat "
                              "its heartbeat; this run stops and stores nothing more: " +
                              e.what());
  } catch (const std::exception& e) {
    const std::string status = "failed: " + stop_reason(e);
    reserve.release();  // the disk may be full: this is the room for the status
    try {
      store.in_transaction([&] {
        store.release_claims(me.run_id);
        store.finish_experiment(outcome.experiment_id, status_to_store(status), utc_now_iso8601());
      });
    } catch (const std::exception& also) {
      output.line("warning: the experiment's status could not be stored either: " +
                  std::string(also.what()));
    }
    throw SweepStopped("experiment " + std::to_string(outcome.experiment_id) + " " + status,
                       outcome.experiment_id);
  }
  if (outcome.status == "done" && outcome.cells_failed > 0) outcome.status = "failed";
  reserve.release();  // the last cell may have filled the disk
  store.in_transaction([&] {
    store.release_claims(me.run_id);
    store.finish_experiment(outcome.experiment_id, outcome.status, utc_now_iso8601());
  });
  return outcome;
}

}  // namespace kvsweep::orchestrator
