// Runs a scenario's plan on a target, cell by cell, storing every cell and request.
#include "orchestrator/runner.h"

#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/wall_clock.h"
#include "driver/datasets/load_workload.h"
#include "driver/load_run.h"
#include "orchestrator/metrics_scraper.h"
#include "orchestrator/plan.h"
#include "orchestrator/record_rows.h"
#include "reports/cell_metrics.h"
#include "reports/units.h"

#ifndef KVSWEEP_VERSION
#define KVSWEEP_VERSION "unknown"
#endif

namespace kvsweep::orchestrator {
namespace {

// Warm-up conversations come from another seed than the measured ones, so warming the fleet
// (shared system prompt, engine state) never pre-caches a measured conversation's turns.
constexpr std::uint64_t kWarmupSeedOffset = 7919;

std::string host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

// What the report's setup block shows; ordered as a reader scans it.
std::string setup_json(const ScenarioSpec& spec, const std::string& workload_description) {
  const LoadSpec& l = spec.load;
  nlohmann::ordered_json load;
  if (l.request_rate > 0) {
    load["shape"] = "open loop at " + reports::format_rate(l.request_rate) +
                    " req/s (burstiness " + reports::format_rate(l.burstiness) +
                    "), concurrency level = in-flight cap";
  } else {
    load["shape"] = "closed loop, one request in flight per user";
  }
  load["dataset"] = workload_description;
  load["endpoint"] = l.endpoint + (l.stream ? ", streaming" : ", not streaming");
  load["max_tokens"] = spec.load.max_tokens;
  if (spec.load.num_requests > 0) load["num_requests"] = spec.load.num_requests;
  if (spec.load.duration_s > 0) load["duration_s"] = spec.load.duration_s;
  load["warmup_requests"] = spec.load.warmup_requests;
  load["timeout_s"] = spec.load.timeout_s;
  nlohmann::ordered_json setup;
  setup["target"] = {{"kind", spec.target.kind},
                     {"replicas", spec.target.replicas},
                     {"profile", spec.target.profile}};
  setup["model"] = spec.model;
  setup["description"] = spec.description;
  setup["seed"] = spec.seed;
  setup["strategies"] = spec.strategies;
  setup["concurrency"] = spec.concurrency;
  setup["repeats"] = spec.repeats;
  setup["load"] = load;
  setup["baseline"] = spec.baseline;
  return setup.dump();
}

driver::DatasetOptions dataset_options(const ScenarioSpec& spec, std::uint64_t seed) {
  driver::DatasetOptions options = spec.load.dataset;
  options.seed = seed;
  return options;
}

std::string describe_progress(const std::string& label, const driver::Progress& p) {
  char buffer[256];
  if (p.total > 0) {
    std::snprintf(buffer, sizeof buffer, "%s: %lld/%lld requests, %.1f req/s, p50 TTFT %s",
                  label.c_str(), static_cast<long long>(p.done),
                  static_cast<long long>(p.total), p.requests_per_s,
                  (reports::format_ms(p.p50_ttft_ms) + " ms").c_str());
  } else {
    std::snprintf(buffer, sizeof buffer, "%s: %lld requests in %.0f s, %.1f req/s, p50 TTFT %s",
                  label.c_str(), static_cast<long long>(p.done), p.elapsed_s, p.requests_per_s,
                  (reports::format_ms(p.p50_ttft_ms) + " ms").c_str());
  }
  std::string text = buffer;
  if (p.failed > 0) text += ", " + std::to_string(p.failed) + " failed";
  return text;
}

// One line per finished cell, from the same computation the report uses.
std::string cell_summary(const reports::CellMetrics& m) {
  std::string text = std::to_string(m.ok) + " ok";
  if (m.failed > 0) text += ", " + std::to_string(m.failed) + " failed";
  if (m.ok > 0) {
    text += ", mean TTFT " + reports::format_ms(m.ttft_ms.mean) + " ms, " +
            reports::format_si(m.total_token_throughput) + " tok/s";
  }
  text += ", KV hit " + reports::format_percent(m.kv_hit_rate_server) +
          (m.kv_hit_rate_server ? "%" : "");
  return text;
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
  return "all " + std::to_string(measured) + " measured requests failed; first: " +
         first_failure->error_kind + ": " + first_failure->error;
}

// The sweep's workloads, loaded once before the first cell.
struct Workloads {
  driver::Workload measured;
  driver::Workload warmup;
};

// Warm-up traffic must not pre-cache measured turns: generated datasets get another seed;
// file datasets are what they are, so their warm-up replays the same file (and a trace's
// warm-up ignores its timestamps: warm-up is a closed loop).
Workloads load_workloads(const ScenarioSpec& spec) {
  Workloads w;
  try {
    w.measured = driver::load_workload(dataset_options(spec, spec.seed));
    const bool generated =
        spec.load.dataset.kind == "synthetic-multiturn" || spec.load.dataset.kind == "shared-prefix";
    w.warmup = generated ? driver::load_workload(dataset_options(spec, spec.seed + kWarmupSeedOffset))
                         : w.measured;
    w.warmup.arrival_s.clear();
  } catch (const driver::DatasetError& e) {
    throw std::runtime_error(std::string("load.dataset: ") + e.what());
  }
  return w;
}

class CellRunner {
 public:
  CellRunner(const ScenarioSpec& spec, Target& target, store::Store& store, Console& console,
             const RunnerOptions& options, const Workloads& workloads)
      : spec_(spec),
        target_(target),
        store_(store),
        console_(console),
        options_(options),
        workloads_(workloads) {}

