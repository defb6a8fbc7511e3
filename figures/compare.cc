// Run-to-run comparison: bootstrap intervals per metric and a verdict each.
#include "figures/compare.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>

#include "common/join.h"
#include "figures/cell_metrics.h"
#include "figures/cell_summary.h"
#include "figures/report_model.h"
#include "figures/units.h"
#include "figures/validity_json.h"

namespace kvsweep::figures {
namespace {

struct MetricDef {
  const char* name;
  JointMetric joint;
  bool higher_is_better;
  std::vector<WeightedSample> RunSamples::*samples;
  bool milliseconds;  // a latency: CompareOptions::min_change_ms applies
};

const std::vector<MetricDef>& metric_defs() {
  static const std::vector<MetricDef> kDefs = {
      {"ttft_mean_ms", {kTtftColumn, {Statistic::kMean, 0}}, false, &RunSamples::ttft_ms, true},
      {"ttft_p50_ms",
       {kTtftColumn, {Statistic::kPercentile, 50}},
       false,
       &RunSamples::ttft_ms,
       true},
      {"ttft_p95_ms",
       {kTtftColumn, {Statistic::kPercentile, 95}},
       false,
       &RunSamples::ttft_ms,
       true},
      {"tpot_mean_ms", {kTpotColumn, {Statistic::kMean, 0}}, false, &RunSamples::tpot_ms, true},
      // Output tokens per second of request time: the per-request form of throughput that a
      // bootstrap can resample; at equal concurrency in a closed loop it moves as throughput.
      {"throughput_per_stream",
       {kOutputTokensColumn, {Statistic::kRatioOfSums, 0}, kE2eSecondsColumn},
       true,
       &RunSamples::tokens_per_e2e_s,
       false},
  };
  return kDefs;
}

// Under a practical floor: smaller than min_change of A, or for a latency than min_change_ms.
bool below_floor(const MetricChange& m, const MetricDef& def, const CompareOptions& options) {
  if (std::fabs(m.change->change) < options.min_change) return true;
  return def.milliseconds && std::fabs(m.b - m.a) < options.min_change_ms;
}

Verdict judge(const ChangeInterval& c, bool higher_is_better) {
  const bool up = c.low > 0;     // the whole interval above 0
  const bool down = c.high < 0;  // the whole interval below 0
  if (!up && !down) return Verdict::kNoChange;
  const bool better = higher_is_better ? up : down;
  return better ? Verdict::kImprovement : Verdict::kRegression;
}

std::string pct(double fraction) {
  return (fraction >= 0 ? "+" : "") + format_fixed(fraction * 100, 1) + "%";
}

// "" when at least one metric of a matched level has a verdict; else why none has.
std::string why_no_metric_compared(const std::vector<CompareRow>& rows,
                                   const CompareOptions& options) {
  bool enough_samples_somewhere = false;
  for (const auto& row : rows) {
    for (const auto& m : row.metrics) {
      if (m.verdict != Verdict::kInsufficientData) return "";
      if (m.n_a >= m.needed && m.n_b >= m.needed) enough_samples_somewhere = true;
    }
  }
  const std::string levels = std::to_string(rows.size()) + " common level(s)";
  if (enough_samples_somewhere) {
    return "no metric of the " + levels +
           " has a bootstrap interval (A's statistic is 0, so no relative change)";
  }
  return "every metric of the " + levels + " has fewer than " +
         std::to_string(options.min_samples) +
         " samples on a side (lower --min-samples or measure more requests)";
}

// The experiment a cell belongs to, for messages that name it.
store::ExperimentRow experiment_of(const store::RunReader& store, const store::CellRow& cell) {
  if (auto e = store.experiment(cell.experiment_id)) return *e;
  store::ExperimentRow unknown;
  unknown.id = cell.experiment_id;
  return unknown;
}

// A cell's requests as compare bootstraps them: its raw rows while they exist, the seeded
// sample its summary keeps once its experiment was pruned.
std::vector<store::RequestRow> compared_requests(const store::StoreReader& store,
                                                 const store::CellRow& cell) {
  if (!store.prune_mark(cell.experiment_id)) return store.request_latencies(cell.id);
  const auto summary = store.cell_summary(cell.id);
  if (!summary) return {};
  return sampled_rows(stored_summary(experiment_of(store, cell), cell, *summary).sample);
}

std::vector<store::RequestRow> pooled_requests(const store::StoreReader& store,
                                               const std::vector<store::CellRow>& cells) {
  std::vector<store::RequestRow> all;
  for (const auto& cell : cells) {
    auto rows = compared_requests(store, cell);
    all.insert(all.end(), rows.begin(), rows.end());
  }
  return all;
}

// What a side's label adds when its raw rows are gone.
std::string pruned_note(const store::RunReader& store, std::int64_t experiment_id) {
  return store.prune_mark(experiment_id)
             ? "; raw rows pruned: bootstrapped from each cell's " +
                   std::to_string(kRequestSampleSize) + "-request sample"
             : "";
}

}  // namespace

std::size_t samples_needed(const StatisticSpec& spec, const CompareOptions& options) {
  if (spec.kind != Statistic::kPercentile || options.min_tail_samples == 0) {
    return options.min_samples;
  }
  // The share of a sample beyond the percentile, in percent: above it, or below it under 50.
  const double beyond = std::min(spec.p, 100 - spec.p);
  if (!(beyond > 0)) return SIZE_MAX;
  // A hair under the exact quotient first: 10 x 100 / (100 - 99.9) is 10000.0000000006.
  const double exact = static_cast<double>(options.min_tail_samples) * 100 / beyond;
  const auto tail = static_cast<std::size_t>(std::ceil(exact * (1 - 1e-12)));
  return std::max(options.min_samples, tail);
}

RunSamples run_samples(const std::vector<store::RequestRow>& requests) {
  RunSamples s;
  s.requests.resize(kRequestColumnCount);
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  for (const auto& r : requests) {
    if (r.warmup || !r.ok) continue;
    s.ttft_ms.push_back({r.ttft_ms, 1});
    s.requests[kTtftColumn].push_back(r.ttft_ms);
    // As docs/metrics.md defines tpot: (e2e - ttft) / (output_tokens - 1).
    double tpot = kNone;
    if (r.output_tokens > 1) {
      tpot = (r.e2e_ms - r.ttft_ms) / (r.output_tokens - 1);
      s.tpot_ms.push_back({tpot, 1});
    }
    s.requests[kTpotColumn].push_back(tpot);
    const bool timed = r.e2e_ms > 0;
    if (timed) s.tokens_per_e2e_s.push_back({double(r.output_tokens), r.e2e_ms / 1000.0});
    s.requests[kOutputTokensColumn].push_back(timed ? double(r.output_tokens) : kNone);
    s.requests[kE2eSecondsColumn].push_back(timed ? r.e2e_ms / 1000.0 : kNone);
  }
  return s;
}

std::vector<MetricChange> compare_runs(const RunSamples& a, const RunSamples& b,
                                       const CompareOptions& options) {
  // One joint bootstrap over whole requests for every metric with enough samples on both sides.
  std::vector<JointMetric> joint;
  std::vector<std::size_t> joint_index(metric_defs().size(), SIZE_MAX);
  for (std::size_t i = 0; i < metric_defs().size(); ++i) {
    const MetricDef& def = metric_defs()[i];
    const std::size_t needed = samples_needed(def.joint.spec, options);
    if ((a.*def.samples).size() >= needed && (b.*def.samples).size() >= needed) {
      joint_index[i] = joint.size();
      joint.push_back(def.joint);
    }
  }
  const std::vector<ChangeInterval> intervals =
      joint.empty() ? std::vector<ChangeInterval>{}
                    : joint_bootstrap_change(a.requests, b.requests, joint, options.bootstrap);
  std::vector<MetricChange> out;
  for (std::size_t i = 0; i < metric_defs().size(); ++i) {
    const MetricDef& def = metric_defs()[i];
    const auto& sa = a.*def.samples;
    const auto& sb = b.*def.samples;
    MetricChange m;
    m.metric = def.name;
    m.higher_is_better = def.higher_is_better;
    m.n_a = sa.size();
    m.n_b = sb.size();
    m.needed = samples_needed(def.joint.spec, options);
    m.a = compute_statistic(sa, def.joint.spec);
    m.b = compute_statistic(sb, def.joint.spec);
    if (joint_index[i] != SIZE_MAX && intervals[joint_index[i]].valid) {
      m.change = intervals[joint_index[i]];
      m.below_floor = below_floor(m, def, options);
      m.verdict = m.below_floor ? Verdict::kNoChange : judge(*m.change, def.higher_is_better);
    }
    out.push_back(std::move(m));
  }
  return out;
}

bool CompareResult::any_invalid() const {
  for (const auto& row : rows) {
    for (const std::string* v : {&row.a_verdict, &row.b_verdict}) {
      if (*v != "valid" && *v != "not judged") return true;
    }
  }
  return false;
}

namespace {

// The worst verdict among `cells` (repeats pooled into one side of a row).
std::string worst_verdict(const store::StoreReader& store,
                          const std::vector<store::CellRow>& cells) {
  int worst = -1;
  bool judged = false;
  for (const auto& cell : cells) {
    CellMetrics m;
    if (const auto summary = store.cell_summary(cell.id)) {
      m = stored_summary(experiment_of(store, cell), cell, *summary, SummaryDetail::kFigures)
              .metrics;
    } else {
      const auto e = store.experiment(cell.experiment_id);
      m = compute_cell_metrics(store.requests(cell.id), {}, {}, store.cell_load(cell.id),
                               e ? validity_rules_of(*e) : ValidityRules{});
    }
    if (!m.validity.load_known) continue;
    judged = true;
    // Worse verdicts have larger values, except that the order of severity is: client-bound,
    // short, over capacity, valid (CellVerdict's order after valid).
    const int severity = m.validity.verdict == CellVerdict::kValid                ? 0
                         : m.validity.verdict == CellVerdict::kOverCapacity       ? 1
                         : m.validity.verdict == CellVerdict::kShortOfConcurrency ? 2
                                                                                  : 3;
    if (severity > worst) worst = severity;
  }
  if (!judged) return "not judged";
  static const CellVerdict by_severity[] = {CellVerdict::kValid, CellVerdict::kOverCapacity,
                                            CellVerdict::kShortOfConcurrency,
                                            CellVerdict::kClientBound};
  return verdict_name(by_severity[std::max(0, worst)]);
}

}  // namespace

bool CompareResult::any_regression() const {
  for (const CapacityChange& c : capacities) {
    if (c.verdict == Verdict::kRegression) return true;
  }
  for (const auto& row : rows) {
    for (const auto& m : row.metrics) {
      if (m.verdict == Verdict::kRegression) return true;
    }
  }
  return false;
}

CompareResult compare_experiments(const store::StoreReader& store, std::int64_t experiment_a,
                                  std::int64_t experiment_b, const CompareOptions& options) {
  using Key = std::pair<std::string, int>;
  auto group = [&store](std::int64_t id, std::vector<Key>* order) {
    std::map<Key, std::vector<store::CellRow>> cells;
    for (const auto& cell : store.cells(id)) {
      if (cell.status != "done") continue;
      const Key key{cell.arm, cell.concurrency};
      if (cells.find(key) == cells.end() && order != nullptr) order->push_back(key);
      cells[key].push_back(cell);
    }
    return cells;
  };
  std::vector<Key> order;
  const auto cells_a = group(experiment_a, &order);
  const auto cells_b = group(experiment_b, nullptr);
  CompareResult result;
  auto label = [&store](std::int64_t id) {
    const auto e = store.experiment(id);
    if (!e) return "experiment " + std::to_string(id);
    const std::string figures = figures_label(*e);
    return "experiment " + std::to_string(id) + " (" + e->name +
           (figures.empty() ? "" : ", " + figures) + pruned_note(store, id) + ")";
  };
  result.a_label = label(experiment_a);
  result.b_label = label(experiment_b);
  for (const Key& key : order) {
    const auto b = cells_b.find(key);
    if (b == cells_b.end()) {
      result.unmatched.push_back(key.first + " @ " + std::to_string(key.second) + " only in A");
      continue;
    }
    result.rows.push_back({key.first, key.second,
                           compare_runs(run_samples(pooled_requests(store, cells_a.at(key))),
                                        run_samples(pooled_requests(store, b->second)), options),
                           worst_verdict(store, cells_a.at(key)), worst_verdict(store, b->second)});
  }
  for (const auto& [key, cells] : cells_b) {
    if (cells_a.find(key) == cells_a.end()) {
      result.unmatched.push_back(key.first + " @ " + std::to_string(key.second) + " only in B");
    }
  }
  if (!result.rows.empty()) {
    result.nothing_compared = why_no_metric_compared(result.rows, options);
  } else if (cells_a.empty() || cells_b.empty()) {
    result.nothing_compared = (cells_a.empty() ? "A (" + result.a_label : "B (" + result.b_label) +
                              ") has no finished cells";
  } else {
    auto list = [](const std::map<Key, std::vector<store::CellRow>>& cells) {
      std::vector<std::string> levels;
      for (const auto& [key, unused] : cells) {
        levels.push_back(key.first + " @ " + std::to_string(key.second));
      }
      return join(levels, ", ");
    };
    result.nothing_compared = "no (strategy, concurrency) level in common: A has " + list(cells_a) +
                              "; B has " + list(cells_b);
  }
  result.capacities =
      compare_capacities(store.arm_searches(experiment_a), store.arm_searches(experiment_b));
  for (const CapacityChange& c : result.capacities) {
    // A capacity with a verdict is a comparison: the probes' levels need not match.
    if (c.verdict != Verdict::kInsufficientData) result.nothing_compared.clear();
  }
  return result;
}

CompareResult compare_cells(const store::StoreReader& store, const store::CellRow& a,
                            const store::CellRow& b, const CompareOptions& options) {
  CompareResult result;
  auto label = [&store](const store::CellRow& cell) {
    const auto e = store.experiment(cell.experiment_id);
    const std::string figures = e ? figures_label(*e) : "";
    return "experiment " + std::to_string(cell.experiment_id) + " cell " +
           std::to_string(cell.ordinal + 1) + (figures.empty() ? "" : " (" + figures + ")") +
           pruned_note(store, cell.experiment_id);
  };
  result.a_label = label(a);
  result.b_label = label(b);
  const std::string strategy = a.arm == b.arm ? a.arm : a.arm + " vs " + b.arm;
  result.rows.push_back({strategy, b.concurrency,
                         compare_runs(run_samples(compared_requests(store, a)),
                                      run_samples(compared_requests(store, b)), options),
                         worst_verdict(store, {a}), worst_verdict(store, {b})});
  result.nothing_compared = why_no_metric_compared(result.rows, options);
  return result;
}

std::string compare_table(const CompareResult& result, const CompareOptions& options) {
  std::string out = "compare A = " + result.a_label + "\n        B = " + result.b_label + "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-16s %6s  %-22s %12s %12s %9s  %-21s %s\n", "strategy", "conc",
                "metric", "A", "B", "change",
                (format_fixed(options.bootstrap.confidence * 100, 0) + "% CI").c_str(), "verdict");
  out += line;
  std::size_t counts[4] = {0, 0, 0, 0};
  for (const auto& row : result.rows) {
    for (const auto& m : row.metrics) {
      ++counts[static_cast<int>(m.verdict)];
      std::string change = kNotAvailable;
      std::string ci = "(n=" + std::to_string(m.n_a) + "/" + std::to_string(m.n_b) + ", need " +
                       (m.needed == SIZE_MAX ? std::string("more") : std::to_string(m.needed)) +
                       ")";
      if (m.change) {
        change = pct(m.change->change);
        ci = "[" + pct(m.change->low) + ", " + pct(m.change->high) + "]";
      }
      // A change under a floor says so: its interval alone may look like a verdict.
      const std::string verdict =
          std::string(verdict_name(m.verdict)) + (m.below_floor ? " (under the floor)" : "");
      std::snprintf(line, sizeof line, "%-16s %6d  %-22s %12s %12s %9s  %-21s %s\n",
                    row.strategy.c_str(), row.concurrency, m.metric.c_str(),
                    format_fixed(m.a, 2).c_str(), format_fixed(m.b, 2).c_str(), change.c_str(),
                    ci.c_str(), verdict.c_str());
      out += line;
    }
  }
  for (const auto& row : result.rows) {
    for (const auto& [side, verdict] : {std::pair{"A", &row.a_verdict}, {"B", &row.b_verdict}}) {
      if (*verdict == "valid" || *verdict == "not judged") continue;
      out += "note: " + row.strategy + " @ " + std::to_string(row.concurrency) + ": " + side +
             " is " + *verdict +
             (*verdict == "over capacity" ? " (its latency depends on the cell's length)"
                                          : " (it did not measure the load it asked for)") +
             "\n";
    }
  }
  for (const CapacityChange& c : result.capacities) {
    const auto show = [](std::optional<double> v) { return v ? format_fixed(*v, 3) : "none"; };
    ++counts[static_cast<int>(c.verdict)];
    out += "capacity " + c.arm + ": A " + show(c.a_capacity) + " (fails at " +
           show(c.a_first_failing) + "), B " + show(c.b_capacity) + " (fails at " +
           show(c.b_first_failing) + "): " + verdict_name(c.verdict) + ", " + c.why + "\n";
  }
  for (const auto& u : result.unmatched) out += "not compared: " + u + "\n";
  if (!result.nothing_compared.empty())
    return out + "nothing compared: " + result.nothing_compared + "\n";
  out += std::to_string(counts[static_cast<int>(Verdict::kRegression)]) + " regression(s), " +
         std::to_string(counts[static_cast<int>(Verdict::kImprovement)]) + " improvement(s), " +
         std::to_string(counts[static_cast<int>(Verdict::kNoChange)]) + " no change, " +
         std::to_string(counts[static_cast<int>(Verdict::kInsufficientData)]) +
         " insufficient data\n";
  return out;
}

