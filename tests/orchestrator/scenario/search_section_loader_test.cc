// Tests for orchestrator/scenario/search_section_loader.cc: the `slo:` and `search:` sections
// and `target.cost` read back field by field from a real file, every rule a located error
// (file:line:column and the field), and the factor a search varies added at its low end so the
// plan expands.
#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/targets/target_kinds.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::orchestrator {
namespace {

// Loads scenarios from s.yaml in a temp dir; errors read with the file named "s.yaml".
class SearchSection : public ::testing::Test {
 protected:
  std::optional<ScenarioSpec> load(const std::string& text) {
    const std::string path = dir_.file("s.yaml");
    std::ofstream(path) << text;
    errors_.clear();
    return load_scenario_file(path, &errors_, target_kinds());
  }

  // The first line of every error: "s.yaml:11:16: slo.p95_ttft_ms: ...".
  std::vector<std::string> heads() const {
    const std::string dir = dir_.path().string() + "/";
    std::vector<std::string> out;
    for (const auto& e : errors_) {
      std::string head = e.text.substr(0, e.text.find('\n'));
      if (head.rfind(dir, 0) == 0) head = head.substr(dir.size());
      out.push_back(head);
    }
    return out;
  }

  std::string first_error() const { return errors_.empty() ? "" : errors_.front().text; }

 private:
  testing::TempDir dir_;
  std::vector<ScenarioError> errors_;
};

// A sim scenario of two strategies. Lines: 1 name, 2 target, 3 factors:, 4 strategy, then
// `factors` (default: line 5 concurrency), load: and `load` (default: num_requests), `rest`.
std::string scenario(const std::string& rest, const std::string& factors = "  concurrency: [64]\n",
                     const std::string& load = "  num_requests: 20\n") {
  return "name: capacity\ntarget: {kind: sim}\nfactors:\n  strategy: [random, prefix-hash]\n" +
         factors + "load:\n" + load + rest;
}

constexpr const char* kSlo = "slo:\n  p95_ttft_ms: 1000\n";

constexpr const char* kFull = R"(name: capacity
target:
  kind: sim
  cost: {usd_per_gpu_hour: 0.8, gpus: 8}
factors:
  strategy: [random, prefix-hash]
  concurrency: [64]
load:
  num_requests: 20
slo:
  p95_ttft_ms: 1000
  p99_tpot_ms: 100
  p99.9_ttft_ms: 2500
  good: {ttft_ms: 1000, tpot_ms: 100, e2e_ms: 20000}
  p50_itl_ms: 20
  attainment: 90%
  confidence: 0.9
  resamples: 500
search:
  factor: load.request_rate
  low: 1.5
  high: 64
  precision: 0.05
  growth: 3
  guide: none
  max_tries: 4
  max_probes: 20
  min_probe: 3m
)";

