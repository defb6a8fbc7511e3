// Tests for reports/dashboard_json.cc: a golden file, and validity against the published
// schema docs/schemas/dashboard_baseline.schema.json (and that the validator can fail).
//
// Regenerate the golden file after an intended change with
//   KVSWEEP_UPDATE_GOLDEN=1 ./tests/reports/reports_test --gtest_filter='DashboardJson.*'
#include "reports/dashboard_json.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/reports/json_schema_subset.h"
#include "tests/reports/small_experiment.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::reports {
namespace {

using kvsweep::testing::read_file;
using kvsweep::testing::SchemaValidator;
using kvsweep::testing::TempDir;

nlohmann::ordered_json small_doc() {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto id = kvsweep::testing::write_small_experiment(store);
  return dashboard_baseline_json(build_report_model(store, id));
}

SchemaValidator schema() {
  return SchemaValidator(nlohmann::json::parse(
      read_file(std::string(KVSWEEP_SCHEMA_DIR) + "/dashboard_baseline.schema.json")));
}

TEST(DashboardJson, MatchesGoldenFile) {
  const std::string text = small_doc().dump(2) + "\n";
  const std::string golden_path = std::string(KVSWEEP_GOLDEN_DIR) + "/small_experiment.json";
  const char* update = std::getenv("KVSWEEP_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(golden_path, std::ios::binary) << text;
    GTEST_SKIP() << "rewrote " << golden_path;
  }
  EXPECT_EQ(text, read_file(golden_path))
      << "the JSON changed; if intended, regenerate with KVSWEEP_UPDATE_GOLDEN=1";
}

TEST(DashboardJson, ValidatesAgainstItsSchema) {
  const auto doc = nlohmann::json::parse(small_doc().dump());
  const auto errors = schema().validate(doc);
  for (const auto& e : errors) ADD_FAILURE() << e;
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["baseline_strategy"], "random");
  EXPECT_EQ(doc["concurrency"], nlohmann::json::array({8, 16}));
  EXPECT_EQ(doc["metrics"]["ttft_p95_ms"]["treatments"][0]["strategy"], "prefix-hash");
}

TEST(DashboardJson, SchemaRejectsABrokenDocument) {
  auto doc = nlohmann::json::parse(small_doc().dump());
  doc["schema_version"] = 2;
  doc["metrics"]["ttft_p50_ms"]["baseline"]["values"][0] = "fast";
  doc["run"].erase("scenario_hash");
  doc["surprise"] = true;
  const auto errors = schema().validate(doc);
  EXPECT_EQ(errors.size(), 4u) << ::testing::PrintToString(errors);
}

TEST(DashboardJson, NoBaselineMakesEveryStrategyATreatment) {
  store::ExperimentRow e;
  e.name = "x";
  store::CellRow c;
  c.strategy = "a";
  c.concurrency = 2;
  c.status = "failed";
  const auto doc = dashboard_baseline_json(make_report_model(e, {c}, {CellMetrics{}}));
  EXPECT_TRUE(doc["baseline_strategy"].is_null());
  EXPECT_TRUE(doc["metrics"]["kv_hit_rate"]["baseline"].is_null());
  EXPECT_TRUE(doc["metrics"]["kv_hit_rate"]["treatments"][0]["values"][0].is_null());
  EXPECT_TRUE(schema().validate(nlohmann::json::parse(doc.dump())).empty());
}

}  // namespace
}  // namespace kvsweep::reports
