// Tests for sim/router/epp_config.cc: reading an EndpointPickerConfig as the pinned EPP does.
#include "sim/router/epp_config.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "sim/router/routing_strategy.h"
#include "sim/router/strategy_factory.h"

namespace kvsweep::sim {
namespace {

std::string errors_of(const std::string& text) {
  std::vector<YamlError> errors;
  EXPECT_FALSE(read_epp_config("epp.yaml", text, &errors).has_value());
  std::string all;
  for (const YamlError& e : errors) all += e.text + "\n";
  return all;
}

// llm-d-inference-scheduler v0.3.2's deploy/config/epp-estimate-prefix-cache-config.yaml, with
// queue and KV scorers added: what a user copies from llm-d's samples reads as written.
TEST(EppConfig, ReadsLlmdsSampleWithWeightsAndDefaults) {
  const std::string text = R"(apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: single-profile-handler
- type: decode-filter
- type: prefix-cache-scorer
  parameters:
    hashBlockSize: 32
    lruCapacityPerServer: 1000
- type: load-aware-scorer
- name: queue
  type: queue-scorer
- type: kv-cache-utilization-scorer
- type: max-score-picker
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: decode-filter
  - pluginRef: prefix-cache-scorer
    weight: 3.0
  - pluginRef: load-aware-scorer
    weight: 1
  - pluginRef: queue
  - pluginRef: kv-cache-utilization-scorer
    weight: 0
  - pluginRef: max-score-picker
)";
  std::vector<YamlError> errors;
  const auto config = read_epp_config("epp.yaml", text, &errors);
  ASSERT_TRUE(config.has_value()) << (errors.empty() ? "" : errors.front().text);
  EXPECT_EQ(config->profile, "default");
  ASSERT_EQ(config->scorers.size(), 4u);
  EXPECT_EQ(config->scorers[0].kind, EppScorerKind::kPrefixCache);
  EXPECT_EQ(config->scorers[0].weight, 3);
  EXPECT_EQ(config->scorers[0].hash_block_size, 32);
  EXPECT_EQ(config->scorers[0].max_prefix_blocks, 256);  // the release's default
  EXPECT_EQ(config->scorers[0].lru_capacity_per_server, 1000);
  EXPECT_EQ(config->scorers[1].kind, EppScorerKind::kLoadAware);
  EXPECT_EQ(config->scorers[1].queue_threshold, 128);
  EXPECT_EQ(config->scorers[2].name, "queue");
  EXPECT_EQ(config->scorers[2].weight, 1);  // no weight: the loader's default, 1
  EXPECT_EQ(config->scorers[3].weight, 0);
  EXPECT_EQ(config->picker, EppPickerKind::kMaxScore);
  EXPECT_EQ(config->filters, std::vector<std::string>{"decode-filter"});
}

// Without schedulingProfiles the loader makes "default" of every scorer, weight 1, and adds a
// max-score picker.
TEST(EppConfig, NoProfileMeansADefaultOfEveryScorerAndAMaxScorePicker) {
  std::vector<YamlError> errors;
  const auto config =
      read_epp_config("epp.yaml", R"(apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: queue-scorer
- type: kv-cache-utilization-scorer
)",
                      &errors);
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(config->profile, "default");
  ASSERT_EQ(config->scorers.size(), 2u);
  EXPECT_EQ(config->scorers[0].weight, 1);
  EXPECT_EQ(config->scorers[1].weight, 1);
  EXPECT_EQ(config->picker_name, "max-score-picker");
}

// Found by fuzz_scenario_loader: a profile without `plugins` made the reader ask a missing
// key's (invalid) node for its type, and YAML::InvalidNode ended the whole process.
TEST(EppConfig, AProfileWithoutPluginsIsReadNotThrown) {
  std::vector<YamlError> errors;
  std::optional<EppConfig> config;
  EXPECT_NO_THROW(config = read_epp_config("epp.yaml",
                                           R"(apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: queue-scorer
schedulingProfiles:
- name: default
)",
                                           &errors));
  ASSERT_TRUE(config.has_value()) << (errors.empty() ? "" : errors.front().text);
  EXPECT_TRUE(config->scorers.empty());  // the profile runs none of the plugins
  EXPECT_EQ(config->picker_name, "max-score-picker");
}

TEST(EppConfig, UnknownPluginTypeGetsTheEppsMessageAndTheKnownTypes) {
  const std::string all = errors_of(R"(apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: prefix-cache
)");
  EXPECT_EQ(all.substr(0, all.find('\n')),
            "epp.yaml:4:9: plugins[0].type: plugin type 'prefix-cache' is not found in registry; "
            "did you mean 'prefix-cache-scorer'? (the EPP of llm-d-inference-scheduler v0.3.2 "
            "knows: prefix-cache-scorer, max-score-picker, random-picker, weighted-random-picker, "
            "single-profile-handler, kv-cache-utilization-scorer, queue-scorer, "
            "lora-affinity-scorer, by-label, by-label-selector, decode-filter, prefill-filter, "
            "prefill-header-handler, pd-profile-handler, precise-prefix-cache-scorer, "
            "load-aware-scorer, session-affinity-scorer, active-request-scorer)");
  EXPECT_NE(all.find("- type: prefix-cache\n        ^"), std::string::npos) << all;
}