TEST_F(SearchSection, ReadsEveryKeyBackFieldByField) {
  const auto spec = load(kFull);
  ASSERT_TRUE(spec) << first_error();
  const auto& r = spec->slo.requirements;
  ASSERT_EQ(r.size(), 5u);  // each pNN_ key and good, in the order written
  EXPECT_EQ(r[0].ttft_ms, 1000);
  EXPECT_FALSE(r[0].tpot_ms || r[0].itl_ms || r[0].e2e_ms);
  EXPECT_DOUBLE_EQ(r[0].fraction, 0.95);
  EXPECT_EQ(r[1].tpot_ms, 100);
  EXPECT_FALSE(r[1].ttft_ms);
  EXPECT_DOUBLE_EQ(r[1].fraction, 0.99);
  EXPECT_EQ(r[2].ttft_ms, 2500);
  EXPECT_DOUBLE_EQ(r[2].fraction, 0.999);
  EXPECT_EQ(r[3].ttft_ms, 1000);
  EXPECT_EQ(r[3].tpot_ms, 100);
  EXPECT_EQ(r[3].e2e_ms, 20000);
  EXPECT_FALSE(r[3].itl_ms);
  EXPECT_DOUBLE_EQ(r[3].fraction, 0.9);  // attainment: 90%
  EXPECT_EQ(r[4].itl_ms, 20);
  EXPECT_DOUBLE_EQ(r[4].fraction, 0.5);
  EXPECT_DOUBLE_EQ(spec->slo.confidence, 0.9);
  EXPECT_EQ(spec->slo.resamples, 500);

  const SearchSpec& s = spec->search;
  EXPECT_TRUE(s.enabled());
  EXPECT_EQ(s.factor, "load.request_rate");
  EXPECT_DOUBLE_EQ(s.low, 1.5);
  EXPECT_DOUBLE_EQ(s.high, 64);
  EXPECT_DOUBLE_EQ(s.precision, 0.05);
  EXPECT_DOUBLE_EQ(s.growth, 3);
  EXPECT_EQ(s.guide, SearchGuide::kNone);
  EXPECT_EQ(s.max_tries, 4);
  EXPECT_EQ(s.max_probes, 20);
  EXPECT_DOUBLE_EQ(s.min_probe_s, 180);

  EXPECT_DOUBLE_EQ(spec->target.cost.usd_per_gpu_hour, 0.8);
  EXPECT_DOUBLE_EQ(spec->target.cost.gpus, 8);
  EXPECT_FALSE(spec->target.cost.empty());
  EXPECT_DOUBLE_EQ(spec->target.cost.usd_per_hour(), 6.4);

  EXPECT_EQ(spec->marks.at("slo.p95_ttft_ms").line, 11);
  EXPECT_EQ(spec->marks.at("slo.p95_ttft_ms").column, 16);
  EXPECT_EQ(spec->marks.at("slo.good.e2e_ms").line, 14);
  EXPECT_EQ(spec->marks.at("search.low").line, 21);
  EXPECT_EQ(spec->marks.at("search.low").column, 8);
  EXPECT_EQ(spec->marks.at("target.cost.gpus").line, 4);
}

TEST_F(SearchSection, ARateSearchAddsTheRateFactorAtLowAndThePlanExpands) {
  const auto spec = load(kFull);
  ASSERT_TRUE(spec) << first_error();
  const FactorSpec* rate = spec->factor("load.request_rate");
  ASSERT_NE(rate, nullptr);
  EXPECT_EQ(rate->path, "load.request_rate");
  EXPECT_EQ(rate->labels(), (std::vector<std::string>{"1.5"}));
  EXPECT_EQ(rate->levels[0].mark.line, 21);  // said at search.low
  EXPECT_EQ(rate->levels[0].mark.column, 8);
  EXPECT_EQ(arm_labels(*spec), (std::vector<std::string>{"random", "prefix-hash"}));
  const auto cells = expand_plan(*spec);
  ASSERT_EQ(cells.size(), 2u);
  for (const auto& cell : cells) {
    EXPECT_DOUBLE_EQ(cell.load.request_rate, 1.5);  // open loop at the search's low end
    EXPECT_EQ(cell.concurrency, 64);                // the in-flight cap, as written
  }
  EXPECT_EQ(cells[0].arm, "random");
  EXPECT_EQ(cells[1].arm, "prefix-hash");
}

TEST_F(SearchSection, ARateReadsBackExactly) {
  const auto spec = load(scenario(
      std::string(kSlo) + "search: {factor: load.request_rate, low: 0.123456789, high: 9}\n"));
  ASSERT_TRUE(spec) << first_error();
  EXPECT_EQ(spec->factor("load.request_rate")->labels(), (std::vector<std::string>{"0.123456789"}));
  EXPECT_DOUBLE_EQ(expand_plan(*spec).at(0).load.request_rate, 0.123456789);
}

