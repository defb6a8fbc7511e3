// What `run` and `plan` say up front: the sweep's shape, and what every cell does.
#pragma once

#include <string>
#include <vector>

#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_spec.h"

namespace kvsweep::orchestrator {

// "sweep kubeai-l4: 12 cells (3 strategy x 4 concurrency), 3 deployments, target <target>".
std::string plan_headline(const ScenarioSpec& spec, const std::vector<CellPlan>& cells,
                          const std::string& target);

// "each cell: 100 requests or 60s, whichever ends first; open loop at 800 req/s, turns
// independent; max_tokens 64; cache cold", with the rehearsal's cuts in plain sight under
// --target sim; a field a factor sets reads "by factor".
std::string cell_shape(const ScenarioSpec& spec, bool rehearsal);

// Where load.shards run as `run` runs them: an Indexed Job when load.shard_job.runner says job,
// or leaves it unset on a Kubernetes kind (kubeai, dynamo, kubectl: the targets that make a Job
// launcher); else local processes.
bool shards_run_as_job(const ScenarioSpec& spec);

// One line per factor: its phase, its levels and what each sets beyond its own field
// ("factor arm (run-time): k8s-service {target.base_url: http://...}, LeastLoad {...}").
std::vector<std::string> factor_lines(const ScenarioSpec& spec);

}  // namespace kvsweep::orchestrator
