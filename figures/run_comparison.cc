// Each finished run compared with the run before it, stored for the history page.
#include "figures/run_comparison.h"

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <utility>

#include "common/error_kinds.h"
#include "common/wall_clock.h"
#include "figures/units.h"

namespace kvsweep::figures {

std::string compare_options_key(const CompareOptions& options) {
  return "resamples=" + std::to_string(options.bootstrap.resamples) +
         " confidence=" + format_fixed(options.bootstrap.confidence, 4) +
         " seed=" + std::to_string(options.bootstrap.seed) +
         " min_samples=" + std::to_string(options.min_samples) +
         " min_tail_samples=" + std::to_string(options.min_tail_samples) +
         " min_change=" + format_fixed(options.min_change, 4) +
         " min_change_ms=" + format_fixed(options.min_change_ms, 3);
}

std::vector<LevelRegressions> regressions_of(const CompareResult& result) {
  std::vector<LevelRegressions> out;
  for (const auto& row : result.rows) {
    LevelRegressions level{row.strategy, row.concurrency, {}};
    for (const auto& m : row.metrics) {
      if (m.verdict == Verdict::kRegression) level.metrics.push_back(m.metric);
    }
    if (!level.metrics.empty()) out.push_back(std::move(level));
  }
  // A searching run's capacity that fell: its arm (key), at no one concurrency.
  for (const CapacityChange& c : result.capacities) {
    if (c.verdict == Verdict::kRegression) out.push_back({c.arm, 0, {"capacity"}});
  }
  return out;
}

std::string regressions_to_json(const std::vector<LevelRegressions>& levels) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& level : levels) {
    out.push_back({{"strategy", level.strategy},
                   {"concurrency", level.concurrency},
                   {"metrics", level.metrics}});
  }
  return out.dump();
}

std::vector<LevelRegressions> regressions_from_json(const std::string& text) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_array()) throw CorruptData("run comparison: regressions: not a JSON array");
  std::vector<LevelRegressions> out;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const auto& level = doc[i];
    const std::string where = "run comparison: regressions[" + std::to_string(i) + "]";
    if (!level.is_object() || !level.contains("strategy") || !level["strategy"].is_string() ||
        !level.contains("concurrency") || !level["concurrency"].is_number_integer() ||
        !level.contains("metrics") || !level["metrics"].is_array()) {
      throw CorruptData(where +
                        ": expected {strategy: text, concurrency: whole number, "
                        "metrics: [text]}");
    }
    LevelRegressions parsed{
        level["strategy"].get<std::string>(), level["concurrency"].get<int>(), {}};
    for (const auto& metric : level["metrics"]) {
      if (!metric.is_string()) throw CorruptData(where + ".metrics: expected text");
      parsed.metrics.push_back(metric.get<std::string>());
    }
    out.push_back(std::move(parsed));
  }
  return out;
}

std::optional<std::int64_t> previous_run(const store::RunReader& store,
                                         std::int64_t experiment_id) {
  const auto experiment = store.experiment(experiment_id);
  if (!experiment) return std::nullopt;
  std::optional<std::int64_t> previous;
  for (const auto& e : store.experiments()) {
    if (e.id < experiment_id && e.name == experiment->name && e.status != "running") {
      previous = e.id;
    }
  }
  return previous;
}

namespace {

// Compares the pair and stores the result, replacing any the experiment had.
RecordedComparison store_comparison(store::Store& store, std::int64_t experiment_id,
                                    std::int64_t previous, const CompareOptions& options) {
  const CompareResult result = compare_experiments(store, previous, experiment_id, options);
  RecordedComparison recorded{previous, regressions_of(result), result.nothing_compared};
  store::RunComparisonRow row;
  row.experiment_id = experiment_id;
  row.previous_id = previous;
  row.computed_at = utc_now_iso8601();
  row.options = compare_options_key(options);
  row.regressions = regressions_to_json(recorded.regressions);
  store.set_run_comparison(row);
  return recorded;
}

}  // namespace

std::optional<RecordedComparison> record_run_comparison(store::Store& store,
                                                        std::int64_t experiment_id,
                                                        const CompareOptions& options) {
  const auto previous = previous_run(store, experiment_id);
  if (!previous) return std::nullopt;
  return store_comparison(store, experiment_id, *previous, options);
}

std::int64_t compare_stored_runs(store::Store& store,
                                 const std::function<void(const std::string&)>& progress) {
  std::map<std::string, std::optional<std::int64_t>> last_run;  // by scenario name
  std::map<std::string, std::set<std::int64_t>> compared;
  std::vector<std::pair<std::int64_t, std::int64_t>> to_compare;  // (run, the run before)
  // A comparison made under other options (an older kvsweep's defaults) is not the verdict
  // compare gives today: that run is compared again.
  const std::string options = compare_options_key({});
  for (const auto& e : store.experiments()) {
    if (e.status == "running") continue;
    auto stored = compared.find(e.name);
    if (stored == compared.end()) {
      std::set<std::int64_t> ids;
      for (const auto& row : store.run_comparisons(e.name)) {
        if (row.options == options) ids.insert(row.experiment_id);
      }
      stored = compared.emplace(e.name, std::move(ids)).first;
    }
    if (last_run[e.name] && stored->second.count(e.id) == 0) {
      to_compare.emplace_back(e.id, *last_run[e.name]);
    }
    last_run[e.name] = e.id;
  }
  if (to_compare.empty()) return 0;
  const auto total = static_cast<std::int64_t>(to_compare.size());
  if (progress) {
    progress(store.path() + ": comparing " + std::to_string(total) +
             " stored runs with the run before each (once; serve's history page reads them)");
  }
  using Clock = std::chrono::steady_clock;
  auto last_told = Clock::now();
  std::int64_t done = 0;
  for (const auto& [id, previous] : to_compare) {
    // The run before is known from the walk above: no second read of every experiment.
    store_comparison(store, id, previous, {});
    ++done;
    if (progress && Clock::now() - last_told >= std::chrono::seconds(2)) {
      progress(store.path() + ": compared " + std::to_string(done) + " of " +
               std::to_string(total) + " runs");
      last_told = Clock::now();
    }
  }
  return done;
}

}  // namespace kvsweep::figures
