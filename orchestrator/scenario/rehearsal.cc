// The scenario as `--target sim` runs it: a cluster sweep rehearsed on the embedded fleet.
#include "orchestrator/scenario/rehearsal.h"

#include <algorithm>

namespace kvsweep::orchestrator {
namespace {

// At most `most` conversations: a generated dataset's count, a ShareGPT file's first ones.
void cut_conversations(driver::DatasetOptions& d, int most) {
  if (d.kind == "synthetic-multiturn") {
    d.conversations = std::min(d.conversations, most);
  } else if (d.kind == "sharegpt") {
    d.max_conversations = d.max_conversations > 0 ? std::min(d.max_conversations, most) : most;
  }
}

}  // namespace

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
  if (sim.conversations > 0) {
    cut_conversations(load.dataset, sim.conversations);
    if (load.stand_in) cut_conversations(*load.stand_in, sim.conversations);
  }
}

ScenarioSpec rehearsal_of(ScenarioSpec spec) {
  cut_for_rehearsal(spec.load, spec.target.sim);
  return spec;
}

}  // namespace kvsweep::orchestrator
