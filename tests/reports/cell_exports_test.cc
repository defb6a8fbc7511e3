// Tests for reports/cell_exports.cc: every llm-d Benchmark Report v0.2.1 export validates against
// docs/schemas/br_v0_2_1_json_schema.json (llm-d's own) under python3-jsonschema, the check fails
// on a broken export, and the fields follow the report's rules (units, ISO durations, ...).
#include "reports/cell_exports.h"

#include <gtest/gtest.h>

#include "figures/cell_metrics.h"
#include "tests/reports/small_experiment.h"
#include "tests/support/json_schema_check.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::reports {
namespace {

using kvsweep::testing::ok_request;
using kvsweep::testing::TempDir;
using Json = nlohmann::json;

std::vector<std::string> br_schema_errors(const Json& doc) {
  return kvsweep::testing::schema_errors(
      std::string(KVSWEEP_SCHEMA_DIR) + "/br_v0_2_1_json_schema.json", KVSWEEP_SCHEMA_VALIDATOR,
      doc);
}

// A `kvsweep load` run as load_command.cc stores it: one cell, an open loop against an
// endpoint, ShareGPT prompts, percentiles chosen on the command line.
std::int64_t write_load_experiment(store::Store& store) {
  store::ExperimentRow e;
  e.name = "load-kvsweep";
  e.scenario_path = "(kvsweep load)";
  e.scenario_hash = "";
  e.started_at = "2026-11-22T05:00:00Z";
  e.status = "running";
  e.kvsweep_version = "0.1.0";
  e.setup = store::decode_setup(
      R"({"target":{"kind":"endpoint","url":"http://127.0.0.1:8000"},"model":"llama",)"
      R"("load":{"shape":"open loop","request_rate":4.0,"burstiness":1.0,"max_concurrency":8,)"
      R"("dataset":"sharegpt: 3 conversations from s.json","endpoint":"chat","stream":true,)"
      R"("max_tokens":64,"percentile_metrics":["ttft","e2el"],"metric_percentiles":[50,90]},)"
      R"("baseline":""})");
  const auto id = store.add_experiment(e);
  store::CellRow cell;
  cell.experiment_id = id;
  cell.key = "load";
  cell.arm = "kvsweep";
  cell.concurrency = 8;
  cell.status = "done";
  cell.started_at = e.started_at;
  cell.finished_at = "2026-11-22T05:00:03Z";
  cell.id = store.add_cell(cell);
  store.add_requests(cell.id, {ok_request(0, 0.0, 100, 500, 40, 5, 0, {100, 100, 100, 100}),
                               ok_request(1, 0.5, 300, 1500, 60, 3, 0, {600, 600})});
  store.finish_experiment(id, "done", cell.finished_at);
  return id;
}

std::vector<Json> llmd_reports(const std::vector<ExportFile>& files) {
  std::vector<Json> docs;
  for (const auto& f : files) {
    if (f.name.ends_with(".llmd-br-v0.2.1.json")) docs.push_back(Json::parse(f.text));
  }
  return docs;
}

TEST(CellExports, EveryLlmdReportValidatesAgainstTheSchema) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  auto docs = llmd_reports(cell_exports(store, kvsweep::testing::write_small_experiment(store)));
  ASSERT_EQ(docs.size(), 4u);
  const auto load_docs = llmd_reports(cell_exports(store, write_load_experiment(store)));
  ASSERT_EQ(load_docs.size(), 1u);
  docs.push_back(load_docs[0]);
  for (const auto& doc : docs) {
    for (const auto& e : br_schema_errors(doc)) ADD_FAILURE() << doc["run"]["uid"] << ": " << e;
  }
}

// A server that sends no usage leaves prompt counts unknown (-1): the export must still
// validate, with no input or total token rate rather than one computed from -1s.
TEST(CellExports, RunWithoutUsageExportsNoInputRateAndStillValidates) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto id = write_load_experiment(store);
  const auto cells = store.cells(id);
  ASSERT_EQ(cells.size(), 1u);
  auto no_usage = ok_request(2, 1.0, 200, 800, 50, 4, 0, {200, 200, 200});
  no_usage.prompt_tokens = -1;
  no_usage.tokens_estimated = true;
  store.add_requests(cells[0].id, {no_usage});
  const Json doc = llmd_reports(cell_exports(store, id))[0];
  for (const auto& e : br_schema_errors(doc)) ADD_FAILURE() << e;
  const Json& throughput = doc["results"]["request_performance"]["aggregate"]["throughput"];
  EXPECT_FALSE(throughput.contains("input_token_rate"));
  EXPECT_FALSE(throughput.contains("total_token_rate"));
  EXPECT_TRUE(throughput.contains("output_token_rate"));
}

