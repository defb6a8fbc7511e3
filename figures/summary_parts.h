// The parts of a cell's summary beyond CellMetrics' plain figures: its verdict with every
// figure the verdict stands on, and how its requests split over the replicas. Written and read
// bit for bit, so a report from the summary says what one from the raw rows says.
#pragma once

#include "figures/replica_breakdown.h"
#include "figures/summary_json.h"
#include "figures/validity.h"

namespace kvsweep::figures {

summary_json::Json validity_to_summary(const CellValidity& validity);
// Fields `r` lacks keep `out`'s values; a wrong type throws std::invalid_argument naming it.
void validity_from_summary(const summary_json::Reader& r, CellValidity& out);

summary_json::Json replicas_to_summary(const ReplicaBreakdown& replicas);
ReplicaBreakdown replicas_from_summary(const summary_json::Reader& parent, const char* key);

}  // namespace kvsweep::figures
