// Descriptors a load run may need against what the process may open, checked before sending.
#include "driver/descriptor_budget.h"

#include <dirent.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "common/duration.h"
#include "common/error_kinds.h"
#include "driver/lane_size.h"

namespace kvsweep::driver {
namespace {

// The process's other descriptors during a run: stdio, the SQLite store and its journal,
// /metrics scrapes, kubectl pipes, log files. Generous: a refusal costs a rerun, EMFILE a run.
constexpr std::int64_t kProcessHeadroom = 64;
// Per event-loop thread: its epoll set and wake-up eventfd; the run thread has the same plus
// the pacer's timerfd.
constexpr std::int64_t kPerThread = 3;
constexpr std::int64_t kUnbounded = std::numeric_limits<std::int64_t>::max() / 4;

std::int64_t open_descriptors() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  std::int64_t count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return std::max<std::int64_t>(0, count - 1);  // not the directory stream itself
}

std::string number(double value) {
  std::string text = std::to_string(value);
  while (text.size() > 1 && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

// The most arrivals of a trace within any window of `window_s`.
std::int64_t busiest_window(const std::vector<double>& arrival_s, double window_s) {
  std::int64_t most = 0;
  std::size_t first = 0;
  for (std::size_t last = 0; last < arrival_s.size(); ++last) {
    while (arrival_s[last] - arrival_s[first] >= window_s) ++first;
    most = std::max<std::int64_t>(most, static_cast<std::int64_t>(last - first + 1));
  }
  return most;
}

}  // namespace

long raise_open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
    ::getrlimit(RLIMIT_NOFILE, &limit);
  }
  return static_cast<long>(limit.rlim_cur);
}

long open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
  return static_cast<long>(limit.rlim_cur);
}

DescriptorBudget descriptor_budget(const LoadOptions& options, const Workload& workload) {
  DescriptorBudget budget;
  budget.limit = raise_open_file_limit();
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    budget.hard_limit =
        limit.rlim_max == RLIM_INFINITY ? kUnbounded : static_cast<std::int64_t>(limit.rlim_max);
  }
  if (budget.limit < 0) budget.limit = kUnbounded;

  // Requests the run sends, when known up front (warm-up included).
  std::int64_t total = kUnbounded;
  if (options.num_requests > 0 && options.duration_s == 0 && options.warmup_s == 0 &&
      options.warmup_conversations == 0) {
    total = options.num_requests + options.warmup_requests;
  }
  if (!is_open_loop(options, workload)) {
    budget.connections = options.concurrency;
    budget.because = "concurrency " + std::to_string(options.concurrency);
  } else if (options.max_concurrency > 0) {
    budget.connections = options.max_concurrency;
    budget.because = "max_concurrency " + std::to_string(options.max_concurrency);
  } else if (!workload.arrival_s.empty()) {
    total = static_cast<std::int64_t>(workload.arrival_s.size());
    budget.connections = busiest_window(workload.arrival_s, options.request_timeout_s);
    budget.because = "the trace's busiest " + format_duration_s(options.request_timeout_s) +
                     " (request timeout) with no max_concurrency";
  } else if (std::isinf(options.request_rate)) {
    budget.connections = kUnbounded;
    budget.because = "an infinite request_rate with no max_concurrency";
  } else {
    const double streams = std::ceil(options.request_rate * options.request_timeout_s);
    budget.connections = streams >= static_cast<double>(kUnbounded)
                             ? kUnbounded
                             : static_cast<std::int64_t>(streams);
    budget.because = "request_rate " + number(options.request_rate) + "/s x request timeout " +
                     format_duration_s(options.request_timeout_s) + ", with no max_concurrency";
  }
  if (total < budget.connections) {
    budget.connections = total;
    budget.because = std::to_string(total) + " requests in all";
  }
  const std::int64_t threads = transfer_threads(options, workload);
  budget.headroom = kProcessHeadroom + kPerThread * (threads + 1) +
                    std::min(budget.connections, kUnbounded / 2) / kLaneTransfers + threads;
  budget.in_use = open_descriptors();
  return budget;
}

void check_descriptor_budget(const LoadOptions& options, const Workload& workload) {
  const DescriptorBudget b = descriptor_budget(options, workload);
  if (b.fits()) return;
  const std::string connections =
      b.connections >= kUnbounded ? std::string("any number of") : std::to_string(b.connections);
  std::string message =
      "descriptor limit: this run may hold " + connections + " connections at once (" + b.because +
      "), plus " + std::to_string(b.headroom) + " descriptors of headroom and " +
      std::to_string(b.in_use) + " already open, but the process may open only " +
      std::to_string(b.limit) + " (RLIMIT_NOFILE; hard limit " +
      (b.hard_limit >= kUnbounded ? std::string("unlimited") : std::to_string(b.hard_limit)) +
      "). Nothing was sent. Fix: ";
  if (b.connections < kUnbounded) {
    message += "raise the limit to at least " + std::to_string(b.needed()) + " (`ulimit -n " +
               std::to_string(b.needed()) + "` in the shell that starts kvsweep; above the hard " +
               "limit that takes root or /etc/security/limits.conf), or ";
  }
  const std::int64_t room = b.limit - b.headroom - b.in_use;
  message += room > 0 ? "cap the streams at " + std::to_string(room) +
                            " or fewer (--max-concurrency / load.max_concurrency, or fewer "
                            "closed-loop users)"
                      : "free descriptors in this process";
  throw UsageError(message);
}

}  // namespace kvsweep::driver