TEST(CellExports, SchemaCheckFailsOnABrokenExport) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  Json doc = llmd_reports(cell_exports(store, write_load_experiment(store)))[0];
  ASSERT_TRUE(br_schema_errors(doc).empty());
  doc["run"]["time"]["duration"] = 1.5;  // seconds as a number: what the export used to write
  EXPECT_EQ(br_schema_errors(doc),
            std::vector<std::string>{"$.run.time.duration: 1.5 is not of type 'string', 'null'"});
}

TEST(CellExports, LlmdReportFollowsTheBenchmarkReportRules) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const Json doc = llmd_reports(cell_exports(store, write_load_experiment(store)))[0];
  const Json& run = doc["run"];
  EXPECT_EQ(run["time"]["duration"], "PT2S");  // first send at 0.0 s to last end at 2.0 s
  EXPECT_FALSE(run.contains("cid")) << "cid is the cluster id, which kvsweep does not know";
  const Json& engine = doc["scenario"]["stack"][0]["standardized"];
  EXPECT_EQ(engine["kind"], "inference_engine");
  EXPECT_EQ(engine["replicas"], 1);
  EXPECT_EQ(engine["accelerator"]["count"], 0);
  EXPECT_EQ(engine["accelerator"]["parallelism"],
            (Json{{"tp", 1}, {"dp", 1}, {"ep", 1}, {"pp", 1}}));
  const Json& load = doc["scenario"]["load"];
  EXPECT_FALSE(load["metadata"].contains("label"));
  EXPECT_EQ(load["standardized"]["source"], "sampled");
  EXPECT_EQ(load["standardized"]["input_seq_len"], (Json{{"distribution", "other"},
                                                         {"value", 50.0},
                                                         {"std_dev", 10.0},
                                                         {"min", 40},
                                                         {"max", 60}}));
  EXPECT_EQ(load["standardized"]["rate_qps"], 4.0);
  EXPECT_EQ(load["standardized"]["concurrency"], 8);
  const Json& aggregate = doc["results"]["request_performance"]["aggregate"];
  EXPECT_EQ(aggregate["requests"]["input_length"]["units"], "count");
  EXPECT_DOUBLE_EQ(aggregate["requests"]["output_length"]["mean"].get<double>(), 4.0);
  const Json& throughput = aggregate["throughput"];
  EXPECT_EQ(throughput["output_token_rate"], (Json{{"units", "tokens/s"}, {"mean", 4.0}}));
  EXPECT_EQ(throughput["request_rate"], (Json{{"units", "queries/s"}, {"mean", 1.0}}));
  const Json& latency = aggregate["latency"];
  EXPECT_EQ(latency["inter_token_latency"]["units"], "ms/token");
  EXPECT_EQ(latency["time_per_output_token"]["units"], "ms/token");
  // NTPOT per request = e2e / output tokens: 500/5 = 100 and 1500/3 = 500.
  EXPECT_EQ(latency["normalized_time_per_output_token"]["units"], "ms/token");
  EXPECT_DOUBLE_EQ(latency["normalized_time_per_output_token"]["mean"].get<double>(), 300.0);
}

