// The logger main() makes and hands down for --verbose: every kubectl argv, readiness poll,
// /metrics scrape and simulated-fleet admin request at debug level. Parts log through the one
// they are given, never through spdlog's process-wide registry.
#pragma once

#include <spdlog/logger.h>

#include <memory>

#include "orchestrator/cli/console.h"

namespace kvsweep::orchestrator {

// Thread-safe: the periodic scraper logs from its own thread.
using Log = std::shared_ptr<spdlog::logger>;

// Drops every message: for code run without a command line (tests, other programs).
Log silent_log();

// "HH:MM:SS.mmm [level] text" lines on stderr, stdout flushed before each so a redirected log
// keeps its order. Debug and up under kVerbose, errors only under kQuiet, else warnings.
Log stderr_log(Verbosity verbosity);

}  // namespace kvsweep::orchestrator
