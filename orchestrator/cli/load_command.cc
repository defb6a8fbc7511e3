// `kvsweep load`: one load run against any OpenAI-compatible server, vLLM-client style,
// measured between /metrics scrapes as a sweep's cell is (sweep/measured_phase.h) and
// recorded in the store through the same cell recorder.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

#include "common/error_kinds.h"
#include "common/wall_clock.h"
#include "driver/datasets/dataset_error.h"
#include "driver/datasets/dataset_limits.h"
#include "driver/datasets/load_workload.h"
#include "driver/descriptor_budget.h"
#include "driver/load_run.h"
#include "driver/test_request.h"
#include "figures/units.h"
#include "orchestrator/cli/console.h"
#include "orchestrator/cli/load_args.h"
#include "orchestrator/cli/load_options.h"
#include "orchestrator/cli/signal_guard.h"
#include "orchestrator/cli/store_lookup.h"
#include "orchestrator/cli/subcommand.h"
#include "orchestrator/scenario/scenario_reads.h"
#include "orchestrator/sweep/cell_recorder.h"
#include "orchestrator/sweep/measured_phase.h"
#include "orchestrator/sweep/record_rows.h"
#include "orchestrator/sweep/sharded_load.h"
#include "orchestrator/targets/shards/local_shard_launcher.h"
#include "orchestrator/targets/shards/temp_shard_dir.h"
#include "reports/vllm_result.h"
#include "store/store.h"

