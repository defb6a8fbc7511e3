// Tests for store/request_durations: durations that follow from the times are stored as NULL
// and come back bit for bit; any other value is stored as it is.
#include "store/request_durations.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/sqlite_handles.h"
#include "store/store.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::store {
namespace {

using kvsweep::testing::TempDir;

// A streamed request as the driver records it: every duration follows from the times.
RequestRow streamed(std::int64_t index) {
  RequestRow row;
  row.index = index;
  row.ok = true;
  row.sent_s = 0.1 * static_cast<double>(index) + 0.0123456789;
  row.first_token_s = row.sent_s + 0.0871234;
  row.last_token_s = row.first_token_s + 1.234567;
  row.ended_s = row.last_token_s;
  row.output_tokens = 77;
  row.ttft_ms = (row.first_token_s - row.sent_s) * 1000.0;
  row.e2e_ms = (row.last_token_s - row.sent_s) * 1000.0;
  row.tpot_ms = (row.e2e_ms - row.ttft_ms) / (row.output_tokens - 1);
  return row;
}

TEST(RequestDurations, DerivedOnesAreNullAndComeBackTheSame) {
  TempDir dir;
  const std::string path = dir.file("s.db");
  std::vector<RequestRow> rows = {streamed(0), streamed(1), streamed(2), streamed(3)};
  rows[1].ttft_ms += 1e-9;    // not what the times give: kept as it is
  rows[2].ended_s = 99.5;     // ended after its last token (a cancel)
  rows[3].output_tokens = 1;  // one token: tpot 0 is derived, not the value below
  rows[3].tpot_ms = 12.5;
  Store store = Store::open(path);
  ExperimentRow experiment;
  experiment.name = "e";
  CellRow cell;
  cell.experiment_id = store.add_experiment(experiment);
  cell.key = "k";
  const std::int64_t cell_id = store.add_cell(cell);
  store.add_requests(cell_id, rows);

  const std::vector<RequestRow> back = store.requests(cell_id);
  ASSERT_EQ(back.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(back[i].ttft_ms, rows[i].ttft_ms) << i;
    EXPECT_EQ(back[i].e2e_ms, rows[i].e2e_ms) << i;
    EXPECT_EQ(back[i].tpot_ms, rows[i].tpot_ms) << i;
    EXPECT_EQ(back[i].ended_s, rows[i].ended_s) << i;
  }
  // sqlite3 users read the same values through the view.
  SqliteStatement full = SqliteDb::open(path).prepare(
      "SELECT ttft_ms, e2e_ms, tpot_ms, ended_s FROM requests_full ORDER BY request_index");
  for (const RequestRow& row : rows) {
    ASSERT_TRUE(full.step());
    EXPECT_EQ(full.column_double(0), row.ttft_ms) << row.index;
    EXPECT_EQ(full.column_double(1), row.e2e_ms) << row.index;
    EXPECT_EQ(full.column_double(2), row.tpot_ms) << row.index;
    EXPECT_EQ(full.column_double(3), row.ended_s) << row.index;
  }
  SqliteStatement s = SqliteDb::open(path).prepare(
      "SELECT ttft_ms IS NULL, e2e_ms IS NULL, tpot_ms IS NULL, ended_s IS NULL FROM requests "
      "ORDER BY request_index");
  const std::vector<std::vector<int>> nulls = {
      {1, 1, 1, 1}, {0, 1, 0, 1}, {1, 1, 1, 0}, {1, 1, 0, 1}};
  for (const auto& expected : nulls) {
    ASSERT_TRUE(s.step());
    for (int column = 0; column < 4; ++column) {
      EXPECT_EQ(s.column_int64(column), expected[column]) << column;
    }
  }
}

}  // namespace
}  // namespace kvsweep::store
