// `kvsweep load`: one load run against any OpenAI-compatible server, vLLM-client style,
// recorded in the store through the same cell recorder as a sweep's cells.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/wall_clock.h"
#include "driver/datasets/dataset_error.h"
#include "driver/datasets/dataset_limits.h"
#include "driver/datasets/load_workload.h"
#include "driver/descriptor_budget.h"
#include "driver/load_run.h"
#include "driver/test_request.h"
#include "orchestrator/cli/console.h"
#include "orchestrator/cli/load_args.h"
#include "orchestrator/cli/signal_guard.h"
#include "orchestrator/cli/store_lookup.h"
#include "orchestrator/cli/subcommand.h"
#include "orchestrator/scenario/scenario_reads.h"
#include "orchestrator/sweep/cell_recorder.h"
#include "orchestrator/sweep/metrics_scraper.h"
#include "orchestrator/sweep/record_rows.h"
#include "orchestrator/sweep/sharded_load.h"
#include "orchestrator/targets/shards/local_shard_launcher.h"
#include "orchestrator/targets/shards/temp_shard_dir.h"
#include "reports/units.h"
#include "reports/vllm_result.h"
#include "store/store.h"

namespace kvsweep::orchestrator {
namespace {

// --request-rate: 0 (the default: a closed loop), inf (every request at once), or a rate the
// scenario key load.request_rate accepts.
CLI::Validator rate_or_inf() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double rate = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0') return "";  // the conversion says it
        if (rate == 0 || (std::isinf(rate) && rate > 0)) return "";
        if (std::isfinite(rate) && rate >= kMinRate && rate <= kMaxRate) return "";
        return "expected a rate in requests/s from 0.001 to 1000000, or inf, got " + text;
      },
      "RATE");
}

std::string date_stamp() {
  const std::string iso = utc_now_iso8601();  // 2026-11-22T04:30:00Z
  return iso.substr(0, 4) + iso.substr(5, 2) + iso.substr(8, 2) + "-" + iso.substr(11, 2) +
         iso.substr(14, 2) + iso.substr(17, 2);
}

// What the store keeps about the run: the shape, never the key nor header values.
std::string setup_json(const LoadArgs& args, const driver::LoadOptions& o,
                       const driver::Workload& workload) {
  nlohmann::ordered_json load;
  load["shape"] = o.request_rate > 0 ? "open loop" : "closed loop";
  if (o.request_rate > 0) {
    load["request_rate"] = std::isinf(o.request_rate) ? nlohmann::ordered_json("inf")
                                                      : nlohmann::ordered_json(o.request_rate);
    load["burstiness"] = o.burstiness;
    load["max_concurrency"] = o.max_concurrency;
  } else {
    load["concurrency"] = o.concurrency;
  }
  load["dataset"] = workload.description;
  load["endpoint"] = o.endpoint == driver::LoadOptions::Endpoint::kChat ? "chat" : "completions";
  if (o.turns == driver::LoadOptions::Turns::kSequential) load["turns"] = "sequential";
  if (o.think_time_s > 0) load["think_time_s"] = o.think_time_s;
  if (o.new_connection_per_request) load["new_connection_per_request"] = true;
  load["stream"] = o.stream;
  load["max_tokens"] = o.max_tokens;
  if (o.num_requests > 0) load["num_requests"] = o.num_requests;
  if (o.duration_s > 0) load["duration_s"] = o.duration_s;
  // So `kvsweep export` writes the same percentile keys as this run's result file.
  const reports::PercentileSelection selection = percentile_selection(args);
  load["percentile_metrics"] = selection.metrics;
  load["metric_percentiles"] = selection.percentiles;
  std::vector<std::string> header_names;
  for (const auto& [name, value] : o.headers) header_names.push_back(name);
  if (!header_names.empty()) load["header_names"] = header_names;
  nlohmann::ordered_json setup;
  setup["target"] = {{"kind", "endpoint"}, {"url", o.base_url}};
  setup["model"] = o.model;
  setup["load"] = load;
  setup["baseline"] = "";
  return setup.dump();
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
                 reports::format_ms(test.ended_s >= 0 ? (test.ended_s - test.sent_s) * 1000 : 0) +
                 " ms)");
    return;
  }
  if (test.error_kind == driver::kErrorCancelled) return;  // stopped by a signal: say nothing
  throw std::runtime_error("test request to " + options.base_url + " (model " + options.model +
                           ") failed: " + test.error_kind + ": " +
                           reports::failure_text(test.http_status, test.error) +
                           "; nothing was measured. Check --url, --model and the API key");
}

