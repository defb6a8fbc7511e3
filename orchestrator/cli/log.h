// The logger main() makes and hands down (common/log.h) for --verbose: every kubectl argv,
// readiness poll, /metrics scrape and simulated-fleet admin request at debug level.
#pragma once

#include "common/log.h"
#include "orchestrator/cli/console.h"

namespace kvsweep::orchestrator {

// "HH:MM:SS.mmm [level] text" lines on stderr, stdout flushed before each so a redirected log
// keeps its order. Debug and up under kVerbose, errors only under kQuiet, else warnings.
Log stderr_log(Verbosity verbosity);

}  // namespace kvsweep::orchestrator
