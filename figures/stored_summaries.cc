// Summaries for the cells a store already holds.
#include "figures/stored_summaries.h"

#include <chrono>
#include <map>
#include <optional>

#include "figures/cell_summary.h"
#include "figures/validity_json.h"

namespace kvsweep::figures {

std::int64_t summarize_stored_cells(store::Store& store,
                                    const std::function<void(const std::string&)>& progress) {
  const std::vector<store::CellRow> cells = store.cells_to_summarize(kSummaryFormat);
  if (cells.empty()) return 0;
  const auto total = static_cast<std::int64_t>(cells.size());
  if (progress) {
    progress(store.path() + ": summarizing " + std::to_string(total) +
             " stored cells (once; reports then read the summaries)");
  }
  using Clock = std::chrono::steady_clock;
  auto last_told = Clock::now();
  std::map<std::int64_t, ValidityRules> rules_of;  // by experiment
  std::int64_t done = 0;
  for (const store::CellRow& cell : cells) {
    auto rules = rules_of.find(cell.experiment_id);
    if (rules == rules_of.end()) {
      const auto experiment = store.experiment(cell.experiment_id);
      rules = rules_of
                  .emplace(cell.experiment_id,
                           experiment ? validity_rules_of(*experiment) : ValidityRules{})
                  .first;
    }
    const CellSummary summary =
        summarize_cell(store.requests(cell.id), store.metric_samples(cell.id),
                       store.cell_load(cell.id), rules->second);
    store.set_cell_summary(summary_row(cell.id, summary));
    ++done;
    if (progress && Clock::now() - last_told >= std::chrono::seconds(2)) {
      progress(store.path() + ": summarized " + std::to_string(done) + " of " +
               std::to_string(total) + " cells");
      last_told = Clock::now();
    }
  }
  if (progress) progress(store.path() + ": summarized " + std::to_string(done) + " cells");
  return done;
}

}  // namespace kvsweep::figures
