// Durations as people write them in files and options: "90s", "5m", "1h", "250ms", "30".
#include "common/duration.h"

#include <cmath>
#include <exception>

namespace kvsweep {

std::optional<double> parse_duration_s(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string unit = text.substr(used);
  if (!std::isfinite(value)) return std::nullopt;
  if (unit.empty() || unit == "s") return value;
  if (unit == "ms") return value / 1000.0;
  if (unit == "m") return value * 60.0;
  if (unit == "h") return value * 3600.0;
  return std::nullopt;
}

}  // namespace kvsweep
