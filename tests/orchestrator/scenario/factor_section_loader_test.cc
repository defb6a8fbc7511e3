// Tests for the factors section: a factor names any field by its path, each level is checked by
// that field's own reader (located errors, "did you mean"), named arms carry override mappings,
// and the plan carries every cell's settings typed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/targets/target_kinds.h"

namespace kvsweep::orchestrator {
namespace {

std::optional<ScenarioSpec> parse(const std::string& text, std::vector<std::string>* heads) {
  std::vector<ScenarioError> errors;
  auto spec = parse_scenario(text, "s.yaml", &errors, target_kinds());
  for (const auto& e : errors) heads->push_back(e.text.substr(0, e.text.find('\n')));
  return spec;
}

// A sim sweep whose factors section is `factors` (indented by two spaces per line).
std::string sweep(const std::string& factors, const std::string& load = "") {
  return "name: f\ntarget: {kind: sim}\nfactors:\n  concurrency: [2]\n" + factors +
         "load:\n  num_requests: 10\n" + load;
}

TEST(FactorPaths, LoadAndDatasetFieldsAreFactorsWithTypedLevels) {
  std::vector<std::string> heads;
  const auto spec = parse(sweep("  load.request_rate: [200, 800]\n"
                                "  load.dataset.prefix_tokens: [512, 1024]\n",
                                "  dataset: {kind: shared-prefix}\n"),
                          &heads);
  ASSERT_TRUE(spec) << heads.at(0);
  const auto cells = expand_plan(*spec);
  ASSERT_EQ(cells.size(), 4u);
  EXPECT_DOUBLE_EQ(cells[0].load.request_rate, 200);
  EXPECT_EQ(cells[0].load.dataset.prefix_tokens, 512);
  EXPECT_EQ(cells[1].load.dataset.prefix_tokens, 1024);
  EXPECT_DOUBLE_EQ(cells[3].load.request_rate, 800);
  EXPECT_EQ(cells[3].arm, "request_rate=800, prefix_tokens=1024");
  EXPECT_EQ(cells[1].workload, 1);  // another prefix length is another workload
  EXPECT_EQ(cells[2].workload, 0);
}

TEST(FactorPaths, AnUnknownPathSaysWhereAndWhatItMeant) {
  std::vector<std::string> heads;
  EXPECT_FALSE(parse(sweep("  load.request_rat: [200]\n  target.stratgy: [random]\n"), &heads));
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_EQ(heads[0],
            "s.yaml:5:3: factors.load.request_rat: no field load.request_rat; did you mean "
            "'request_rate'?");
  EXPECT_EQ(heads[1],
            "s.yaml:6:3: factors.target.stratgy: target kind sim applies no knob stratgy; did you "
            "mean 'strategy'?");
}

// A factor without a name was silently dropped, and reading it added a key to the mapping
// being iterated (a heap-buffer-overflow under ASan, found by make fuzz).
TEST(FactorPaths, AFactorWithoutANameIsALocatedError) {
  std::vector<std::string> heads;
  EXPECT_FALSE(parse(sweep("  : [random]\n  [a, b]: [1]\n"), &heads));
  EXPECT_EQ(heads, (std::vector<std::string>{
                       "s.yaml:5:3: factors: expected a factor's name before ':', got nothing",
                       "s.yaml:6:3: factors: expected a factor's name before ':', got a list"}));
}

TEST(FactorPaths, ALevelOfTheWrongTypeGetsTheFieldsOwnError) {
  std::vector<std::string> heads;
  EXPECT_FALSE(parse(sweep("  load.dataset.prefix_tokens: [512, lots]\n  load.turns: [sideways]\n",
                           "  dataset: {kind: shared-prefix}\n"),
                     &heads));
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_EQ(heads[0],
            "s.yaml:5:37: factors.load.dataset.prefix_tokens: level \"lots\": expected an integer "
            "from 0 to 1000000, got \"lots\"");
  EXPECT_EQ(heads[1],
            "s.yaml:6:16: factors.load.turns: level \"sideways\": expected one of independent, "
            "sequential, got \"sideways\"");
}

TEST(FactorPaths, ALevelThatMakesAnotherFieldWrongNamesTheLevel) {
  std::vector<std::string> heads;
  // prefix_tokens means nothing to the default dataset kind (synthetic-multiturn).
  EXPECT_FALSE(parse(sweep("  load.dataset.prefix_tokens: [512]\n"), &heads));
  ASSERT_FALSE(heads.empty());
  EXPECT_NE(heads[0].find("not used by dataset kind synthetic-multiturn"), std::string::npos)
      << heads[0];
}

TEST(NamedArms, EachArmSetsItsOwnFieldsAndReportsShowTheLabel) {
  std::vector<std::string> heads;
  const auto spec = parse(R"(name: arms
model: llama
target:
  kind: kubeai
  resource: llama
  replicas: 8
  base_url: http://kubeai/openai
factors:
  arm:
    service: {target.base_url: "http://svc:80/v1/", target.sim.strategy: random}
    hash: {target.strategy: PrefixHash, load.max_tokens: 32}
  concurrency: [4]
load:
  num_requests: 10
report:
  baseline: service
)",
                          &heads);
  ASSERT_TRUE(spec) << heads.at(0);
  EXPECT_EQ(arm_labels(*spec), (std::vector<std::string>{"service", "hash"}));
  const auto cells = expand_plan(*spec);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].treatment.base_url, "http://svc:80");  // the driver's normal form
  EXPECT_TRUE(cells[0].treatment.levels.empty());           // nothing applied for it
  EXPECT_EQ(cells[0].load.max_tokens, 64);
  EXPECT_EQ(cells[1].treatment.levels,
            (std::vector<std::pair<std::string, std::string>>{{"strategy", "PrefixHash"}}));
  EXPECT_EQ(cells[1].load.max_tokens, 32);
  // The rehearsal applies the stand-in's knob in place of the arm's own server.
  const auto rehearsal = expand_plan(*spec, "sim");
  EXPECT_EQ(rehearsal[0].treatment.base_url, "");
  EXPECT_EQ(rehearsal[0].treatment.levels,
            (std::vector<std::pair<std::string, std::string>>{{"strategy", "random"}}));
}