  // Runs one cell and stores it. Returns false when the sweep should stop (interrupted).
  bool run(store::CellRow& cell, const std::string& label) {
    cell.status = "running";
    cell.started_at = utc_now_iso8601();
    store_.update_cell(cell);
    try {
      target_.apply(Treatment{cell.strategy});
      const auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(options_.ready_timeout_s));
      target_.wait_ready(deadline);
      target_.reset_prefix_cache();
    } catch (const TargetError& e) {
      finish(cell, "failed", e.what());
      console_.line("  " + label + ": failed: " + e.what());
      return true;
    }

    driver::LoadResult warmup;
    if (spec_.load.warmup_requests > 0) {
      warmup = drive(cell, workloads_.warmup, /*warmup_phase=*/true, label + " warm-up");
      for (auto& r : warmup.records) r.warmup = true;
      if (warmup.interrupted) return store_and_finish(cell, warmup, {}, {}, {}, label);
    }

    const ScrapeResult before = scrape_metrics(target_.metrics_urls(), "before", 0);
    driver::LoadResult measured = drive(cell, workloads_.measured, /*warmup_phase=*/false, label);
    const ScrapeResult after =
        scrape_metrics(target_.metrics_urls(), "after", unix_now_s() - measured.epoch_wall_s);
    return store_and_finish(cell, warmup, measured, before, after, label);
  }

 private:
  // The warm-up phase is always a closed loop of at most `concurrency` users sending
  // warmup_requests requests; the measured phase has the scenario's shape.
  driver::LoadResult drive(const store::CellRow& cell, const driver::Workload& workload,
                           bool warmup_phase, const std::string& label) {
    const LoadSpec& l = spec_.load;
    driver::LoadOptions o;
    o.base_url = target_.base_url();
    o.model = spec_.model;
    o.endpoint = l.endpoint == "completions" ? driver::LoadOptions::Endpoint::kCompletions
                                             : driver::LoadOptions::Endpoint::kChat;
    o.stream = l.stream;
    o.max_tokens = l.max_tokens;
    o.ignore_eos = l.ignore_eos;
    o.temperature = l.temperature;
    o.seed = spec_.seed;  // the same arrival schedule for every strategy: a fair comparison
    o.request_timeout_s = l.timeout_s;
    o.stop = options_.stop;
    if (warmup_phase) {
      o.concurrency = cell.concurrency;
      o.num_requests = l.warmup_requests;
    } else {
      if (l.request_rate > 0) {
        o.request_rate = l.request_rate;
        o.burstiness = l.burstiness;
        o.max_concurrency = cell.concurrency;
      } else {
        o.concurrency = cell.concurrency;
      }
      o.num_requests = l.num_requests;
      o.duration_s = l.duration_s;
    }
    auto result = driver::run_load(o, workload, [&](const driver::Progress& p) {
      console_.progress(describe_progress(label, p));
    });
    console_.end_progress();
    return result;
  }

