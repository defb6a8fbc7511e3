// Axis ticks for the SVG charts: round values covering a range ("nice" ticks) and labels that
// read each one exactly.
#pragma once

#include <string>
#include <vector>

namespace kvsweep::reports {

// Labels of one axis's ticks, scaled by thousands as format_si, each with as many decimals as
// it needs to read exactly (0.25 -> "0.25", 1.25e6 -> "1.25M", 3e6 -> "3M"), and more when two
// would otherwise read the same.
std::vector<std::string> tick_labels(const std::vector<double>& ticks);

// Up to ~target_count round tick values (1, 2, 2.5, 5 x 10^k) covering [low, high].
std::vector<double> nice_ticks(double low, double high, int target_count = 5);
// Ticks of a value axis from 0: nice_ticks, plus one more step when the largest value would
// stand above the last tick.
std::vector<double> value_axis_ticks(double max);

}  // namespace kvsweep::reports