TEST_F(SearchSection, AConcurrencySearchAddsTheConcurrencyFactorAtLow) {
  // Lines: 5 load:, 6 num_requests, 7 slo:, 8 p95_ttft_ms, 9 search.
  const auto spec =
      load(scenario(std::string(kSlo) + "search: {factor: concurrency, low: 4, high: 256}\n", ""));
  ASSERT_TRUE(spec) << first_error();
  EXPECT_EQ(spec->search.factor, "concurrency");
  EXPECT_DOUBLE_EQ(spec->search.low, 4);
  EXPECT_DOUBLE_EQ(spec->search.high, 256);
  const FactorSpec* concurrency = spec->factor("concurrency");
  ASSERT_NE(concurrency, nullptr);
  EXPECT_EQ(concurrency->path, "concurrency");
  EXPECT_EQ(concurrency->labels(), (std::vector<std::string>{"4"}));
  EXPECT_EQ(concurrency->mark.line, 9);
  EXPECT_EQ(spec->marks.count("factors.concurrency"), 0u);  // not written
  const auto cells = expand_plan(*spec);
  ASSERT_EQ(cells.size(), 2u);  // 2 strategies x the one level
  for (const auto& cell : cells) {
    EXPECT_EQ(cell.concurrency, 4);
    EXPECT_DOUBLE_EQ(cell.load.request_rate, 0);  // a closed loop of 4 users
  }
  EXPECT_EQ(cells[0].arm, "random");
  EXPECT_EQ(cells[1].arm, "prefix-hash");
  EXPECT_NE(cells[0].factors_json.find("\"concurrency\":4"), std::string::npos)
      << cells[0].factors_json;
}

// Nothing else varies: no factors section at all, one arm.
TEST_F(SearchSection, AConcurrencySearchNeedsNoFactorsSection) {
  const auto spec = load(
      "name: c\nload: {num_requests: 5}\nslo: {p99_e2e_ms: 20000}\n"
      "search: {factor: concurrency, low: 2, high: 64, guide: predict}\n");
  ASSERT_TRUE(spec) << first_error();
  ASSERT_EQ(spec->factors.size(), 1u);
  EXPECT_EQ(spec->factors[0].name, "concurrency");
  const auto cells = expand_plan(*spec);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].concurrency, 2);
  EXPECT_EQ(cells[0].arm, "all");
  EXPECT_EQ(spec->baseline, "all");
  // A search of the rate still needs the concurrency factor (the in-flight cap).
  EXPECT_FALSE(
      load("name: c\nload: {num_requests: 5}\nslo: {p99_e2e_ms: 20000}\n"
           "search: {factor: load.request_rate, low: 2, high: 64}\n"));
  EXPECT_EQ(heads(), (std::vector<std::string>{"s.yaml:1:1: factors: required key is missing"}));
}

// The fuzzer's finding: a rate search read `load` before knowing it was written, and yaml-cpp
// throws on asking a missing node's type. A missing load section, or one that is not a map, is
// a located error like in any other scenario, never an exception.
TEST_F(SearchSection, ARateSearchWithoutALoadSectionIsAnErrorNotAnException) {
  const std::string head = "name: c\ntarget: {kind: sim}\nfactors:\n  concurrency: [8]\n";
  const std::string tail =
      std::string(kSlo) + "search: {factor: load.request_rate, low: 2, high: 64}\n";
  EXPECT_FALSE(load(head + tail));
  EXPECT_EQ(heads(), (std::vector<std::string>{
                         "s.yaml:1:1: load: give num_requests, duration or both: a cell needs an "
                         "end"}));
  EXPECT_FALSE(load(head + "load: 3\n" + tail));
  ASSERT_FALSE(heads().empty());
  EXPECT_EQ(heads().front().rfind("s.yaml:5:7: load", 0), 0u) << heads().front();
}

