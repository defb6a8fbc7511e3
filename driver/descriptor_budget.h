// Descriptors a load run may need against what the process may open, checked before sending.
#pragma once

#include <cstdint>
#include <string>

#include "driver/load_options.h"
#include "driver/workload.h"

namespace kvsweep::driver {

struct DescriptorBudget {
  std::int64_t connections = 0;  // streams the run may hold open at once
  std::string because;           // why that many: "max_concurrency 2000", ...
  std::int64_t headroom = 0;     // the transport's own (event loops, timers) and the process's
                                 // other needs (store, /metrics scrapes, child processes)
  std::int64_t in_use = 0;       // descriptors this process already holds
  std::int64_t limit = 0;        // the soft RLIMIT_NOFILE, after raise_open_file_limit()
  std::int64_t hard_limit = 0;

  std::int64_t needed() const { return connections + headroom + in_use; }
  bool fits() const { return needed() <= limit; }
};

// Raises the soft RLIMIT_NOFILE to the hard limit (every stream holds a socket) and returns the
// new soft limit, or -1 when it cannot be read.
long raise_open_file_limit();

// The soft RLIMIT_NOFILE as it is now (-1 when it cannot be read).
long open_file_limit();

// Raises the limit, then sizes the run: a closed loop holds `concurrency` connections; an open
// loop at most max_concurrency, else about request_rate x request_timeout_s (a request can last
// that long), a trace the most arrivals within one request timeout; never more than the
// requests the run sends when that count is known.
DescriptorBudget descriptor_budget(const LoadOptions& options, const Workload& workload);

// Throws std::invalid_argument, naming the numbers and the fix, when the run could need more
// descriptors than the process may open: nothing is sent then. Refusing beats capping: a run
// that silently held fewer streams than asked would measure a different load, and one that
// hit EMFILE halfway would measure the client (docs/performance.md).
void check_descriptor_budget(const LoadOptions& options, const Workload& workload);

}  // namespace kvsweep::driver
