// What a comparison of two runs says of one figure: the word `compare` prints and a nightly gate
// reads. Shared by the per-metric comparison (compare.h) and the capacities' (capacity_compare.h).
#pragma once

namespace kvsweep::figures {

enum class Verdict { kNoChange, kImprovement, kRegression, kInsufficientData };

// "no change", "improvement", "regression", "insufficient data"
const char* verdict_name(Verdict v);

}  // namespace kvsweep::figures
