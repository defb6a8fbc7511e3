// Store: the arm_searches table, each arm's capacity search of a searching experiment.
#include "store/store_impl.h"

namespace kvsweep::store {
namespace {

void bind_optional(SqliteStatement& s, int index, const std::optional<double>& value) {
  if (value) {
    s.bind_double(index, *value);
  } else {
    s.bind_null(index);
  }
}

std::optional<double> optional_column(const SqliteStatement& s, int column) {
  if (s.column_is_null(column)) return std::nullopt;
  return s.column_double(column);
}

}  // namespace

void Store::set_arm_search(const ArmSearchRow& row) {
  SqliteStatement s = impl_->db.prepare(
      "INSERT OR REPLACE INTO arm_searches (experiment_id, arm_key, position, arm, concurrency, "
      "factor, guide, capacity, first_failing, why, probes, capacity_cell_id) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  s.bind_int64(1, row.experiment_id);
  s.bind_text(2, row.arm_key);
  s.bind_int64(3, row.position);
  s.bind_text(4, row.arm);
  s.bind_int64(5, row.concurrency);
  s.bind_text(6, row.factor);
  bind_optional(s, 7, row.guide);
  bind_optional(s, 8, row.capacity);
  bind_optional(s, 9, row.first_failing);
  s.bind_text(10, row.why);
  s.bind_text(11, row.probes);
  s.bind_int64(12, row.capacity_cell_id);
  s.step();
}

std::vector<ArmSearchRow> Store::arm_searches(std::int64_t experiment_id) const {
  SqliteStatement s = impl_->db.prepare(
      "SELECT arm_key, position, arm, concurrency, factor, guide, capacity, first_failing, why, "
      "probes, capacity_cell_id FROM arm_searches WHERE experiment_id = ? ORDER BY position");
  s.bind_int64(1, experiment_id);
  std::vector<ArmSearchRow> rows;
  while (s.step()) {
    ArmSearchRow row;
    row.experiment_id = experiment_id;
    row.arm_key = s.column_text(0);
    row.position = static_cast<int>(s.column_int64(1));
    row.arm = s.column_text(2);
    row.concurrency = static_cast<int>(s.column_int64(3));
    row.factor = s.column_text(4);
    row.guide = optional_column(s, 5);
    row.capacity = optional_column(s, 6);
    row.first_failing = optional_column(s, 7);
    row.why = s.column_text(8);
    row.probes = s.column_text(9);
    row.capacity_cell_id = s.column_int64(10);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace kvsweep::store
