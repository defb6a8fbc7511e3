// Tests for epp_section_loader.cc: EndpointPickerConfigs named in a scenario (inline or a file,
// or a `{epp: FILE}` level) and used by name as strategy levels, with located errors.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/targets/router_admin_client.h"
#include "orchestrator/targets/target_kinds.h"
#include "sim/router/epp_config.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::orchestrator {
namespace {

constexpr const char* kQueueOnly = R"(apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: queue-scorer
)";

std::optional<ScenarioSpec> parse(const std::string& path, const std::string& text,
                                  std::vector<std::string>* heads) {
  std::vector<ScenarioError> errors;
  auto spec = parse_scenario(text, path, &errors, target_kinds());
  for (const auto& e : errors) heads->push_back(e.text.substr(0, e.text.find('\n')));
  return spec;
}

TEST(EppSection, AnInlineConfigIsAStrategyLevelByItsName) {
  std::vector<std::string> heads;
  const auto spec = parse("s.yaml", R"(name: e
epp:
  prefix-heavy:
    apiVersion: inference.networking.x-k8s.io/v1alpha1
    kind: EndpointPickerConfig
    plugins:
    - type: prefix-cache-scorer
    - type: queue-scorer
    schedulingProfiles:
    - name: default
      plugins:
      - {pluginRef: prefix-cache-scorer, weight: 5}
      - {pluginRef: queue-scorer, weight: 1}
factors:
  strategy: [least-load, prefix-heavy]
  concurrency: [2]
load: {num_requests: 10}
)",
                          &heads);
  ASSERT_TRUE(spec) << heads.at(0);
  const EppConfigSpec* epp = spec->epp_config("prefix-heavy");
  ASSERT_NE(epp, nullptr);
  ASSERT_EQ(epp->config->scorers.size(), 2u);
  EXPECT_EQ(epp->config->scorers[0].weight, 5);
  const auto cells = expand_plan(*spec);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[1].arm, "prefix-heavy");  // the name, as any strategy level
  // What the router is told for it: the EPP with the config as text.
  const auto body = nlohmann::json::parse(strategy_body(cells[1].treatment, *spec));
  EXPECT_EQ(body["strategy"], "epp");
  std::string error;
  EXPECT_NE(sim::parse_epp_config("again", body["epp_config"].get<std::string>(), &error), nullptr)
      << error;
  EXPECT_EQ(strategy_body(cells[0].treatment, *spec), R"({"strategy":"least-load"})");
}

TEST(EppSection, FilesAreReadBesideTheScenarioAndAnEppLevelIsNamedAfterItsFile) {
  testing::TempDir dir;
  std::ofstream(dir.path() / "queue-only.yaml") << kQueueOnly;
  std::ofstream(dir.path() / "load-aware.yaml")
      << "apiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\n"
         "plugins: [{type: load-aware-scorer, parameters: {threshold: 16}}]\n";
  std::vector<std::string> heads;
  const auto spec = parse((dir.path() / "s.yaml").string(), R"(name: e
epp:
  queue: queue-only.yaml
factors:
  strategy: [queue, {epp: load-aware.yaml}]
  concurrency: [2]
load: {num_requests: 10}
)",
                          &heads);
  ASSERT_TRUE(spec) << heads.at(0);
  ASSERT_NE(spec->epp_config("queue"), nullptr);
  ASSERT_NE(spec->epp_config("load-aware"), nullptr);
  EXPECT_EQ(spec->epp_config("load-aware")->config->scorers.at(0).queue_threshold, 16);
  EXPECT_EQ(spec->epp_config("queue")->config->text, kQueueOnly);  // the file as written
  EXPECT_EQ(spec->factor("strategy")->labels(), (std::vector<std::string>{"queue", "load-aware"}));
}

