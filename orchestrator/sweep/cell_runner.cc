// Running one cell of a sweep: its deployment when it changes, the cache policy, warm-up,
// the measured phase between /metrics scrapes, and storing it all.
#include "orchestrator/sweep/cell_runner.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <utility>

#include "common/error_kinds.h"
#include "common/wall_clock.h"
#include "driver/datasets/load_workload.h"
#include "figures/cell_metrics.h"
#include "figures/units.h"
#include "orchestrator/scenario/prompt_repeats.h"
#include "orchestrator/sweep/cell_text.h"
#include "orchestrator/sweep/measured_phase.h"
#include "orchestrator/sweep/progress_snapshots.h"
#include "orchestrator/sweep/sharded_load.h"
#include "orchestrator/targets/shards/local_shard_launcher.h"
#include "orchestrator/targets/shards/shard_coordinator.h"
#include "orchestrator/targets/shards/temp_shard_dir.h"

namespace kvsweep::orchestrator {
namespace {

// Warm-up conversations come from another seed than the measured ones, so warming the fleet
// (shared system prompt, engine state) never pre-caches a measured conversation's turns.
constexpr std::uint64_t kWarmupSeedOffset = 7919;

driver::DatasetOptions with_seed(driver::DatasetOptions options, std::uint64_t seed) {
  options.seed = seed;
  return options;
}

// A cell's dataset, or the scenario's stand-in when the file is absent on the simulated fleet.
const driver::DatasetOptions& dataset_in_use(const ScenarioSpec& spec,
                                             const driver::DatasetOptions& d, bool simulated) {
  if (!spec.load.stand_in || d.path.empty() || std::filesystem::exists(d.path)) return d;
  if (!simulated) {
    throw UsageError(spec.path + ": load.dataset.path: no such file: " + d.path +
                     " (its stand_in is used only on the simulated fleet: --target "
                     "sim or --target predict)");
  }
  return *spec.load.stand_in;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void append(CommandLogs& to, const CommandLogs& more) {
  to.insert(to.end(), more.begin(), more.end());
}

// Failure reason of a cell none of whose measured requests succeeded, from the first failure.
std::string all_failed_reason(const std::vector<driver::RequestRecord>& records) {
  std::size_t measured = 0;
  const driver::RequestRecord* first_failure = nullptr;
  for (const auto& r : records) {
    if (r.warmup) continue;
    ++measured;
    if (r.ok) return "";
    if (!first_failure) first_failure = &r;
  }
  if (measured == 0) return "no measured request was sent";
  return "all " + std::to_string(measured) +
         " measured requests failed; first: " + first_failure->error_kind + ": " +
         first_failure->error;
}

// The router's health events (a replica taken out of routing or put back) change what the
// cell measured: said on the console as well as kept with the cell's commands.
void print_health_events(const CommandLogs& logs, const std::string& label, SweepOutput& output) {
  for (const auto& log : logs) {
    if (log.step != "health" || log.exit_code != 0) continue;
    std::size_t start = 0;
    for (std::size_t end; (end = log.out.find('\n', start)) != std::string::npos; start = end + 1) {
      output.line("  " + label + ": " + log.out.substr(start, end - start));
    }
  }
}

// The first line of a health event that says the pods changed during the cell, or "".
std::string pods_moved(const CommandLogs& logs) {
  for (const auto& log : logs) {
    if (log.step != "health" || log.exit_code != 0) continue;
    if (log.out.rfind("pods changed during the cell", 0) == 0) {
      return log.out.substr(0, log.out.find('\n'));
    }
  }
  return "";
}

// A workload that carries its own arrival times (a trace) is sent on them.
Arrivals arrivals_of(const driver::Workload& workload) {
  return workload.arrival_s.empty() ? Arrivals::kFromLoad : Arrivals::kWorkloadTimed;
}

}  // namespace

const char* CellRunner::phase_name(CellPhase phase) {
  switch (phase) {
    case CellPhase::kPrepass:
      return "warm pre-pass";
    case CellPhase::kWarmup:
      return "warm-up";
    case CellPhase::kMeasured:
      break;
  }
  return "measured";
}

Workloads load_cell_workloads(const ScenarioSpec& spec, const driver::DatasetOptions& section,
                              std::uint64_t seed, bool simulated) {
  const driver::DatasetOptions& dataset = dataset_in_use(spec, section, simulated);
  Workloads w;
  w.dataset = section;
  w.seed = seed;
  try {
    w.measured = driver::load_workload(with_seed(dataset, seed));
    const bool generated = dataset.kind == "synthetic-multiturn" ||
                           dataset.kind == "shared-prefix" || dataset.kind == "random";
    w.warmup = generated ? driver::load_workload(with_seed(dataset, seed + kWarmupSeedOffset))
                         : w.measured;
    w.warmup_replays_measured = !generated;
    w.warmup.arrival_s.clear();
    w.kind = dataset.kind;
    w.stand_in = &dataset != &section;
  } catch (const driver::DatasetError& e) {
    throw UsageError(std::string("load.dataset: ") + e.what());
  }
  if (&dataset != &section) {  // the setup, hence every report, says so
    w.measured.description = "generated stand-in for the absent " + section.kind + " file " +
                             section.path + ": " + w.measured.description;
  }
  return w;
}

bool runs_simulated(const ScenarioSpec& spec, const RunnerOptions& options) {
  return !options.target_override.empty() || spec.target.kind == "sim";
}

std::vector<Workloads> load_workloads(const ScenarioSpec& spec, const std::vector<CellPlan>& plan,
                                      bool simulated) {
  std::vector<Workloads> all;
  for (const auto& cell : plan) {
    if (cell.workload < static_cast<int>(all.size())) continue;
    all.push_back(load_cell_workloads(spec, cell.load.dataset, cell.seed, simulated));
  }
  return all;
}

const Workloads& CellRunner::workloads_of(const CellPlan& plan) {
  const Workloads& planned = workloads_.at(static_cast<std::size_t>(plan.workload));
  if (planned.dataset == plan.load.dataset) return planned;
  for (const Workloads& w : resized_) {
    if (w.dataset == plan.load.dataset && w.seed == planned.seed) return w;
  }
  return resized_.emplace_back(
      load_cell_workloads(spec_, plan.load.dataset, planned.seed, runs_simulated(spec_, options_)));
}

std::vector<WorkloadSize> workload_sizes(const std::vector<Workloads>& workloads) {
  std::vector<WorkloadSize> sizes;
  for (const auto& w : workloads) {
    sizes.push_back(workload_size(w.measured, w.warmup_replays_measured, w.kind, w.stand_in));
  }
  return sizes;
}

CellRunner::CellRunner(const ScenarioSpec& spec, Target& target, store::Store& store,
                       SweepOutput& output, const RunnerOptions& options,
                       const std::vector<Workloads>& workloads, std::string claimed_by)
    : spec_(spec),
      target_(target),
      store_(store),
      output_(output),
      options_(options),
      workloads_(workloads),
      claimed_by_(std::move(claimed_by)) {}

void CellRunner::start_target() { append(pending_, target_.start()); }

// Applies the plan's treatment when it differs from what the target runs now, then opens the
// readiness gates; a failure is tried again, apply and gates, readiness.retries times. Throws
// TargetError; the target's state is unknown afterwards.
void CellRunner::ensure_applied(const CellPlan& plan, CommandLogs& commands) {
  if (applied_ && *applied_ == plan.treatment) return;
  applied_.reset();
  const auto start = std::chrono::steady_clock::now();
  const int attempts = 1 + spec_.target.readiness.retries;
  for (int attempt = 1;; ++attempt) {
    output_.line("  applying " + describe_treatment(plan.treatment) + " on " + target_.describe() +
                 (attempt > 1 ? " (attempt " + std::to_string(attempt) + " of " +
                                    std::to_string(attempts) + ")"
                              : ""));
    try {
      append(commands, target_.apply(plan.treatment));
      append(commands, target_.wait_ready());
      break;
    } catch (const TargetError& e) {
      if (attempt >= attempts) {
        if (attempts == 1) throw;
        throw TargetError(std::string(e.what()) + " (attempt " + std::to_string(attempt) + " of " +
                              std::to_string(attempts) + ")",
                          e.commands());
      }
      append(commands, e.commands());  // every attempt's commands stay with the cell
      output_.line("  attempt " + std::to_string(attempt) + " failed: " + e.what() +
                   "; trying again (target.readiness.retries)");
    }
  }
  output_.line("  ready after " + figures::format_ms(seconds_since(start) * 1000) + " ms");
  applied_ = plan.treatment;
}

bool CellRunner::run(store::CellRow& cell, const CellPlan& plan, const std::string& label) {
  setup_failed_ = false;
  cell.status = "running";
  cell.started_at = utc_now_iso8601();
  store_.update_cell(cell, claimed_by_);
  CellMeasurement m;
  m.commands = std::exchange(pending_, {});
  const CachePolicy cache = plan.load.cache;
  const Workloads& workload = workloads_of(plan);
  try {
    ensure_applied(plan, m.commands);
    if (cache == CachePolicy::kCold) append(m.commands, target_.make_cold());
  } catch (const TargetError& e) {
    append(m.commands, e.commands());
    applied_.reset();
    setup_failed_ = true;
    return finish(cell, m, "failed", e.what(), label);
  }
  const Endpoints endpoints = target_.endpoints();
  const std::string& base_url = endpoints.base_url;
  current_cell_id_ = cell.id;
  current_experiment_id_ = cell.experiment_id;
  metrics_urls_ = endpoints.metrics_urls;
  if (cache == CachePolicy::kWarm) {
    // The measured workload warm_passes times, unmeasured: every arm starts from a cache that
    // has seen it, as the KubeAI benchmarks ran everything twice before measuring (seed 001).
    for (int pass = 1; pass <= plan.load.warm_passes; ++pass) {
      const std::string what = plan.load.warm_passes == 1
                                   ? " warm pre-pass"
                                   : " warm pre-pass " + std::to_string(pass) + "/" +
                                         std::to_string(plan.load.warm_passes);
      m.prepasses.push_back(
          drive(plan, workload.measured, CellPhase::kPrepass, label + what, base_url));
      if (m.prepasses.back().interrupted) return finish(cell, m, "interrupted", "", label);
    }
  }
  if (plan.load.warmup_requests > 0) {
    m.warmup = drive(plan, workload.warmup, CellPhase::kWarmup, label + " warm-up", base_url);
    if (m.warmup.interrupted) return finish(cell, m, "interrupted", "", label);
  }
  try {
    measure(plan, label, endpoints, m);
    append(m.commands, shard_commands());
  } catch (const std::runtime_error& e) {
    // A shard failed (ShardError), or its Job could not be made or reached (TargetError):
    // nothing of the phase is kept but the failure and the commands.
    if (plan.load.shards <= 1) throw;
    output_.end_progress();
    append(m.commands, shard_commands());
    return finish(cell, m, "failed", e.what(), label);
  }
  if (m.measured.interrupted) return finish(cell, m, "interrupted", "", label);
  return finish(cell, m, "done", all_failed_reason(m.measured.records), label);
}

// The measured phase between a scrape of every replica's /metrics before and after, and
// periodic scrapes during it.
void CellRunner::measure(const CellPlan& plan, const std::string& label, const Endpoints& endpoints,
                         CellMeasurement& m) {
  const driver::Workload& workload = workloads_of(plan).measured;
  const auto keep_load_record = [&] {
    m.load = cell_load_row(
        cell_load_options(plan, spec_.model, CellPhase::kMeasured, arrivals_of(workload)), workload,
        m.measured.driver);
    m.load->shards = std::exchange(shards_, {});
  };
  if (options_.measured_samples) {  // the load step sampled the servers itself
    m.measured = drive(plan, workload, CellPhase::kMeasured, label, endpoints.base_url);
    m.samples = options_.measured_samples();
    keep_load_record();
    return;
  }
  const MetricsScrapes scrapes{endpoints.metrics_urls, spec_.target.metrics.interval_s};
  measure_between_scrapes(
      scrapes, options_.log,
      [&](const std::function<void()>& underway) {
        return drive(plan, workload, CellPhase::kMeasured, label, endpoints.base_url, underway);
      },
      m);
  keep_load_record();
}

// Each phase's options come from the cell's plan (cell_load_options.h); the runner adds where
// and how to send.
driver::LoadResult CellRunner::drive(const CellPlan& plan, const driver::Workload& workload,
                                     CellPhase phase, const std::string& label,
                                     const std::string& base_url,
                                     const std::function<void()>& on_measured_underway) {
  driver::LoadOptions o = cell_load_options(plan, spec_.model, phase, arrivals_of(workload));
  o.base_url = base_url;
  o.api_key = options_.api_key;
  o.stop = options_.stop;
  o.on_measured_underway = on_measured_underway;
  // The predictor runs the phase in virtual time, where one process sends any schedule: the
  // shards' union is the one-process run, so it is predicted whole.
  if (options_.measured_samples) o.shard = {};
  if (o.shard.count > 1) {
    // Local processes' files go in a directory kept only when a shard failed.
    const TempShardDir dir;
    const std::unique_ptr<ShardLauncher> launcher = make_shard_launcher(dir.path());
    ShardedLoad sharded =
        run_sharded_load(o, options_.api_key_env, workload, *launcher, options_.stop,
                         [&](const std::string& text) { output_.progress(label + ": " + text); });
    output_.end_progress();
    for (const store::CellShardRow& shard : sharded.shards) {
      output_.line("    " + shard_line(shard, spec_.load.validity));
    }
    shards_ = std::move(sharded.shards);
    return std::move(sharded.result);
  }
  ProgressSnapshots snapshots(store_, current_cell_id_, phase_name(phase), metrics_urls_,
                              claimed_by_);
  auto result = options_.load(o, workload, [&](const driver::Progress& p) {
    output_.progress(describe_progress(label, p));
    snapshots.write(p);
  });
  output_.end_progress();
  if (!snapshots.failure().empty()) {
    output_.line("  warning: " + label + ": progress not stored (kvsweep serve cannot follow " +
                 "this phase; the cell's own record is unaffected): " + snapshots.failure());
  }
  if (phase != CellPhase::kMeasured) {
    for (auto& r : result.records) r.warmup = true;
  }
  return result;
}

// What the target's shard placement ran for the cell so far; nothing when the shards are local.
CommandLogs CellRunner::shard_commands() {
  ShardPlacement* placement = target_.shard_placement();
  return placement ? placement->take_commands() : CommandLogs{};
}

// Where the cell's shards run: load.shard_job.runner, else an Indexed Job when the target is a
// Kubernetes one, else local processes of kvsweep.
std::unique_ptr<ShardLauncher> CellRunner::make_shard_launcher(const std::string& work_dir) {
  const LoadSpec::ShardJob& job = spec_.load.shard_job;
  if (job.runner != "local") {
    // One name per cell of an experiment: a --resume after a kill -9 finds (and deletes) the
    // Job the killed run left, which may still be sending.
    ShardJobSettings settings;
    settings.name = "kvsweep-shards-" + std::to_string(current_experiment_id_) + "-" +
                    std::to_string(current_cell_id_);
    settings.image = job.image;
    settings.cpu = job.cpu;
    settings.memory = job.memory;
    settings.node_selector = job.node_selector;
    settings.env_secret = job.env_secret;
    // Deletes the Job should this process be killed (the Job's pods would send on).
    // Only a kvsweep binary speaks `shard watch`: a program that embeds the runner under
    // another name (a test binary) would run itself instead, and no watcher is started.
    const std::string watcher =
        options_.shard_program.empty() ? self_program() : options_.shard_program;
    if (std::filesystem::path(watcher).filename() == "kvsweep") settings.watch_program = watcher;
    if (ShardPlacement* placement = target_.shard_placement()) return placement->launcher(settings);
    if (job.runner == "job") {
      throw ShardError("load.shard_job.runner: job needs a Kubernetes target; " +
                       target_.describe() + " runs its shards as local processes");
    }
  }
  return std::make_unique<LocalShardLauncher>(
      options_.shard_program.empty() ? self_program() : options_.shard_program, work_dir);
}

// Stores the cell with everything it measured and ran, in one transaction.
bool CellRunner::finish(store::CellRow& cell, CellMeasurement& m, const std::string& status,
                        const std::string& failure, const std::string& label) {
  // What the target saw first: a scrape that failed while pods were rolling says so.
  const CommandLogs seen = target_.cell_finished();
  const std::string moved = pods_moved(seen);
  for (const auto& error : m.scrape_errors) {
    output_.line("  warning: scrape: " + error + (moved.empty() ? "" : " (" + moved + ")"));
  }
  cell.status = status;
  cell.error = status == "interrupted" ? "stopped by a signal" : failure;
  if (status == "done" && !failure.empty()) cell.status = "failed";
  cell.finished_at = utc_now_iso8601();
  print_health_events(seen, label, output_);
  append(m.commands, seen);
  RecordedCell recorded = record_cell(store_, cell, m, spec_.load.validity, claimed_by_);

  if (cell.status == "interrupted") {
    output_.line("  " + label + ": interrupted; " + std::to_string(recorded.rows.size()) +
                 " finished requests kept");
    return false;
  }
  // A done cell's figures were computed once, for its summary; a failed cell's are computed
  // here, for its failure lines.
  const figures::CellMetrics metrics =
      recorded.metrics ? std::move(*recorded.metrics)
                       : figures::compute_cell_metrics(recorded.rows, m.samples, {}, m.load,
                                                       spec_.load.validity);
  if (cell.status == "failed") {
    output_.line("  " + label + ": failed: " + cell.error);
  } else {
    output_.line("  " + label + ": " + cell_summary(metrics));
    for (const auto& line : verdict_lines(metrics)) output_.line("    " + line);
  }
  for (const auto& line : first_failure_lines(metrics)) output_.line("    " + line);
  return true;
}

}  // namespace kvsweep::orchestrator