  bool store_and_finish(store::CellRow& cell, const driver::LoadResult& warmup,
                        const driver::LoadResult& measured, const ScrapeResult& before,
                        const ScrapeResult& after, const std::string& label) {
    // The measured phase's epoch is the cell's; warm-up times land before 0.
    const double epoch = measured.records.empty() && measured.epoch_wall_s == 0
                             ? warmup.epoch_wall_s
                             : measured.epoch_wall_s;
    cell.epoch_wall_s = epoch;
    auto rows = to_request_rows(warmup.records, warmup.epoch_wall_s - epoch, 0);
    const auto measured_rows = to_request_rows(measured.records, 0,
                                               static_cast<std::int64_t>(warmup.records.size()));
    rows.insert(rows.end(), measured_rows.begin(), measured_rows.end());
    store_.add_requests(cell.id, rows);

    std::vector<store::MetricSample> samples = before.samples;
    samples.insert(samples.end(), after.samples.begin(), after.samples.end());
    store_.add_metric_samples(cell.id, samples);
    for (const auto& error : before.errors) console_.line("  warning: scrape before: " + error);
    for (const auto& error : after.errors) console_.line("  warning: scrape after: " + error);

    if (warmup.interrupted || measured.interrupted) {
      finish(cell, "interrupted", "stopped by a signal");
      console_.line("  " + label + ": interrupted; " + std::to_string(rows.size()) +
                    " finished requests kept");
      return false;
    }
    const std::string failure = all_failed_reason(measured.records);
    if (!failure.empty()) {
      finish(cell, "failed", failure);
      console_.line("  " + label + ": failed: " + failure);
      return true;
    }
    finish(cell, "done", "");
    console_.line("  " + label + ": " + cell_summary(reports::compute_cell_metrics(rows, samples)));
    return true;
  }

  void finish(store::CellRow& cell, const std::string& status, const std::string& error) {
    cell.status = status;
    cell.error = error;
    cell.finished_at = utc_now_iso8601();
    store_.update_cell(cell);
  }

  const ScenarioSpec& spec_;
  Target& target_;
  store::Store& store_;
  Console& console_;
  const RunnerOptions& options_;
  const Workloads& workloads_;
};

}  // namespace

SweepOutcome run_sweep(const ScenarioSpec& spec, Target& target, store::Store& store,
                       Console& console, const RunnerOptions& options) {
  const std::vector<CellPlan> plan = expand_plan(spec);
  const Workloads workloads = load_workloads(spec);  // a bad dataset fails before anything runs

  store::ExperimentRow experiment;
  experiment.name = spec.name;
  experiment.scenario_path = spec.path;
  experiment.scenario_text = spec.text;
  experiment.scenario_hash = scenario_hash(spec.text);
  experiment.started_at = utc_now_iso8601();
  experiment.status = "running";
  experiment.kvsweep_version = KVSWEEP_VERSION;
  experiment.host = host_name();
  experiment.setup_json = setup_json(spec, workloads.measured.description);
  SweepOutcome outcome;
  outcome.experiment_id = store.add_experiment(experiment);

  std::vector<store::CellRow> cells;
  for (const auto& p : plan) {
    store::CellRow cell;
    cell.experiment_id = outcome.experiment_id;
    cell.ordinal = p.ordinal;
    cell.key = p.key;
    cell.strategy = p.strategy;
    cell.concurrency = p.concurrency;
    cell.repeat = p.repeat;
    cell.factors_json = p.factors_json;
    cell.status = "pending";
    cell.id = store.add_cell(cell);
    cells.push_back(cell);
  }

  CellRunner runner(spec, target, store, console, options, workloads);
  outcome.status = "done";
  for (auto& cell : cells) {
    if (options.stop && options.stop->load()) {
      outcome.status = "interrupted";
      break;
    }
    std::string label = "cell " + std::to_string(cell.ordinal + 1) + "/" +
                        std::to_string(cells.size()) + " " + cell.strategy +
                        " c=" + std::to_string(cell.concurrency);
    if (spec.repeats > 1) label += " #" + std::to_string(cell.repeat + 1);
    const bool go_on = runner.run(cell, label);
    if (cell.status == "done") ++outcome.cells_done;
    if (cell.status == "failed") ++outcome.cells_failed;
    if (!go_on) {
      outcome.status = "interrupted";
      break;
    }
  }
  if (outcome.status == "done" && outcome.cells_failed > 0) outcome.status = "failed";
  store.finish_experiment(outcome.experiment_id, outcome.status, utc_now_iso8601());
  return outcome;
}

}  // namespace kvsweep::orchestrator