TEST(EppSection, MistakesAreLocatedInTheScenarioOrInTheConfigFile) {
  testing::TempDir dir;
  std::ofstream(dir.path() / "broken.yaml")
      << "apiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\n"
         "plugins:\n- type: max-score\n";
  const std::string path = (dir.path() / "s.yaml").string();
  std::vector<std::string> heads;
  EXPECT_FALSE(parse(path, R"(name: e
epp:
  broken: broken.yaml
  missing: nowhere.yaml
  least-load: broken.yaml
  inline:
    apiVersion: inference.networking.x-k8s.io/v1alpha1
    kind: EndpointPickerConfig
    plugins: [{type: queue-scorer, weight: 2}]
factors:
  strategy: [inlne]
  concurrency: [2]
load: {num_requests: 10}
)",
                     &heads));
  const std::string broken = (dir.path() / "broken.yaml").string();
  ASSERT_GE(heads.size(), 5u);
  EXPECT_EQ(heads[0], broken +
                          ":4:9: plugins[0].type: plugin type 'max-score' is not found in "
                          "registry; did you mean 'max-score-picker'? (the EPP of "
                          "llm-d-inference-scheduler v0.3.2 knows: prefix-cache-scorer, "
                          "max-score-picker, random-picker, weighted-random-picker, "
                          "single-profile-handler, kv-cache-utilization-scorer, queue-scorer, "
                          "lora-affinity-scorer, by-label, by-label-selector, decode-filter, "
                          "prefill-filter, prefill-header-handler, pd-profile-handler, "
                          "precise-prefix-cache-scorer, load-aware-scorer, "
                          "session-affinity-scorer, active-request-scorer)");
  EXPECT_EQ(heads[1].rfind(path + ":4:12: epp.missing: ", 0), 0u) << heads[1];
  EXPECT_EQ(heads[2].rfind(broken + ":4:9: plugins[0].type", 0), 0u) << heads[2];
  EXPECT_EQ(heads[3], path +
                          ":9:36: epp.inline.plugins[0].weight: unknown key (expected one "
                          "of: name, type, parameters)");
  // A configuration with errors is no level: the strategy is unknown, and said so.
  EXPECT_EQ(
      heads[4].rfind(path + ":11:14: factors.strategy: level \"inlne\": unknown strategy (", 0), 0u)
      << heads[4];
  EXPECT_NE(heads[4].find("; or an EPP configuration named under epp:, or {epp: FILE})"),
            std::string::npos)
      << heads[4];
}

TEST(EppSection, AnUnknownLevelIsToldTheNearestConfigurationName) {
  testing::TempDir dir;
  std::ofstream(dir.path() / "q.yaml") << kQueueOnly;
  std::vector<std::string> heads;
  EXPECT_FALSE(parse((dir.path() / "s.yaml").string(), R"(name: e
epp:
  queue-heavy: q.yaml
factors:
  strategy: [queue-heavi]
  concurrency: [2]
load: {num_requests: 10}
)",
                     &heads));
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_EQ(heads[0], (dir.path() / "s.yaml").string() +
                          ":5:14: factors.strategy: level \"queue-heavi\": unknown strategy; did "
                          "you mean 'queue-heavy'?");
}

TEST(EppSection, AConfigMayNotTakeAStrategysName) {
  testing::TempDir dir;
  std::ofstream(dir.path() / "q.yaml") << kQueueOnly;
  std::vector<std::string> heads;
  EXPECT_FALSE(parse((dir.path() / "s.yaml").string(), R"(name: e
epp:
  least-load: q.yaml
factors:
  strategy: [least-load]
  concurrency: [2]
load: {num_requests: 10}
)",
                     &heads));
  ASSERT_FALSE(heads.empty());
  EXPECT_EQ(heads[0], (dir.path() / "s.yaml").string() +
                          ":3:3: epp.least-load: \"least-load\" is a strategy's own name; name "
                          "the EPP configuration otherwise");
}

}  // namespace
}  // namespace kvsweep::orchestrator
