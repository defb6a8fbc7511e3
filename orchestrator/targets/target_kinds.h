// Every target kind kvsweep runs, with the factors each applies: the one list. The scenario
// loader checks a scenario's factors against it; each target applies exactly its entry.
#pragma once

#include <string>

#include "orchestrator/scenario/target_kind.h"

namespace kvsweep::orchestrator {

// sim, replicas, kubeai, dynamo, kubectl, endpoints.
const TargetKinds& target_kinds();

// The entry named `name`; throws std::out_of_range for a kind not in target_kinds().
const TargetKind& target_kind(const std::string& name);

}  // namespace kvsweep::orchestrator
