// Prometheus text exposition of a replica's vLLM metrics and of the router's decisions.
#include "sim/metrics_exposition.h"

#include <sstream>

namespace kvsweep::sim {
namespace {

// Label values are our own names (model ids, strategy names); escape what the format requires.
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

void family(std::ostringstream& os, std::string_view name, std::string_view type,
            std::string_view help) {
  os << "# HELP " << name << ' ' << help << '\n' << "# TYPE " << name << ' ' << type << '\n';
}

void histogram(std::ostringstream& os, std::string_view name, std::string_view help,
               const std::string& labels, const Histogram& h) {
  family(os, name, "histogram", help);
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

}  // namespace

std::string replica_metrics_text(std::string_view model, const EngineMetrics& m,
                                 const LatencyHistograms* latencies) {
  std::ostringstream os;
  const std::string label = "{model_name=\"" + escape_label(model) + "\"}";
  auto counter = [&](std::string_view name, std::string_view help, std::uint64_t value) {
    family(os, name, "counter", help);
    os << name << label << ' ' << value << '\n';
  };
  auto gauge = [&](std::string_view name, std::string_view help, double value) {
    family(os, name, "gauge", help);
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
  family(os, "vllm:request_success_total", "counter", "Count of successfully processed requests.");
  os << "vllm:request_success_total{model_name=\"" << escape_label(model)
     << "\",finished_reason=\"length\"} " << m.requests_finished - m.requests_stopped << '\n';
  os << "vllm:request_success_total{model_name=\"" << escape_label(model)
     << "\",finished_reason=\"stop\"} " << m.requests_stopped << '\n';
  gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", m.kv_cache_usage);
  gauge("vllm:num_requests_running", "Number of requests in model execution batches.",
        m.num_running);
  gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", m.num_waiting);
  // kvsweep's own counters: simulated time against the host CPU it cost (docs/performance.md).
  counter("kvsweep_engine_steps_total", "Engine steps completed.", m.steps_total);
  auto seconds = [&](std::string_view name, std::string_view help, double value) {
    family(os, name, "counter", help);
    os << name << label << ' ' << value << '\n';
  };
  seconds("kvsweep_engine_step_seconds_total",
          "Modelled duration of the completed engine steps, summed.", m.step_seconds_total);
  seconds("kvsweep_engine_scheduler_cpu_seconds_total",
          "Host CPU time spent planning and applying engine steps (HTTP excluded).",
          m.scheduler_cpu_seconds_total);
  if (latencies) {
    const std::string labels = "model_name=\"" + escape_label(model) + "\"";
    histogram(os, "vllm:time_to_first_token_seconds",
              "Histogram of time to first token in seconds.", labels, latencies->ttft_s);
    histogram(os, "vllm:inter_token_latency_seconds",
              "Histogram of inter-token latency in seconds.", labels, latencies->itl_s);
    // The pre-0.11 name of the same samples, for scrapers that know only it.
    histogram(os, "vllm:time_per_output_token_seconds",
              "Histogram of time per output token in seconds (deprecated name of "
              "inter_token_latency).",
              labels, latencies->itl_s);
    histogram(os, "vllm:e2e_request_latency_seconds",
              "Histogram of end to end request latency in seconds.", labels, latencies->e2e_s);
  }
  return os.str();
}

std::string router_metrics_text(const std::map<std::string, std::vector<std::uint64_t>>& decisions,
                                std::span<const int> in_flight) {
  return router_metrics_text(decisions, in_flight, RouterStats{});
}

std::string router_metrics_text(const std::map<std::string, std::vector<std::uint64_t>>& decisions,
                                std::span<const int> in_flight, const RouterStats& stats) {
  std::ostringstream os;
  family(os, "kvsweep_router_decisions_total", "counter",
         "Requests routed to each replica, by the strategy that chose it.");
  for (const auto& [strategy, counts] : decisions) {
    for (std::size_t r = 0; r < counts.size(); ++r) {
      os << "kvsweep_router_decisions_total{replica=\"" << r << "\",strategy=\""
         << escape_label(strategy) << "\"} " << counts[r] << '\n';
    }
  }
  family(os, "kvsweep_router_in_flight", "gauge",
         "Requests routed to each replica whose response has not ended.");
  for (std::size_t r = 0; r < in_flight.size(); ++r) {
    os << "kvsweep_router_in_flight{replica=\"" << r << "\"} " << in_flight[r] << '\n';
  }
  if (stats.decision_seconds) {
    histogram(os, "kvsweep_router_decision_seconds",
              "Router time per routed request: parse, tokenize, hash blocks, look up the KV "
              "index and pick a replica.",
              "", *stats.decision_seconds);
  }
  if (stats.predicted_overlap_blocks) {
    histogram(os, "kvsweep_router_predicted_overlap_blocks",
              "Cached blocks the router expected the chosen replica to hold, per decision.", "",
              *stats.predicted_overlap_blocks);
  }
  family(os, "kvsweep_router_unavailable_total", "counter",
         "Requests answered 502 because the chosen replica was down.");
  os << "kvsweep_router_unavailable_total " << stats.unavailable_total << '\n';
  if (stats.health) {
    const std::size_t replicas = in_flight.size();
    family(os, "kvsweep_router_healthy_replicas", "gauge",
           "Replicas the router routes to: not taken out by its health checks.");
    os << "kvsweep_router_healthy_replicas " << stats.health->healthy_count() << '\n';
    family(os, "kvsweep_router_replica_healthy", "gauge",
           "1 while the replica is routed to, 0 while its health checks keep it out.");
    for (std::size_t r = 0; r < replicas; ++r) {
      os << "kvsweep_router_replica_healthy{replica=\"" << r << "\"} "
         << (stats.health->healthy(static_cast<int>(r)) ? 1 : 0) << '\n';
    }
    family(os, "kvsweep_router_ejections_total", "counter",
           "Times the replica was taken out of routing after consecutive failed connects or "
           "health probes.");
    for (std::size_t r = 0; r < replicas; ++r) {
      os << "kvsweep_router_ejections_total{replica=\"" << r << "\"} "
         << stats.health->ejections(static_cast<int>(r)) << '\n';
    }
  }
  return os.str();
}

}  // namespace kvsweep::sim