TEST(NamedArms, AnArmsBadFieldOrValueIsLocatedInsideIt) {
  std::vector<std::string> heads;
  EXPECT_FALSE(
      parse(sweep("  arm:\n    a: {load.max_tokns: 3}\n    b: {load.max_tokens: none}\n"), &heads));
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_EQ(heads[0],
            "s.yaml:6:9: factors.arm.a.load.max_tokns: no field load.max_tokns; did you mean "
            "'max_tokens'?");
  EXPECT_NE(heads[1].find("s.yaml:7:"), std::string::npos) << heads[1];
  EXPECT_NE(heads[1].find("level \"b\""), std::string::npos) << heads[1];
}

TEST(NamedArms, ConcurrencyLevelsCarryTheirOwnRate) {
  std::vector<std::string> heads;
  const auto spec = parse(
      "name: f\ntarget: {kind: sim}\nfactors:\n  concurrency:\n"
      "    800: {load.request_rate: 800}\n    1600: {load.request_rate: 200}\n"
      "load:\n  num_requests: 10\n",
      &heads);
  ASSERT_TRUE(spec) << heads.at(0);
  const auto cells = expand_plan(*spec);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].concurrency, 800);
  EXPECT_DOUBLE_EQ(cells[0].load.request_rate, 800);
  EXPECT_EQ(cells[1].concurrency, 1600);
  EXPECT_DOUBLE_EQ(cells[1].load.request_rate, 200);
}

TEST(TurnOrder, IndependentByDefaultSequentialWithThinkTime) {
  std::vector<std::string> heads;
  const auto plain = parse(sweep("", "  request_rate: 10\n"), &heads);
  ASSERT_TRUE(plain);
  EXPECT_EQ(expand_plan(*plain)[0].load.turns, driver::LoadOptions::Turns::kIndependent);
  const auto seq =
      parse(sweep("", "  request_rate: 10\n  turns: sequential\n  think_time: 2s\n"), &heads);
  ASSERT_TRUE(seq) << heads.at(0);
  EXPECT_EQ(expand_plan(*seq)[0].load.turns, driver::LoadOptions::Turns::kSequential);
  EXPECT_DOUBLE_EQ(expand_plan(*seq)[0].load.think_time_s, 2);
}

TEST(WarmPasses, OnlyWithAWarmCache) {
  std::vector<std::string> heads;
  const auto warm = parse(sweep("", "  cache: warm\n  warm_passes: 2\n"), &heads);
  ASSERT_TRUE(warm) << heads.at(0);
  EXPECT_EQ(expand_plan(*warm)[0].load.warm_passes, 2);
  EXPECT_FALSE(parse(sweep("", "  cache: cold\n  warm_passes: 2\n"), &heads));
  ASSERT_FALSE(heads.empty());
  EXPECT_NE(heads.back().find("load.warm_passes: only read with cache: warm"), std::string::npos)
      << heads.back();
}

}  // namespace
}  // namespace kvsweep::orchestrator
