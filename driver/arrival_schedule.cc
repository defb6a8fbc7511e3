// Open-loop arrival times: seeded gamma gaps (vLLM's --request-rate/--burstiness), up front or
// lazily.
#include "driver/arrival_schedule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/error_kinds.h"

namespace kvsweep::driver {

GammaArrivals::GammaArrivals(double rate, double burstiness, std::uint64_t seed)
    : infinite_(std::isinf(rate)), rng_(seed) {
  if (!(rate > 0)) throw UsageError("arrival rate must be > 0");
  if (!(burstiness > 0) || std::isinf(burstiness)) {
    throw UsageError("burstiness must be finite and > 0");
  }
  if (!infinite_) gap_ = std::gamma_distribution<double>(burstiness, 1.0 / (rate * burstiness));
}

double GammaArrivals::next() {
  if (infinite_) return 0;
  now_s_ += gap_(rng_);
  return now_s_;
}

std::vector<double> gamma_arrival_times(double rate, double burstiness, std::int64_t count,
                                        std::uint64_t seed) {
  GammaArrivals arrivals(rate, burstiness, seed);
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(std::max<std::int64_t>(count, 0)));
  for (std::int64_t i = 0; i < count; ++i) times.push_back(arrivals.next());
  if (std::isinf(rate) || times.empty() || times.back() <= 0) return times;
  const double scale = (static_cast<double>(count) / rate) / times.back();
  for (double& t : times) t *= scale;
  return times;
}

}  // namespace kvsweep::driver
