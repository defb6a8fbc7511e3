// The words of a comparison's verdicts.
#include "figures/change_verdict.h"

namespace kvsweep::figures {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kNoChange:
      return "no change";
    case Verdict::kImprovement:
      return "improvement";
    case Verdict::kRegression:
      return "regression";
    case Verdict::kInsufficientData:
      return "insufficient data";
  }
  return "?";
}

}  // namespace kvsweep::figures
