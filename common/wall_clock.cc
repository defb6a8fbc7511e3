// Wall-clock time for records people read (ISO 8601) and for epochs (unix seconds).
#include "common/wall_clock.h"

#include <chrono>
#include <cmath>
#include <ctime>

namespace kvsweep {

double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string utc_iso8601(double unix_s) {
  const std::time_t seconds = static_cast<std::time_t>(std::floor(unix_s));
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return buffer;
}

}  // namespace kvsweep
