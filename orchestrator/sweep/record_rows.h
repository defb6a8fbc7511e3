// Converts the load driver's request records into store rows.
#pragma once

#include <vector>

#include "driver/request_record.h"
#include "store/rows.h"

namespace kvsweep::orchestrator {

// shift_s is added to every time so that records of several driver runs (warm-up, measured)
// share the cell's epoch; index_offset keeps request indexes unique within the cell.
std::vector<store::RequestRow> to_request_rows(const std::vector<driver::RequestRecord>& records,
                                               double shift_s, std::int64_t index_offset);

}  // namespace kvsweep::orchestrator
