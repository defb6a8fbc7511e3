// Durations as people write them: read ("90s", "5m", "250ms", "30"), written ("5 s", "250 ms").
#include "common/duration.h"

#include <cmath>
#include <cstdio>
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
  if (unit == "d") return value * 86400.0;
  return std::nullopt;
}

namespace {

// `value` with `decimals` decimals, trailing zeros (and a bare point) dropped.
std::string trimmed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  std::string out = text;
  if (out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  return out == "-0" ? "0" : out;
}

}  // namespace

std::string format_duration_s(double seconds) {
  if (!std::isfinite(seconds)) return std::string(seconds < 0 ? "-" : "") + "inf s";
  const double magnitude = std::fabs(seconds);
  if (magnitude > 0 && magnitude < 0.9995) {  // 0.9996 s is "1 s", not "1000 ms"
    const double ms = seconds * 1000.0;
    return trimmed(ms, std::fabs(ms) >= 10 ? 0 : 1) + " ms";
  }
  return trimmed(seconds, magnitude >= 10 ? 1 : 2) + " s";
}

}  // namespace kvsweep
