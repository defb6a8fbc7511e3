// Store: the run_comparisons table (each finished run compared with the run before it).
#include <string>

#include "store/store_impl.h"

namespace kvsweep::store {

void Store::set_run_comparison(const RunComparisonRow& row) {
  SqliteStatement s = impl_->db.prepare(
      "INSERT OR REPLACE INTO run_comparisons (experiment_id, previous_id, computed_at, options, "
      "regressions) VALUES (?,?,?,?,?)");
  s.bind_int64(1, row.experiment_id);
  s.bind_int64(2, row.previous_id);
  s.bind_text(3, row.computed_at);
  s.bind_text(4, row.options);
  s.bind_text(5, row.regressions);
  s.step();
}

std::vector<RunComparisonRow> Store::run_comparisons(const std::string& scenario) const {
  SqliteStatement s = impl_->db.prepare(
      "SELECT r.experiment_id, r.previous_id, r.computed_at, r.options, r.regressions "
      "FROM run_comparisons r JOIN experiments e ON e.id = r.experiment_id "
      "WHERE e.name = ? ORDER BY r.experiment_id");
  s.bind_text(1, scenario);
  std::vector<RunComparisonRow> rows;
  while (s.step()) {
    RunComparisonRow row;
    row.experiment_id = s.column_int64(0);
    row.previous_id = s.column_int64(1);
    row.computed_at = s.column_text(2);
    row.options = s.column_text(3);
    row.regressions = s.column_text(4);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace kvsweep::store