TEST_F(SearchSection, DefaultsGuideAndAttainment) {
  struct Case {
    std::string guide_line;
    std::string attainment_line;
    std::optional<SearchGuide> guide;
    double attainment;
  };
  const std::vector<Case> cases = {
      {"  guide: predict\n", "", SearchGuide::kPredict, 0.95},
      {"  guide: none\n", "", SearchGuide::kNone, 0.95},
      {"", "", std::nullopt, 0.95},  // unset: the runner decides (search_spec.h)
      {"", "  attainment: 95%\n", std::nullopt, 0.95},
      {"", "  attainment: 0.8\n", std::nullopt, 0.8},
      {"", "  attainment: 99.5%\n", std::nullopt, 0.995},
  };
  for (const auto& c : cases) {
    const auto spec = load(scenario("slo:\n  good: {e2e_ms: 30000}\n" + c.attainment_line +
                                    "search:\n  factor: load.request_rate\n  low: 2\n  high: 8\n" +
                                    c.guide_line));
    ASSERT_TRUE(spec) << first_error();
    EXPECT_EQ(spec->search.guide, c.guide) << c.guide_line;
    ASSERT_EQ(spec->slo.requirements.size(), 1u);
    EXPECT_EQ(spec->slo.requirements[0].e2e_ms, 30000);
    EXPECT_DOUBLE_EQ(spec->slo.requirements[0].fraction, c.attainment) << c.attainment_line;
    EXPECT_DOUBLE_EQ(spec->slo.confidence, 0.95);
    EXPECT_EQ(spec->slo.resamples, 1000);
    EXPECT_DOUBLE_EQ(spec->search.precision, 0.1);
    EXPECT_DOUBLE_EQ(spec->search.growth, 2);
    EXPECT_EQ(spec->search.max_tries, 3);
    EXPECT_EQ(spec->search.max_probes, 30);
    EXPECT_DOUBLE_EQ(spec->search.min_probe_s, 120);
    EXPECT_TRUE(spec->target.cost.empty());
  }
}

TEST_F(SearchSection, NoSloNoSearchReadsAsBefore) {
  const auto spec = load(scenario(""));
  ASSERT_TRUE(spec) << first_error();
  EXPECT_TRUE(spec->slo.empty());
  EXPECT_FALSE(spec->search.enabled());
  EXPECT_EQ(spec->factors.size(), 2u);
}

TEST_F(SearchSection, AnSloWithoutARequirementIsAnError) {
  EXPECT_FALSE(load(scenario("slo:\n  confidence: 0.9\n")));
  EXPECT_EQ(heads(), (std::vector<std::string>{
                         "s.yaml:9:3: slo: give at least one requirement: pNN_<metric>_ms "
                         "(p95_ttft_ms: 1000; metric ttft, tpot, itl or e2e) or good: {ttft_ms, "
                         "tpot_ms, e2e_ms}"}));
}

TEST_F(SearchSection, ASearchWithoutAnSloSearchesTheKnee) {
  const auto spec = load(scenario("search: {factor: load.request_rate, low: 1, high: 8}\n"));
  ASSERT_TRUE(spec) << heads().at(0);
  EXPECT_TRUE(spec->slo.empty());
  EXPECT_EQ(spec->search.knee_efficiency, 0.9);
  const auto tuned = load(
      scenario("search: {factor: load.request_rate, low: 1, high: 8, knee_efficiency: 0.8}\n"));
  ASSERT_TRUE(tuned) << heads().at(0);
  EXPECT_EQ(tuned->search.knee_efficiency, 0.8);
}

TEST_F(SearchSection, AKneeEfficiencyIsAFractionAndOnlyWithoutAnSlo) {
  EXPECT_FALSE(
      load(scenario(std::string(kSlo) + "search: {factor: load.request_rate, low: 1, high: 8, "
                                        "knee_efficiency: 0.8}\n")));
  ASSERT_EQ(heads().size(), 1u);
  EXPECT_NE(heads()[0].find("search.knee_efficiency: only for a knee search, without slo"),
            std::string::npos)
      << heads()[0];
  EXPECT_FALSE(load(
      scenario("search: {factor: load.request_rate, low: 1, high: 8, knee_efficiency: 1.5}\n")));
  ASSERT_EQ(heads().size(), 1u);
  EXPECT_NE(heads()[0].find("search.knee_efficiency: expected a fraction > 0 and below 1"),
            std::string::npos)
      << heads()[0];
}

