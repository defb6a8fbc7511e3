// Per-cell export files: a vLLM result JSON and an llm-d Benchmark Report v0.2 per done cell.
#include "reports/cell_exports.h"

#include <cctype>
#include <cstdio>
#include <stdexcept>

#include "reports/llmd_benchmark_report.h"
#include "reports/vllm_result.h"

namespace kvsweep::reports {
namespace {

using Json = nlohmann::ordered_json;

Json setup_of(const store::ExperimentRow& e) {
  const Json setup = Json::parse(e.setup_json, nullptr, false);
  return setup.is_object() ? setup : Json::object();
}

std::string cell_stem(const store::CellRow& c) {
  std::string strategy;
  for (char ch : c.strategy)
    strategy += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' ? ch : '_';
  char ordinal[16];
  std::snprintf(ordinal, sizeof ordinal, "%03d", c.ordinal + 1);
  return std::string("cell-") + ordinal + "-" + strategy + "-c" + std::to_string(c.concurrency) +
         "-r" + std::to_string(c.repeat + 1);
}

// "2026-11-22T04:30:00Z" -> "20261122-043000", vLLM's date format.
std::string vllm_date(const std::string& iso) {
  std::string digits;
  for (char c : iso) {
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
  }
  if (digits.size() < 14) return iso;
  return digits.substr(0, 8) + "-" + digits.substr(8, 6);
}

}  // namespace

std::vector<ExportFile> cell_exports(const store::Store& store, std::int64_t experiment_id) {
  const auto e = store.experiment(experiment_id);
  if (!e)
    throw std::runtime_error(store.path() + ": no experiment with id " +
                             std::to_string(experiment_id));
  const Json setup = setup_of(*e);
  std::vector<ExportFile> files;
  for (const auto& cell : store.cells(experiment_id)) {
    if (cell.status != "done") continue;
    const auto requests = store.requests(cell.id);
    const CellMetrics m = compute_cell_metrics(requests, store.metric_samples(cell.id));
    VllmRunInfo info;
    info.date = vllm_date(cell.started_at.empty() ? e->started_at : cell.started_at);
    info.endpoint_type = "openai-chat";
    info.label = cell.strategy;
    info.model_id = setup.value("model", std::string());
    info.num_prompts = m.ok + m.failed;
    info.max_concurrency = cell.concurrency;
    const std::string stem = cell_stem(cell);
    files.push_back({stem + ".vllm.json", vllm_result_json(m, info).dump(2) + "\n"});
    files.push_back(
        {stem + ".llmd-br-v0.2.json", llmd_benchmark_report(*e, cell, m, requests).dump(2) + "\n"});
  }
  return files;
}

}  // namespace kvsweep::reports