nlohmann::ordered_json compare_json(const CompareResult& result, const CompareOptions& options) {
  using Json = nlohmann::ordered_json;
  Json rows = Json::array();
  for (const auto& row : result.rows) {
    Json metrics = Json::array();
    for (const auto& m : row.metrics) {
      Json j;
      j["metric"] = m.metric;
      j["better"] = m.higher_is_better ? "higher" : "lower";
      j["a"] = m.a;
      j["b"] = m.b;
      j["n_a"] = m.n_a;
      j["n_b"] = m.n_b;
      j["needed"] = m.needed == SIZE_MAX ? Json(nullptr) : Json(m.needed);
      j["change"] = m.change ? Json(m.change->change) : Json(nullptr);
      j["ci_low"] = m.change ? Json(m.change->low) : Json(nullptr);
      j["ci_high"] = m.change ? Json(m.change->high) : Json(nullptr);
      j["verdict"] = verdict_name(m.verdict);
      j["below_floor"] = m.below_floor;
      metrics.push_back(j);
    }
    rows.push_back({{"strategy", row.strategy},
                    {"concurrency", row.concurrency},
                    {"a_verdict", row.a_verdict},
                    {"b_verdict", row.b_verdict},
                    {"metrics", metrics}});
  }
  Json doc;
  doc["schema_version"] = 1;
  doc["a"] = result.a_label;
  doc["b"] = result.b_label;
  doc["confidence"] = options.bootstrap.confidence;
  doc["resamples"] = options.bootstrap.resamples;
  doc["seed"] = options.bootstrap.seed;
  doc["min_samples"] = options.min_samples;
  doc["min_tail_samples"] = options.min_tail_samples;
  doc["min_change"] = options.min_change;
  doc["min_change_ms"] = options.min_change_ms;
  doc["rows"] = rows;
  doc["unmatched"] = result.unmatched;
  doc["compared"] = result.nothing_compared.empty();
  doc["nothing_compared"] =
      result.nothing_compared.empty() ? Json(nullptr) : Json(result.nothing_compared);
  Json capacities = Json::array();
  for (const CapacityChange& c : result.capacities) {
    const auto value = [](std::optional<double> v) { return v ? Json(*v) : Json(nullptr); };
    capacities.push_back({{"arm", c.arm},
                          {"a_capacity", value(c.a_capacity)},
                          {"a_first_failing", value(c.a_first_failing)},
                          {"b_capacity", value(c.b_capacity)},
                          {"b_first_failing", value(c.b_first_failing)},
                          {"verdict", verdict_name(c.verdict)},
                          {"why", c.why}});
  }
  doc["capacities"] = capacities;
  doc["regression"] = result.any_regression();
  return doc;
}

}  // namespace kvsweep::figures
