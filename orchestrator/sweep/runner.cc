// Runs a scenario's plan on a target, cell by cell, storing every cell and request.
#include "orchestrator/sweep/runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/wall_clock.h"
#include "driver/datasets/load_workload.h"
#include "driver/load_run.h"
#include "orchestrator/sweep/metrics_scraper.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/sweep/record_rows.h"
#include "reports/cell_metrics.h"
#include "reports/report_model.h"
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
std::string setup_json(const ScenarioSpec& spec, const std::string& workload_description,
                       const Target& target, const RunnerOptions& options) {
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
  load["cache"] = spec.load.cache;
  load["timeout_s"] = spec.load.timeout_s;
  nlohmann::ordered_json setup;
  const bool sim = options.target_override == "sim" || spec.target.kind == "sim";
  setup["target"] = {{"kind", sim ? "sim" : spec.target.kind},
                     {"replicas", sim ? spec.target.sim.replicas : spec.target.replicas},
                     {"profile", sim ? spec.target.sim.profile : ""},
                     {"description", target.describe()}};
  if (sim && spec.target.kind != "sim") setup["target"]["stands_in_for"] = spec.target.kind;
  setup["model"] = spec.model;
  setup["description"] = spec.description;
  setup["seed"] = spec.seed;
  nlohmann::ordered_json factors = nlohmann::ordered_json::object();
  for (const auto& f : spec.factors) {
    factors[f.name] = {{"levels", f.levels},
                       {"phase", f.phase == FactorPhase::kDeploy ? "deploy" : "run"}};
  }
  setup["factors"] = factors;
  setup["strategies"] = arm_labels(spec);
  std::vector<int> concurrency;
  for (const auto& level : spec.factor("concurrency")->levels) concurrency.push_back(std::stoi(level));
  setup["concurrency"] = concurrency;
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
    text += ", mean TTFT " + reports::format_ms(m.ttft_ms.mean) + " ms, ";
    if (m.total_token_throughput) {
      text += reports::format_si(*m.total_token_throughput) + " tok/s";
    } else {  // the server sent no usage: prompt tokens unknown, output tokens counted
      text += reports::format_si(m.output_throughput) + " output tok/s" +
              (m.output_tokens_estimated > 0 ? " (estimated)" : "");
    }
  }
  text += ", KV hit " + reports::format_percent(m.kv_hit_rate_server) +
          (m.kv_hit_rate_server ? "%" : "");
  return text;
}

// Under the summary, why requests failed: the first of each kind, with its status and reason.
std::vector<std::string> first_failure_lines(const reports::CellMetrics& m) {
  std::vector<std::string> lines;
  for (const auto& [kind, count] : m.failed_by_kind) {
    const auto first = m.first_failure_by_kind.find(kind);
    std::string line = std::to_string(count) + " " + (kind.empty() ? "unknown" : kind);
    if (first != m.first_failure_by_kind.end()) {
      line += ", first: " + reports::failure_text(first->second.http_status, first->second.error);
    }
    lines.push_back(line);
  }
  return lines;
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
    throw std::invalid_argument(std::string("load.dataset: ") + e.what());
  }
  return w;
}

