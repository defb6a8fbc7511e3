// A store written at schema 6 (ITLs as JSON text) migrates to the compact ITL blob of schema 7
// with every request row bit for bit the same, so every figure computed from it is unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "figures/cell_metrics.h"
#include "store/schema.h"
#include "store/sqlite_handles.h"
#include "store/store.h"
#include "store/store_identity.h"
#include "tests/reports/request_builders.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::reports {
namespace {

using kvsweep::testing::TempDir;

// Both kinds of ITL a store holds: a predicted run's whole microseconds (delta varints after
// the migration) and a real run's gaps split over the tokens of one event (raw doubles).
std::vector<store::RequestRow> rows_of_both_kinds() {
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < 60; ++i) {
    std::vector<double> itl;
    const int tokens = 5 + i % 17;
    for (int t = 0; t < tokens; ++t) {
      const double gap_s = 0.02 + 0.0003 * ((i * 7 + t * 3) % 11);
      itl.push_back(i % 2 == 0 ? std::round(gap_s * 1e6) / 1e3 : gap_s * 1000.0 / 3.0);
    }
    double e2e = 80.0 + i;
    for (const double gap : itl) e2e += gap;
    rows.push_back(
        testing::ok_request(i, 0.05 * i, 80.0 + i, e2e, 900 + i, tokens + 1, 300, std::move(itl)));
    rows.back().tpot_ms = (e2e - 80.0 - i) / tokens;
    rows.back().ended_s = rows.back().last_token_s;
    rows.back().replica = "replica-" + std::to_string(i % 4);
  }
  rows.push_back(testing::failed_request(60, 3.5, 1200, "timeout"));
  rows.push_back(testing::ok_request(61, 3.6, 50, 50, 700, 1, 0, {}));  // one token: no ITL
  return rows;
}

