// The logger a part is handed for its debug lines (kvsweep --verbose: every kubectl argv,
// readiness poll, /metrics scrape, admin request). Parts log through the one they are given,
// never through spdlog's process-wide registry; only main() configures spdlog.
#pragma once

#include <spdlog/logger.h>

#include <memory>

namespace kvsweep {

// Thread-safe: the periodic scraper logs from its own thread.
using Log = std::shared_ptr<spdlog::logger>;

// Drops every message: for code run without a command line (tests, other programs).
Log silent_log();

}  // namespace kvsweep