// A type the EPP has and kvsweep does not model (llm-d's precise prefix scorer, fed by vLLM's
// KV events) is the real EPP's to run: the configuration reads, for kind llmd to write into the
// ConfigMap, and names that part; kvsweep's router refuses it, saying where and what it models.
TEST(EppConfig, ARealTypeKvsweepDoesNotModelIsReadForTheRealEppAndRefusedForItsRouter) {
  std::vector<YamlError> errors;
  const auto config =
      read_epp_config("epp.yaml", R"(apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: precise-prefix-cache-scorer
  parameters: {kvEventsConfig: {zmqEndpoint: "tcp://*:5557"}}
- type: queue-scorer
schedulingProfiles:
- name: default
  plugins:
  - {pluginRef: precise-prefix-cache-scorer, weight: 3}
  - {pluginRef: queue-scorer}
)",
                      &errors);
  ASSERT_TRUE(config.has_value()) << (errors.empty() ? "" : errors.front().text);
  EXPECT_EQ(config->unmodelled,
            (std::vector<std::string>{
                "epp.yaml:4:9: plugins[0].type: plugin type 'precise-prefix-cache-scorer'"}));
  ASSERT_EQ(config->scorers.size(), 1u);  // what is modelled: the queue scorer
  EXPECT_EQ(config->scorers[0].kind, EppScorerKind::kQueue);
  EXPECT_EQ(epp_unmodelled_error(*config),
            "not modelled by kvsweep's router: epp.yaml:4:9: plugins[0].type: plugin type "
            "'precise-prefix-cache-scorer' (it models one scheduling profile of: "
            "prefix-cache-scorer, queue-scorer, kv-cache-utilization-scorer, load-aware-scorer, "
            "max-score-picker, random-picker, single-profile-handler, decode-filter); only the "
            "real EPP (kind llmd) runs this configuration");
  // The router builds no picker of it.
  StrategyParams params;
  params.epp = std::make_shared<const EppConfig>(*config);
  EXPECT_EQ(make_strategy("epp", 2, 1, params), nullptr);
  // A modelled configuration has nothing to say.
  const auto modelled =
      read_epp_config("epp.yaml", R"(apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: queue-scorer
)",
                      &errors);
  ASSERT_TRUE(modelled.has_value());
  EXPECT_EQ(epp_unmodelled_error(*modelled), "");
}

TEST(EppConfig, EveryMistakeIsLocated) {
  const std::string all = errors_of(R"(apiVersion: inference.networking.x-k8s.io/v1alpha2
kind: EndpointPickerConfig
plugins:
- type: prefix-cache-scorer
  parameters:
    hashBlocksize: 16
- type: queue-scorer
  name: prefix-cache-scorer
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: nowhere
    weight: 1.5
)");
  EXPECT_NE(all.find("epp.yaml:1:13: apiVersion: expected "
                     "inference.networking.x-k8s.io/v1alpha1, got "
                     "\"inference.networking.x-k8s.io/v1alpha2\""),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("epp.yaml:6:5: plugins[0].parameters.hashBlocksize: unknown key; did you "
                     "mean 'hashBlockSize'?"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("plugins[1]: plugin name 'prefix-cache-scorer' used more than once"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("epp.yaml:13:13: schedulingProfiles[0].plugins[0].weight: expected a whole "
                     "number >= 0, got \"1.5\""),
            std::string::npos)
      << all;
}

TEST(EppConfig, AnUndefinedReferenceIsRefusedAndASecondProfileIsTheRealEpps) {
  const std::string undefined = errors_of(R"(apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: queue-scorer
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: nowhere
)");
  EXPECT_NE(undefined.find("epp.yaml:8:5: schedulingProfiles: nowhere is a reference to an "
                           "undefined Plugin"),
            std::string::npos)
      << undefined;
  // Prefill/decode disaggregation: two profiles and llm-d's handler choosing between them.
  std::vector<YamlError> errors;
  const auto two = read_epp_config("epp.yaml", R"(apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: pd-profile-handler
- type: queue-scorer
schedulingProfiles:
- name: prefill
  plugins: [{pluginRef: queue-scorer}]
- name: decode
  plugins: [{pluginRef: queue-scorer}]
)",
                                   &errors);
  ASSERT_TRUE(two.has_value()) << (errors.empty() ? "" : errors.front().text);
  EXPECT_EQ(two->unmodelled,
            (std::vector<std::string>{
                "epp.yaml:4:9: plugins[0].type: plugin type 'pd-profile-handler'",
                "epp.yaml:9:3: schedulingProfiles: 2 scheduling profiles (kvsweep models the one "
                "a single-profile-handler runs, not a handler such as pd-profile-handler "
                "choosing among them)"}));
}

TEST(EppConfig, ParseJoinsTheErrorsForAnAdminAnswer) {
  std::string error;
  EXPECT_EQ(parse_epp_config("epp_config", "kind: EndpointPickerConfig\n", &error), nullptr);
  EXPECT_NE(error.find("epp_config"), std::string::npos) << error;
  EXPECT_NE(error.find("apiVersion"), std::string::npos) << error;
}

}  // namespace
}  // namespace kvsweep::sim
