// The options of `kvsweep load`, as vLLM's benchmark client spells them, and what they become:
// the driver's options, the dataset, the SLOs, the result file's name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "driver/datasets/dataset_options.h"
#include "driver/load_options.h"
#include "figures/cell_metrics.h"
#include "reports/vllm_result.h"

namespace kvsweep::orchestrator {

// As the command line gave them (durations and lists still text).
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
  int shards = 1;  // processes the load is split into (docs/driver.md, "Shards")
  std::string timeout = "300s";
  std::string connect_timeout = "10s";
  std::string first_byte_timeout;
  std::size_t max_event_bytes = driver::kDefaultMaxSseEventBytes;

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
  bool no_save = false;  // the default now; kept so older command lines still run
  bool stop_when_over_capacity = false;

  // vLLM's client options (vllm bench serve) and the driver's transport and turn order.
  std::string backend;                     // vLLM's --backend: openai-chat, openai or vllm
  std::string result_filename;             // vLLM's: a file name inside --result-dir
  bool save_result = false;                // vLLM's --save-result: write the result JSON
  std::string turn_order = "independent";  // --turns; an integer is --turns-per-conversation
  std::string think_time;
  int threads = 0;
  bool new_connection_per_request = false;
};

// kvsweep's --endpoint chat|completions, or vLLM's path form (/v1/chat/completions,
// /v1/completions) and --backend (openai-chat; openai and vllm post to /v1/completions). When
// both are given they must agree. Throws std::invalid_argument naming the option.
driver::LoadOptions::Endpoint endpoint_of(const LoadArgs& args);

// Whether a result JSON is written: as vLLM's client, only when asked (--save-result,
// --result-filename, or -o/--output FILE). Throws std::invalid_argument when --no-save is
// given with one of them.
bool saves_result(const LoadArgs& args);

// Each throws std::invalid_argument naming the option at fault.
driver::LoadOptions load_options(const LoadArgs& args);  // reads the API key's variable
driver::DatasetOptions dataset_options(const LoadArgs& args);
reports::PercentileSelection percentile_selection(const LoadArgs& args);
// "" gives 0; else a duration such as 90s, 5m or 250ms, >= 0.
double duration_or_throw(const std::string& text, const std::string& option);

// Parses vLLM's --goodput form: "ttft:500 tpot:50 e2el:3000" (any subset, ms). nullopt with
// `error` set when a part is malformed or names an unknown metric.
std::optional<figures::Slo> parse_goodput(const std::vector<std::string>& parts,
                                          std::string* error);

// Parses "K=V" (vLLM's --header form; also accepts "K: V"). nullopt when there is no separator
// or the name is empty.
std::optional<std::pair<std::string, std::string>> parse_header(const std::string& text);

// vLLM's result file name: {label}-{rate}qps[-concurrency{N}]-{model}-{YYYYmmdd-HHMMSS}.json,
// with the model's '/' replaced so the name stays one path component.
std::string result_file_name(const std::string& label, double request_rate, int max_concurrency,
                             const std::string& model, const std::string& date);

}  // namespace kvsweep::orchestrator