// Issue 27 item 5: what v0.2 had no place for. The cell's treatment and its group, and the
// servers' prefix-cache and queue signals over time from the scrapes, in a v0.2.1 document
// that llm-d's own schema accepts.
TEST(CellExports, LlmdReportCarriesTheTreatmentAndTheScrapesOverTime) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto id = write_load_experiment(store);
  store::CellRow cell = store.cells(id).at(0);
  const std::string url = "http://127.0.0.1:9001/metrics";
  const auto at = [&](const char* phase, double t_s, const char* name, double value) {
    store::MetricSample s = kvsweep::testing::sample(phase, url, name, value);
    s.t_s = t_s;
    return s;
  };
  store.add_metric_samples(cell.id, {at("before", 0, figures::kPrefixCacheQueries, 1000),
                                     at("before", 0, figures::kPrefixCacheHits, 100),
                                     at("before", 0, "vllm:num_requests_waiting", 0),
                                     at("during", 1.5, figures::kPrefixCacheQueries, 1400),
                                     at("during", 1.5, figures::kPrefixCacheHits, 400),
                                     at("during", 1.5, "vllm:num_requests_waiting", 3),
                                     at("during", 1.5, figures::kKvCacheUsage, 0.25),
                                     at("after", 3, figures::kPrefixCacheQueries, 1400),
                                     at("after", 3, figures::kPrefixCacheHits, 400),
                                     at("after", 3, "vllm:num_requests_waiting", 0)});
  const Json doc = llmd_reports(cell_exports(store, id)).at(0);
  for (const auto& e : br_schema_errors(doc)) ADD_FAILURE() << e;
  EXPECT_EQ(doc["version"], "0.2.1");
  Json cell_json = doc["scenario"]["load"]["native"]["config"]["cell"];
  // The cell's verdict stands beside its treatment (figures/validity_json.h); this cell was
  // stored without a load record, so it is not judged.
  ASSERT_TRUE(cell_json.contains("validity"));
  EXPECT_TRUE(cell_json["validity"]["verdict"].is_null());
  cell_json.erase("validity");
  EXPECT_EQ(cell_json,
            (Json{{"treatment", Json::object()}, {"treatment_group", "kvsweep"}, {"repeat", 0}}));

  const Json& components = doc["results"]["observability"]["components"];
  ASSERT_EQ(components.size(), 1u);
  EXPECT_EQ(components[0]["component_label"], "model-server");
  EXPECT_EQ(components[0]["replica_id"], url);
  const Json& series = components[0]["time_series"];
  EXPECT_EQ(series["num_requests_waiting"]["units"], "count");
  const Json& waiting = series["num_requests_waiting"]["series"];
  ASSERT_EQ(waiting.size(), 3u);
  EXPECT_EQ(waiting[1]["value"], 3.0);
  // The cell's epoch (write_load_experiment leaves it 0) plus the sample's time.
  EXPECT_EQ(waiting[1]["ts"], "1970-01-01T00:00:01.500Z");
  // 300 of the 400 tokens looked up between the first two scrapes hit; none looked up after.
  const Json& rate = series["prefix_cache_hit_rate"];
  EXPECT_EQ(rate["units"], "percent");
  ASSERT_EQ(rate["series"].size(), 1u);
  EXPECT_DOUBLE_EQ(rate["series"][0]["value"].get<double>(), 75.0);
  EXPECT_EQ(series["prefix_cache_hits"]["series"].size(), 3u);
  EXPECT_DOUBLE_EQ(series["kv_cache_usage"]["series"][0]["value"].get<double>(), 25.0);

  // A sweep's cell names its levels and the arm that groups them.
  const auto sweep =
      llmd_reports(cell_exports(store, kvsweep::testing::write_small_experiment(store)));
  ASSERT_FALSE(sweep.empty());
  EXPECT_EQ(sweep[0]["scenario"]["load"]["native"]["config"]["cell"]["treatment_group"], "random");
}

Json vllm_result_of(const std::vector<ExportFile>& files) {
  for (const auto& f : files) {
    if (f.name.ends_with(".vllm.json")) return Json::parse(f.text);
  }
  return nullptr;
}

TEST(CellExports, SweepVllmResultHasE2elPercentilesAndPeaks) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const Json j =
      vllm_result_of(cell_exports(store, kvsweep::testing::write_small_experiment(store)));
  for (const char* key : {"p99_ttft_ms", "p99_tpot_ms", "p99_itl_ms", "p99_e2el_ms",
                          "max_output_tokens_per_s", "max_concurrent_requests"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["request_rate"], "inf");  // a closed-loop sweep
}

TEST(CellExports, LoadVllmResultKeepsTheRunsPercentilesAndRate) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const Json j = vllm_result_of(cell_exports(store, write_load_experiment(store)));
  // --percentile-metrics ttft,e2el --metric-percentiles 50,90, as `kvsweep load` stored them.
  for (const char* key : {"p50_ttft_ms", "p90_ttft_ms", "p50_e2el_ms", "p90_e2el_ms"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key : {"p99_ttft_ms", "p50_tpot_ms", "p50_itl_ms"}) {
    EXPECT_FALSE(j.contains(key)) << key;
  }
  EXPECT_DOUBLE_EQ(j["p90_e2el_ms"].get<double>(), 1400.0);
  EXPECT_EQ(j["request_rate"], 4.0);
  EXPECT_EQ(j["burstiness"], 1.0);
  EXPECT_EQ(j["max_concurrency"], 8);
  EXPECT_EQ(j["label"], "kvsweep");
}

TEST(CellExports, StatisticsWithoutSamplesAreLeftOut) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto id = store.add_experiment(kvsweep::testing::small_experiment());
  store::CellRow cell;
  cell.experiment_id = id;
  cell.arm = "random";
  cell.concurrency = 1;
  cell.status = "done";
  cell.id = store.add_cell(cell);
  store.add_requests(cell.id, {kvsweep::testing::failed_request(0, 0.0, 5, "http_status")});
  const Json doc = llmd_reports(cell_exports(store, id))[0];
  const Json& latency = doc["results"]["request_performance"]["aggregate"]["latency"];
  EXPECT_TRUE(latency.empty()) << latency.dump();
  EXPECT_TRUE(br_schema_errors(doc).empty()) << ::testing::PrintToString(br_schema_errors(doc));
}

}  // namespace
}  // namespace kvsweep::reports
