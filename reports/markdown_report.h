// The markdown report of one experiment, rendered from the store alone through templates/.
#pragma once

#include <cstdint>
#include <string>

#include "figures/report_model.h"
#include "store/store_readers.h"

namespace kvsweep::reports {

// Throws std::runtime_error when the experiment does not exist.
std::string render_markdown(const store::StoreReader& store, std::int64_t experiment_id);
std::string render_markdown(const figures::ReportModel& model);

}  // namespace kvsweep::reports
