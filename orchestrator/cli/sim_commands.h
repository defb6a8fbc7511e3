// `kvsweep sim serve` (the simulated fleet standalone) and `kvsweep proxy` (its router in front
// of real servers).
#pragma once

#include "orchestrator/cli/subcommand.h"

namespace kvsweep::orchestrator {

Subcommand register_sim(CLI::App& app, const GlobalOptions& global);
Subcommand register_proxy(CLI::App& app, const GlobalOptions& global);

}  // namespace kvsweep::orchestrator
