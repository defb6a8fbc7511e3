// A cell's achieved-load figures and verdict as JSON, the same object in every JSON output
// (vLLM result JSON, dashboard JSON, exports, kvsweep serve, kvsweep audit --json).
#pragma once

#include <nlohmann/json.hpp>

#include "figures/validity.h"

namespace kvsweep::figures {

// {"verdict": "over capacity", "reasons": [...], "not_evaluated": [...], "in_flight_mean":
// 512.3, ...}; a figure that could not be computed is null.
nlohmann::ordered_json validity_json(const CellValidity& validity);

// The thresholds an experiment's cells are judged by: its setup's "validity" object (the
// scenario's load.validity, stored when it differs from the defaults), else the defaults.
ValidityRules validity_rules_of(const store::ExperimentRow& experiment);

}  // namespace kvsweep::figures
