// The flags of `kvsweep load` (orchestrator/cli/load_options.h).
#include "orchestrator/cli/load_options.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "driver/datasets/dataset_limits.h"
#include "driver/descriptor_budget.h"
#include "driver/load_run.h"
#include "orchestrator/scenario/scenario_reads.h"

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

void add_load_options(CLI::App* cmd, LoadArgs* a) {
  add_request_options(cmd, a);
  add_shape_options(cmd, a);
  add_dataset_options(cmd, a);
  add_result_options(cmd, a);
  add_driver_and_vllm_options(cmd, a);
}

}  // namespace kvsweep::orchestrator