// Runs the load between /metrics scrapes of every --metrics-url: before, during (every
// --metrics-interval, and once the server answers a measured request) and after. The samples
// land on the driver's epoch.
CellMeasurement measure(const LoadArgs& args, driver::LoadOptions run_options,
                        const driver::Workload& workload, Console& console, const Log& log) {
  const double metrics_interval_s = duration_or_throw(args.metrics_interval, "--metrics-interval");
  const ScrapeResult before = scrape_metrics(args.metrics_urls, "before", 0, *log);
  const double during_start_wall = unix_now_s();
  std::optional<PeriodicScraper> during;
  if (!args.metrics_urls.empty() && metrics_interval_s > 0) {
    during.emplace(args.metrics_urls, metrics_interval_s, during_start_wall, log);
    // KV-cache usage means something only under load: scrape as soon as the server answers
    // a measured request, so a run shorter than the interval is scraped during it too.
    run_options.on_measured_underway = [&during] { during->scrape_now(); };
  }
  CellMeasurement m;
  std::vector<store::CellShardRow> shards;
  if (run_options.shard.count > 1) {
    // Local processes of this binary, in a directory kept only when something went wrong.
    const TempShardDir dir;
    LocalShardLauncher launcher(self_program(), dir.path());
    ShardedLoad sharded =
        run_sharded_load(run_options, args.api_key_env, workload, launcher, run_options.stop,
                         [&](const std::string& text) { console.progress(text); });
    m.measured = std::move(sharded.result);
    shards = std::move(sharded.shards);
  } else {
    m.measured = driver::run_load(run_options, workload, [&](const auto& p) {
      std::string text = std::to_string(p.done) +
                         (p.total > 0 ? "/" + std::to_string(p.total) : std::string()) +
                         " requests, " + reports::format_rate(p.requests_per_s) +
                         " req/s, p50 TTFT " + reports::format_ms(p.p50_ttft_ms) + " ms";
      if (p.failed > 0) text += ", " + std::to_string(p.failed) + " failed";
      console.progress(text);
    });
  }
  console.end_progress();
  m.load = cell_load_row(run_options, workload, m.measured.driver);
  m.load->shards = std::move(shards);
  ScrapeResult middle = during ? during->take() : ScrapeResult{};
  const ScrapeResult after =
      scrape_metrics(args.metrics_urls, "after", unix_now_s() - m.measured.epoch_wall_s, *log);
  for (const auto& e : before.errors) console.line("warning: scrape before: " + e);
  for (const auto& e : middle.errors) console.line("warning: scrape during: " + e);
  for (const auto& e : after.errors) console.line("warning: scrape after: " + e);
  m.samples = before.samples;
  // "during" was timed from its own start as seen here; shift it onto the driver's epoch.
  for (auto& sample : middle.samples) sample.t_s += during_start_wall - m.measured.epoch_wall_s;
  m.samples.insert(m.samples.end(), middle.samples.begin(), middle.samples.end());
  m.samples.insert(m.samples.end(), after.samples.begin(), after.samples.end());
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
  const std::string setup = setup_json(args, options, workload);
  store::ExperimentRow experiment =
      new_experiment_row("load-" + label, "(kvsweep load)", setup, "", setup);
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
    cell.factors_json = "{}";
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
                  const reports::VllmRunInfo& info, const reports::CellMetrics& metrics,
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
  return reports::format_rate(options.request_rate) + " req/s open loop";
}

