// The flags of `kvsweep load` (vLLM's benchmark_serving names where it has one), each bound
// to its LoadArgs field with its range: what register_load (load_command.cc) adds to its
// subcommand.
#pragma once

#include <CLI/CLI.hpp>

#include "orchestrator/cli/load_args.h"

namespace kvsweep::orchestrator {

// Every option group: the request, the load's shape, the dataset, the result files, the driver
// and vLLM's accepted-and-ignored flags.
void add_load_options(CLI::App* cmd, LoadArgs* a);

}  // namespace kvsweep::orchestrator
