// Per-cell export files: a vLLM result JSON and an llm-d Benchmark Report v0.2 per done cell.
#include "reports/cell_exports.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "figures/report_model.h"
#include "figures/validity_json.h"
#include "reports/llmd_benchmark_report.h"
#include "reports/vllm_result.h"

namespace kvsweep::reports {
namespace {

using Json = nlohmann::ordered_json;

std::string cell_stem(const store::CellRow& c) {
  std::string strategy;
  for (char ch : c.arm)
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

// The percentiles the run asked for: a `kvsweep load` run keeps its --percentile-metrics and
// --metric-percentiles in its setup; a sweep gets vLLM's default metrics plus e2el, at p99.
PercentileSelection export_selection(const store::ExperimentSetup& setup) {
  PercentileSelection selection;
  selection.metrics = {"ttft", "tpot", "itl", "e2el"};
  if (!setup.load) return selection;
  if (setup.load->percentile_metrics) selection.metrics = *setup.load->percentile_metrics;
  if (setup.load->metric_percentiles) selection.percentiles = *setup.load->metric_percentiles;
  return selection;
}

// vLLM's run metadata from the setup: an open-loop `kvsweep load` run stores its rate and
// burstiness; anything else is closed loop ("inf", as vLLM writes it).
VllmRunInfo run_info(const store::ExperimentRow& e, const store::CellRow& cell,
                     const figures::CellMetrics& m) {
  const std::optional<store::LoadSetup>& load = e.setup.load;
  VllmRunInfo info;
  info.date = vllm_date(cell.started_at.empty() ? e.started_at : cell.started_at);
  // "completions" or "chat, streaming"
  const bool completions = load && load->endpoint && load->endpoint->starts_with("completions");
  info.endpoint_type = completions ? "openai" : "openai-chat";
  info.label = cell.arm;
  info.model_id = e.setup.model.value_or("");
  info.num_prompts = m.ok + m.failed;
  // An unbounded rate stays 0, which vLLM's format writes as "inf".
  if (load && load->request_rate && *load->request_rate > 0 && std::isfinite(*load->request_rate)) {
    info.request_rate = *load->request_rate;
  }
  if (load && load->burstiness) info.burstiness = *load->burstiness;
  info.max_concurrency = cell.concurrency;
  info.figures = figures::figures_kind(e);
  return info;
}

}  // namespace

std::vector<ExportFile> cell_exports(const store::StoreReader& store, std::int64_t experiment_id) {
  const auto e = store.experiment(experiment_id);
  if (!e)
    throw std::runtime_error(store.path() + ": no experiment with id " +
                             std::to_string(experiment_id));
  if (const auto pruned = store.prune_mark(experiment_id)) {
    // The exports carry every request's figures (vLLM's per-request lists, llm-d's
    // distributions): the summary's histograms would change them.
    throw std::runtime_error(store.path() + ": experiment " + std::to_string(experiment_id) +
                             "'s raw request rows were pruned on " + pruned->pruned_at + " (" +
                             pruned->policy + "); its per-cell exports need them");
  }
  std::vector<ExportFile> files;
  for (const auto& cell : store.cells(experiment_id)) {
    if (cell.status != "done") continue;
    const auto requests = store.requests(cell.id);
    const auto samples = store.metric_samples(cell.id);
    const figures::CellMetrics m = figures::compute_cell_metrics(
        requests, samples, {}, store.cell_load(cell.id), figures::validity_rules_of(*e));
    const std::string stem = cell_stem(cell);
    const Json vllm = vllm_result_json(m, run_info(*e, cell, m), export_selection(e->setup));
    files.push_back({stem + ".vllm.json", vllm.dump(2) + "\n"});
    files.push_back({stem + ".llmd-br-v0.2.1.json",
                     llmd_benchmark_report(*e, cell, m, requests, samples).dump(2) + "\n"});
  }
  return files;
}

}  // namespace kvsweep::reports
