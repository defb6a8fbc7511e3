// Tests for the cell settings' reading of a scenario: a cell's levels are read over the
// loader's own document (the file is parsed once), or over the spec's own load when it was
// built in code.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/targets/target_kinds.h"

namespace kvsweep::orchestrator {
namespace {

ScenarioSpec parse_or_fail(const std::string& text) {
  std::vector<ScenarioError> errors;
  auto spec = parse_scenario(text, "s.yaml", &errors, target_kinds());
  if (!spec) ADD_FAILURE() << (errors.empty() ? "no spec" : errors.front().text);
  return spec ? *spec : ScenarioSpec{};
}

constexpr const char* kLoadLevels =
    "name: f\n"
    "target: {kind: sim}\n"
    "factors:\n"
    "  concurrency: [2]\n"
    "  load.max_tokens: [8, 16]\n"
    "load:\n"
    "  num_requests: 10\n"
    "  dataset: {kind: random, random_input_len: 32}\n";

// The resolver read the file's text a second time (YAML::Load, errors swallowed). A file the
// loader accepts parses the same both ways (the loader refuses every text where they could
// part: a second document, a parse that stops early, a key written twice), so what tells the
// two readings apart is a spec whose text is not what it holds: here the text says 99
// requests, the loader's document 10. The cells follow the document.
TEST(CellSettings, LevelsAreReadOverTheLoadersDocumentNotTheTextAgain) {
  ScenarioSpec spec = parse_or_fail(kLoadLevels);
  ASSERT_TRUE(spec.document);
  std::string other = spec.text;
  other.replace(other.find("num_requests: 10"), 16, "num_requests: 99");
  spec.text = other;
  const std::vector<CellPlan> cells = expand_plan(spec);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].load.num_requests, 10);
  EXPECT_EQ(cells[1].load.num_requests, 10);
  EXPECT_EQ(cells[1].load.max_tokens, 16);
  EXPECT_EQ(cells[1].load.dataset.random_input_len, 32);
}

// A spec built in code has no document: its load levels were read over an empty section, so a
// cell lost the spec's own num_requests and dataset (and, with no end left, failed to plan).
TEST(CellSettings, ASpecBuiltInCodeKeepsItsOwnLoadUnderLoadLevels) {
  ScenarioSpec spec;
  spec.path = "built-in-code";
  spec.target.kind = "sim";
  spec.load.num_requests = 7;
  spec.load.dataset.kind = "random";
  spec.load.dataset.random_input_len = 48;
  spec.factors.push_back(value_factor("concurrency", "concurrency", {"1"}));
  spec.factors.push_back(value_factor("load.max_tokens", "load.max_tokens", {"8", "16"}));
  const std::vector<CellPlan> cells = expand_plan(spec);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].load.max_tokens, 8);
  EXPECT_EQ(cells[1].load.max_tokens, 16);
  EXPECT_EQ(cells[1].load.num_requests, 7);
  EXPECT_EQ(cells[1].load.dataset.kind, "random");
  EXPECT_EQ(cells[1].load.dataset.random_input_len, 48);
}

// The loader's document is the file's: a dataset kind a level sets is still checked against
// what the file wrote under it, at the file's line.
TEST(CellSettings, ALevelThatMakesAWrittenKeyWrongIsStillFound) {
  std::vector<ScenarioError> errors;
  const auto spec = parse_scenario(
      "name: f\ntarget: {kind: sim}\nfactors:\n  concurrency: [2]\n"
      "  load.dataset.kind: [random, shared-prefix]\n"
      "load:\n  num_requests: 10\n  dataset: {kind: random, random_input_len: 32}\n",
      "s.yaml", &errors, target_kinds());
  EXPECT_FALSE(spec);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors.front().text.find("random_input_len"), std::string::npos) << errors.front().text;
  EXPECT_NE(errors.front().text.find("shared-prefix"), std::string::npos) << errors.front().text;
}

}  // namespace
}  // namespace kvsweep::orchestrator
