// load_workload: the one entry point that turns DatasetOptions into a Workload, by kind.
#pragma once

#include <string>
#include <vector>

#include "driver/datasets/dataset_error.h"
#include "driver/datasets/dataset_options.h"
#include "driver/workload.h"

namespace kvsweep::driver {

// The accepted values of DatasetOptions::kind, in documentation order.
std::vector<std::string> dataset_kinds();

// Dispatches on options.kind. Throws DatasetError, located (file:line or file: JSON path, and
// the field) for bad input; an unknown kind lists the known ones and suggests the nearest.
Workload load_workload(const DatasetOptions& options);

}  // namespace kvsweep::driver
