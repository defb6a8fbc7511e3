// `kvsweep load`: one load run against any OpenAI-compatible server, vLLM-client style.
#include "orchestrator/load_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/wall_clock.h"
#include "driver/base_url.h"
#include "driver/datasets/dataset_error.h"
#include "driver/datasets/load_workload.h"
#include "driver/descriptor_budget.h"
#include "driver/load_run.h"
#include "driver/test_request.h"
#include "orchestrator/api_key.h"
#include "orchestrator/console.h"
#include "orchestrator/metrics_scraper.h"
#include "orchestrator/record_rows.h"
#include "orchestrator/scenario_loader.h"
#include "orchestrator/signal_guard.h"
#include "reports/units.h"
#include "reports/vllm_result.h"
#include "store/store.h"

#ifndef KVSWEEP_VERSION
#define KVSWEEP_VERSION "unknown"
#endif

namespace kvsweep::orchestrator {
namespace {

struct LoadArgs {
  std::string url;
  std::string model;
  std::string api_key_env;
  std::vector<std::string> headers;
  std::string endpoint;  // "" = from --backend, else chat
  bool no_stream = false;
  int max_tokens = 128;
  bool ignore_eos = false;
  std::optional<double> temperature;
  std::string extra_body;

  int concurrency = 0;
  double request_rate = 0;
  double burstiness = 1.0;
  int max_concurrency = 0;
  std::int64_t num_prompts = 0;
  std::string duration;
  std::int64_t warmup_requests = 0;
  int warmup_conversations = 0;
  std::string warmup;
  std::uint64_t seed = 1;
  std::string timeout = "300s";
  std::string connect_timeout = "10s";
  std::string first_byte_timeout;

  driver::DatasetOptions dataset;
  int turns = 6;
  int system_prompt_words = 600;
  int user_words = 40;
  int assistant_words = 40;

  std::vector<std::string> goodput;
  std::string percentile_metrics = "ttft,tpot,itl";
  std::string metric_percentiles = "99";
  std::vector<std::string> metrics_urls;
  std::string metrics_interval = "5s";
  std::string label;
  std::string result_dir = ".";
  std::string result_file;
  bool no_save = false;

