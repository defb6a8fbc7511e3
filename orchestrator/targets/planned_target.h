// What each target kind implements: the runner's seam and plan's, so that one constructor
// checks a scenario the same way for `kvsweep run` and `kvsweep plan`.
#pragma once

#include <string>

#include "orchestrator/targets/target.h"
#include "orchestrator/targets/treatment_planner.h"

namespace kvsweep::orchestrator {

class PlannedTarget : public Target, public TreatmentPlanner {
 public:
  std::string describe() const override = 0;  // one description for both seams
};

}  // namespace kvsweep::orchestrator