TEST_F(SearchSection, AConcurrencySearchRefusesFactorsConcurrency) {
  EXPECT_FALSE(
      load(scenario(std::string(kSlo) + "search: {factor: concurrency, low: 4, high: 256}\n")));
  EXPECT_EQ(heads(), (std::vector<std::string>{
                         "s.yaml:5:3: factors.concurrency: the search chooses concurrency's "
                         "levels; remove factors.concurrency"}));
}

TEST_F(SearchSection, AConcurrencySearchsBoundsAreCounts) {
  EXPECT_FALSE(load(scenario(
      std::string(kSlo) + "search: {factor: concurrency, low: 1.5, high: 2000000}\n", "")));
  EXPECT_EQ(heads(),
            (std::vector<std::string>{
                "s.yaml:9:36: search.low: expected an integer from 1 to 1000000, got \"1.5\"",
                "s.yaml:9:47: search.high: expected an integer from 1 to 1000000, got "
                "\"2000000\""}));
}

TEST_F(SearchSection, ARateSearchRefusesEveryOtherSetterOfTheRate) {
  const std::string search =
      std::string(kSlo) + "search: {factor: load.request_rate, low: 1, high: 8}\n";
  // Lines: 5 concurrency, 6 request_rate, 7 load:, 8 num_requests, 9 request_rate.
  EXPECT_FALSE(load(scenario(search, "  concurrency: [64]\n  request_rate: [1, 2]\n",
                             "  num_requests: 20\n  request_rate: 5\n")));
  EXPECT_EQ(heads(),
            (std::vector<std::string>{
                "s.yaml:6:3: factors.request_rate: sets load.request_rate, which the search "
                "chooses (search.factor: load.request_rate); remove it",
                "s.yaml:9:17: load.request_rate: the search chooses the rate (search.factor: "
                "load.request_rate); remove load.request_rate"}));
  // A named arm that sets it: said at the setting.
  EXPECT_FALSE(load(scenario(search,
                             "  concurrency: [64]\n  arm: {a: {load.max_tokens: 8}, b: "
                             "{load.request_rate: 3}}\n")));
  EXPECT_EQ(heads(), (std::vector<std::string>{
                         "s.yaml:6:57: factors.arm: sets load.request_rate, which the search "
                         "chooses (search.factor: load.request_rate); remove it"}));
}

TEST_F(SearchSection, ASearchRefusesRepeats) {
  EXPECT_FALSE(load(scenario(std::string(kSlo) + "search: {factor: concurrency, low: 1, high: 8}\n",
                             "  repeats: 3\n")));
  EXPECT_EQ(heads(), (std::vector<std::string>{
                         "s.yaml:5:12: factors.repeats: not with search: a probe's repeats are "
                         "the search's own tries (search.max_tries); remove repeats"}));
}

TEST_F(SearchSection, AnotherSearchFactorListsTheTwoAccepted) {
  EXPECT_FALSE(load(scenario(std::string(kSlo) + "search: {factor: users, low: 1, high: 8}\n")));
  EXPECT_EQ(heads(), (std::vector<std::string>{
                         "s.yaml:10:18: search.factor: expected one of load.request_rate, "
                         "concurrency, got \"users\""}));
  EXPECT_FALSE(
      load(scenario(std::string(kSlo) + "search: {factor: concurency, low: 1, high: 8}\n", "")));
  EXPECT_EQ(heads().at(0),
            "s.yaml:9:18: search.factor: expected one of load.request_rate, concurrency, got "
            "\"concurency\"; did you mean 'concurrency'?");
}

