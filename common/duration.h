// Durations as people write them: read ("90s", "5m", "30d", "250ms", "30"), written ("5 s", "250
// ms").
#pragma once

#include <optional>
#include <string>

namespace kvsweep {

// Seconds for "90s", "5m", "1h", "30d", "250ms" or a plain number of seconds; nullopt when
// malformed or not finite. The sign is the caller's to check.
std::optional<double> parse_duration_s(const std::string& text);

// A duration as people write it in a message: "5 s", "12.5 s", "300 s", "250 ms", "1.5 ms":
// at most three significant decimals' worth (0.1 s from 10 s up, 0.01 s from 1 s, whole
// milliseconds from 10 ms, else 0.1 ms), trailing zeros dropped; never "5.000000 s".
std::string format_duration_s(double seconds);

}  // namespace kvsweep
