// Wall-clock time for records people read (ISO 8601) and for epochs (unix seconds).
#pragma once

#include <string>

namespace kvsweep {

double unix_now_s();                     // seconds since 1970, sub-second precision
std::string utc_iso8601(double unix_s);  // "2026-11-22T04:30:00Z"
inline std::string utc_now_iso8601() { return utc_iso8601(unix_now_s()); }

}  // namespace kvsweep
