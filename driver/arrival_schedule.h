// Open-loop arrival times: seeded gamma gaps (vLLM's --request-rate/--burstiness), up front or
// lazily.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace kvsweep::driver {

// Draws arrival times (seconds from the start of the run) one by one. Gaps are
// gamma(shape = burstiness, scale = 1 / (rate * burstiness)): mean 1/rate for every shape, and
// burstiness 1 is a Poisson process; below 1 is burstier, above 1 more even (vLLM semantics).
// An infinite rate puts every arrival at 0. Deterministic for a seed with one standard
// library (std::gamma_distribution is not specified bit-for-bit across libraries).
class GammaArrivals {
 public:
  GammaArrivals(double rate, double burstiness, std::uint64_t seed);
  double next();  // the next arrival time; strictly non-decreasing

 private:
  bool infinite_;
  std::mt19937_64 rng_;
  std::gamma_distribution<double> gap_;
  double now_s_ = 0;
};

// `count` arrivals, rescaled so the last one lands at exactly count / rate, as vLLM does to
// remove the 1-2 % drift of the sum of random gaps between seeds. The first arrival is at
// the first gap (not at 0), again as vLLM. Used when the run's request count is known.
std::vector<double> gamma_arrival_times(double rate, double burstiness, std::int64_t count,
                                        std::uint64_t seed);

}  // namespace kvsweep::driver
