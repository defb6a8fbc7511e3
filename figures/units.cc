// Number formatting shared by every renderer.
#include "figures/units.h"

#include <array>
#include <cmath>
#include <cstdio>

namespace kvsweep::figures {

std::string format_fixed(double value, int decimals) {
  if (std::isnan(value)) return kNotAvailable;
  std::array<char, 64> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "%.*f", decimals, value);
  std::string text = buffer.data();
  // A tiny negative that rounds to zero would print "-0.00", which reads as a real sign.
  if (text.front() == '-' && text.find_first_not_of("-0.") == std::string::npos) text.erase(0, 1);
  return text;
}

std::string format_number(double value) {
  std::array<char, 32> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "%g", value);
  return buffer.data();
}

std::string format_ms(double ms) { return format_fixed(ms, 2); }

std::string format_rate(double per_s) { return format_fixed(per_s, 2); }

std::string format_percent(std::optional<double> fraction) {
  if (!fraction) return kNotAvailable;
  return format_fixed(*fraction * 100.0, 1);
}

std::string format_ratio(std::optional<double> ratio) {
  if (!ratio) return kNotAvailable;
  return format_fixed(*ratio, 2) + "x";
}

std::string format_si(double value) {
  const double magnitude = std::fabs(value);
  if (magnitude < 999.95) return format_fixed(value, magnitude == std::floor(magnitude) ? 0 : 1);
  constexpr std::array<const char*, 4> kSuffixes = {"k", "M", "G", "T"};
  double scaled = value / 1000;
  std::size_t i = 0;
  // Promote 999.95k to "1.0M" rather than printing "1000.0k".
  while (i + 1 < kSuffixes.size() && std::fabs(scaled) >= 999.95) {
    scaled /= 1000;
    ++i;
  }
  return format_fixed(scaled, 1) + kSuffixes[i];
}

std::string format_si3(double value) {
  constexpr std::array<const char*, 5> kSuffixes = {"", "k", "M", "G", "T"};
  double scaled = value;
  std::size_t i = 0;
  // Promote on the rounded value: 999.6 reads "1.00k", not "1000".
  while (i + 1 < kSuffixes.size() && std::fabs(scaled) >= 999.5) {
    scaled /= 1000;
    ++i;
  }
  const double magnitude = std::fabs(scaled);
  const int decimals = magnitude >= 99.95 ? 0 : magnitude >= 9.995 ? 1 : 2;
  return format_fixed(scaled, decimals) + kSuffixes[i];
}

std::string format_figures(const char* pattern, double a, double b, double c) {
  char text[300];
  std::snprintf(text, sizeof text, pattern, a, b, c);
  return text;
}

}  // namespace kvsweep::figures
