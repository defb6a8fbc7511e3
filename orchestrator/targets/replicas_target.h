// Plain OpenAI-compatible servers (vLLM, llama.cpp, SGLang...) with kvsweep's own router in
// front of them, started by the target on loopback: a strategy sweep without Kubernetes.
#pragma once

#include <string>
#include <vector>

#include "orchestrator/cli/log.h"
#include "orchestrator/targets/router_admin_client.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/targets/target.h"
#include "sim/proxy.h"

namespace kvsweep::orchestrator {

// Factors: strategy and the router knobs (mean_load_factor, prefix_char_length, replication,
// overlap_score_weight, router_temperature), switched live through the router's admin API.
// Replica i (header x-kvsweep-replica: i, stored per request) is target.upstreams[i].
class ReplicasTarget : public Target {
 public:
  // Throws TargetError for a factor or level the router cannot apply, or a bad upstream URL.
  ReplicasTarget(const ScenarioSpec& spec, Log log);
  ~ReplicasTarget() override;

  // "replicas x2 behind kvsweep's router (0=http://..., 1=http://...)"
  std::string describe() const override;
  void start() override;  // binds the router on 127.0.0.1; touches no upstream
  std::vector<std::vector<std::string>> planned_commands(const Treatment& t) const override;
  // POST /admin/strategy with the treatment's strategy and knobs, when it sets any.
  void apply(const Treatment& t) override;
  // Gates: health (every upstream's /health), models (the router's merged /v1/models lists
  // the model), completion (through the router).
  void wait_ready() override;
  // POST /reset_prefix_cache on the router, which asks every upstream and answers 200 only if
  // all of them reset; otherwise the cell fails naming each upstream and its answer.
  void make_cold() override;
  std::string base_url() const override;
  // target.metrics.urls when given, else every upstream's metrics.path.
  std::vector<std::string> metrics_urls() const override;
  std::vector<CommandLog> take_logs() override;

 private:
  const ScenarioSpec& spec_;
  Log log_;
  sim::Proxy router_;
  RouterAdminClient admin_;
};

}  // namespace kvsweep::orchestrator
