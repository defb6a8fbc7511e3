// The scenario as `--target sim` runs it: a cluster sweep rehearsed on the embedded fleet.
#include "orchestrator/scenario/rehearsal.h"

#include <algorithm>

namespace kvsweep::orchestrator {

void cut_for_rehearsal(LoadSpec& load, const SimSpec& sim) {
  if (sim.duration_s > 0) {
    load.duration_s =
        load.duration_s > 0 ? std::min(load.duration_s, sim.duration_s) : sim.duration_s;
  }
  if (sim.num_requests > 0) {
    load.num_requests =
        load.num_requests > 0 ? std::min(load.num_requests, sim.num_requests) : sim.num_requests;
  }
  if (sim.max_tokens > 0) {
    load.max_tokens = std::min(load.max_tokens, sim.max_tokens);
    load.max_tokens_cap = sim.max_tokens;  // turns whose dataset sets their own length too
  }
}

ScenarioSpec rehearsal_of(ScenarioSpec spec) {
  cut_for_rehearsal(spec.load, spec.target.sim);
  return spec;
}

}  // namespace kvsweep::orchestrator