TEST_F(SearchSection, SearchValuesAreChecked) {
  // Lines: 8 slo:, 9 p95_ttft_ms, 10 search:, 11 factor, 12 low, ...
  EXPECT_FALSE(load(scenario(std::string(kSlo) +
                             "search:\n  factor: load.request_rate\n  low: 0\n  high: 8\n"
                             "  precision: 1\n  growth: 1\n  guide: predicted\n  max_tries: 0\n"
                             "  max_probes: 1\n")));
  EXPECT_EQ(heads(),
            (std::vector<std::string>{
                "s.yaml:12:8: search.low: expected a rate in requests/s >= 0.001, at most "
                "1000000, got \"0\"",
                "s.yaml:14:14: search.precision: expected a fraction > 0 and below 1 (0.1: "
                "10%), got \"1\"",
                "s.yaml:15:11: search.growth: expected a factor > 1 (2: each probe twice the "
                "last), at most 100, got \"1\"",
                "s.yaml:16:10: search.guide: expected one of predict, none, got \"predicted\"; "
                "did you mean 'predict'?",
                "s.yaml:17:14: search.max_tries: expected an integer from 1 to 100, got \"0\"",
                "s.yaml:18:15: search.max_probes: expected an integer from 2 to 1000, got \"1\""}));
  EXPECT_FALSE(
      load(scenario(std::string(kSlo) + "search: {factor: load.request_rate, high: 8, low: 8}\n")));
  EXPECT_EQ(heads(), (std::vector<std::string>{"s.yaml:10:43: search.high: expected a load above "
                                               "low (8), got \"8\""}));
  EXPECT_FALSE(load(scenario(std::string(kSlo) + "search: {factor: concurrency}\n", "")));
  EXPECT_EQ(heads(),
            (std::vector<std::string>{"s.yaml:9:9: search.low: required key is missing",
                                      "s.yaml:9:9: search.high: required key is missing"}));
}

// Issue 40 item 6: numbers with no upper bound passed the loader and failed later, or never
// ended. slo.resamples 2147483647 ran out of memory; search.max_probes 2147483647 asked the
// space reserve for 678 GB; search.low 1e-310 probed "-nan"; a cost of 1e308 printed "$inf per
// million tokens". Each is refused at load, at its line, with its bound.
TEST_F(SearchSection, EveryNumberHasAnUpperBound) {
  EXPECT_FALSE(
      load(scenario("slo:\n  p95_ttft_ms: 1e308\n  resamples: 2147483647\n"
                    "search:\n  factor: load.request_rate\n  low: 1e-310\n"
                    "  high: 1e300\n  max_probes: 2147483647\n  max_tries: 1000\n"
                    "  growth: 1e6\n  min_probe: 2h\n")));
  EXPECT_EQ(heads(),
            (std::vector<std::string>{
                "s.yaml:9:16: slo.p95_ttft_ms: expected a threshold in ms > 0, at most "
                "604800000, got \"1e308\"",
                "s.yaml:10:14: slo.resamples: expected an integer from 100 to 100000, got "
                "\"2147483647\"",
                "s.yaml:13:8: search.low: expected a rate in requests/s >= 0.001, at most "
                "1000000, got \"1e-310\"",
                "s.yaml:14:9: search.high: expected a rate in requests/s >= 0.001, at most "
                "1000000, got \"1e300\"",
                "s.yaml:17:11: search.growth: expected a factor > 1 (2: each probe twice the "
                "last), at most 100, got \"1e6\"",
                "s.yaml:16:14: search.max_tries: expected an integer from 1 to 100, got "
                "\"1000\"",
                "s.yaml:15:15: search.max_probes: expected an integer from 2 to 1000, got "
                "\"2147483647\"",
                "s.yaml:18:14: search.min_probe: expected a duration of at most 1h, got \"2h\""}));
  EXPECT_FALSE(
      load("name: c\ntarget:\n  kind: sim\n  cost: {usd_per_gpu_hour: 1e308, gpus: 1e308}\n"
           "factors: {concurrency: [4]}\nload: {num_requests: 5}\n"));
  EXPECT_EQ(heads(), (std::vector<std::string>{
                         "s.yaml:4:28: target.cost.usd_per_gpu_hour: expected a price in US "
                         "dollars > 0, at most 10000, got \"1e308\"",
                         "s.yaml:4:41: target.cost.gpus: expected a number of GPUs > 0 (the "
                         "whole fleet's), at most 1000000, got \"1e308\""}));
  // A subnormal number is refused wherever a number is read, as NaN and infinities are.
  EXPECT_FALSE(
      load(scenario("search: {factor: concurrency, low: 1, high: 8, "
                    "knee_efficiency: 4e-320}\n",
                    "")));
  EXPECT_EQ(heads().at(0),
            "s.yaml:7:65: search.knee_efficiency: expected a fraction > 0 and below 1 (0.9: a "
            "probe keeps 90% of the lightest load's throughput per unit of load), got "
            "\"4e-320\"");
}