std::vector<store::CommandRow> command_rows(const std::vector<CommandLog>& logs) {
  std::vector<store::CommandRow> rows;
  for (const auto& log : logs) {
    store::CommandRow row;
    row.step = log.step;
    row.argv = log.argv;
    row.exit_code = log.exit_code;
    row.seconds = log.seconds;
    row.out = log.out;
    row.err = log.err;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string describe_treatment(const Treatment& t) {
  std::string text;
  for (const auto& [factor, level] : t.levels) {
    text += (text.empty() ? "" : ", ") + factor + "=" + level;
  }
  return text.empty() ? "(no target factor)" : text;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// What one cell measured, before it is stored.
struct CellData {
  driver::LoadResult prepass;  // cache: warm
  driver::LoadResult warmup;
  driver::LoadResult measured;
  std::vector<store::MetricSample> samples;
  std::vector<std::string> scrape_errors;
};

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

  // Applies the plan's treatment when it differs from what the target runs now, then opens
  // the readiness gates. Throws TargetError; the target's state is unknown afterwards.
  void ensure_applied(const CellPlan& plan) {
    if (applied_ && *applied_ == plan.treatment) return;
    applied_.reset();
    const auto start = std::chrono::steady_clock::now();
    console_.line("  applying " + describe_treatment(plan.treatment) + " on " + target_.describe());
    target_.apply(plan.treatment);
    target_.wait_ready();
    console_.line("  ready after " + reports::format_ms(seconds_since(start) * 1000) + " ms");
    applied_ = plan.treatment;
  }

  // Whether the last run() failed before sending load: applying, readiness or the cold cache.
  bool setup_failed() const { return setup_failed_; }

  // Runs one cell and stores it. Returns false when the sweep should stop (interrupted).
  bool run(store::CellRow& cell, const CellPlan& plan, const std::string& label) {
    setup_failed_ = false;
    cell.status = "running";
    cell.started_at = utc_now_iso8601();
    store_.update_cell(cell);
    CellData data;
    const std::string cache = plan.load_levels.count("cache") ? plan.load_levels.at("cache")
                                                              : spec_.load.cache;
    try {
      ensure_applied(plan);
      if (cache == "cold") target_.make_cold();
    } catch (const TargetError& e) {
      applied_.reset();
      setup_failed_ = true;
      return finish(cell, data, "failed", e.what(), label);
    }

    if (cache == "warm") {
      // The measured workload once, unmeasured: every arm starts from a cache that has seen
      // it, as the KubeAI benchmarks ran everything twice.
      data.prepass = drive(plan, workloads_.measured, Phase::kPrepass, label + " warm pre-pass");
      if (data.prepass.interrupted) return finish(cell, data, "interrupted", "", label);
    }
    if (spec_.load.warmup_requests > 0) {
      data.warmup = drive(plan, workloads_.warmup, Phase::kWarmup, label + " warm-up");
      if (data.warmup.interrupted) return finish(cell, data, "interrupted", "", label);
    }

    std::vector<std::string> metrics_urls;
    try {
      metrics_urls = target_.metrics_urls();
    } catch (const TargetError& e) {
      data.scrape_errors.push_back(e.what());
    }
    ScrapeResult before = scrape_metrics(metrics_urls, "before", 0, *options_.log);
    const double measured_start_wall = unix_now_s();
    std::optional<PeriodicScraper> during;
    if (spec_.target.metrics.interval_s > 0 && !metrics_urls.empty()) {
      during.emplace(metrics_urls, spec_.target.metrics.interval_s, measured_start_wall,
                     options_.log);
    }
    // Once the servers answer measured load, scrape at once: a cell shorter than the interval
    // still gets a "during" scrape (KV-cache usage is only meaningful under load).
    std::function<void()> underway;
    if (during) underway = [&during] { during->scrape_now(); };
    data.measured = drive(plan, workloads_.measured, Phase::kMeasured, label, underway);
    ScrapeResult middle = during ? during->take() : ScrapeResult{};
    ScrapeResult after = scrape_metrics(metrics_urls, "after",
                                        unix_now_s() - data.measured.epoch_wall_s, *options_.log);
    // "before" and "during" were timed from the measured phase's start as seen here; shift
    // them onto the driver's epoch.
    const double shift = measured_start_wall - data.measured.epoch_wall_s;
    for (auto& sample : middle.samples) sample.t_s += shift;
    for (ScrapeResult* r : {&before, &middle, &after}) {
      data.samples.insert(data.samples.end(), r->samples.begin(), r->samples.end());
      data.scrape_errors.insert(data.scrape_errors.end(), r->errors.begin(), r->errors.end());
    }

    if (data.measured.interrupted) return finish(cell, data, "interrupted", "", label);
    return finish(cell, data, "done", all_failed_reason(data.measured.records), label);
  }

 private:
  enum class Phase { kPrepass, kWarmup, kMeasured };

  // The warm-up phase is always a closed loop of at most `concurrency` users sending
  // warmup_requests requests; the pre-pass and the measured phase have the cell's shape.
  driver::LoadResult drive(const CellPlan& plan, const driver::Workload& workload, Phase phase,
                           const std::string& label,
                           const std::function<void()>& on_measured_underway = {}) {
    const LoadSpec& l = spec_.load;
    driver::LoadOptions o;
    o.base_url = target_.base_url();
    o.model = spec_.model;
    o.endpoint = l.endpoint == "completions" ? driver::LoadOptions::Endpoint::kCompletions
                                             : driver::LoadOptions::Endpoint::kChat;
    o.stream = l.stream;
    o.max_tokens = plan.load_levels.count("max_tokens") ? std::stoi(plan.load_levels.at("max_tokens"))
                                                        : l.max_tokens;
    o.max_tokens_cap = l.max_tokens_cap;
    o.api_key = options_.api_key;
    o.ignore_eos = l.ignore_eos;
    o.temperature = l.temperature;
    o.seed = spec_.seed;  // the same arrival schedule for every strategy: a fair comparison
    o.request_timeout_s = l.timeout_s;
    o.stop = options_.stop;
    o.on_measured_underway = on_measured_underway;
    const double rate = plan.load_levels.count("request_rate")
                            ? std::stod(plan.load_levels.at("request_rate"))
                            : l.request_rate;
    if (phase == Phase::kWarmup) {
      o.concurrency = plan.concurrency;
      o.num_requests = l.warmup_requests;
    } else {
      if (rate > 0) {
        o.request_rate = rate;
        o.burstiness = l.burstiness;
        o.max_concurrency = plan.concurrency;
      } else {
        o.concurrency = plan.concurrency;
      }
      o.num_requests = l.num_requests;
      o.duration_s = l.duration_s;
    }
    auto result = driver::run_load(o, workload, [&](const driver::Progress& p) {
      console_.progress(describe_progress(label, p));
    });
    console_.end_progress();
    if (phase != Phase::kMeasured) {
      for (auto& r : result.records) r.warmup = true;
    }
    return result;
  }

  // Stores the cell with everything it measured and ran, in one transaction.
  bool finish(store::CellRow& cell, const CellData& data, const std::string& status,
              const std::string& failure, const std::string& label) {
    // The measured phase's epoch is the cell's; earlier phases land before 0.
    double epoch = data.measured.epoch_wall_s;
    if (epoch == 0) epoch = data.warmup.epoch_wall_s;
    if (epoch == 0) epoch = data.prepass.epoch_wall_s;
    cell.epoch_wall_s = epoch;
    std::vector<store::RequestRow> rows;
    std::int64_t index = 0;
    for (const driver::LoadResult* phase : {&data.prepass, &data.warmup, &data.measured}) {
      const auto phase_rows = to_request_rows(phase->records, phase->epoch_wall_s - epoch, index);
      index += static_cast<std::int64_t>(phase->records.size());
      rows.insert(rows.end(), phase_rows.begin(), phase_rows.end());
    }
    for (const auto& error : data.scrape_errors) console_.line("  warning: scrape: " + error);

    cell.status = status;
    cell.error = status == "interrupted" ? "stopped by a signal" : failure;
    if (status == "done" && !failure.empty()) cell.status = "failed";
    cell.finished_at = utc_now_iso8601();
    const std::vector<CommandLog> logs = target_.take_logs();
    // The router's health events (a replica taken out of routing or put back) change what the
    // cell measured: said on the console as well as kept with the cell's commands.
    for (const auto& log : logs) {
      if (log.step != "health" || log.exit_code != 0) continue;
      std::size_t start = 0;
      for (std::size_t end; (end = log.out.find('\n', start)) != std::string::npos;
           start = end + 1) {
        console_.line("  " + label + ": " + log.out.substr(start, end - start));
      }
    }
    store_.record_cell(cell, rows, data.samples, command_rows(logs));

    if (cell.status == "interrupted") {
      console_.line("  " + label + ": interrupted; " + std::to_string(rows.size()) +
                    " finished requests kept");
      return false;
    }
    const reports::CellMetrics metrics = reports::compute_cell_metrics(rows, data.samples);
    if (cell.status == "failed") {
      console_.line("  " + label + ": failed: " + cell.error);
    } else {
      console_.line("  " + label + ": " + cell_summary(metrics));
    }
    for (const auto& line : first_failure_lines(metrics)) console_.line("    " + line);
    return true;
  }

  const ScenarioSpec& spec_;
  Target& target_;
  store::Store& store_;
  Console& console_;
  const RunnerOptions& options_;
  const Workloads& workloads_;
  std::optional<Treatment> applied_;  // what the target runs now, when known
  bool setup_failed_ = false;
};

store::ExperimentRow new_experiment_row(const ScenarioSpec& spec, const std::string& hash,
                                        const std::string& setup) {
  store::ExperimentRow experiment;
  experiment.name = spec.name;
  experiment.scenario_path = spec.path;
  experiment.scenario_text = spec.text;
  experiment.scenario_hash = hash;
  experiment.started_at = utc_now_iso8601();
  experiment.status = "running";
  experiment.kvsweep_version = KVSWEEP_VERSION;
  experiment.host = host_name();
  experiment.setup_json = setup;
  return experiment;
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
    cell.strategy = p.arm;
    cell.concurrency = p.concurrency;
    cell.repeat = p.repeat;
    cell.factors_json = p.factors_json;
    cell.status = "pending";
    cell.id = store.add_cell(cell);
    cells.push_back(cell);
  }
  return cells;
}

}  // namespace

