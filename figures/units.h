// Number formatting shared by every renderer, so a figure reads the same in markdown and HTML.
#pragma once

#include <optional>
#include <string>

namespace kvsweep::figures {

constexpr const char* kNotAvailable = "n/a";

// Fixed decimals, "C" locale, never "-0.00": 39163.8 -> "39163.80" with 2 decimals.
std::string format_fixed(double value, int decimals);
// A number as a person writes it, up to 6 significant digits and no trailing zeros: a load,
// a threshold, a bound ("12.5", "1000", "0.5", "99.9").
std::string format_number(double value);
// Durations in milliseconds, 2 decimals, no unit (tables put the unit in the header).
std::string format_ms(double ms);
// Rates (req/s, tok/s), 2 decimals, no unit.
std::string format_rate(double per_s);
// A fraction in [0, 1] as a percentage with 1 decimal and no sign: 0.8734 -> "87.3";
// nullopt -> "n/a".
std::string format_percent(std::optional<double> fraction);
// A ratio to a baseline: 0.3127 -> "0.31x"; nullopt -> "n/a".
std::string format_ratio(std::optional<double> ratio);
// Compact magnitude for labels and axes: 950 -> "950", 1234 -> "1.2k", 2.5e6 -> "2.5M".
std::string format_si(double value);
// The same scaling with three significant digits, for figures set side by side in a sentence:
// 1243.74 -> "1.24k", 409363 -> "409k", 2694123 -> "2.69M", 63.55 -> "63.5", 7 -> "7.00".
std::string format_si3(double value);
// Up to three figures into a printf pattern of %g/%f conversions, for a verdict's sentence:
// ("grew from %.0f to %.0f", 40, 310) -> "grew from 40 to 310". At most 299 characters.
std::string format_figures(const char* pattern, double a, double b = 0, double c = 0);

}  // namespace kvsweep::figures
