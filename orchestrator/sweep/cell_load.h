// The load step of a cell, as the runner calls it: driver::run_load unless a test scripts it.
#pragma once

#include <functional>

#include "driver/load_options.h"
#include "driver/workload.h"

namespace kvsweep::orchestrator {

// One driver run (pre-pass, warm-up or measured phase) with run_load's contract
// (driver/load_run.h): every request a record, the stop flag honoured, progress about once a
// second. Called from the runner's thread. driver::run_load converts to it.
using CellLoad = std::function<driver::LoadResult(
    const driver::LoadOptions& options, const driver::Workload& workload,
    const std::function<void(const driver::Progress&)>& on_progress)>;

}  // namespace kvsweep::orchestrator
