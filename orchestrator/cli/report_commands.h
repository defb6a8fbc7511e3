// The reporting subcommands: report, compare, history, export (registered from main()).
#pragma once

#include "orchestrator/cli/subcommand.h"

namespace kvsweep::orchestrator {

Subcommand register_report(CLI::App& app, const GlobalOptions& global);
Subcommand register_compare(CLI::App& app, const GlobalOptions& global);
Subcommand register_history(CLI::App& app, const GlobalOptions& global);
Subcommand register_export(CLI::App& app, const GlobalOptions& global);

}  // namespace kvsweep::orchestrator
