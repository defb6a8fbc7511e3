// Per-cell exports for other tools: vLLM's result JSON and an llm-d Benchmark Report v0.2
// document (docs/reports.md lists which BR fields we fill and which stay null).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/cell_metrics.h"
#include "store/store.h"

namespace kvsweep::reports {

// An llm-d Benchmark Report v0.2 (version, run, scenario, results) for one measured cell.
nlohmann::ordered_json llmd_benchmark_report(const store::ExperimentRow& experiment,
                                             const store::CellRow& cell,
                                             const CellMetrics& metrics);

struct ExportFile {
  std::string name;  // "cell-03-prefix-hash-c8-r1.vllm.json"
  std::string text;
};

// Both documents for every done cell of the experiment, in plan order. Throws
// std::runtime_error when the experiment does not exist.
std::vector<ExportFile> cell_exports(const store::Store& store, std::int64_t experiment_id);

}  // namespace kvsweep::reports
