// Per-cell export files for other tools: vLLM's result JSON and an llm-d Benchmark Report v0.2
// document (reports/llmd_benchmark_report.h; docs/reports.md lists the fields we fill).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "figures/cell_metrics.h"
#include "store/store_readers.h"

namespace kvsweep::reports {

struct ExportFile {
  std::string name;  // "cell-03-prefix-hash-c8-r1.vllm.json"
  std::string text;
};

// Both documents for every done cell of the experiment, in plan order. Throws
// std::runtime_error when the experiment does not exist.
std::vector<ExportFile> cell_exports(const store::StoreReader& store, std::int64_t experiment_id);

}  // namespace kvsweep::reports