  // vLLM's client options (vllm bench serve) and the driver's transport and turn order.
  std::string backend;                     // vLLM's --backend: openai-chat, openai or vllm
  std::string result_filename;             // vLLM's: a file name inside --result-dir
  bool save_result = false;                // vLLM's --save-result; kvsweep saves unless --no-save
  std::string turn_order = "independent";  // --turns; an integer is --turns-per-conversation
  std::string think_time;
  int threads = 0;
  bool new_connection_per_request = false;
};

// `kvsweep load --turns 6` meant six turns per synthetic conversation before --turns took the
// turn order; an integer keeps that meaning, so old command lines run unchanged.
std::optional<int> legacy_turn_count(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::atoi(text.c_str());
}

// kvsweep's --endpoint chat|completions, or vLLM's: the path it appends to --base-url
// (/v1/chat/completions, /v1/completions) and --backend (openai-chat; openai and vllm post
// to /v1/completions). When both are given they must agree.
driver::LoadOptions::Endpoint endpoint_of(const LoadArgs& args) {
  using Endpoint = driver::LoadOptions::Endpoint;
  std::optional<Endpoint> from_endpoint;
  if (args.endpoint == "chat" || args.endpoint == "/v1/chat/completions" ||
      args.endpoint == "v1/chat/completions") {
    from_endpoint = Endpoint::kChat;
  } else if (args.endpoint == "completions" || args.endpoint == "/v1/completions" ||
             args.endpoint == "v1/completions") {
    from_endpoint = Endpoint::kCompletions;
  } else if (!args.endpoint.empty()) {
    throw std::invalid_argument(
        "--endpoint: expected chat or completions (or vLLM's /v1/chat/completions or "
        "/v1/completions), got \"" +
        args.endpoint + "\"");
  }
  std::optional<Endpoint> from_backend;
  if (args.backend == "openai-chat") {
    from_backend = Endpoint::kChat;
  } else if (args.backend == "openai" || args.backend == "vllm") {
    from_backend = Endpoint::kCompletions;
  } else if (!args.backend.empty()) {
    throw std::invalid_argument(
        "--backend: expected openai-chat, openai or vllm (the "
        "OpenAI-compatible endpoints kvsweep drives), got \"" +
        args.backend + "\"");
  }
  if (from_endpoint && from_backend && *from_endpoint != *from_backend) {
    throw std::invalid_argument("--endpoint " + args.endpoint + " and --backend " + args.backend +
                                " name different endpoints");
  }
  return from_endpoint.value_or(from_backend.value_or(Endpoint::kChat));
}

double duration_or_throw(const std::string& text, const std::string& option) {
  if (text.empty()) return 0;
  const auto seconds = parse_duration_s(text);
  if (!seconds || *seconds < 0) {
    throw std::invalid_argument(option + ": expected a duration such as 90s, 5m or 250ms, got \"" +
                                text + "\"");
  }
  return *seconds;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : text) {
    if (c == separator) {
      if (!part.empty()) parts.push_back(part);
      part.clear();
    } else if (c != ' ') {
      part += c;
    }
  }
  if (!part.empty()) parts.push_back(part);
  return parts;
}

reports::PercentileSelection percentile_selection(const LoadArgs& args) {
  reports::PercentileSelection selection;
  selection.metrics = split(args.percentile_metrics, ',');
  for (const auto& m : selection.metrics) {
    if (m != "ttft" && m != "tpot" && m != "itl" && m != "e2el") {
      throw std::invalid_argument("--percentile-metrics: unknown metric \"" + m +
                                  "\" (expected ttft, tpot, itl, e2el)");
    }
  }
  selection.percentiles.clear();
  for (const auto& p : split(args.metric_percentiles, ',')) {
    char* end = nullptr;
    const double value = std::strtod(p.c_str(), &end);
    if (end != p.c_str() + p.size() || value < 0 || value > 100) {
      throw std::invalid_argument("--metric-percentiles: expected numbers in [0, 100], got \"" +
                                  p + "\"");
    }
    selection.percentiles.push_back(value);
  }
  return selection;
}

driver::LoadOptions load_options(const LoadArgs& args) {
  driver::LoadOptions o;
  o.base_url = driver::normalize_base_url(args.url);  // with or without /v1
  o.model = args.model;
  o.api_key = api_key_from_env(args.api_key_env, "--api-key-env");
  for (const auto& text : args.headers) {
    auto header = parse_header(text);
    if (!header) throw std::invalid_argument("--header: expected NAME=VALUE, got \"" + text + "\"");
    o.headers.push_back(*header);
  }
  o.endpoint = endpoint_of(args);
  if (!args.result_file.empty() && !args.result_filename.empty()) {
    throw std::invalid_argument(
        "--result-file and --result-filename: give one (--result-file "
        "is a whole path, --result-filename a name in --result-dir)");
  }
  if (args.turn_order == "sequential") {
    o.turns = driver::LoadOptions::Turns::kSequential;
  } else if (args.turn_order != "independent" && !legacy_turn_count(args.turn_order)) {
    throw std::invalid_argument("--turns: expected independent or sequential, got \"" +
                                args.turn_order + "\"");
  }
  o.think_time_s = duration_or_throw(args.think_time, "--think-time");
  o.threads = args.threads;
  o.new_connection_per_request = args.new_connection_per_request;
  o.stream = !args.no_stream;
  o.max_tokens = args.max_tokens;
  o.ignore_eos = args.ignore_eos;
  o.temperature = args.temperature;
  o.extra_body_json = args.extra_body;
  o.concurrency = args.request_rate > 0 ? 0 : args.concurrency;
  o.request_rate = args.request_rate;
  o.burstiness = args.burstiness;
  o.max_concurrency = args.max_concurrency;
  o.seed = args.seed;
  o.num_requests = args.num_prompts;
  o.duration_s = duration_or_throw(args.duration, "--duration");
  o.warmup_requests = args.warmup_requests;
  o.warmup_conversations = args.warmup_conversations;
  o.warmup_s = duration_or_throw(args.warmup, "--warmup");
  o.request_timeout_s = duration_or_throw(args.timeout, "--timeout");
  o.connect_timeout_s = duration_or_throw(args.connect_timeout, "--connect-timeout");
  o.first_byte_timeout_s = duration_or_throw(args.first_byte_timeout, "--first-byte-timeout");
  // vLLM's --max-concurrency N without a rate (its rate defaults to inf) keeps N requests in
  // flight: here that is a closed loop of N users.
  if (o.request_rate == 0 && o.concurrency == 0) {
    o.concurrency = args.max_concurrency > 0 ? args.max_concurrency : 1;
    o.max_concurrency = 0;
  }
  return o;
}

driver::DatasetOptions dataset_options(const LoadArgs& args) {
  driver::DatasetOptions d = args.dataset;
  d.seed = args.seed;
  const int turns = legacy_turn_count(args.turn_order).value_or(args.turns);
  d.turns = driver::LengthDistribution{static_cast<double>(turns)};
  if (d.kind == "random" && args.num_prompts > 0) {  // vLLM samples --num-prompts prompts
    d.num_prompts = static_cast<int>(args.num_prompts + args.warmup_requests);
  }
  d.system_prompt_words = driver::LengthDistribution{static_cast<double>(args.system_prompt_words)};
  d.user_words = driver::LengthDistribution{static_cast<double>(args.user_words)};
  d.assistant_words = driver::LengthDistribution{static_cast<double>(args.assistant_words)};
  return d;
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
  const std::string shape =
      options.request_rate > 0
          ? (std::isinf(options.request_rate) ? std::string("all at once")
                                              : reports::format_rate(options.request_rate) +
                                                    " req/s open loop")
          : std::to_string(options.concurrency) + " concurrent users";
  console.line("load " + options.base_url + " model " + options.model + ": " + shape + ", " +
               workload.description);

  // Before the test request: a run the descriptor limit cannot carry sends nothing at all.
  driver::check_descriptor_budget(options, workload);

  SignalGuard signals;
  driver::LoadOptions run_options = options;
  run_options.stop = &signals.stop_flag();
  check_test_request(run_options, console);
  if (signals.stop_flag().load()) return kExitInterrupted;

  const double metrics_interval_s = duration_or_throw(args.metrics_interval, "--metrics-interval");
  const ScrapeResult before = scrape_metrics(args.metrics_urls, "before", 0, *global.log);
  const double during_start_wall = unix_now_s();
  std::optional<PeriodicScraper> during;
  if (!args.metrics_urls.empty() && metrics_interval_s > 0) {
    during.emplace(args.metrics_urls, metrics_interval_s, during_start_wall, global.log);
    // KV-cache usage means something only under load: scrape as soon as the server answers
    // a measured request, so a run shorter than the interval is scraped during it too.
    run_options.on_measured_underway = [&during] { during->scrape_now(); };
  }
  const driver::LoadResult result = driver::run_load(run_options, workload, [&](const auto& p) {
    std::string text = std::to_string(p.done) +
                       (p.total > 0 ? "/" + std::to_string(p.total) : std::string()) +
                       " requests, " + reports::format_rate(p.requests_per_s) +
                       " req/s, p50 TTFT " + reports::format_ms(p.p50_ttft_ms) + " ms";
    if (p.failed > 0) text += ", " + std::to_string(p.failed) + " failed";
    console.progress(text);
  });
  console.end_progress();
  ScrapeResult middle = during ? during->take() : ScrapeResult{};
  const ScrapeResult after =
      scrape_metrics(args.metrics_urls, "after", unix_now_s() - result.epoch_wall_s, *global.log);
  for (const auto& e : before.errors) console.line("warning: scrape before: " + e);
  for (const auto& e : middle.errors) console.line("warning: scrape during: " + e);
  for (const auto& e : after.errors) console.line("warning: scrape after: " + e);

  const auto rows = to_request_rows(result.records, 0, 0);
  std::vector<store::MetricSample> samples = before.samples;
  // "during" was timed from its own start as seen here; shift it onto the driver's epoch.
  for (auto& sample : middle.samples) sample.t_s += during_start_wall - result.epoch_wall_s;
  samples.insert(samples.end(), middle.samples.begin(), middle.samples.end());
  samples.insert(samples.end(), after.samples.begin(), after.samples.end());
  const reports::CellMetrics metrics =
      reports::compute_cell_metrics(rows, samples, slo.value_or(reports::Slo{}));

  const std::string label = args.label.empty() ? "kvsweep" : args.label;
  const std::string status = result.interrupted ? "interrupted" : "done";
  if (!global.db_path.empty()) {
    if (const auto dir = std::filesystem::path(global.db_path).parent_path(); !dir.empty()) {
      std::filesystem::create_directories(dir);
    }
    auto store = store::Store::open(global.db_path);
    store::ExperimentRow experiment;
    experiment.name = "load-" + label;
    experiment.scenario_path = "(kvsweep load)";
    experiment.started_at = utc_iso8601(result.epoch_wall_s);
    experiment.status = "running";
    experiment.kvsweep_version = KVSWEEP_VERSION;
    experiment.setup_json = setup_json(args, options, workload);
    experiment.scenario_text = experiment.setup_json;
    const auto experiment_id = store.add_experiment(experiment);
    store::CellRow cell;
    cell.experiment_id = experiment_id;
    cell.key = "load";
    cell.strategy = label;
    cell.concurrency = options.request_rate > 0 ? options.max_concurrency : options.concurrency;
    cell.factors_json = "{}";
    cell.status = "running";
    cell.started_at = experiment.started_at;
    cell.id = store.add_cell(cell);
    store.add_requests(cell.id, rows);
    store.add_metric_samples(cell.id, samples);
    cell.status = status;
    cell.epoch_wall_s = result.epoch_wall_s;
    cell.finished_at = utc_now_iso8601();
    store.update_cell(cell);
    store.finish_experiment(experiment_id, status, cell.finished_at);
    console.line("stored as experiment " + std::to_string(experiment_id) + " in " +
                 global.db_path);
  }

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
  std::fputs(reports::serving_result_text(metrics, selection, &info).c_str(), stdout);
  if (!args.no_save) {
    const std::string path =
        !args.result_file.empty()
            ? args.result_file
            : (std::filesystem::path(args.result_dir) /
               (!args.result_filename.empty()
                    ? args.result_filename
                    : result_file_name(label, options.request_rate, info.max_concurrency,
                                       options.model, info.date)))
                  .string();
    if (const auto dir = std::filesystem::path(path).parent_path(); !dir.empty()) {
      std::filesystem::create_directories(dir);
    }
    std::ofstream out(path, std::ios::trunc);
    out << reports::vllm_result_json(metrics, info, selection).dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + path);
    console.line("result written to " + path);
  }
  if (result.interrupted) return kExitInterrupted;
  return metrics.ok > 0 ? kExitOk : kExitFailed;
}

}  // namespace

