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

}  // namespace

std::string replica_metrics_text(std::string_view model, const EngineMetrics& m) {
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
  counter("vllm:prefix_cache_hits_total",
          "Prefix cache hits, in terms of number of cached tokens.", m.prefix_cache_hits);
  counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.",
          m.prompt_tokens_total);
  counter("vllm:generation_tokens_total", "Number of generation tokens processed.",
          m.generation_tokens_total);
  counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.",
          m.num_preemptions);
  // vLLM labels finished requests by reason; the simulator only finishes on length.
  family(os, "vllm:request_success_total", "counter", "Count of successfully processed requests.");
  os << "vllm:request_success_total{model_name=\"" << escape_label(model)
     << "\",finished_reason=\"length\"} " << m.requests_finished << '\n';
  gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
        m.kv_cache_usage);
  gauge("vllm:num_requests_running", "Number of requests in model execution batches.",
        m.num_running);
  gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
        m.num_waiting);
  return os.str();
}

std::string router_metrics_text(const std::map<std::string, std::vector<std::uint64_t>>& decisions,
                                std::span<const int> in_flight) {
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
  return os.str();
}

}  // namespace kvsweep::sim