// As kvsweep wrote a request at schema 6: nlohmann's shortest round-trip text for the ITLs.
void write_schema6_file(const std::string& path, const std::vector<store::RequestRow>& rows) {
  store::SqliteDb db = store::SqliteDb::open(path);
  store::migrate_to(db, 6);
  db.exec("PRAGMA application_id = " + std::to_string(store::kApplicationId));  // as kvsweep did
  db.exec(
      "INSERT INTO experiments (id, name, status) VALUES (1, 'nightly', 'done');"
      "INSERT INTO cells (id, experiment_id, ordinal, key, arm, concurrency, status) VALUES"
      "  (1, 1, 0, 'k', 'PrefixHash', 8, 'done');");
  store::SqliteStatement s = db.prepare(
      "INSERT INTO requests (cell_id, request_index, ok, error_kind, error, http_status, sent_s,"
      "  first_token_s, last_token_s, ended_s, ttft_ms, e2e_ms, tpot_ms, itl_ms, prompt_tokens,"
      "  output_tokens, cached_tokens, replica) VALUES (1,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const store::RequestRow& r : rows) {
    s.bind_int64(1, r.index);
    s.bind_int64(2, r.ok ? 1 : 0);
    s.bind_text(3, r.error_kind);
    s.bind_text(4, r.error);
    s.bind_int64(5, r.http_status);
    s.bind_double(6, r.sent_s);
    s.bind_double(7, r.first_token_s);
    s.bind_double(8, r.last_token_s);
    s.bind_double(9, r.ended_s);
    s.bind_double(10, r.ttft_ms);
    s.bind_double(11, r.e2e_ms);
    s.bind_double(12, r.tpot_ms);
    s.bind_text(13, nlohmann::json(r.itl_ms).dump());
    s.bind_int64(14, r.prompt_tokens);
    s.bind_int64(15, r.output_tokens);
    s.bind_int64(16, r.cached_tokens);
    s.bind_text(17, r.replica);
    s.step();
    s.reset();
  }
  ASSERT_EQ(store::schema_version(db), 6);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_same_summary(const SampleSummary& a, const SampleSummary& b, const char* what) {
  EXPECT_EQ(a.count, b.count) << what;
  for (const auto field :
       {&SampleSummary::mean, &SampleSummary::std, &SampleSummary::min, &SampleSummary::max,
        &SampleSummary::median, &SampleSummary::p90, &SampleSummary::p95, &SampleSummary::p99}) {
    EXPECT_TRUE(same_bits(a.*field, b.*field)) << what << ": " << a.*field << " " << b.*field;
  }
}

TEST(Schema6Migration, ItlsBecomeBlobsAndEveryFigureStaysTheSame) {
  TempDir dir;
  const std::string path = dir.file("v6.db");
  const std::vector<store::RequestRow> written = rows_of_both_kinds();
  write_schema6_file(path, written);

  // A reader says which command migrates it, and leaves it as it is.
  try {
    store::Store::open_read_only(path);
    FAIL() << "expected a refusal";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("kvsweep --db " + path + " migrate"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(store::schema_version(store::SqliteDb::open(path)), 6);

  // A writer migrates on open, telling how far it got.
  std::vector<std::string> lines;
  const store::Store store =
      store::Store::open(path, store::Store::Access::kReadWrite,
                         [&lines](const std::string& line) { lines.push_back(line); });
  EXPECT_EQ(store::schema_version(store::SqliteDb::open(path)), store::kSchemaVersion);
  ASSERT_GE(lines.size(), 3u);
  const std::string latest = std::to_string(store::kSchemaVersion);
  EXPECT_NE(lines.front().find("from schema version 6 to " + latest), std::string::npos)
      << lines.front();
  EXPECT_NE(lines[1].find("62 request rows"), std::string::npos) << lines[1];
  EXPECT_NE(lines.back().find("migrated to schema version " + latest), std::string::npos)
      << lines.back();

  const std::vector<store::RequestRow> read = store.requests(1);
  ASSERT_EQ(read.size(), written.size());
  for (std::size_t i = 0; i < read.size(); ++i) {
    EXPECT_TRUE(same_bits(read[i].ttft_ms, written[i].ttft_ms)) << i;
    EXPECT_TRUE(same_bits(read[i].e2e_ms, written[i].e2e_ms)) << i;
    EXPECT_TRUE(same_bits(read[i].tpot_ms, written[i].tpot_ms)) << i;
    EXPECT_TRUE(same_bits(read[i].ended_s, written[i].ended_s)) << i;
    EXPECT_EQ(read[i].error, written[i].error) << i;
    EXPECT_EQ(read[i].replica, written[i].replica) << i;
    ASSERT_EQ(read[i].itl_ms.size(), written[i].itl_ms.size()) << i;
    for (std::size_t k = 0; k < read[i].itl_ms.size(); ++k) {
      EXPECT_TRUE(same_bits(read[i].itl_ms[k], written[i].itl_ms[k])) << i << "/" << k;
    }
  }
  const figures::CellMetrics before = figures::compute_cell_metrics(written, {});
  const figures::CellMetrics after = figures::compute_cell_metrics(read, {});
  expect_same_summary(before.ttft_ms, after.ttft_ms, "ttft");
  expect_same_summary(before.tpot_ms, after.tpot_ms, "tpot");
  expect_same_summary(before.itl_ms, after.itl_ms, "itl");
  expect_same_summary(before.e2e_ms, after.e2e_ms, "e2e");
  EXPECT_EQ(before.ok, after.ok);
  EXPECT_EQ(before.failed, after.failed);
  EXPECT_TRUE(same_bits(before.window_s, after.window_s));
  EXPECT_TRUE(same_bits(before.output_throughput, after.output_throughput));
  EXPECT_EQ(before.max_concurrent_requests, after.max_concurrent_requests);
  EXPECT_TRUE(same_bits(before.max_output_tokens_per_s, after.max_output_tokens_per_s));

  // The JSON column is gone: nothing reads it, and the old text no longer takes room.
  EXPECT_THROW(store::SqliteDb::open(path).prepare("SELECT itl_ms FROM requests"),
               std::runtime_error);
}

}  // namespace
}  // namespace kvsweep::reports
