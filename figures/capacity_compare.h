// Two searching runs' capacities compared per arm: a capacity moved when one run failed a load
// the other passed, which is beyond both searches' resolution (the interval between a
// capacity and its first failing load). What `compare` and a nightly gate read.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "figures/change_verdict.h"
#include "store/rows.h"

namespace kvsweep::figures {

struct CapacityChange {
  std::string arm;  // the arm's search key
  std::optional<double> a_capacity;
  std::optional<double> a_first_failing;
  std::optional<double> b_capacity;
  std::optional<double> b_first_failing;
  Verdict verdict;
  std::string why;  // the loads that decided it
};

// Arms matched by key, in A's order. Regression: B failed at or below a load A passed (or B
// passed nothing where A passed something); improvement: B passed at or above a load A failed;
// no change: the two intervals overlap. Insufficient data: a side's search did not end or
// found no load at all on either side. Arms of one side only are left out.
std::vector<CapacityChange> compare_capacities(const std::vector<store::ArmSearchRow>& a,
                                               const std::vector<store::ArmSearchRow>& b);

}  // namespace kvsweep::figures
