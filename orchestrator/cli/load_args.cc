// The options of `kvsweep load` and what they become: the driver's options, the dataset, the
// SLOs, the result file's name.
#include "orchestrator/cli/load_args.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "common/base_url.h"
#include "common/duration.h"
#include "common/error_kinds.h"
#include "orchestrator/cli/api_key.h"

namespace kvsweep::orchestrator {
namespace {

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

// `kvsweep load --turns 6` meant six turns per synthetic conversation before --turns took the
// turn order; an integer keeps that meaning, so old command lines run unchanged.
std::optional<int> legacy_turn_count(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::atoi(text.c_str());
}

}  // namespace

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
    throw UsageError(
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
    throw UsageError(
        "--backend: expected openai-chat, openai or vllm (the OpenAI-compatible endpoints "
        "kvsweep drives), got \"" +
        args.backend + "\"");
  }
  if (from_endpoint && from_backend && *from_endpoint != *from_backend) {
    throw UsageError("--endpoint " + args.endpoint + " and --backend " + args.backend +
                     " name different endpoints");
  }
  return from_endpoint.value_or(from_backend.value_or(Endpoint::kChat));
}

double duration_or_throw(const std::string& text, const std::string& option) {
  if (text.empty()) return 0;
  const auto seconds = parse_duration_s(text);
  if (!seconds || *seconds < 0) {
    throw UsageError(option + ": expected a duration such as 90s, 5m or 250ms, got \"" + text +
                     "\"");
  }
  return *seconds;
}

reports::PercentileSelection percentile_selection(const LoadArgs& args) {
  reports::PercentileSelection selection;
  selection.metrics = split(args.percentile_metrics, ',');
  for (const auto& m : selection.metrics) {
    if (m != "ttft" && m != "tpot" && m != "itl" && m != "e2el") {
      throw UsageError("--percentile-metrics: unknown metric \"" + m +
                       "\" (expected ttft, tpot, itl, e2el)");
    }
  }
  selection.percentiles.clear();
  for (const auto& p : split(args.metric_percentiles, ',')) {
    char* end = nullptr;
    const double value = std::strtod(p.c_str(), &end);
    if (end != p.c_str() + p.size() || value < 0 || value > 100) {
      throw UsageError("--metric-percentiles: expected numbers in [0, 100], got \"" + p + "\"");
    }
    selection.percentiles.push_back(value);
  }
  return selection;
}

bool saves_result(const LoadArgs& args) {
  const bool asked = args.save_result || !args.result_filename.empty() || !args.result_file.empty();
  if (asked && args.no_save) {
    throw UsageError(
        "--no-save with --save-result, --result-filename or -o/--output: give one or the "
        "other");
  }
  return asked;
}

driver::LoadOptions load_options(const LoadArgs& args) {
  driver::LoadOptions o;
  o.base_url = normalize_base_url(args.url);  // with or without /v1
  o.model = args.model;
  o.api_key = api_key_from_env(args.api_key_env, "--api-key-env");
  for (const auto& text : args.headers) {
    auto header = parse_header(text);
    if (!header) throw UsageError("--header: expected NAME=VALUE, got \"" + text + "\"");
    o.headers.push_back(*header);
  }
  o.endpoint = endpoint_of(args);
  if (!args.result_file.empty() && !args.result_filename.empty()) {
    throw UsageError(
        "--result-file and --result-filename: give one (--result-file is a whole path, "
        "--result-filename a name in --result-dir)");
  }
  saves_result(args);  // its usage error before anything is sent
  if (args.turn_order == "sequential") {
    o.turns = driver::LoadOptions::Turns::kSequential;
  } else if (args.turn_order != "independent" && !legacy_turn_count(args.turn_order)) {
    throw UsageError("--turns: expected independent or sequential, got \"" + args.turn_order +
                     "\"");
  }
  o.think_time_s = duration_or_throw(args.think_time, "--think-time");
  o.threads = args.threads;
  o.shard.count = args.shards;
  o.new_connection_per_request = args.new_connection_per_request;
  o.stop_when_over_capacity = args.stop_when_over_capacity;
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
  o.max_event_bytes = args.max_event_bytes;
  if (o.max_event_bytes < driver::kMinEventBytes || o.max_event_bytes > driver::kMaxEventBytes) {
    throw UsageError("--max-event-bytes: expected " + std::to_string(driver::kMinEventBytes) +
                     " to " + std::to_string(driver::kMaxEventBytes) + " (1 GiB), got " +
                     std::to_string(args.max_event_bytes));
  }
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

std::optional<figures::Slo> parse_goodput(const std::vector<std::string>& parts,
                                          std::string* error) {
  figures::Slo slo;
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

}  // namespace kvsweep::orchestrator
