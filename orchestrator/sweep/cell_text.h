// What the console says about a cell: its label, its progress, its one-line summary.
#pragma once

#include <string>
#include <vector>

#include "driver/load_options.h"
#include "figures/cell_metrics.h"
#include "orchestrator/scenario/treatment.h"

namespace kvsweep::orchestrator {

// "strategy=prefix-hash, replication=2", or "(no target factor)".
std::string describe_treatment(const Treatment& t);

// "cell 3/12 prefix-hash #2 c=8": numbered from 1, the arm named as the report names its row.
std::string cell_label(int ordinal, std::size_t cells, const std::string& arm, int repeat,
                       int repeats, int concurrency);

// "<label>: 40/100 requests, 12.5 req/s, p50 TTFT 35.1 ms[, 2 failed]".
std::string describe_progress(const std::string& label, const driver::Progress& p);

// One line per finished cell, from the same computation the report uses.
std::string cell_summary(const figures::CellMetrics& m);

// Under the summary, why requests failed: the first of each kind, with its status and reason.
std::vector<std::string> first_failure_lines(const figures::CellMetrics& m);

// Why a cell is not valid: each rule that fired, with its figures; none for a valid cell.
std::vector<std::string> verdict_lines(const figures::CellMetrics& m);

}  // namespace kvsweep::orchestrator
