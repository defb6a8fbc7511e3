// Length distributions for synthetic datasets: validation and seeded sampling.
#include "driver/datasets/length_distribution.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "driver/datasets/dataset_error.h"

namespace kvsweep::driver {
namespace {

bool is_uniform(const LengthDistribution& d) { return d.stddev == 0 && d.mean == 0 && d.max > 0; }

int clamp_length(double value, const LengthDistribution& d) {
  const double upper = d.max > 0 ? d.max : static_cast<double>(std::numeric_limits<int>::max());
  const double clamped = std::clamp(std::round(value), static_cast<double>(d.min), upper);
  return static_cast<int>(clamped);
}

std::string length_text(double value) {
  std::string text = std::to_string(value);
  text.erase(text.find_last_not_of('0') + 1);  // "2.500000" -> "2.5", "3.000000" -> "3."
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

bool is_constant(const LengthDistribution& distribution) {
  return distribution.stddev == 0 && !is_uniform(distribution);
}

bool sets_max_tokens(const LengthDistribution& output_tokens) {
  return !is_constant(output_tokens) || clamp_length(output_tokens.mean, output_tokens) > 0;
}

void validate_length_distribution(const LengthDistribution& d, const std::string& field) {
  auto fail = [&](const std::string& what) { throw DatasetError(field + ": " + what); };
  if (!std::isfinite(d.mean) || d.mean < 0)
    fail("mean: expected a number >= 0, got " + length_text(d.mean));
  if (!std::isfinite(d.stddev) || d.stddev < 0) {
    fail("stddev: expected a number >= 0, got " + length_text(d.stddev));
  }
  if (d.min < 0) fail("min: expected >= 0, got " + std::to_string(d.min));
  if (d.max < 0) fail("max: expected >= 0 (0: no upper bound), got " + std::to_string(d.max));
  if (d.max > 0 && d.max < d.min) {
    fail("max " + std::to_string(d.max) + " is below min " + std::to_string(d.min));
  }
}

int sample_length(const LengthDistribution& d, std::mt19937_64& rng) {
  if (is_uniform(d)) {
    std::uniform_int_distribution<int> pick(d.min, d.max);
    return pick(rng);
  }
  if (d.stddev > 0) {
    std::normal_distribution<double> draw(d.mean, d.stddev);
    return clamp_length(draw(rng), d);
  }
  return clamp_length(d.mean, d);
}

}  // namespace kvsweep::driver
