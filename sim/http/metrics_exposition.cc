// Prometheus text exposition: the format's pieces, and a replica's vLLM metrics.
#include "sim/http/metrics_exposition.h"

#include <sstream>

namespace kvsweep::sim {

std::string escape_label(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void write_family(std::ostream& os, std::string_view name, std::string_view type,
                  std::string_view help) {
  os << "# HELP " << name << ' ' << help << '\n' << "# TYPE " << name << ' ' << type << '\n';
}

void write_histogram(std::ostream& os, std::string_view name, std::string_view help,
                     const std::string& labels, const Histogram& h) {
  write_family(os, name, "histogram", help);
  const std::string sep = labels.empty() ? "" : labels + ",";
  for (std::size_t i = 0; i < h.upper_bounds().size(); ++i) {
    os << name << "_bucket{" << sep << "le=\"" << h.upper_bounds()[i] << "\"} " << h.cumulative(i)
       << '\n';
  }
  os << name << "_bucket{" << sep << "le=\"+Inf\"} " << h.count() << '\n';
  const std::string braced = labels.empty() ? "" : "{" + labels + "}";
  os << name << "_sum" << braced << ' ' << h.sum() << '\n';
  os << name << "_count" << braced << ' ' << h.count() << '\n';
}

std::string replica_metrics_text(std::string_view model, const EngineMetrics& m,
                                 const LatencyHistograms* latencies) {
  std::ostringstream os;
  const std::string label = "{model_name=\"" + escape_label(model) + "\"}";
  auto counter = [&](std::string_view name, std::string_view help, std::uint64_t value) {
    write_family(os, name, "counter", help);
    os << name << label << ' ' << value << '\n';
  };
  auto gauge = [&](std::string_view name, std::string_view help, double value) {
    write_family(os, name, "gauge", help);
    os << name << label << ' ' << value << '\n';
  };
  counter("vllm:prefix_cache_queries_total",
          "Prefix cache queries, in terms of number of queried tokens.", m.prefix_cache_queries);
  counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.",
          m.prefix_cache_hits);
  counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", m.prompt_tokens_total);
  counter("vllm:generation_tokens_total", "Number of generation tokens processed.",
          m.generation_tokens_total);
  counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.",
          m.num_preemptions);
  // vLLM labels finished requests by reason: "length" at max_tokens, "stop" at a natural end.
  write_family(os, "vllm:request_success_total", "counter",
               "Count of successfully processed requests.");
  os << "vllm:request_success_total{model_name=\"" << escape_label(model)
     << "\",finished_reason=\"length\"} " << m.requests_finished - m.requests_stopped << '\n';
  os << "vllm:request_success_total{model_name=\"" << escape_label(model)
     << "\",finished_reason=\"stop\"} " << m.requests_stopped << '\n';
  gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", m.kv_cache_usage);
  gauge("vllm:num_requests_running", "Number of requests in model execution batches.",
        m.num_running);
  gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", m.num_waiting);
  if (m.num_gpu_blocks > 0) {
    // vLLM's info gauge: the CacheConfig as labels (Python's str() of each field), value 1.
    write_family(os, "vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig");
    os << "vllm:cache_config_info{block_size=\"" << m.block_size << "\",enable_prefix_caching=\""
       << (m.enable_prefix_caching ? "True" : "False") << "\",num_gpu_blocks=\"" << m.num_gpu_blocks
       << "\"} 1\n";
  }
  // kvsweep's own counters: simulated time against the host CPU it cost (docs/performance.md).
  counter("kvsweep_engine_steps_total", "Engine steps completed.", m.steps_total);
  auto seconds = [&](std::string_view name, std::string_view help, double value) {
    write_family(os, name, "counter", help);
    os << name << label << ' ' << value << '\n';
  };
  seconds("kvsweep_engine_step_seconds_total",
          "Modelled duration of the completed engine steps, summed.", m.step_seconds_total);
  seconds("kvsweep_engine_scheduler_cpu_seconds_total",
          "Host CPU time spent planning and applying engine steps (HTTP excluded).",
          m.scheduler_cpu_seconds_total);
  if (latencies) {
    const std::string labels = "model_name=\"" + escape_label(model) + "\"";
    write_histogram(os, "vllm:time_to_first_token_seconds",
                    "Histogram of time to first token in seconds.", labels, latencies->ttft_s);
    write_histogram(os, "vllm:inter_token_latency_seconds",
                    "Histogram of inter-token latency in seconds.", labels, latencies->itl_s);
    // The pre-0.11 name of the same samples, for scrapers that know only it.
    write_histogram(os, "vllm:time_per_output_token_seconds",
                    "Histogram of time per output token in seconds (deprecated name of "
                    "inter_token_latency).",
                    labels, latencies->itl_s);
    write_histogram(os, "vllm:e2e_request_latency_seconds",
                    "Histogram of end to end request latency in seconds.", labels,
                    latencies->e2e_s);
  }
  return os.str();
}

}  // namespace kvsweep::sim