std::optional<reports::Slo> parse_goodput(const std::vector<std::string>& parts,
                                          std::string* error) {
  reports::Slo slo;
  for (const auto& part : parts) {
    const auto colon = part.find(':');
    if (colon == std::string::npos) {
      *error = "expected METRIC:MS, got \"" + part + "\"";
      return std::nullopt;
    }
    const std::string name = part.substr(0, colon);
    const std::string value = part.substr(colon + 1);
    char* end = nullptr;
    const double ms = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !(ms > 0)) {
      *error = "expected a number of milliseconds > 0 in \"" + part + "\"";
      return std::nullopt;
    }
    if (name == "ttft") {
      slo.ttft_ms = ms;
    } else if (name == "tpot") {
      slo.tpot_ms = ms;
    } else if (name == "e2el") {
      slo.e2e_ms = ms;
    } else {
      *error = "unknown metric \"" + name + "\" (expected ttft, tpot or e2el)";
      return std::nullopt;
    }
  }
  return slo;
}

std::optional<std::pair<std::string, std::string>> parse_header(const std::string& text) {
  auto separator = text.find('=');
  const auto colon = text.find(':');
  if (separator == std::string::npos || (colon != std::string::npos && colon < separator)) {
    separator = colon;
  }
  if (separator == std::string::npos || separator == 0) return std::nullopt;
  std::string value = text.substr(separator + 1);
  while (!value.empty() && value.front() == ' ') value.erase(value.begin());
  return std::make_pair(text.substr(0, separator), value);
}