SweepOutcome run_sweep(const ScenarioSpec& spec, Target& target, store::Store& store,
                       Console& console, const RunnerOptions& options) {
  const std::vector<CellPlan> plan = expand_plan(spec, options.target_override);
  const Workloads workloads = load_workloads(spec);  // a bad dataset fails before anything runs
  const std::string hash = scenario_hash(spec.text, options.target_override);

  SweepOutcome outcome;
  std::optional<store::ExperimentRow> previous;
  if (options.resume) previous = store.latest_unfinished(hash);
  if (previous) {
    outcome.experiment_id = previous->id;
    outcome.resumed = true;
    store.reopen_experiment(previous->id);
    console.line("resuming experiment " + std::to_string(previous->id) + " (" + previous->status +
                 ", started " + previous->started_at + ")");
  } else {
    if (options.resume) {
      console.line("nothing to resume: no unfinished experiment of this scenario in " +
                   store.path() + "; starting a new one");
    }
    outcome.experiment_id = store.add_experiment(new_experiment_row(
        spec, hash, setup_json(spec, workloads.measured.description, target, options)));
  }
  std::vector<store::CellRow> cells = prepare_cells(plan, store, outcome.experiment_id,
                                                    outcome.resumed);

  CellRunner runner(spec, target, store, console, options, workloads);
  outcome.status = "done";
  const int groups = plan.empty() ? 0 : plan.back().deploy_group + 1;
  const bool has_deploy_factor =
      std::any_of(spec.factors.begin(), spec.factors.end(),
                  [](const FactorSpec& f) { return f.phase == FactorPhase::kDeploy; });
  std::string group_failure;  // why the current group's deployment failed, "" if it did not
  for (std::size_t i = 0; i < cells.size(); ++i) {
    store::CellRow& cell = cells[i];
    const CellPlan& p = plan[i];
    if (options.stop && options.stop->load()) {
      outcome.status = "interrupted";
      break;
    }
    const bool group_start = i == 0 || plan[i - 1].deploy_group != p.deploy_group;
    if (group_start) {
      group_failure.clear();
      bool all_done = true;
      for (std::size_t j = i; j < cells.size() && plan[j].deploy_group == p.deploy_group; ++j) {
        all_done = all_done && cells[j].status == "done";
      }
      if (groups > 1) {
        console.line("deployment " + std::to_string(p.deploy_group + 1) + "/" +
                     std::to_string(groups) + ": " + describe_treatment(p.treatment) +
                     (all_done ? ": every cell already done, skipped" : ""));
      }
    }
    if (cell.status == "done") {
      ++outcome.cells_skipped;
      continue;
    }
    // The arm is named as the report names its row ("prefix-hash #2"), so the two agree.
    const std::string label = "cell " + std::to_string(cell.ordinal + 1) + "/" +
                              std::to_string(cells.size()) + " " +
                              reports::repeat_label(p.arm, p.repeat, spec.repeats) +
                              " c=" + std::to_string(p.concurrency);
    if (!group_failure.empty()) {
      // The deployment this cell needs never became ready: do not wait on every gate again.
      cell.status = "failed";
      cell.error = "not run: its deployment failed: " + group_failure;
      cell.started_at = cell.finished_at = utc_now_iso8601();
      store.update_cell(cell);
      console.line("  " + label + ": not run, its deployment failed");
      ++outcome.cells_failed;
      continue;
    }
    const bool go_on = runner.run(cell, p, label);
    if (cell.status == "done") ++outcome.cells_done;
    if (cell.status == "failed") {
      ++outcome.cells_failed;
      // A deployment that failed to apply or to become ready sinks its whole group: waiting
      // out every gate's time limit again for each of its cells would find the same.
      if (has_deploy_factor && runner.setup_failed()) group_failure = cell.error;
    }
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