int run_load_command(const LoadArgs& args, const GlobalOptions& global) {
  const driver::LoadOptions options = load_options(args);
  const reports::PercentileSelection selection = percentile_selection(args);
  std::optional<reports::Slo> slo;
  if (!args.goodput.empty()) {
    std::string error;
    slo = parse_goodput(args.goodput, &error);
    if (!slo) throw std::invalid_argument("--goodput: " + error);
  }
  driver::Workload workload;
  try {
    workload = driver::load_workload(dataset_options(args));
  } catch (const driver::DatasetError& e) {
    throw std::invalid_argument(std::string("dataset: ") + e.what());
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
  const reports::CellMetrics metrics =
      reports::compute_cell_metrics(rows, m.samples, slo.value_or(reports::Slo{}), m.load);
  const reports::VllmRunInfo info = run_info(options, m.measured, label);
  std::fputs(reports::serving_result_text(metrics, selection, &info).c_str(), stdout);
  std::fflush(stdout);
  for (const store::CellShardRow& shard : m.load->shards) console.line(shard_line(shard));
  console.line("verdict: " + reports::verdict_line(metrics.validity));
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
void add_request_options(CLI::App* cmd, LoadArgs* a) {
  cmd->add_option("--url,--base-url", a->url,
                  "server base URL, with or without /v1: http://127.0.0.1:8000")
      ->required();
  cmd->add_option("--model", a->model, "model name sent in every request")->required();
  cmd->add_option("--api-key-env", a->api_key_env,
                  "name of the environment variable holding the API key");
  cmd->add_option("--header", a->headers, "extra request header NAME=VALUE (repeatable)");
  cmd->add_option("--endpoint", a->endpoint,
                  "chat (/v1/chat/completions, the default) or completions; vLLM's path form "
                  "/v1/chat/completions or /v1/completions is accepted too")
      ->capture_default_str();
  cmd->add_flag("--no-stream", a->no_stream, "non-streaming requests (TTFT = E2E)");
  cmd->add_option("--max-tokens", a->max_tokens,
                  "output tokens per request (unless the "
                  "dataset sets them)")
      ->capture_default_str();
  cmd->add_flag("--ignore-eos", a->ignore_eos, "ask the server to ignore EOS");
  cmd->add_option("--temperature", a->temperature, "sampling temperature (default 0)")
      ->check(CLI::Range(0.0, kMaxTemperature));
  cmd->add_option("--extra-body", a->extra_body, "JSON object merged into every request body");
}

// How the load is shaped: closed or open loop, how long, the warm-up, the timeouts.
void add_shape_options(CLI::App* cmd, LoadArgs* a) {
  cmd->add_option("--concurrency", a->concurrency,
                  "closed loop: virtual users, each with one request in flight (default 1)")
      ->check(CLI::Range(0, driver::kMaxConcurrency));
  cmd->add_option("--request-rate", a->request_rate,
                  "open loop: requests per second, Poisson arrivals (inf: all at once)")
      ->check(rate_or_inf());
  cmd->add_option("--burstiness", a->burstiness, "gamma shape of arrival gaps (1 = Poisson)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, kMaxBurstiness));
  cmd->add_option("--max-concurrency", a->max_concurrency, "open loop: in-flight cap")
      ->check(CLI::Range(0, driver::kMaxConcurrency));
  cmd->add_option("--num-prompts", a->num_prompts, "measured requests to send")
      ->check(CLI::Range(std::int64_t{0}, driver::kMaxRequests));
  cmd->add_option("--duration", a->duration, "measured phase length, e.g. 5m");
  cmd->add_option("--warmup-requests", a->warmup_requests, "first N requests are warm-up")
      ->check(CLI::Range(std::int64_t{0}, driver::kMaxRequests));
  cmd->add_option("--warmup-conversations", a->warmup_conversations,
                  "requests of the first N conversations are warm-up")
      ->check(CLI::Range(0, driver::kMaxConversations));
  cmd->add_option("--warmup", a->warmup, "requests sent in the first DURATION are warm-up");
  cmd->add_option("--seed", a->seed, "seed of datasets and arrival schedules")
      ->capture_default_str();
  cmd->add_option("--shards", a->shards,
                  "split the load into N local processes that together send exactly the "
                  "schedule one would (docs/driver.md, \"Shards\")")
      ->capture_default_str();
  cmd->add_option("--timeout", a->timeout, "whole-request timeout")->capture_default_str();
  cmd->add_option("--connect-timeout", a->connect_timeout, "connect timeout")
      ->capture_default_str();
  cmd->add_option("--first-byte-timeout", a->first_byte_timeout,
                  "send to status line timeout (default off)");
  cmd->add_option("--max-event-bytes", a->max_event_bytes,
                  "most bytes one SSE event may hold; a longer one fails the request as "
                  "\"event too large\"")
      ->capture_default_str();
}

// Which conversations are sent.
void add_dataset_options(CLI::App* cmd, LoadArgs* a) {
  a->dataset.kind = "synthetic-multiturn";
  cmd->add_option("--dataset,--dataset-name", a->dataset.kind,
                  "synthetic-multiturn, sharegpt, chat-threads, shared-prefix, jsonl, mooncake, "
                  "random")
      ->capture_default_str();
  cmd->add_option("--dataset-path", a->dataset.path, "dataset file (file-based kinds)");
  cmd->add_option("--min-messages", a->dataset.min_messages,
                  "sharegpt: keep conversations "
                  "with at least N messages");
  cmd->add_option("--max-conversations", a->dataset.max_conversations,
                  "sharegpt: keep at most N conversations");
  cmd->add_option("--conversations", a->dataset.conversations, "synthetic: conversations")
      ->capture_default_str();
  cmd->add_option("--turns-per-conversation", a->turns, "synthetic: turns per conversation")
      ->capture_default_str();
  cmd->add_option("--system-prompt-words", a->system_prompt_words,
                  "synthetic: shared system prompt length")
      ->capture_default_str();
  cmd->add_option("--user-words", a->user_words, "synthetic: user message length")
      ->capture_default_str();
  cmd->add_option("--assistant-words", a->assistant_words, "synthetic: reply length")
      ->capture_default_str();
  cmd->add_option("--prefix-tokens", a->dataset.prefix_tokens, "shared-prefix: prefix length")
      ->capture_default_str();
  cmd->add_option("--num-prefixes", a->dataset.num_prefixes, "shared-prefix: distinct prefixes")
      ->capture_default_str();
  cmd->add_option("--prompts-per-prefix", a->dataset.prompts_per_prefix,
                  "shared-prefix: prompts per prefix")
      ->capture_default_str();
  cmd->add_option("--suffix-tokens", a->dataset.suffix_tokens, "shared-prefix: suffix length")
      ->capture_default_str();
  cmd->add_option("--block-size", a->dataset.block_size,
                  "mooncake: tokens per hash_id block (required: Mooncake uses 512)");
  cmd->add_option("--time-scale", a->dataset.time_scale, "mooncake: multiply arrival times")
      ->capture_default_str();
}

// What is measured and where the result goes.
void add_result_options(CLI::App* cmd, LoadArgs* a) {
  cmd->add_option("--goodput", a->goodput, "SLOs, e.g. --goodput ttft:500 tpot:50 e2el:3000");
  cmd->add_option("--percentile-metrics", a->percentile_metrics,
                  "metrics with percentiles: ttft,tpot,itl,e2el")
      ->capture_default_str();
  cmd->add_option("--metric-percentiles", a->metric_percentiles, "e.g. 50,90,99")
      ->capture_default_str();
  cmd->add_option("--metrics-url", a->metrics_urls,
                  "a server /metrics URL to scrape before, during and after (repeatable): KV "
                  "hit rate, KV-cache usage");
  cmd->add_option("--metrics-interval", a->metrics_interval,
                  "how often /metrics is scraped during the run (0: before and after only)")
      ->capture_default_str();
  cmd->add_option("--label", a->label, "label of the result (file name, store)");
  cmd->add_option("--result-dir", a->result_dir,
                  "where the result JSON goes with --save-result or --result-filename")
      ->capture_default_str();
  cmd->add_option("-o,--output,--result-file", a->result_file,
                  "write the result JSON to FILE (overrides --result-dir; old name --result-file)");
  cmd->add_flag("--no-save", a->no_save,
                "write no result JSON (the default; without --save-result, --result-filename "
                "or -o none is written, as with vLLM's client)");
  cmd->add_flag("--stop-when-over-capacity", a->stop_when_over_capacity,
                "open loop: end the run early once its backlog or its requests in flight grow "
                "through it (over capacity; docs/metrics.md), as done");
}

// Multi-turn order and transport (driver/load_options.h), and vLLM's client options (vllm
// bench serve) so its command lines run here unchanged.
void add_driver_and_vllm_options(CLI::App* cmd, LoadArgs* a) {
  cmd->add_option("--turns", a->turn_order,
                  "open loop, multi-turn data: independent (every turn on the arrival schedule, "
                  "with the dataset's history) or sequential (a conversation's next turn after "
                  "its previous one finished and --think-time passed); an integer N is the old "
                  "spelling of --turns-per-conversation N")
      ->capture_default_str();
  cmd->add_option("--think-time", a->think_time,
                  "pause before a conversation's next turn (sequential turns, closed loop)");
  cmd->add_option("--threads", a->threads,
                  "event-loop threads carrying the requests (default: one per core)")
      ->check(CLI::Range(0, kMaxThreads));
  cmd->add_flag("--new-connection-per-request", a->new_connection_per_request,
                "open a new connection for every request and close it after, so TTFT includes "
                "connection setup as in vLLM's client (default: keep-alive)");
  cmd->add_option("--backend", a->backend,
                  "vLLM's: openai-chat (= --endpoint chat), openai or vllm (= completions)");
  cmd->add_option("--result-filename", a->result_filename,
                  "vLLM's: write the result JSON under this name inside --result-dir");
  cmd->add_flag("--save-result", a->save_result,
                "vLLM's: write the result JSON into --result-dir (under vLLM's own file name "
                "unless --result-filename)");
  cmd->add_option("--random-input-len", a->dataset.random_input_len,
                  "random: input tokens per prompt (after the prefix)")
      ->capture_default_str();
  cmd->add_option("--random-output-len", a->dataset.random_output_len,
                  "random: output tokens per request")
      ->capture_default_str();
  cmd->add_option("--random-range-ratio", a->dataset.random_range_ratio,
                  "random: lengths uniform in [len * (1 - r), len * (1 + r)], r in [0, 1)")
      ->capture_default_str();
  cmd->add_option("--random-prefix-len", a->dataset.random_prefix_len,
                  "random: tokens of one prefix shared by every prompt")
      ->capture_default_str();
}

}  // namespace

Subcommand register_load(CLI::App& app, const GlobalOptions& global) {
  auto a = std::make_shared<LoadArgs>();
  auto* cmd = app.add_subcommand(
      "load", "run load against an OpenAI-compatible server and print vLLM-style results");
  cmd->footer(
      "Durations: 250ms, 90s, 5m, 1h or seconds. The result JSON (--save-result, "
      "--result-filename\nor -o FILE) uses vLLM's benchmark keys; every request is stored in "
      "--db. The API key\nis read from the environment only.");
  add_request_options(cmd, a.get());
  add_shape_options(cmd, a.get());
  add_dataset_options(cmd, a.get());
  add_result_options(cmd, a.get());
  add_driver_and_vllm_options(cmd, a.get());
  return {cmd, [a, &global] { return run_load_command(*a, global); }};
}

}  // namespace kvsweep::orchestrator
