// A cell's figures in the shape of vLLM's benchmark client: result JSON keys and console block.
#include "reports/vllm_result.h"

#include <algorithm>
#include <cstdio>

#include "common/stats.h"
#include "figures/validity_json.h"

namespace kvsweep::reports {
namespace {

struct MetricView {
  const char* key;    // vLLM's key fragment
  const char* title;  // console section title
  const char* label;  // console row label
  const SampleSummary* summary;
  const std::vector<double>* sorted;
};

std::vector<MetricView> metric_views(const figures::CellMetrics& m) {
  return {
      {"ttft", "Time to First Token", "TTFT", &m.ttft_ms, &m.samples.ttft_ms},
      {"tpot", "Time per Output Token (excl. 1st token)", "TPOT", &m.tpot_ms, &m.samples.tpot_ms},
      {"itl", "Inter-token Latency", "ITL", &m.itl_ms, &m.samples.itl_ms},
      {"e2el", "End-to-end Latency", "E2EL", &m.e2e_ms, &m.samples.e2e_ms},
  };
}

bool selected(const PercentileSelection& selection, const std::string& key) {
  for (const auto& m : selection.metrics) {
    if (m == key) return true;
  }
  return false;
}

std::string vllm_number(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

// vLLM: "{:<40} {:<10}" for every row (label padded to 40, one space, value padded to 10;
// neither is ever cut), "{s:-^50}" for section titles, "=" x 50 around.
std::string row(const std::string& label, const std::string& value) {
  std::string line = label;
  if (line.size() < 40) line.append(40 - line.size(), ' ');
  line += ' ';
  line += value;
  if (value.size() < 10) line.append(10 - value.size(), ' ');
  return line + "\n";
}

std::string centered(const std::string& title, char fill) {
  constexpr std::size_t kWidth = 50;
  if (title.size() >= kWidth) return title + "\n";
  const std::size_t left = (kWidth - title.size()) / 2;
  const std::size_t right = kWidth - title.size() - left;
  return std::string(left, fill) + title + std::string(right, fill) + "\n";
}

constexpr const char* kVllmUnknown = "unknown";

// Says why token figures above are estimated or unknown; "" when the server reported them all.
std::string token_count_note(const figures::CellMetrics& m) {
  if (m.output_tokens_estimated == 0 && m.prompt_tokens_unknown == 0) return "";
  const std::int64_t without_usage = std::max(m.output_tokens_estimated, m.prompt_tokens_unknown);
  std::string note = "Note: the server sent no token usage for " + std::to_string(without_usage) +
                     " of " + std::to_string(m.ok) + " requests:";
  if (m.output_tokens_estimated > 0) note += " output tokens are counted content events;";
  if (m.prompt_tokens_unknown > 0) note += " input tokens are unknown;";
  note.back() = '.';
  return note + "\n";
}

}  // namespace

std::string percentile_key(double p) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", p);
  return std::string("p") + buffer;
}

nlohmann::ordered_json vllm_result_json(const figures::CellMetrics& m, const VllmRunInfo& info,
                                        const PercentileSelection& selection) {
  nlohmann::ordered_json j;
  j["date"] = info.date;
  j["endpoint_type"] = info.endpoint_type;
  j["backend"] = info.endpoint_type;
  j["label"] = info.label;
  j["model_id"] = info.model_id;
  j["tokenizer_id"] = info.model_id;
  j["num_prompts"] = info.num_prompts;
  if (info.request_rate > 0) {
    j["request_rate"] = info.request_rate;
  } else {
    j["request_rate"] = "inf";
  }
  j["burstiness"] = info.burstiness;
  j["max_concurrency"] =
      info.max_concurrency > 0 ? nlohmann::ordered_json(info.max_concurrency) : nullptr;
  j["duration"] = m.window_s;
  j["completed"] = m.ok;
  j["failed"] = m.failed;
  // Unknown (the server sent no usage) is null, never 0; kvsweep's keys below say why.
  j["total_input_tokens"] = m.prompt_tokens ? nlohmann::ordered_json(*m.prompt_tokens) : nullptr;
  j["total_output_tokens"] = m.output_tokens;
  j["request_throughput"] = m.request_throughput;
  j["request_goodput"] = m.goodput ? nlohmann::ordered_json(*m.goodput) : nullptr;
  j["output_throughput"] = m.output_throughput;
  j["total_token_throughput"] =
      m.total_token_throughput ? nlohmann::ordered_json(*m.total_token_throughput) : nullptr;
  j["max_output_tokens_per_s"] = m.max_output_tokens_per_s;
  j["max_concurrent_requests"] = m.max_concurrent_requests;
  // vLLM writes it in percent, and only with speculative decoding.
  if (m.spec_decode_acceptance) j["spec_decode_acceptance_rate"] = 100 * *m.spec_decode_acceptance;
  for (const auto& v : metric_views(m)) {
    const std::string key = v.key;
    j["mean_" + key + "_ms"] = v.summary->mean;
    j["median_" + key + "_ms"] = v.summary->median;
    j["std_" + key + "_ms"] = v.summary->std;
    if (!selected(selection, key)) continue;
    for (double p : selection.percentiles) {
      j[percentile_key(p) + "_" + key + "_ms"] = percentile(*v.sorted, p);
    }
  }
  // kvsweep's own figures, after vLLM's: first where they come from.
  j["figures"] = info.figures;
  j["input_tokens_known"] = m.prompt_tokens.has_value();
  j["output_tokens_estimated"] = m.output_tokens_estimated > 0;
  j["mean_schedule_lag_ms"] = m.schedule_lag_ms.mean;
  j["p99_schedule_lag_ms"] = m.schedule_lag_ms.p99;
  j["mean_e2el_from_schedule_ms"] = m.e2e_from_schedule_ms.mean;
  j["kv_cache_hit_rate"] =
      m.kv_hit_rate_server ? nlohmann::ordered_json(*m.kv_hit_rate_server) : nullptr;
  j["cache_hit_client"] =
      m.cache_hit_client ? nlohmann::ordered_json(*m.cache_hit_client) : nullptr;
  j["kv_cache_usage_max"] = m.kv_usage_max ? nlohmann::ordered_json(*m.kv_usage_max) : nullptr;
  j["num_preemptions"] = m.preemptions ? nlohmann::ordered_json(*m.preemptions) : nullptr;
  nlohmann::ordered_json failures = nlohmann::ordered_json::object();
  for (const auto& [kind, count] : m.failed_by_kind) failures[kind] = count;
  j["failed_by_kind"] = failures;
  nlohmann::ordered_json first_failures = nlohmann::ordered_json::object();
  for (const auto& [kind, first] : m.first_failure_by_kind) {
    first_failures[kind] = {{"http_status", first.http_status}, {"error", first.error}};
  }
  j["first_failure_by_kind"] = first_failures;
  // Did the run measure the load it asked for (figures/validity.h)?
  j["verdict"] = validity_json(m.validity)["verdict"];
  j["validity"] = validity_json(m.validity);
  return j;
}

std::string serving_result_text(const figures::CellMetrics& m, const PercentileSelection& selection,
                                const VllmRunInfo* run) {
  // vLLM's rows in vLLM's order (vllm/benchmarks/serve.py), then its metric sections.
  std::string out = centered(" Serving Benchmark Result ", '=');
  out += row("Successful requests:", std::to_string(m.ok));
  out += row("Failed requests:", std::to_string(m.failed));
  if (run != nullptr && run->max_concurrency > 0) {
    out += row("Maximum request concurrency:", std::to_string(run->max_concurrency));
  }
  if (run != nullptr && run->request_rate > 0) {
    out += row("Request rate configured (RPS):", vllm_number(run->request_rate, 2));
  }
  out += row("Benchmark duration (s):", vllm_number(m.window_s, 2));
  const std::string estimated = m.output_tokens_estimated > 0 ? " (estimated)" : "";
  out +=
      row("Total input tokens:", m.prompt_tokens ? std::to_string(*m.prompt_tokens) : kVllmUnknown);
  out += row("Total generated tokens:", std::to_string(m.output_tokens) + estimated);
  out += row("Request throughput (req/s):", vllm_number(m.request_throughput, 2));
  if (m.goodput) out += row("Request goodput (req/s):", vllm_number(*m.goodput, 2));
  out += row("Output token throughput (tok/s):", vllm_number(m.output_throughput, 2) + estimated);
  out += row("Peak output token throughput (tok/s):",
             vllm_number(m.max_output_tokens_per_s, 2) + estimated);
  out += row("Peak concurrent requests:", vllm_number(m.max_concurrent_requests, 2));
  out += row("Total token throughput (tok/s):",
             m.total_token_throughput ? vllm_number(*m.total_token_throughput, 2) : kVllmUnknown);
  for (const auto& v : metric_views(m)) {
    if (!selected(selection, v.key)) continue;
    out += centered(v.title, '-');
    const std::string label = v.label;
    out += row("Mean " + label + " (ms):", vllm_number(v.summary->mean, 2));
    out += row("Median " + label + " (ms):", vllm_number(v.summary->median, 2));
    for (double p : selection.percentiles) {
      char name[64];
      std::snprintf(name, sizeof name, "P%g %s (ms):", p, label.c_str());
      out += row(name, vllm_number(percentile(*v.sorted, p), 2));
    }
  }
  if (m.schedule_lag_ms.count > 0) {
    out += centered("Schedule Lag (sent - scheduled)", '-');
    out += row("Mean lag (ms):", vllm_number(m.schedule_lag_ms.mean, 3));
    out += row("P99 lag (ms):", vllm_number(m.schedule_lag_ms.p99, 3));
  }
  if (m.kv_hit_rate_server || m.cache_hit_client) {
    out += centered("Prefix Cache", '-');
    if (m.kv_hit_rate_server) {
      out += row("KV hit rate, server (%):", vllm_number(100 * *m.kv_hit_rate_server, 2));
    }
    if (m.cache_hit_client) {
      out += row("Cached prompt tokens, client (%):", vllm_number(100 * *m.cache_hit_client, 2));
    }
  }
  if (!m.failed_by_kind.empty()) {
    out += centered("Failures", '-');
    for (const auto& [kind, count] : m.failed_by_kind) {
      out += row(kind + ":", std::to_string(count));
      // Why, not only how many: the first failure of the kind, status and server message.
      const auto first = m.first_failure_by_kind.find(kind);
      if (first == m.first_failure_by_kind.end()) continue;
      out += "  first: " + figures::failure_text(first->second.http_status, first->second.error) +
             "\n";
    }
  }
  out += std::string(50, '=') + "\n";
  out += token_count_note(m);  // after the block: every line inside it has vLLM's shape
  return out;
}

}  // namespace kvsweep::reports
