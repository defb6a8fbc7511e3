#include "orchestrator/calibrate/stored_run.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/error_kinds.h"
#include "common/join.h"
#include "figures/cell_summary.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/targets/target_kinds.h"

namespace kvsweep::orchestrator {
namespace {

std::optional<double> positive(double value) {
  if (!(value > 0) || !std::isfinite(value)) return std::nullopt;
  return value;
}

// The setup's target (sweep/runner.cc writes it): kind, replicas, stands_in_for.
void read_target(const store::ExperimentSetup& setup, StoredRun& run) {
  if (!setup.target) return;
  run.target_kind = setup.target->kind;
  if (setup.target->replicas) run.replicas = *setup.target->replicas;
  run.rehearsal = run.target_kind == "sim" && setup.target->stands_in_for.has_value();
}

// The pool every source of `samples` shows in vllm:cache_config_info, or why there is none.
std::optional<predict::ServerKvPool> kv_pool_of(const std::vector<store::MetricSample>& samples,
                                                std::string* note) {
  std::map<std::string, std::pair<int, int>> by_source;  // source -> (blocks, block size)
  for (const auto& s : samples) {
    if (s.name != "vllm:cache_config_info") continue;
    const auto labels = nlohmann::json::parse(s.labels_json, nullptr, false);
    if (!labels.is_object() || !labels.contains("num_gpu_blocks") ||
        !labels["num_gpu_blocks"].is_string()) {
      continue;
    }
    const int blocks = std::atoi(labels["num_gpu_blocks"].get<std::string>().c_str());
    const int size = labels.contains("block_size") && labels["block_size"].is_string()
                         ? std::atoi(labels["block_size"].get<std::string>().c_str())
                         : 0;
    if (blocks > 0 && size > 0) by_source[s.source] = {blocks, size};
  }
  if (by_source.empty()) {
    *note = "the servers' /metrics show no vllm:cache_config_info";
    return std::nullopt;
  }
  const auto first = by_source.begin()->second;
  for (const auto& [source, pool] : by_source) {
    if (pool != first) {
      *note = "the servers' pools differ (" + by_source.begin()->first + ": " +
              std::to_string(first.first) + " blocks, " + source + ": " +
              std::to_string(pool.first) + ")";
      return std::nullopt;
    }
  }
  return predict::ServerKvPool{first.first, first.second};
}

// The KV pool the first done cell with server samples shows; `note` says why there is none.
std::optional<predict::ServerKvPool> first_kv_pool(const store::RowReader& store,
                                                   const std::vector<store::CellRow>& cells,
                                                   std::string* note) {
  for (const auto& cell : cells) {
    if (cell.status != "done") continue;
    const auto samples = store.metric_samples(cell.id);
    if (!samples.empty()) return kv_pool_of(samples, note);
  }
  *note = "no cell has server samples (pruned, or none were scraped)";
  return std::nullopt;
}

bool matches(const store::CellFactors& factors, const Holdout& h) {
  return factors.level_of(h.first) == h.second;
}

}  // namespace

predict::CalibrationFigures figures_of(const figures::CellMetrics& m) {
  using predict::Figure;
  predict::CalibrationFigures out;
  out.ok = m.ok;
  out.max_in_flight = m.max_concurrent_requests;
  out.kv_hit = m.kv_hit_rate_server;
  if (m.ok == 0) return out;
  out[Figure::kTtftMean] = positive(m.ttft_ms.mean);
  out[Figure::kTtftP50] = positive(m.ttft_ms.median);
  out[Figure::kTtftP90] = positive(m.ttft_ms.p90);
  if (m.itl_ms.count > 0) {
    out[Figure::kItlMean] = positive(m.itl_ms.mean);
    out[Figure::kItlP50] = positive(m.itl_ms.median);
    out[Figure::kItlP90] = positive(m.itl_ms.p90);
  }
  out[Figure::kOutputTokS] = positive(m.output_throughput);
  return out;
}

std::map<std::int64_t, figures::CellMetrics> cell_figures(const store::FigureReader& store,
                                                          std::int64_t experiment_id) {
  std::map<std::int64_t, figures::CellMetrics> out;
  for (const auto& row : store.cell_summaries(experiment_id, false)) {
    out[row.cell_id] = figures::summary_from_row(row, figures::SummaryDetail::kFigures).metrics;
  }
  return out;
}

StoredRun load_stored_run(const store::StoreReader& store, std::int64_t experiment_id,
                          const std::vector<Holdout>& holdout) {
  StoredRun run;
  const auto experiment = store.experiment(experiment_id);
  if (!experiment) {
    throw UsageError("experiment " + std::to_string(experiment_id) + ": not in the store");
  }
  run.experiment = *experiment;
  read_target(experiment->setup, run);
  std::vector<ScenarioError> errors;
  auto spec =
      parse_scenario(experiment->scenario_text, experiment->scenario_path, &errors, target_kinds());
  if (!spec) {
    throw UsageError("experiment " + std::to_string(experiment_id) +
                     ": its stored scenario no longer loads: " +
                     (errors.empty() ? std::string("?") : errors.front().text));
  }
  run.spec = std::move(*spec);
  if (run.spec.search.enabled()) {
    throw UsageError(
        "experiment " + std::to_string(experiment_id) +
        " is a capacity search: calibrate and replay read a grid's cells (a search's probes "
        "are chosen by its verdicts); use a grid run of the same fleet");
  }
  // The plan's cells by their levels and repeat: the stored cells ran the same expansion. A
  // rehearsal (`run --target sim` of a cluster scenario) ran target.sim's cuts: its cells are
  // replayed as cut; anything else at full size, as `predict` runs it.
  std::map<std::pair<std::string, int>, const CellPlan*> by_levels;  // factors as stored
  const std::vector<CellPlan> plan = expand_plan(run.spec, run.rehearsal ? "sim" : "predict");
  for (const auto& cell : plan) {
    by_levels[{store::encode_factors(store::decode_factors(cell.factors_json)), cell.repeat}] =
        &cell;
  }

  const std::map<std::int64_t, figures::CellMetrics> metrics = cell_figures(store, experiment_id);
  const std::vector<store::CellRow> cells = store.cells(experiment_id);
  run.kv_pool = first_kv_pool(store, cells, &run.kv_pool_note);
  std::vector<bool> holdout_used(holdout.size(), false);
  for (const auto& cell : cells) {
    std::string label = cell.arm + "@" + std::to_string(cell.concurrency);
    if (cell.repeat > 0) label += " #" + std::to_string(cell.repeat + 1);
    if (cell.status != "done") {
      run.skipped.push_back(label + ": " + cell.status +
                            (cell.error.empty() ? "" : ": " + cell.error));
      continue;
    }
    const auto found = by_levels.find({store::encode_factors(cell.factors), cell.repeat});
    const auto summary = metrics.find(cell.id);
    if (found == by_levels.end() || summary == metrics.end()) {
      run.skipped.push_back(label + (found == by_levels.end()
                                         ? ": its levels are not in the scenario's plan"
                                         : ": no summary (run `kvsweep migrate`)"));
      continue;
    }
    const figures::CellMetrics& m = summary->second;
    if (m.ok == 0) {
      run.skipped.push_back(label + ": no successful request");
      continue;
    }
    if (m.validity.client_bound) {
      run.skipped.push_back(label + ": client-bound (" + figures::verdict_line(m.validity) + ")");
      continue;
    }
    CalibrationCell c;
    c.plan = *found->second;
    c.cell_id = cell.id;
    c.label = label;
    c.measured = figures_of(m);
    for (std::size_t i = 0; i < holdout.size(); ++i) {
      if (matches(cell.factors, holdout[i])) {
        c.held_out = true;
        holdout_used[i] = true;
      }
    }
    run.cells.push_back(std::move(c));
  }
  for (std::size_t i = 0; i < holdout.size(); ++i) {
    if (!holdout_used[i]) {
      throw UsageError("--holdout " + holdout[i].first + "=" + holdout[i].second +
                       ": no calibrated cell of experiment " + std::to_string(experiment_id) +
                       " has that level");
    }
  }
  std::size_t fitted = 0;
  for (const auto& c : run.cells) fitted += c.held_out ? 0 : 1;
  if (fitted == 0) {
    throw UsageError("experiment " + std::to_string(experiment_id) + ": no cell left to fit" +
                     (run.skipped.empty() ? std::string() : " (" + join(run.skipped, "; ") + ")") +
                     (run.cells.empty() ? "" : "; every cell is held out"));
  }
  return run;
}

}  // namespace kvsweep::orchestrator
