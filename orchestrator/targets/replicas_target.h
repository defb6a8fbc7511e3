// Plain OpenAI-compatible servers (vLLM, llama.cpp, SGLang...) with kvsweep's own router in
// front of them, started by the target on loopback: a strategy sweep without Kubernetes.
#pragma once

#include <string>
#include <vector>

#include "common/log.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/targets/planned_target.h"
#include "orchestrator/targets/router_admin_client.h"
#include "sim/proxy.h"

namespace kvsweep::orchestrator {

// Factors (target_kinds.cc, kind replicas): strategy and the router knobs (mean_load_factor,
// prefix_char_length, replication, overlap_score_weight, router_temperature), switched live through
// the router's admin API. Replica i (header x-kvsweep-replica: i, stored per request) is
// target.upstreams[i].
class ReplicasTarget : public PlannedTarget {
 public:
  // Throws TargetError for a factor or level the router cannot apply, or a bad upstream URL.
  ReplicasTarget(const ScenarioSpec& spec, Log log);
  ~ReplicasTarget() override;

  // "replicas x2 behind kvsweep's router (0=http://..., 1=http://...)"
  std::string describe() const override;
  CommandLogs start() override;  // binds the router on 127.0.0.1; touches no upstream
  // POST /admin/strategy with the treatment's strategy and knobs, when it sets any.
  CommandLogs apply(const Treatment& t) override;
  // Gates: health (every upstream's /health), models (the router's merged /v1/models lists
  // the model), completion (through the router).
  CommandLogs wait_ready() override;
  // POST /reset_prefix_cache on the router, which asks every upstream and answers 200 only if
  // all of them reset; otherwise the cell fails naming each upstream and its answer.
  CommandLogs make_cold() override;
  // The router; target.metrics.urls when given, else every upstream's metrics.path.
  Endpoints endpoints() const override;
  // A "health" log when the router took an upstream out or put it back during the cell.
  CommandLogs cell_finished() override;

  std::vector<std::vector<std::string>> planned_commands(const Treatment* previous,
                                                         const Treatment& next) const override;

 private:
  const ScenarioSpec& spec_;
  Log log_;
  sim::Proxy router_;
  RouterAdminClient admin_;
  // The strategy last applied: a cold cell applies an endpoint picker's again (runs_epp).
  std::string applied_strategy_body_;
};

}  // namespace kvsweep::orchestrator