// precision 0.001 with growth 1.001 probed 10 req/s thirty times and reported "capacity 10
// req/s": rates are probed to three significant digits, so each step rounded back to the rate
// it left. A step under 1% is refused at load; 1% itself is accepted.
TEST_F(SearchSection, AStepThatRoundsBackToTheSameRateIsRefused) {
  EXPECT_FALSE(load(scenario(std::string(kSlo) +
                             "search:\n  factor: load.request_rate\n  low: 10\n  high: 100\n"
                             "  precision: 0.001\n  growth: 1.001\n")));
  EXPECT_EQ(heads(), (std::vector<std::string>{
                         "s.yaml:14:14: search.precision: expected a precision of at least 0.01 "
                         "(1%), got \"0.001\": rates are probed to three significant digits, so "
                         "a smaller step can round back to the rate it left and probe it again",
                         "s.yaml:15:11: search.growth: expected a growth of at least 1.01, got "
                         "\"1.001\": rates are probed to three significant digits, so a smaller "
                         "step can round back to the rate it left and probe it again"}));
  EXPECT_TRUE(load(scenario(std::string(kSlo) +
                            "search:\n  factor: load.request_rate\n  low: 10\n  high: 100\n"
                            "  precision: 0.01\n  growth: 1.01\n")))
      << first_error();
  // A search of concurrency steps by whole users: it always moves.
  EXPECT_TRUE(load(scenario(std::string(kSlo) +
                                "search: {factor: concurrency, low: 1, high: 8, precision: 0.001, "
                                "growth: 1.001}\n",
                            "")))
      << first_error();
}

TEST_F(SearchSection, SloValuesAreChecked) {
  // Lines: 8 slo:, 9 on.
  EXPECT_FALSE(
      load(scenario("slo:\n  p95_ttft_ms: 0\n  p0_ttft_ms: 5\n  p101_tpot_ms: 5\n  p95_ttf_ms: 5\n"
                    "  p95_ttft: 5\n  ttft_ms: 5\n  itl_ms: 5\n  good: {tpot_ms: 50, itl_ms: 5}\n"
                    "  confidence: 0.3\n  resamples: 50\n  p99.9_e2e_ms: 1000\n")));
  EXPECT_EQ(heads(),
            (std::vector<std::string>{
                "s.yaml:9:16: slo.p95_ttft_ms: expected a threshold in ms > 0, at most "
                "604800000, got \"0\"",
                "s.yaml:10:3: slo.p0_ttft_ms: the percentile 0 is not a number in (0, 100] (p95, "
                "p99.9)",
                "s.yaml:11:3: slo.p101_tpot_ms: the percentile 101 is not a number in (0, 100] "
                "(p95, p99.9)",
                "s.yaml:12:3: slo.p95_ttf_ms: unknown metric ttf; did you mean 'ttft'?",
                "s.yaml:13:3: slo.p95_ttft: expected pNN_<metric>_ms (p95_ttft_ms: 1000: 95% of "
                "requests see TTFT <= 1000 ms)",
                "s.yaml:14:3: slo.ttft_ms: a threshold needs the share of requests that meet it: "
                "p95_ttft_ms, or good: {ttft_ms: ...} with attainment",
                "s.yaml:15:3: slo.itl_ms: a threshold needs the share of requests that meet it: "
                "p95_itl_ms",
                "s.yaml:16:31: slo.good.itl_ms: not in good: ITL is per token, not per request; "
                "write pNN_itl_ms (p95_itl_ms: 50)",
                "s.yaml:17:15: slo.confidence: expected a confidence >= 0.5, at most 0.999, got "
                "\"0.3\"",
                "s.yaml:18:14: slo.resamples: expected an integer from 100 to 100000, got "
                "\"50\""}));
}