std::string result_file_name(const std::string& label, double request_rate, int max_concurrency,
                             const std::string& model, const std::string& date) {
  char rate[32];
  if (request_rate > 0 && !std::isinf(request_rate)) {
    std::snprintf(rate, sizeof rate, "%g", request_rate);
  } else {
    std::snprintf(rate, sizeof rate, "inf");
  }
  std::string name = label + "-" + rate + "qps";
  if (max_concurrency > 0) name += "-concurrency" + std::to_string(max_concurrency);
  std::string safe_model = model;
  for (char& c : safe_model) {
    if (c == '/') c = '-';
  }
  return name + "-" + safe_model + "-" + date + ".json";
}

Subcommand register_load(CLI::App& app, const GlobalOptions& global) {
  auto a = std::make_shared<LoadArgs>();
  auto* cmd = app.add_subcommand(
      "load", "run load against an OpenAI-compatible server and print vLLM-style results");
  cmd->footer(
      "Durations: 250ms, 90s, 5m, 1h or seconds. The result JSON uses vLLM's benchmark keys;\n"
      "every request is stored in --db. The API key is read from the environment only.");
  cmd->add_option("--url,--base-url", a->url,
                  "server base URL, with or without /v1: http://127.0.0.1:8000")
      ->required();
  cmd->add_option("--model", a->model, "model name sent in every request")->required();
  cmd->add_option("--api-key-env", a->api_key_env,
                  "name of the environment variable holding the API key");
  cmd->add_option("--header", a->headers, "extra request header NAME=VALUE (repeatable)");
  cmd->add_option("--endpoint", a->endpoint,
                  "chat (/v1/chat/completions, the default) or completions; vLLM's path form "
                  "/v1/chat/completions or /v1/completions is accepted too");
  cmd->add_flag("--no-stream", a->no_stream, "non-streaming requests (TTFT = E2E)");
  cmd->add_option("--max-tokens", a->max_tokens, "output tokens per request (unless the "
                  "dataset sets them)")->capture_default_str();
  cmd->add_flag("--ignore-eos", a->ignore_eos, "ask the server to ignore EOS");
  cmd->add_option("--temperature", a->temperature, "sampling temperature (default 0)");
  cmd->add_option("--extra-body", a->extra_body, "JSON object merged into every request body");

  cmd->add_option("--concurrency", a->concurrency,
                  "closed loop: virtual users, each with one request in flight (default 1)");
  cmd->add_option("--request-rate", a->request_rate,
                  "open loop: requests per second, Poisson arrivals (inf: all at once)");
  cmd->add_option("--burstiness", a->burstiness, "gamma shape of arrival gaps (1 = Poisson)")
      ->capture_default_str();
  cmd->add_option("--max-concurrency", a->max_concurrency, "open loop: in-flight cap");
  cmd->add_option("--num-prompts", a->num_prompts, "measured requests to send");
  cmd->add_option("--duration", a->duration, "measured phase length, e.g. 5m");
  cmd->add_option("--warmup-requests", a->warmup_requests, "first N requests are warm-up");
  cmd->add_option("--warmup-conversations", a->warmup_conversations,
                  "requests of the first N conversations are warm-up");
  cmd->add_option("--warmup", a->warmup, "requests sent in the first DURATION are warm-up");
  cmd->add_option("--seed", a->seed, "seed of datasets and arrival schedules")
      ->capture_default_str();
  cmd->add_option("--timeout", a->timeout, "whole-request timeout")->capture_default_str();
  cmd->add_option("--connect-timeout", a->connect_timeout, "connect timeout")
      ->capture_default_str();
  cmd->add_option("--first-byte-timeout", a->first_byte_timeout,
                  "send to status line timeout (default off)");

  a->dataset.kind = "synthetic-multiturn";
  cmd->add_option("--dataset,--dataset-name", a->dataset.kind,
                  "synthetic-multiturn, sharegpt, chat-threads, shared-prefix, jsonl, mooncake, "
                  "random")
      ->capture_default_str();
  cmd->add_option("--dataset-path", a->dataset.path, "dataset file (file-based kinds)");
  cmd->add_option("--min-messages", a->dataset.min_messages, "sharegpt: keep conversations "
                  "with at least N messages");
  cmd->add_option("--max-conversations", a->dataset.max_conversations,
                  "sharegpt: keep at most N conversations");
  cmd->add_option("--conversations", a->dataset.conversations, "synthetic: conversations")
      ->capture_default_str();
  cmd->add_option("--turns-per-conversation", a->turns, "synthetic: turns per conversation")
      ->capture_default_str();
  cmd->add_option("--system-prompt-words", a->system_prompt_words,
                  "synthetic: shared system prompt length")->capture_default_str();
  cmd->add_option("--user-words", a->user_words, "synthetic: user message length")
      ->capture_default_str();
  cmd->add_option("--assistant-words", a->assistant_words, "synthetic: reply length")
      ->capture_default_str();
  cmd->add_option("--prefix-tokens", a->dataset.prefix_tokens, "shared-prefix: prefix length")
      ->capture_default_str();
  cmd->add_option("--num-prefixes", a->dataset.num_prefixes, "shared-prefix: distinct prefixes")
      ->capture_default_str();
  cmd->add_option("--prompts-per-prefix", a->dataset.prompts_per_prefix,
                  "shared-prefix: prompts per prefix")->capture_default_str();
  cmd->add_option("--suffix-tokens", a->dataset.suffix_tokens, "shared-prefix: suffix length")
      ->capture_default_str();
  cmd->add_option("--block-size", a->dataset.block_size,
                  "mooncake: tokens per hash_id block (required: Mooncake uses 512)");
  cmd->add_option("--time-scale", a->dataset.time_scale, "mooncake: multiply arrival times")
      ->capture_default_str();

  cmd->add_option("--goodput", a->goodput, "SLOs, e.g. --goodput ttft:500 tpot:50 e2el:3000");
  cmd->add_option("--percentile-metrics", a->percentile_metrics,
                  "metrics with percentiles: ttft,tpot,itl,e2el")->capture_default_str();
  cmd->add_option("--metric-percentiles", a->metric_percentiles, "e.g. 50,90,99")
      ->capture_default_str();
  cmd->add_option("--metrics-url", a->metrics_urls,
                  "a server /metrics URL to scrape before, during and after (repeatable): KV "
                  "hit rate, KV-cache usage");
  cmd->add_option("--metrics-interval", a->metrics_interval,
                  "how often /metrics is scraped during the run (0: before and after only)")
      ->capture_default_str();
  cmd->add_option("--label", a->label, "label of the result (file name, store)");
  cmd->add_option("--result-dir", a->result_dir, "where the result JSON goes")
      ->capture_default_str();
  cmd->add_option("-o,--output,--result-file", a->result_file,
                  "result JSON file (overrides --result-dir; old name --result-file)");
  cmd->add_flag("--no-save", a->no_save, "do not write the result JSON");

  // Multi-turn order and transport (driver/load_options.h).
  cmd->add_option("--turns", a->turn_order,
                  "open loop, multi-turn data: independent (every turn on the arrival schedule, "
                  "with the dataset's history) or sequential (a conversation's next turn after "
                  "its previous one finished and --think-time passed); an integer N is the old "
                  "spelling of --turns-per-conversation N")
      ->capture_default_str();
  cmd->add_option("--think-time", a->think_time,
                  "pause before a conversation's next turn (sequential turns, closed loop)");
  cmd->add_option("--threads", a->threads,
                  "event-loop threads carrying the requests (default: one per core)");
  cmd->add_flag("--new-connection-per-request", a->new_connection_per_request,
                "open a new connection for every request and close it after, so TTFT includes "
                "connection setup as in vLLM's client (default: keep-alive)");

  // vLLM's client options (vllm bench serve), so its command lines run here unchanged.
  cmd->add_option("--backend", a->backend,
                  "vLLM's: openai-chat (= --endpoint chat), openai or vllm (= completions)");
  cmd->add_option("--result-filename", a->result_filename,
                  "vLLM's: result JSON file name inside --result-dir");
  cmd->add_flag("--save-result", a->save_result,
                "vLLM's; kvsweep writes the result JSON unless --no-save");
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
  return {cmd, [a, &global] { return run_load_command(*a, global); }};
}

}  // namespace kvsweep::orchestrator
