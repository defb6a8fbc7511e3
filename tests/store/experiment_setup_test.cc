// Tests for store/experiment_setup.{h,cc}: every shape a kvsweep stored decodes, encodes back
// in the shape written today, and loses nothing it does not know; the schema-14 migration
// rewrites stored setups in place.
#include "store/experiment_setup.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "store/schema.h"
#include "store/sqlite_handles.h"
#include "store/store.h"
#include "store/store_identity.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::store {
namespace {

using kvsweep::testing::TempDir;

// A sweep's setup as sweep/runner.cc wrote it at schema 13, key for key.
constexpr const char* kSweepSetup =
    R"({"target":{"kind":"sim","replicas":4,"profile":"demo","description":"embedded fleet",)"
    R"("stands_in_for":"kubeai"},"model":"llama-3.1-8b","description":"routing",)"
    R"("seed":7,"factors":{"strategy":{"levels":{"random":{"target.strategy":"random"},)"
    R"("prefix-hash":{"target.strategy":"prefix-hash"}},"phase":"deploy"},)"
    R"("concurrency":{"levels":{"8":{"concurrency":"8"}},"phase":"run"}},)"
    R"("arms":["random","prefix-hash"],"concurrency":[8],"repeats":1,)"
    R"("load":{"shape":"open loop at 4 req/s (burstiness 1), concurrency level = in-flight cap",)"
    R"("turns":"independent","think_time_s":0.5,"dataset":"shared-prefix: 32 groups",)"
    R"("prefix_regime":1024,"endpoint":"chat, streaming","max_tokens":64,"num_requests":200,)"
    R"("duration_s":30.0,"warmup_requests":8,"cache":"warm","warm_passes":1,"timeout_s":60.0,)"
    R"("connections":"one per request","threads":2},)"
    R"("search":{"factor":"load.request_rate","low":1.0,"high":64.0,"precision":0.1,)"
    R"("growth":2.0,"guide":"predict","max_tries":12,"min_probe_s":20.0,)"
    R"("slo":[{"label":"p95 TTFT <= 500 ms","ttft_ms":500.0,"fraction":0.95}],)"
    R"("confidence":0.95,"cost":{"usd_per_gpu_hour":0.8,"gpus":4.0},"guide_experiment":3},)"
    R"("validity":{"max_send_shortfall":0.05,"max_send_delay_p99_ms":20.0,)"
    R"("min_in_flight_fraction":0.9,"backlog_grace_ms":10.0,"trend_alpha":0.01,)"
    R"("min_ttft_rise_per_10s":5.0}})";

// `kvsweep load`'s setup at schema 13: its own load keys and an empty baseline.
constexpr const char* kLoadSetup =
    R"({"target":{"kind":"endpoint","url":"http://127.0.0.1:8000"},"model":"llama",)"
    R"("load":{"shape":"open loop","request_rate":"inf","burstiness":1.0,"max_concurrency":8,)"
    R"("dataset":"sharegpt: 3 conversations","endpoint":"chat",)"
    R"("new_connection_per_request":true,"stream":true,"max_tokens":64,)"
    R"("percentile_metrics":["ttft","e2el"],"metric_percentiles":[50.0,90.0],)"
    R"("header_names":["X-Team"]},"baseline":""})";

TEST(ExperimentSetup, ASweepsSetupDecodesEveryFieldAndEncodesToTheSameText) {
  const ExperimentSetup s = decode_setup(kSweepSetup);
  ASSERT_TRUE(s.target.has_value());
  EXPECT_EQ(s.target->kind, "sim");
  EXPECT_EQ(s.target->replicas, 4);
  EXPECT_EQ(s.target->stands_in_for, "kubeai");
  EXPECT_EQ(s.seed, 7u);
  ASSERT_TRUE(s.factors.has_value());
  ASSERT_EQ(s.factors->size(), 2u);
  EXPECT_EQ((*s.factors)[0].name, "strategy");
  EXPECT_EQ((*s.factors)[0].phase, "deploy");
  EXPECT_EQ((*s.factors)[0].levels[1].settings[0].second, "prefix-hash");
  ASSERT_TRUE(s.load.has_value());
  EXPECT_EQ(s.load->prefix_regime, "1024");
  EXPECT_EQ(s.load->warm_passes, 1);
  EXPECT_TRUE(s.load->other.empty());
  ASSERT_TRUE(s.search.has_value());
  EXPECT_EQ(s.search->guide_experiment, 3);
  ASSERT_TRUE(s.search->slo.has_value());
  EXPECT_EQ((*s.search->slo)[0].ttft_ms, 500.0);
  EXPECT_FALSE((*s.search->slo)[0].tpot_ms.has_value());
  ASSERT_TRUE(s.search->cost.has_value());
  EXPECT_EQ(s.search->cost->gpus, 4.0);
  EXPECT_EQ(s.validity_rules().max_send_delay_p99_ms, 20.0);
  EXPECT_EQ(s.validity_rules().min_ttft_rise_per_10s, 5.0);
  EXPECT_TRUE(s.other.empty());
  // What the runner writes today is what it wrote: keys, values and order.
  EXPECT_EQ(encode_setup(s), kSweepSetup);
  EXPECT_EQ(decode_setup(encode_setup(s)), s);
}

TEST(ExperimentSetup, ALoadRunsSetupKeepsItsRateAsInfAndDropsTheBaselineKey) {
  const ExperimentSetup s = decode_setup(kLoadSetup);
  ASSERT_TRUE(s.load.has_value());
  ASSERT_TRUE(s.load->request_rate.has_value());
  EXPECT_TRUE(std::isinf(*s.load->request_rate));
  EXPECT_EQ(s.load->percentile_metrics, (std::vector<std::string>{"ttft", "e2el"}));
  EXPECT_EQ(s.load->metric_percentiles, (std::vector<double>{50, 90}));
  EXPECT_EQ(s.target->url, "http://127.0.0.1:8000");
  EXPECT_FALSE(s.target->replicas.has_value());
  EXPECT_TRUE(s.other.empty()) << "the baseline lives in its own column since schema 6";
  const std::string expected =
      std::string(kLoadSetup)
          .substr(0, std::string(kLoadSetup).size() - std::string(R"(,"baseline":""})").size()) +
      "}";
  EXPECT_EQ(encode_setup(s), expected);
  // A finite rate is a number again.
  ExperimentSetup finite = s;
  finite.load->request_rate = 4.5;
  EXPECT_EQ(nlohmann::json::parse(encode_setup(finite))["load"]["request_rate"], 4.5);
}

// Setups before arms were named listed "strategies"; a user's tool or a newer kvsweep may add
// keys this one does not know, or give a known key another type: all of it is kept, in order.
TEST(ExperimentSetup, OlderAndUnknownShapesAreReadAndNothingIsLost) {
  const ExperimentSetup old = decode_setup(
      R"({"model":"llama","strategies":["random","prefix-hash"],"baseline":"random"})");
  EXPECT_EQ(old.arms, (std::vector<std::string>{"random", "prefix-hash"}));
  EXPECT_EQ(encode_setup(old), R"({"model":"llama","arms":["random","prefix-hash"]})");

  const ExperimentSetup odd = decode_setup(
      R"({"target":{"kind":"sim","gpu":"L4"},"load":{"dataset":{"kind":"synthetic"},)"
      R"("max_concurrency":"${concurrency}","num_prompts":4,"max_tokens":64},"owner":"team-a",)"
      R"("repeats":"two"})");
  ASSERT_TRUE(odd.load.has_value());
  EXPECT_FALSE(odd.load->dataset.has_value());  // an object where a description is written
  EXPECT_FALSE(odd.load->max_concurrency.has_value());
  EXPECT_EQ(odd.load->max_tokens, 64);
  ASSERT_EQ(odd.load->other.size(), 3u);
  EXPECT_EQ(odd.load->other[0],
            (std::pair<std::string, std::string>{"dataset", R"({"kind":"synthetic"})"}));
  EXPECT_EQ(odd.load->other[2].first, "num_prompts");
  EXPECT_EQ(odd.target->other[0].first, "gpu");
  ASSERT_EQ(odd.other.size(), 2u);
  EXPECT_EQ(odd.other[0].first, "owner");
  EXPECT_EQ(odd.other[1], (std::pair<std::string, std::string>{"repeats", R"("two")"}));
  const nlohmann::ordered_json again = nlohmann::ordered_json::parse(encode_setup(odd));
  EXPECT_EQ(again["load"]["dataset"]["kind"], "synthetic");
  EXPECT_EQ(again["load"]["max_concurrency"], "${concurrency}");
  EXPECT_EQ(again["target"]["gpu"], "L4");
  EXPECT_EQ(again["repeats"], "two");
  EXPECT_EQ(decode_setup(encode_setup(odd)), odd);
}

TEST(ExperimentSetup, TextThatIsNoObjectIsKeptAsItWas) {
  EXPECT_EQ(decode_setup(""), ExperimentSetup{});
  EXPECT_EQ(encode_setup(decode_setup("")), "{}");
  EXPECT_EQ(encode_setup(decode_setup("{}")), "{}");
  for (const char* text : {"not json", "[1,2]", "\"x\"", "{\"target\":"}) {
    const ExperimentSetup s = decode_setup(text);
    EXPECT_EQ(s.unreadable, text);
    EXPECT_EQ(encode_setup(s), text);
    EXPECT_EQ(s.target_kind(), "");
    EXPECT_EQ(s.validity_rules(), ValidityRules{});
  }
}

TEST(ExperimentSetup, ARegimeLabelStaysALabelAndANumberStaysANumber) {
  const ExperimentSetup label = decode_setup(R"({"load":{"prefix_regime":"large"}})");
  EXPECT_EQ(label.load->prefix_regime, "large");
  EXPECT_EQ(encode_setup(label), R"({"load":{"prefix_regime":"large"}})");
  const ExperimentSetup number = decode_setup(R"({"load":{"prefix_regime":512}})");
  EXPECT_EQ(number.load->prefix_regime, "512");
  EXPECT_EQ(encode_setup(number), R"({"load":{"prefix_regime":512}})");
}

// An older writer's whole numbers in number fields read as numbers and are written back whole.
TEST(ExperimentSetup, WholeNumbersStayWholeWhereTheyWereStoredSo) {
  constexpr const char* kStored =
      R"({"load":{"request_rate":800,"think_time_s":0.5,"duration_s":30},)"
      R"("search":{"low":1,"high":64.0}})";
  const ExperimentSetup s = decode_setup(kStored);
  EXPECT_EQ(s.load->request_rate, 800.0);
  EXPECT_EQ(s.search->low, 1.0);
  EXPECT_EQ(encode_setup(s), kStored);
  EXPECT_EQ(decode_setup(encode_setup(s)), s);
  ExperimentSetup changed = s;
  changed.load->request_rate = 2.5;  // no longer whole: written as it is
  EXPECT_NE(encode_setup(changed).find(R"("request_rate":2.5)"), std::string::npos);
}

TEST(CellFactors, LevelsKeepTheirOrderAndTheirJsonType) {
  const CellFactors f = decode_factors(R"({"strategy":"random","concurrency":8})");
  ASSERT_EQ(f.levels.size(), 2u);
  EXPECT_EQ(f.level_of("strategy"), "random");
  EXPECT_EQ(f.level_of("concurrency"), "8");
  EXPECT_EQ(f.level_of("mode"), std::nullopt);
  EXPECT_EQ(encode_factors(f), R"({"strategy":"random","concurrency":8})");
  EXPECT_EQ(encode_factors(decode_factors("")), "{}");
  EXPECT_EQ(encode_factors(decode_factors("oops")), "oops");
  EXPECT_TRUE(factors_object(decode_factors("oops")).empty());
}

// A store written at schema 13 holds every writer's shape; opening it rewrites each setup once,
// and the typed setup read after is the one read before.
TEST(ExperimentSetupMigration, Schema14RewritesEveryStoredSetupInPlace) {
  TempDir dir;
  const std::string path = dir.file("v13.db");
  {
    SqliteDb db = SqliteDb::open(path);
    migrate_to(db, 13);
    db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));  // as kvsweep did
    SqliteStatement insert = db.prepare(
        "INSERT INTO experiments (id, name, status, setup_json) VALUES (?, 'old', 'done', ?)");
    const std::pair<std::int64_t, std::string> rows[] = {
        {1, kSweepSetup},
        {2, kLoadSetup},
        {3, R"({"model":"llama","strategies":["a","b"],"baseline":"a"})"},
        {4, "not json"},
        {5, ""}};
    for (const auto& [id, text] : rows) {
      insert.bind_int64(1, id);
      insert.bind_text(2, text);
      insert.step();
      insert.reset();
    }
    ASSERT_EQ(schema_version(db), 13);
  }
  const ExperimentSetup before_load = decode_setup(kLoadSetup);
  const Store store = Store::open(path);
  EXPECT_EQ(schema_version(SqliteDb::open(path)), 14);
  const auto stored_text = [&path](std::int64_t id) {
    SqliteDb db = SqliteDb::open(path);
    SqliteStatement s = db.prepare("SELECT setup_json FROM experiments WHERE id = ?");
    s.bind_int64(1, id);
    EXPECT_TRUE(s.step());
    return s.column_text(0);
  };
  EXPECT_EQ(stored_text(1), kSweepSetup);  // already current: untouched
  EXPECT_EQ(stored_text(2).find("baseline"), std::string::npos);
  EXPECT_EQ(stored_text(3), R"({"model":"llama","arms":["a","b"]})");
  EXPECT_EQ(stored_text(4), "not json");
  EXPECT_EQ(stored_text(5), "{}");
  EXPECT_EQ(store.experiment(2)->setup, before_load);
  EXPECT_EQ(store.experiment(3)->setup.arms, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(store.experiment(4)->setup.unreadable, "not json");
}

}  // namespace
}  // namespace kvsweep::store
