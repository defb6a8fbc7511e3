// Tests for reports/dashboard_json.cc: a golden file, and validity against the published
// schema docs/schemas/dashboard_baseline.schema.json, checked by python3-jsonschema (and that
// the check can fail).
//
// Regenerate the golden file after an intended change with
//   KVSWEEP_UPDATE_GOLDEN=1 ./tests/reports/reports_test --gtest_filter='DashboardJson.*'
#include "reports/dashboard_json.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/reports/small_experiment.h"
#include "tests/support/json_schema_check.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::reports {
namespace {

using kvsweep::testing::read_file;
using kvsweep::testing::TempDir;

nlohmann::ordered_json small_doc() {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto id = kvsweep::testing::write_small_experiment(store);
  return dashboard_baseline_json(figures::build_report_model(store, id));
}

std::vector<std::string> schema_errors(const nlohmann::json& doc) {
  return kvsweep::testing::schema_errors(
      std::string(KVSWEEP_SCHEMA_DIR) + "/dashboard_baseline.schema.json", KVSWEEP_SCHEMA_VALIDATOR,
      doc);
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
  for (const auto& e : schema_errors(doc)) ADD_FAILURE() << e;
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
  EXPECT_EQ(
      schema_errors(doc),
      (std::vector<std::string>{
          "$: Additional properties are not allowed ('surprise' was unexpected)",
          "$.metrics.ttft_p50_ms.baseline.values[0]: 'fast' is not of type 'number', 'null'",
          "$.run: 'scenario_hash' is a required property", "$.schema_version: 1 was expected"}));
}

TEST(DashboardJson, NoBaselineMakesEveryStrategyATreatment) {
  store::ExperimentRow e;
  e.name = "x";
  store::CellRow c;
  c.arm = "a";
  c.concurrency = 2;
  c.status = "failed";
  const auto doc =
      dashboard_baseline_json(figures::make_report_model(e, {c}, {figures::CellMetrics{}}));
  EXPECT_TRUE(doc["baseline_strategy"].is_null());
  EXPECT_TRUE(doc["metrics"]["kv_hit_rate"]["baseline"].is_null());
  EXPECT_TRUE(doc["metrics"]["kv_hit_rate"]["treatments"][0]["values"][0].is_null());
  EXPECT_TRUE(schema_errors(nlohmann::json::parse(doc.dump())).empty());
}

// llm-d's endpoint picker's figures are metrics of the file only when some measured cell has
// them: a run on another target keeps the file it had.
TEST(DashboardJson, TheEndpointPickersFiguresOnlyWhenACellHasThem) {
  store::ExperimentRow e;
  e.name = "x";
  store::CellRow picker;
  picker.arm = "estimated-prefix";
  picker.concurrency = 8;
  picker.status = "done";
  store::CellRow other = picker;
  other.arm = "load-only";
  figures::CellMetrics with;
  with.epp_prefix_hit_ratio = 0.85;
  with.epp_scheduling_ms = 0.021;
  const auto doc = dashboard_baseline_json(
      figures::make_report_model(e, {picker, other}, {with, figures::CellMetrics{}}));
  const auto& hit = doc["metrics"]["epp_prefix_hit_ratio"];
  EXPECT_EQ(hit["unit"], "fraction");
  EXPECT_EQ(hit["treatments"][0]["strategy"], "estimated-prefix");
  EXPECT_EQ(hit["treatments"][0]["values"][0], 0.85);
  EXPECT_TRUE(hit["treatments"][1]["values"][0].is_null());
  EXPECT_EQ(doc["metrics"]["epp_scheduling_ms"]["treatments"][0]["values"][0], 0.021);
  EXPECT_TRUE(schema_errors(nlohmann::json::parse(doc.dump())).empty());
  // A cell that was not measured does not bring them in; nor does a run without them.
  picker.status = "failed";
  const auto failed = dashboard_baseline_json(
      figures::make_report_model(e, {picker, other}, {with, figures::CellMetrics{}}));
  EXPECT_FALSE(failed["metrics"].contains("epp_prefix_hit_ratio"));
  EXPECT_FALSE(small_doc()["metrics"].contains("epp_scheduling_ms"));
  // Every key the file may carry, the optional ones last.
  const auto names = dashboard_metric_names();
  ASSERT_GE(names.size(), 2u);
  EXPECT_EQ(names[names.size() - 2], "epp_prefix_hit_ratio");
  EXPECT_EQ(names.back(), "epp_scheduling_ms");
}

}  // namespace
}  // namespace kvsweep::reports