TEST_F(SearchSection, AttainmentIsAFractionOrAPercentageAndOnlyWithGood) {
  EXPECT_FALSE(load(scenario("slo:\n  p95_ttft_ms: 1000\n  attainment: 0.9\n")));
  EXPECT_EQ(heads(), (std::vector<std::string>{
                         "s.yaml:10:15: slo.attainment: only read with good (it is the fraction "
                         "of requests that meet all of good's thresholds; a pNN_<metric>_ms key "
                         "says its own)"}));
  for (const std::string bad : {"95", "120%", "0", "most"}) {
    EXPECT_FALSE(load(scenario("slo:\n  good: {ttft_ms: 1000}\n  attainment: " + bad + "\n")));
    EXPECT_EQ(heads(), (std::vector<std::string>{
                           "s.yaml:10:15: slo.attainment: expected a fraction in (0, 1] or a "
                           "percentage such as 95%, got \"" +
                           bad + "\""}));
  }
  EXPECT_FALSE(load(scenario("slo:\n  good: {}\n")));
  EXPECT_EQ(heads(), (std::vector<std::string>{
                         "s.yaml:9:9: slo.good: give at least one of ttft_ms, tpot_ms, e2e_ms"}));
}

TEST_F(SearchSection, AnUnknownKeySuggestsTheNearest) {
  EXPECT_FALSE(
      load("name: capacity\ntarget:\n  kind: sim\n  cost: {usd_per_gpu_hour: 1, gpus: 2, gpu: 2}\n"
           "factors: {concurrency: [4]}\nload: {num_requests: 5}\n"
           "slo: {p95_ttft_ms: 1000, confidance: 0.9, latency: 5}\n"
           "search: {factor: concurrency, low: 1, high: 8, precison: 0.2}\n"));
  EXPECT_EQ(heads(),
            (std::vector<std::string>{
                "s.yaml:4:40: target.cost.gpu: unknown key; did you mean 'gpus'?",
                "s.yaml:7:26: slo.confidance: unknown key; did you mean 'confidence'?",
                "s.yaml:7:43: slo.latency: unknown key (expected one of: pNN_<metric>_ms, "
                "p95_ttft_ms, good, attainment, confidence, resamples)",
                "s.yaml:8:48: search.precison: unknown key; did you mean 'precision'?",
                "s.yaml:5:11: factors.concurrency: the search chooses concurrency's levels; "
                "remove factors.concurrency"}));
}

TEST_F(SearchSection, ACostNeedsBothPositive) {
  EXPECT_FALSE(
      load("name: c\ntarget:\n  kind: sim\n  cost: {usd_per_gpu_hour: 0}\n"
           "factors: {concurrency: [4]}\nload: {num_requests: 5}\n"));
  EXPECT_EQ(heads(),
            (std::vector<std::string>{
                "s.yaml:4:9: target.cost.gpus: required key is missing",
                "s.yaml:4:28: target.cost.usd_per_gpu_hour: expected a price in US dollars > 0, "
                "at most 10000, got \"0\""}));
  EXPECT_FALSE(load(
      "name: c\ntarget: {kind: kubeai, resource: m, replicas: 8, base_url: \"http://k/openai\", "
      "cost: {usd_per_gpu_hour: 0.8, gpus: -1}}\nfactors: {concurrency: [4]}\n"
      "load: {num_requests: 5}\n"));
  ASSERT_EQ(heads().size(), 1u);
  EXPECT_NE(heads()[0].find("s.yaml:2:"), std::string::npos) << heads()[0];
  EXPECT_NE(heads()[0].find("target.cost.gpus: expected a number of GPUs > 0 (the whole "
                            "fleet's), at most 1000000, got \"-1\""),
            std::string::npos)
      << heads()[0];
}

}  // namespace
}  // namespace kvsweep::orchestrator
