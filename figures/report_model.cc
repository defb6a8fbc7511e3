// The report model of one experiment: levels, a row per strategy, ratios to the baseline.
#include "figures/report_model.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/join.h"
#include "figures/cell_summary.h"
#include "figures/validity_json.h"

namespace kvsweep::figures {
namespace {

// ordered_json keeps the user's key order, so "load" reads as the scenario was written.
using Json = nlohmann::ordered_json;

std::string json_text(const Json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// "sim, 4 replicas, profile demo, description=..., stands_in_for=kubeai": every key the
// target was stored with.
std::string target_text(const store::TargetSetup& target) {
  std::vector<std::string> parts;
  parts.push_back(target.kind);
  if (target.replicas) parts.push_back(std::to_string(*target.replicas) + " replicas");
  if (target.profile) parts.push_back("profile " + *target.profile);
  const Json stored = store::target_json(target);
  for (const auto& [key, value] : stored.items()) {
    if (key != "kind" && key != "replicas" && key != "profile") {
      parts.push_back(key + "=" + json_text(value));
    }
  }
  return join(parts);
}

// "shape=closed loop, ..., max_tokens=256": the load section as it was stored.
std::string load_text(const store::LoadSetup& load) {
  std::string text;
  const Json stored = store::load_json(load);
  for (const auto& [key, value] : stored.items()) {
    text += (text.empty() ? "" : ", ") + key + "=" + json_text(value);
  }
  return text;
}

std::optional<double> ratio(double value, double base) {
  if (base == 0) return std::nullopt;
  return value / base;
}

std::optional<double> latency_ratio(const SampleSummary& row, const SampleSummary& base,
                                    double SampleSummary::*field) {
  if (row.count == 0 || base.count == 0) return std::nullopt;
  return ratio(row.*field, base.*field);
}

BaselineRatios ratios_to(const CellMetrics& row, const CellMetrics& base) {
  BaselineRatios r;
  r.ttft_mean = latency_ratio(row.ttft_ms, base.ttft_ms, &SampleSummary::mean);
  r.ttft_p99 = latency_ratio(row.ttft_ms, base.ttft_ms, &SampleSummary::p99);
  r.tpot_mean = latency_ratio(row.tpot_ms, base.tpot_ms, &SampleSummary::mean);
  r.itl_mean = latency_ratio(row.itl_ms, base.itl_ms, &SampleSummary::mean);
  r.e2e_mean = latency_ratio(row.e2e_ms, base.e2e_ms, &SampleSummary::mean);
  if (row.window_s > 0 && base.window_s > 0) {
    r.request_throughput = ratio(row.request_throughput, base.request_throughput);
    r.output_throughput = ratio(row.output_throughput, base.output_throughput);
    if (row.total_token_throughput && base.total_token_throughput) {  // unknown prompt counts
      r.total_token_throughput = ratio(*row.total_token_throughput, *base.total_token_throughput);
    }
  }
  return r;
}

// Picks the row every other row at this level is divided by: the baseline strategy's first
// repeat that was measured. Returns rows.size() when there is none.
std::size_t baseline_index(const std::vector<StrategyRow>& rows, const std::string& baseline) {
  std::size_t best = rows.size();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const StrategyRow& row = rows[i];
    if (!row.measured || row.cell.arm != baseline) continue;
    if (best == rows.size() || row.cell.repeat < rows[best].cell.repeat) best = i;
  }
  return best;
}

}  // namespace

std::string repeat_label(const std::string& strategy, int repeat, int repeats) {
  return repeats > 1 ? strategy + " #" + std::to_string(repeat + 1) : strategy;
}

std::vector<SetupLine> setup_lines(const store::ExperimentRow& experiment) {
  std::vector<SetupLine> lines;
  auto add = [&lines](const std::string& label, const std::string& value) {
    if (!value.empty()) lines.push_back({label, value});
  };
  add("Status", experiment.status);
  add("Started", experiment.started_at);
  add("Finished", experiment.finished_at);
  add("kvsweep", experiment.kvsweep_version);
  add("Host", experiment.host);
  add("Scenario", experiment.scenario_path);
  const store::ExperimentSetup& setup = experiment.setup;
  if (!setup.unreadable.empty()) {
    add("Setup", "(the stored setup is not a JSON object)");
    return lines;
  }
  if (setup.target) add("Target", target_text(*setup.target));
  if (setup.model) add("Model", *setup.model);
  if (setup.load) add("Load", load_text(*setup.load));
  add("Baseline", experiment.baseline);
  return lines;
}

std::string figures_kind(const store::ExperimentRow& experiment) {
  const std::string kind = experiment.setup.target_kind();
  if (kind == "predict") return "predicted";
  if (kind == "sim") return "simulated";
  return "measured";
}

std::string figures_source(const store::ExperimentRow& experiment) {
  const std::string figures = figures_kind(experiment);
  if (figures == "measured") return "";
  const store::TargetSetup& target = *experiment.setup.target;
  std::string text =
      figures == "predicted"
          ? "Predicted: these figures are a prediction, computed in virtual time by kvsweep's "
            "simulated fleet (target kind predict"
          : "Simulated: these figures come from kvsweep's embedded fleet (target kind sim";
  if (target.profile && !target.profile->empty()) text += ", profile " + *target.profile;
  if (target.replicas) text += ", " + std::to_string(*target.replicas) + " replicas";
  text += ")";
  if (target.stands_in_for) text += ", standing in for the " + *target.stands_in_for + " target";
  return text + (figures == "predicted" ? ", not measurements of real servers."
                                        : ", not from real servers.");
}

std::string figures_label(const store::ExperimentRow& experiment) {
  const std::string figures = figures_kind(experiment);
  return figures == "measured" ? "" : figures;
}

ReportModel make_report_model(const store::ExperimentRow& experiment,
                              const std::vector<store::CellRow>& cells,
                              const std::vector<CellMetrics>& metrics,
                              const std::vector<ReplicaBreakdown>& replicas) {
  if (cells.size() != metrics.size()) {
    throw std::invalid_argument("make_report_model: one CellMetrics per cell expected");
  }
  int repeats = 1;  // the plan runs every combination the same number of times
  for (const store::CellRow& cell : cells) repeats = std::max(repeats, cell.repeat + 1);
  if (!replicas.empty() && replicas.size() != cells.size()) {
    throw std::invalid_argument("make_report_model: one ReplicaBreakdown per cell expected");
  }
  ReportModel model;
  model.experiment = experiment;
  model.setup = setup_lines(experiment);
  model.figures_source = figures_source(experiment);
  model.figures = figures_kind(experiment);
  model.baseline = experiment.baseline;

  for (std::size_t i = 0; i < cells.size(); ++i) {
    const store::CellRow& cell = cells[i];
    auto level =
        std::find_if(model.levels.begin(), model.levels.end(),
                     [&](const ConcurrencyLevel& l) { return l.concurrency == cell.concurrency; });
    if (level == model.levels.end()) {
      model.levels.push_back({cell.concurrency, {}, false});
      level = std::prev(model.levels.end());
    }
    StrategyRow row;
    row.label = repeat_label(cell.arm, cell.repeat, repeats);
    row.cell = cell;
    row.measured = cell.status == "done";
    row.metrics = metrics[i];
    if (!replicas.empty()) row.replicas = replicas[i];
    level->rows.push_back(std::move(row));
  }
  // Stable: rows keep plan order, levels only move relative to each other.
  std::stable_sort(model.levels.begin(), model.levels.end(),
                   [](const ConcurrencyLevel& a, const ConcurrencyLevel& b) {
                     return a.concurrency < b.concurrency;
                   });

  if (model.baseline.empty()) return model;
  for (ConcurrencyLevel& level : model.levels) {
    const std::size_t base = baseline_index(level.rows, model.baseline);
    if (base == level.rows.size()) continue;
    level.has_baseline = true;
    level.rows[base].is_baseline = true;
    for (std::size_t i = 0; i < level.rows.size(); ++i) {
      if (i == base || !level.rows[i].measured) continue;
      level.rows[i].vs_baseline = ratios_to(level.rows[i].metrics, level.rows[base].metrics);
    }
  }
  return model;
}

ReportModel build_report_model(const store::StoreReader& store, std::int64_t experiment_id,
                               FigureSource source) {
  const auto experiment = store.experiment(experiment_id);
  if (!experiment) {
    throw std::runtime_error(store.path() + ": no experiment with id " +
                             std::to_string(experiment_id));
  }
  const std::optional<store::PruneMark> pruned = store.prune_mark(experiment_id);
  if (pruned && source == FigureSource::kRawRows) {
    throw std::runtime_error(store.path() + ": experiment " + std::to_string(experiment_id) +
                             "'s raw request rows were pruned on " + pruned->pruned_at + " (" +
                             pruned->policy + "): only its summaries remain, without --exact");
  }
  const std::vector<store::CellRow> cells = store.cells(experiment_id);
  std::map<std::int64_t, store::CellSummaryRow> summaries;
  if (source != FigureSource::kRawRows) {
    for (auto& row : store.cell_summaries(experiment_id, /*with_sample=*/false)) {
      if (row.format <= kSummaryFormat) summaries.emplace(row.cell_id, std::move(row));
    }
  }
  std::vector<CellMetrics> metrics;
  std::vector<ReplicaBreakdown> replicas;
  metrics.reserve(cells.size());
  replicas.reserve(cells.size());
  const ValidityRules rules = validity_rules_of(*experiment);
  std::int64_t earlier_rules = 0;  // cells whose verdict is a summary's of an older format
  for (const auto& cell : cells) {
    // A done cell's figures were computed once when it ended; a running or failed one's come
    // from its rows as they stand.
    const auto summary = summaries.find(cell.id);
    if (cell.status == "done" && summary != summaries.end()) {
      if (summary->second.format < kSummaryFormat) ++earlier_rules;
      CellSummary figures =
          stored_summary(*experiment, cell, summary->second,
                         source == FigureSource::kSummaryFigures ? SummaryDetail::kFigures
                                                                 : SummaryDetail::kWhole);
      // A sharded cell's shards are rows of their own, not summary figures.
      if (auto load = store.cell_load(cell.id); load && !load->shards.empty()) {
        figures.metrics.shards = std::move(load->shards);
      }
      metrics.push_back(std::move(figures.metrics));
      replicas.push_back(std::move(figures.replicas));
      continue;
    }
    const std::vector<store::RequestRow> requests = store.requests(cell.id);
    const std::vector<store::MetricSample> samples = store.metric_samples(cell.id);
    metrics.push_back(compute_cell_metrics(requests, samples, {}, store.cell_load(cell.id), rules));
    replicas.push_back(replica_breakdown(requests, samples));
  }
  ReportModel model = make_report_model(*experiment, cells, metrics, replicas);
  model.figures_from = source == FigureSource::kRawRows ? "raw rows" : "summaries";
  model.capacity = capacity_section(store, *experiment, cells, metrics);
  if (earlier_rules > 0) {
    model.setup.push_back(
        {"Verdicts", std::to_string(earlier_rules) + " of " + std::to_string(cells.size()) +
                         " cells judged by the earlier rules (over capacity from the TTFT "
                         "trend, before summary format " +
                         std::to_string(kSummaryFormat) + "): " +
                         (pruned ? "their raw rows were pruned, so they cannot be judged again"
                                 : "a command that writes the store judges them again")});
  }
  if (pruned) {
    model.pruned = pruned;
    model.setup.push_back(
        {"Raw rows", "pruned " + pruned->pruned_at + " (" + pruned->policy +
                         "); figures from the cells' summaries, computed exactly when they ended"});
  }
  return model;
}

}  // namespace kvsweep::figures
