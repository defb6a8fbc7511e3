// Comparing capacities by whether one run failed where the other passed.
#include "figures/capacity_compare.h"

#include "figures/units.h"

namespace kvsweep::figures {
namespace {

std::string show(std::optional<double> load) { return load ? format_number(*load) : "none"; }

}  // namespace

std::vector<CapacityChange> compare_capacities(const std::vector<store::ArmSearchRow>& a,
                                               const std::vector<store::ArmSearchRow>& b) {
  std::vector<CapacityChange> out;
  for (const store::ArmSearchRow& ra : a) {
    const store::ArmSearchRow* rb = nullptr;
    for (const store::ArmSearchRow& candidate : b) {
      if (candidate.arm_key == ra.arm_key) rb = &candidate;
    }
    if (rb == nullptr) continue;
    CapacityChange c{ra.arm_key,
                     ra.capacity,
                     ra.first_failing,
                     rb->capacity,
                     rb->first_failing,
                     Verdict::kInsufficientData,
                     ""};
    const bool ended = !ra.why.empty() && !rb->why.empty();
    if (!ended) {
      c.why = "a search did not end";
    } else if (c.a_capacity && c.b_first_failing && *c.b_first_failing <= *c.a_capacity) {
      c.verdict = Verdict::kRegression;
      c.why = "B failed at " + show(c.b_first_failing) + ", which A passed";
    } else if (c.a_capacity && !c.b_capacity && c.b_first_failing) {
      c.verdict = Verdict::kRegression;
      c.why = "B passed no load; A passed " + show(c.a_capacity);
    } else if (c.b_capacity && c.a_first_failing && *c.b_capacity >= *c.a_first_failing) {
      c.verdict = Verdict::kImprovement;
      c.why = "B passed " + show(c.b_capacity) + ", which A failed";
    } else if (c.b_capacity && !c.a_capacity && c.a_first_failing) {
      c.verdict = Verdict::kImprovement;
      c.why = "A passed no load; B passed " + show(c.b_capacity);
    } else if (c.a_capacity || c.b_capacity) {
      c.verdict = Verdict::kNoChange;
      c.why = "the intervals overlap";
    } else {
      c.why = "neither passed a load";
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace kvsweep::figures
