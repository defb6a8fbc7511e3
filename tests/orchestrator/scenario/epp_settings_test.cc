// Tests for epp_settings.cc: factor paths into a named EndpointPickerConfig (a scorer's weight,
// a plugin's parameter), each cell running its own configuration, mistakes located at the level.
#include "orchestrator/scenario/epp_settings.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/targets/router_admin_client.h"
#include "orchestrator/targets/target_kinds.h"
#include "sim/router/epp_config.h"

namespace kvsweep::orchestrator {
namespace {

// A scenario whose `tuned` configuration weighs the prefix scorer 3 and the queue scorer 1,
// with `factors` as given.
std::string epp_scenario(const std::string& factors) {
  return R"(name: e
epp:
  tuned:
    apiVersion: inference.networking.x-k8s.io/v1alpha1
    kind: EndpointPickerConfig
    plugins:
    - type: prefix-cache-scorer
    - type: queue-scorer
    - type: max-score-picker
    schedulingProfiles:
    - name: default
      plugins:
      - {pluginRef: prefix-cache-scorer, weight: 3}
      - {pluginRef: queue-scorer, weight: 1}
      - {pluginRef: max-score-picker}
factors:
)" + factors +
         R"(  concurrency: [2]
load: {num_requests: 10}
)";
}

std::optional<ScenarioSpec> parse_epp_scenario(const std::string& text,
                                               std::vector<std::string>* heads) {
  std::vector<ScenarioError> errors;
  auto spec = parse_scenario(text, "s.yaml", &errors, target_kinds());
  for (const auto& e : errors) heads->push_back(e.text.substr(0, e.text.find('\n')));
  return spec;
}

// The configuration the router is told to run for a cell.
std::shared_ptr<const sim::EppConfig> routed_config(const CellPlan& cell,
                                                    const ScenarioSpec& spec) {
  const auto body = nlohmann::json::parse(strategy_body(cell.treatment, spec));
  EXPECT_EQ(body["strategy"], "epp");
  std::string error;
  auto config = sim::parse_epp_config("routed", body["epp_config"].get<std::string>(), &error);
  EXPECT_NE(config, nullptr) << error;
  return config;
}

TEST(EppSettings, AScorersWeightIsAFactorAndEachLevelRunsItsOwnConfiguration) {
  std::vector<std::string> heads;
  const auto spec =
      parse_epp_scenario(epp_scenario("  strategy: [tuned]\n"
                                      "  epp.tuned.prefix-cache-scorer.weight: [0, 10]\n"),
                         &heads);
  ASSERT_TRUE(spec) << heads.at(0);
  const auto cells = expand_plan(*spec);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].arm, "tuned, weight=0");
  EXPECT_EQ(cells[1].arm, "tuned, weight=10");
  EXPECT_FALSE(cells[0].treatment == cells[1].treatment);  // each level is applied
  for (int i = 0; i < 2; ++i) {
    const auto config = routed_config(cells[i], *spec);
    ASSERT_NE(config, nullptr);
    ASSERT_EQ(config->scorers.size(), 2u);
    EXPECT_EQ(config->scorers[0].weight, i == 0 ? 0 : 10);
    EXPECT_EQ(config->scorers[1].weight, 1);  // the rest of the configuration as written
    EXPECT_EQ(config->picker_name, "max-score-picker");
  }
  // The configuration as named is unchanged: the settings are the cells'.
  EXPECT_EQ(spec->epp_config("tuned")->config->scorers[0].weight, 3);
}

TEST(EppSettings, APluginsParameterIsAFactorAndAConfigWithoutAProfileGetsTheEppsDefaultOne) {
  std::vector<std::string> heads;
  const auto spec = parse_epp_scenario(R"(name: e
epp:
  plain:
    apiVersion: inference.networking.x-k8s.io/v1alpha1
    kind: EndpointPickerConfig
    plugins:
    - type: prefix-cache-scorer
      parameters: {hashBlockSize: 64}
    - type: load-aware-scorer
factors:
  strategy: [plain]
  arm:
    small-blocks: {epp.plain.prefix-cache-scorer.hashBlockSize: 16}
    heavy-load: {epp.plain.load-aware-scorer.weight: 4, epp.plain.load-aware-scorer.threshold: 8}
  concurrency: [2]
load: {num_requests: 10}
)",
                                       &heads);
  ASSERT_TRUE(spec) << heads.at(0);
  const auto cells = expand_plan(*spec);
  ASSERT_EQ(cells.size(), 2u);
  const auto small = routed_config(cells[0], *spec);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small->scorers.at(0).hash_block_size, 16);
  EXPECT_EQ(small->scorers.at(1).weight, 1);
  const auto heavy = routed_config(cells[1], *spec);
  ASSERT_NE(heavy, nullptr);
  ASSERT_EQ(heavy->scorers.size(), 2u);
  EXPECT_EQ(heavy->scorers[0].hash_block_size, 64);
  EXPECT_EQ(heavy->scorers[0].weight, 1);  // the default profile, written out, weighs 1
  EXPECT_EQ(heavy->scorers[1].weight, 4);
  EXPECT_EQ(heavy->scorers[1].queue_threshold, 8);
}

