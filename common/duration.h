// Durations as people write them in files and options: "90s", "5m", "1h", "250ms", "30".
#pragma once

#include <optional>
#include <string>

namespace kvsweep {

// Seconds for "90s", "5m", "1h", "250ms" or a plain number of seconds; nullopt when malformed
// or not finite. The sign is the caller's to check.
std::optional<double> parse_duration_s(const std::string& text);

}  // namespace kvsweep
