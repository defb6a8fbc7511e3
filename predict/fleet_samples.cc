// A scrape of the virtual fleet: every replica's /metrics as the sweep's scraper would store it.
#include "predict/fleet_samples.h"

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

namespace kvsweep::predict {
namespace {

// A number as an ostream prints it in the exposition (default precision: 6 significant
// digits), read back as the scraper's parser does (strtod).
double as_exposed(double value) {
  std::ostringstream os;
  os << value;
  return std::strtod(os.str().c_str(), nullptr);
}

class SampleWriter {
 public:
  SampleWriter(std::vector<store::MetricSample>& out, const std::string& source,
               const std::string& phase, double t_s, const std::string& model)
      : out_(out),
        source_(source),
        phase_(phase),
        t_s_(t_s),
        model_labels_(nlohmann::json{{"model_name", model}}.dump()),
        model_(model) {}

  void add(const char* name, double value) { add(name, model_labels_, value); }
  void add(const char* name, const std::string& labels_json, double value) {
    store::MetricSample sample;
    sample.phase = phase_;
    sample.source = source_;
    sample.name = name;
    sample.labels_json = labels_json;
    sample.value = value;
    sample.t_s = t_s_;
    out_.push_back(std::move(sample));
  }
  void counter(const char* name, std::uint64_t value) { add(name, static_cast<double>(value)); }
  void gauge(const char* name, double value) { add(name, as_exposed(value)); }
  // An info gauge: its labels are the information, its value 1.
  void info(const char* name, const std::string& labels_json) { add(name, labels_json, 1); }
  void finished(const char* reason, std::uint64_t value) {
    add("vllm:request_success_total",
        nlohmann::json{{"finished_reason", reason}, {"model_name", model_}}.dump(),
        static_cast<double>(value));
  }
  // A histogram's _sum and _count; its buckets are dropped by the scraper.
  void histogram(const std::string& name, const LatencySum& h) {
    add((name + "_sum").c_str(), as_exposed(h.sum_s));
    add((name + "_count").c_str(), static_cast<double>(h.count));
  }

 private:
  std::vector<store::MetricSample>& out_;
  const std::string& source_;
  const std::string& phase_;
  double t_s_;
  std::string model_labels_;
  const std::string& model_;
};

}  // namespace

std::string replica_source(int replica) {
  return "predict://replica-" + std::to_string(replica) + "/metrics";
}

void append_replica_samples(const ReplicaCounters& c, const std::string& model,
                            const std::string& source, const std::string& phase, double t_s,
                            std::vector<store::MetricSample>& out) {
  SampleWriter w(out, source, phase, t_s, model);
  w.counter("vllm:prefix_cache_queries_total", c.prefix_cache_queries);
  w.counter("vllm:prefix_cache_hits_total", c.prefix_cache_hits);
  w.counter("vllm:prompt_tokens_total", c.prompt_tokens_total);
  w.counter("vllm:generation_tokens_total", c.generation_tokens_total);
  w.counter("vllm:num_preemptions_total", c.num_preemptions);
  w.finished("length", c.requests_finished - c.requests_stopped);
  w.finished("stop", c.requests_stopped);
  w.gauge("vllm:kv_cache_usage_perc", c.kv_cache_usage);
  w.gauge("vllm:num_requests_running", c.num_running);
  w.gauge("vllm:num_requests_waiting", c.num_waiting);
  if (c.num_gpu_blocks > 0) {
    w.info("vllm:cache_config_info",
           nlohmann::json{{"block_size", std::to_string(c.block_size)},
                          {"enable_prefix_caching", c.enable_prefix_caching ? "True" : "False"},
                          {"num_gpu_blocks", std::to_string(c.num_gpu_blocks)}}
               .dump());
  }
  w.histogram("vllm:time_to_first_token_seconds", c.ttft);
  w.histogram("vllm:inter_token_latency_seconds", c.itl);
  w.histogram("vllm:time_per_output_token_seconds", c.itl);
  w.histogram("vllm:e2e_request_latency_seconds", c.e2e);
}

std::string router_source() { return "predict://router/metrics"; }

std::vector<store::MetricSample> fleet_samples(const VirtualFleet& fleet, const std::string& phase,
                                               double t_s) {
  std::vector<store::MetricSample> out;
  for (int i = 0; i < fleet.replicas(); ++i) {
    append_replica_samples(fleet.replica(i).counters(), fleet.model(), replica_source(i), phase,
                           t_s, out);
  }
  if (fleet.router().strategy() == "epp") {
    const std::string source = router_source();
    SampleWriter w(out, source, phase, t_s, fleet.model());
    const std::string no_labels = "{}";
    const EppLookupTotals& e = fleet.epp_lookups();
    w.add("inference_extension_prefix_indexer_hit_ratio_sum", no_labels,
          as_exposed(e.hit_ratio_sum));
    w.add("inference_extension_prefix_indexer_hit_ratio_count", no_labels,
          static_cast<double>(e.hit_ratio_count));
    w.add("inference_extension_prefix_indexer_hit_bytes_sum", no_labels,
          as_exposed(e.hit_bytes_sum));
    w.add("inference_extension_prefix_indexer_hit_bytes_count", no_labels,
          static_cast<double>(e.hit_bytes_count));
    w.add("inference_extension_prefix_indexer_size", no_labels,
          static_cast<double>(fleet.router().prefix_index_entries()));
  }
  return out;
}

}  // namespace kvsweep::predict