TEST(EppSettings, MistakesAreLocatedAtTheFactorOrItsLevel) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"  strategy: [tuned]\n  epp.tunned.queue-scorer.weight: [2]\n",
       "s.yaml:18:3: factors.epp.tunned.queue-scorer.weight: no EPP configuration named "
       "\"tunned\"; did you mean 'tuned'?"},
      {"  strategy: [tuned]\n  epp.tuned.queue-scorr.weight: [2]\n",
       "s.yaml:18:3: factors.epp.tuned.queue-scorr.weight: EPP configuration tuned has no plugin "
       "queue-scorr; did you mean 'queue-scorer'?"},
      {"  strategy: [tuned]\n  epp.tuned.max-score-picker.weight: [2]\n",
       "s.yaml:18:3: factors.epp.tuned.max-score-picker.weight: plugin max-score-picker of EPP "
       "configuration tuned is a max-score-picker, not a scorer: only a scorer has a weight"},
      {"  strategy: [tuned]\n  epp.tuned.weight: [2]\n",
       "s.yaml:18:3: factors.epp.tuned.weight: expected epp.tuned.<plugin>.<weight or "
       "parameter>, e.g. epp.tuned.prefix-cache-scorer.weight"},
      {"  strategy: [tuned]\n  epp.tuned.queue-scorer.weight: [2, high]\n",
       "s.yaml:18:38: factors.epp.tuned.queue-scorer.weight: level \"high\": "
       "schedulingProfiles[0].plugins[1].weight: expected a whole number >= 0, got \"high\""},
      {"  strategy: [tuned]\n  epp.tuned.prefix-cache-scorer.hashBlocksize: [16]\n",
       "s.yaml:18:49: factors.epp.tuned.prefix-cache-scorer.hashBlocksize: level \"16\": "
       "plugins[0].parameters.hashBlocksize: unknown key; did you mean 'hashBlockSize'?"},
      {"  strategy: [least-load]\n  epp.tuned.queue-scorer.weight: [2]\n",
       "s.yaml:18:35: factors.epp.tuned.queue-scorer.weight: sets "
       "epp.tuned.queue-scorer.weight, but no strategy level runs EPP configuration tuned: it "
       "would change nothing (give tuned as a level of strategy)"},
  };
  for (const auto& [factors, expected] : cases) {
    SCOPED_TRACE(factors);
    std::vector<std::string> heads;
    EXPECT_FALSE(parse_epp_scenario(epp_scenario(factors), &heads));
    ASSERT_FALSE(heads.empty());
    EXPECT_EQ(heads[0].substr(0, expected.size()), expected) << heads[0];
  }
}

TEST(EppSettings, TheRewrittenTextKeepsEverythingElseOfTheConfiguration) {
  const std::string text = R"(apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: single-profile-handler
- type: prefix-cache-scorer
  parameters: {hashBlockSize: 64, lruCapacityPerServer: 100}
- name: q
  type: queue-scorer
)";
  const std::string rewritten = apply_epp_settings(
      text,
      {{{"c", "q", "weight"}, "7"}, {{"c", "prefix-cache-scorer", "maxPrefixBlocksToMatch"}, "9"}});
  std::string error;
  const auto config = sim::parse_epp_config("rewritten", rewritten, &error);
  ASSERT_NE(config, nullptr) << error << "\n" << rewritten;
  ASSERT_EQ(config->scorers.size(), 2u);
  EXPECT_EQ(config->scorers[0].hash_block_size, 64);
  EXPECT_EQ(config->scorers[0].lru_capacity_per_server, 100);
  EXPECT_EQ(config->scorers[0].max_prefix_blocks, 9);
  EXPECT_EQ(config->scorers[0].weight, 1);
  EXPECT_EQ(config->scorers[1].name, "q");  // by its name, not its type
  EXPECT_EQ(config->scorers[1].weight, 7);
  // The handler is not a profile entry of the profile the EPP would make.
  EXPECT_EQ(rewritten.find("pluginRef: single-profile-handler"), std::string::npos) << rewritten;
}

}  // namespace
}  // namespace kvsweep::orchestrator