namespace kvsweep::orchestrator {
namespace {

std::string date_stamp() {
  const std::string iso = utc_now_iso8601();  // 2026-11-22T04:30:00Z
  return iso.substr(0, 4) + iso.substr(5, 2) + iso.substr(8, 2) + "-" + iso.substr(11, 2) +
         iso.substr(14, 2) + iso.substr(17, 2);
}

// What the store keeps about the run: the shape, never the key nor header values.
store::ExperimentSetup experiment_setup(const LoadArgs& args, const driver::LoadOptions& o,
                                        const driver::Workload& workload) {
  store::LoadSetup load;
  load.shape = o.request_rate > 0 ? "open loop" : "closed loop";
  if (o.request_rate > 0) {
    load.request_rate = o.request_rate;  // infinity is stored as "inf"
    load.burstiness = o.burstiness;
    load.max_concurrency = o.max_concurrency;
  } else {
    load.concurrency = o.concurrency;
  }
  load.dataset = workload.description;
  load.endpoint = o.endpoint == driver::LoadOptions::Endpoint::kChat ? "chat" : "completions";
  if (o.turns == driver::LoadOptions::Turns::kSequential) load.turns = "sequential";
  if (o.think_time_s > 0) load.think_time_s = o.think_time_s;
  if (o.new_connection_per_request) load.new_connection_per_request = true;
  load.stream = o.stream;
  load.max_tokens = o.max_tokens;
  if (o.num_requests > 0) load.num_requests = o.num_requests;
  if (o.duration_s > 0) load.duration_s = o.duration_s;
  // So `kvsweep export` writes the same percentile keys as this run's result file.
  const reports::PercentileSelection selection = percentile_selection(args);
  load.percentile_metrics = selection.metrics;
  load.metric_percentiles = selection.percentiles;
  std::vector<std::string> header_names;
  for (const auto& [name, value] : o.headers) header_names.push_back(name);
  if (!header_names.empty()) load.header_names = header_names;
  store::ExperimentSetup setup;
  store::TargetSetup& target = setup.target.emplace();
  target.kind = "endpoint";
  target.url = o.base_url;
  setup.model = o.model;
  setup.load = std::move(load);
  return setup;
}

// vLLM's num_prompts: the measured requests asked for (--num-prompts), else those sent in
// the measured phase. Warm-up requests are never counted.
std::int64_t measured_prompts(const driver::LoadOptions& options,
                              const std::vector<driver::RequestRecord>& records) {
  if (options.num_requests > 0) return options.num_requests;
  return std::count_if(records.begin(), records.end(),
                       [](const driver::RequestRecord& r) { return !r.warmup; });
}

// One request before the run, as vLLM's client does: a wrong URL, model or key stops here
// with the server's own answer, not after a block of zeros.
void check_test_request(const driver::LoadOptions& options, Console& console) {
  const driver::RequestRecord test = driver::send_test_request(options);
  if (test.ok) {
    console.line("test request ok (HTTP " + std::to_string(test.http_status) + ", " +
                 figures::format_ms(test.ended_s >= 0 ? (test.ended_s - test.sent_s) * 1000 : 0) +
                 " ms)");
    return;
  }
  if (test.error_kind == driver::kErrorCancelled) return;  // stopped by a signal: say nothing
  throw std::runtime_error("test request to " + options.base_url + " (model " + options.model +
                           ") failed: " + test.error_kind + ": " +
                           figures::failure_text(test.http_status, test.error) +
                           "; nothing was measured. Check --url, --model and the API key");
}

// Runs the load between /metrics scrapes of every --metrics-url (before, every
// --metrics-interval during, after), as a sweep's cell runs its measured phase.
CellMeasurement measure(const LoadArgs& args, const driver::LoadOptions& options,
                        const driver::Workload& workload, Console& console, const Log& log) {
  const MetricsScrapes scrapes{args.metrics_urls,
                               duration_or_throw(args.metrics_interval, "--metrics-interval")};
  CellMeasurement m;
  std::vector<store::CellShardRow> shards;
  const auto drive = [&](const std::function<void()>& underway) {
    driver::LoadOptions run_options = options;
    run_options.on_measured_underway = underway;
    if (run_options.shard.count > 1) {
      // Local processes of this binary, in a directory kept only when something went wrong.
      const TempShardDir dir;
      LocalShardLauncher launcher(self_program(), dir.path());
      ShardedLoad sharded =
          run_sharded_load(run_options, args.api_key_env, workload, launcher, run_options.stop,
                           [&](const std::string& text) { console.progress(text); });
      shards = std::move(sharded.shards);
      console.end_progress();
      return std::move(sharded.result);
    }
    driver::LoadResult result = driver::run_load(run_options, workload, [&](const auto& p) {
      std::string text = std::to_string(p.done) +
                         (p.total > 0 ? "/" + std::to_string(p.total) : std::string()) +
                         " requests, " + figures::format_rate(p.requests_per_s) +
                         " req/s, p50 TTFT " + figures::format_ms(p.p50_ttft_ms) + " ms";
      if (p.failed > 0) text += ", " + std::to_string(p.failed) + " failed";
      console.progress(text);
    });
    console.end_progress();
    return result;
  };
  measure_between_scrapes(scrapes, log, drive, m);
  m.load = cell_load_row(options, workload, m.measured.driver);
  m.load->shards = std::move(shards);
  for (const auto& error : m.scrape_errors) console.line("warning: scrape: " + error);
  return m;
}

// The store a run is recorded in, opened before anything is sent: a store that cannot be
// opened (a foreign file, no room for its schema) stops the run before it measures anything.
store::Store open_store_for_load(const std::string& db_path) {
  if (const auto dir = std::filesystem::path(db_path).parent_path(); !dir.empty()) {
    std::filesystem::create_directories(dir);
  }
  return store::Store::open(db_path);
}

// The run as an experiment of one cell, stored as `kvsweep run` stores each of its cells, in
// one transaction: a store that fills up part way keeps nothing of the run, not an experiment
// left "running". Returns the request rows stored.
std::vector<store::RequestRow> store_run(const LoadArgs& args, const driver::LoadOptions& options,
                                         const driver::Workload& workload, const CellMeasurement& m,
                                         const std::string& label, store::Store& store,
                                         Console& console) {
  const store::ExperimentSetup setup = experiment_setup(args, options, workload);
  store::ExperimentRow experiment =
      new_experiment_row("load-" + label, "(kvsweep load)", store::encode_setup(setup), "", setup);
  experiment.started_at = utc_iso8601(m.measured.epoch_wall_s);
  std::int64_t experiment_id = 0;
  std::vector<store::RequestRow> rows;
  store.in_transaction([&] {
    experiment_id = store.add_experiment(experiment);
    store::CellRow cell;
    cell.experiment_id = experiment_id;
    cell.key = "load";
    cell.arm = label;
    cell.concurrency = options.request_rate > 0 ? options.max_concurrency : options.concurrency;
    cell.status = "running";
    cell.started_at = experiment.started_at;
    cell.id = store.add_cell(cell);
    cell.status = m.measured.interrupted ? "interrupted" : "done";
    cell.finished_at = utc_now_iso8601();
    rows = record_cell(store, cell, m, ValidityRules{}).rows;
    store.finish_experiment(experiment_id, cell.status, cell.finished_at);
  });
  console.line("stored as experiment " + std::to_string(experiment_id) + " in " + store.path());
  return rows;
}

// What vLLM's console block and result JSON say about the run itself.
reports::VllmRunInfo run_info(const driver::LoadOptions& options, const driver::LoadResult& result,
                              const std::string& label) {
  reports::VllmRunInfo info;
  info.date = date_stamp();
  info.endpoint_type =
      options.endpoint == driver::LoadOptions::Endpoint::kChat ? "openai-chat" : "openai";
  info.label = label;
  info.model_id = options.model;
  info.num_prompts = measured_prompts(options, result.records);
  info.request_rate = std::isinf(options.request_rate) ? 0 : options.request_rate;
  info.burstiness = options.burstiness;
  info.max_concurrency = options.request_rate > 0 ? options.max_concurrency : options.concurrency;
  return info;
}

// The result JSON with vLLM's benchmark keys: at --result-file, or in --result-dir under
// --result-filename or vLLM's own file name.
void write_result(const LoadArgs& args, const driver::LoadOptions& options,
                  const reports::VllmRunInfo& info, const figures::CellMetrics& metrics,
                  const std::string& label, Console& console) {
  const std::string name = !args.result_filename.empty()
                               ? args.result_filename
                               : result_file_name(label, options.request_rate, info.max_concurrency,
                                                  options.model, info.date);
  const std::string path = !args.result_file.empty()
                               ? args.result_file
                               : (std::filesystem::path(args.result_dir) / name).string();
  write_file(path,
             reports::vllm_result_json(metrics, info, percentile_selection(args)).dump(2) + "\n");
  console.line("result written to " + path);
}

std::string shape_text(const driver::LoadOptions& options) {
  if (options.request_rate <= 0) return std::to_string(options.concurrency) + " concurrent users";
  if (std::isinf(options.request_rate)) return "all at once";
  return figures::format_rate(options.request_rate) + " req/s open loop";
}

int run_load_command(const LoadArgs& args, const GlobalOptions& global) {
  const driver::LoadOptions options = load_options(args);
  const reports::PercentileSelection selection = percentile_selection(args);
  std::optional<figures::Slo> slo;
  if (!args.goodput.empty()) {
    std::string error;
    slo = parse_goodput(args.goodput, &error);
    if (!slo) throw UsageError("--goodput: " + error);
  }
  driver::Workload workload;
  try {
    workload = driver::load_workload(dataset_options(args));
  } catch (const driver::DatasetError& e) {
    throw UsageError(std::string("dataset: ") + e.what());
  }
  Console console(stderr, Console::PlainProgress::kQuiet, global.verbosity);
  console.line("load " + options.base_url + " model " + options.model + ": " + shape_text(options) +
               ", " + workload.description);

  // Before the test request: a run the descriptor limit cannot carry sends nothing at all.
  driver::check_descriptor_budget(options, workload);

  // Opened before the test request: a store that cannot take the run refuses it unmeasured.
  std::optional<store::Store> store;
  if (!global.db_path.empty()) store.emplace(open_store_for_load(global.db_path));

  SignalGuard signals;
  driver::LoadOptions run_options = options;
  run_options.stop = &signals.stop_flag();
  check_test_request(run_options, console);
  if (signals.stop_flag().load()) return kExitInterrupted;
  const CellMeasurement m = measure(args, run_options, workload, console, global.log);

  // What was measured is printed and written whatever becomes of the store (a full disk):
  // the summary and the result file still hold it.
  const std::string label = args.label.empty() ? "kvsweep" : args.label;
  std::vector<store::RequestRow> rows;
  std::string store_error;
  if (store) {
    try {
      rows = store_run(args, options, workload, m, label, *store, console);
    } catch (const std::exception& e) {
      store_error = e.what();
    }
  }
  if (!store || !store_error.empty()) rows = to_request_rows(m.measured.records, 0, 0);
  const figures::CellMetrics metrics =
      figures::compute_cell_metrics(rows, m.samples, slo.value_or(figures::Slo{}), m.load);
  const reports::VllmRunInfo info = run_info(options, m.measured, label);
  std::fputs(reports::serving_result_text(metrics, selection, &info).c_str(), stdout);
  std::fflush(stdout);
  for (const store::CellShardRow& shard : m.load->shards) console.line(shard_line(shard));
  console.line("verdict: " + figures::verdict_line(metrics.validity));
  if (!store_error.empty()) {
    console.line("kvsweep: error: the run was measured but not stored in " + global.db_path + ": " +
                 store_error + (saves_result(args) ? "; its result file holds it" : ""));
  }
  if (saves_result(args)) write_result(args, options, info, metrics, label, console);
  if (!store_error.empty()) return kExitFailed;
  if (m.measured.interrupted) return kExitInterrupted;
  return metrics.ok > 0 ? kExitOk : kExitFailed;
}

// What each request is: where it goes and what it asks for.
}  // namespace

Subcommand register_load(CLI::App& app, const GlobalOptions& global) {
  auto a = std::make_shared<LoadArgs>();
  auto* cmd = app.add_subcommand(
      "load", "run load against an OpenAI-compatible server and print vLLM-style results");
  cmd->footer(
      "Durations: 250ms, 90s, 5m, 1h or seconds. The result JSON (--save-result, "
      "--result-filename\nor -o FILE) uses vLLM's benchmark keys; every request is stored in "
      "--db. The API key\nis read from the environment only.");
  add_load_options(cmd, a.get());
  return {cmd, [a, &global] { return run_load_command(*a, global); }};
}

}  // namespace kvsweep::orchestrator
