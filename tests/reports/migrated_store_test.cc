// An experiment stored by the kvsweep before schema 5 (the arm in cells.strategy, the baseline
// inside setup_json) opens after the migration and reports with its arms and baseline.
#include <gtest/gtest.h>

#include <string>

#include "figures/report_model.h"
#include "reports/markdown_report.h"
#include "store/schema.h"
#include "store/sqlite_handles.h"
#include "store/store.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::reports {
namespace {

using kvsweep::testing::TempDir;

// The file exactly as schema 4 (the current one before the arm column) wrote it: two arms at one
// level, two requests each.
void write_schema4_file(const std::string& path) {
  store::SqliteDb db = store::SqliteDb::open(path);
  store::migrate_to(db, 4);
  db.exec(
      "INSERT INTO experiments (id, name, status, setup_json) VALUES (1, 'old', 'done',"
      "  '{\"model\":\"llama\",\"baseline\":\"random\"}');"
      "INSERT INTO cells (id, experiment_id, ordinal, key, strategy, concurrency, status,"
      "  factors_json) VALUES"
      "  (1, 1, 0, 'a', 'random', 8, 'done', '{\"strategy\":\"random\",\"concurrency\":8}'),"
      "  (2, 1, 1, 'b', 'prefix-hash', 8, 'done', "
      "'{\"strategy\":\"prefix-hash\",\"concurrency\":8}');"
      "INSERT INTO requests (cell_id, request_index, ok, sent_s, first_token_s, last_token_s,"
      "  ended_s, e2e_ms, prompt_tokens, output_tokens) VALUES"
      "  (1, 0, 1, 0.0, 0.2, 0.5, 0.5, 500, 1024, 8), (1, 1, 1, 0.1, 0.3, 0.6, 0.6, 500, 1024, 8),"
      "  (2, 0, 1, 0.0, 0.1, 0.4, 0.4, 400, 1024, 8), (2, 1, 1, 0.1, 0.2, 0.5, 0.5, 400, 1024, "
      "8);");
  ASSERT_EQ(store::schema_version(db), 4);
}

TEST(MigratedStore, ASchema4FileKeepsItsArmsAndBaselineAndReports) {
  TempDir dir;
  const std::string path = dir.file("v4.db");
  write_schema4_file(path);
  const store::Store store = store::Store::open(path);
  EXPECT_EQ(store::schema_version(store::SqliteDb::open(path)), store::kSchemaVersion);
  const auto experiment = store.experiment(1);
  ASSERT_TRUE(experiment.has_value());
  EXPECT_EQ(experiment->baseline, "random");  // moved out of setup_json into its column
  const auto cells = store.cells(1);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].arm, "random");
  EXPECT_EQ(cells[1].arm, "prefix-hash");

  const figures::ReportModel model = figures::build_report_model(store, 1);
  EXPECT_EQ(model.baseline, "random");
  ASSERT_EQ(model.levels.size(), 1u);
  ASSERT_EQ(model.levels[0].rows.size(), 2u);
  EXPECT_TRUE(model.levels[0].rows[0].is_baseline);
  EXPECT_TRUE(model.levels[0].rows[1].vs_baseline.has_value());
  const std::string markdown = render_markdown(store, 1);
  EXPECT_NE(markdown.find("prefix-hash"), std::string::npos);
  EXPECT_NE(markdown.find("Baseline"), std::string::npos);
}

}  // namespace
}  // namespace kvsweep::reports
