// Tests for orchestrator/scenario/scenario_loader.cc and plan.cc: every field read, errors
// located and pinned whole, the plan's order and keys.
#include "orchestrator/scenario/scenario_loader.h"

#include <gtest/gtest.h>

#include <fstream>

#include "orchestrator/scenario/cell_load_options.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/targets/target_kinds.h"

namespace kvsweep::orchestrator {
namespace {

constexpr const char* kValid = R"(name: tiny
description: two strategies, two levels
target:
  kind: sim
  replicas: 2
  profile: demo
model: sim-llama
seed: 7
factors:
  strategy: [random, prefix-hash]
  concurrency: [2, 8]
load:
  dataset:
    kind: synthetic-multiturn
    conversations: 8
    turns: 3
    system_prompt_words: 50
    user_words: 10
    assistant_words: 12
  max_tokens: 4
  num_requests: 20
  duration: 1m
  warmup: {requests: 3}
  timeout: 30s
report:
  baseline: random
)";

std::vector<std::string> error_texts(const std::string& text) {
  std::vector<ScenarioError> errors;
  EXPECT_FALSE(parse_scenario(text, "s.yaml", &errors, target_kinds()).has_value());
  std::vector<std::string> texts;
  for (const auto& e : errors) texts.push_back(e.text);
  return texts;
}

TEST(ScenarioLoader, ReadsEveryField) {
  std::vector<ScenarioError> errors;
  const auto spec = parse_scenario(kValid, "s.yaml", &errors, target_kinds());
  ASSERT_TRUE(spec.has_value()) << (errors.empty() ? "" : errors[0].text);
  EXPECT_EQ(spec->name, "tiny");
  EXPECT_EQ(spec->target.kind, "sim");
  EXPECT_EQ(spec->target.sim.replicas, 2);
  EXPECT_EQ(spec->target.sim.profile, "demo");
  EXPECT_EQ(spec->model, "sim-llama");
  EXPECT_EQ(spec->seed, 7u);
  ASSERT_EQ(spec->factors.size(), 2u);
  EXPECT_EQ(spec->factors[0].name, "strategy");
  EXPECT_EQ(spec->factors[0].labels(), (std::vector<std::string>{"random", "prefix-hash"}));
  EXPECT_EQ(spec->factors[0].phase, FactorPhase::kRun);  // the sim router switches live
  EXPECT_EQ(spec->factor("concurrency")->labels(), (std::vector<std::string>{"2", "8"}));
  EXPECT_EQ(spec->load.cache, CachePolicy::kCold);
  EXPECT_EQ(spec->load.dataset.conversations, 8);
  EXPECT_DOUBLE_EQ(spec->load.dataset.assistant_words.mean, 12);
  EXPECT_EQ(spec->load.dataset.kind, "synthetic-multiturn");
  EXPECT_EQ(spec->load.max_tokens, 4);
  EXPECT_EQ(spec->load.num_requests, 20);
  EXPECT_DOUBLE_EQ(spec->load.duration_s, 60);
  EXPECT_EQ(spec->load.warmup_requests, 3);
  EXPECT_DOUBLE_EQ(spec->load.timeout_s, 30);
  EXPECT_EQ(spec->baseline, "random");
  EXPECT_EQ(spec->marks.at("load.max_tokens").line, 20);
  EXPECT_EQ(spec->marks.at("load.max_tokens").column, 15);
}

TEST(ScenarioLoader, UnknownKeySuggestsNearest) {
  std::string text = kValid;
  text.replace(text.find("  concurrency: [2, 8]"), 21, "  concurency: [2, 8]");
  const auto errors = error_texts(text);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0],
            "s.yaml:10:3: factors.concurrency: required key is missing\n"
            "  strategy: [random, prefix-hash]\n"
            "  ^");
  EXPECT_EQ(errors[1],
            "s.yaml:11:3: factors.concurency: unknown key; did you mean 'concurrency'?\n"
            "  concurency: [2, 8]\n"
            "  ^");
}

TEST(ScenarioLoader, WrongTypeNamesFileLineColumnAndValue) {
  std::string text = kValid;
  text.replace(text.find("max_tokens: 4"), 13, "max_tokens: many");
  const auto errors = error_texts(text);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "s.yaml:20:15: load.max_tokens: expected an integer from 1 to 1000000, got \"many\"\n"
            "  max_tokens: many\n"
            "              ^");
}

TEST(ScenarioLoader, CollectsEveryErrorInOnePass) {
  std::string text = kValid;
  text.replace(text.find("replicas: 2"), 11, "replicas: 0");
  text.replace(text.find("[random, prefix-hash]"), 21, "[random, prefix-hsah]");
  text.replace(text.find("duration: 1m"), 12, "duration: soon");
  const auto errors = error_texts(text);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0],
            "s.yaml:5:13: target.replicas: expected an integer from 1 to 256, got \"0\"\n"
            "  replicas: 0\n"
            "            ^");
  EXPECT_EQ(errors[1],
            "s.yaml:10:22: factors.strategy: level \"prefix-hsah\": unknown strategy; did you "
            "mean 'prefix-hash'?\n"
            "  strategy: [random, prefix-hsah]\n"
            "                     ^");
  EXPECT_EQ(errors[2],
            "s.yaml:22:13: load.duration: expected a duration > 0 such as 90s, 5m, 250ms or 30, "
            "got \"soon\"\n"
            "  duration: soon\n"
            "            ^");
}

TEST(ScenarioLoader, BaselineMustBeAStrategyOfTheSweep) {
  std::string text = kValid;
  text.replace(text.find("baseline: random"), 16, "baseline: least-load");
  const auto errors = error_texts(text);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "s.yaml:26:13: report.baseline: baseline \"least-load\" is not one of the arms "
            "(random, prefix-hash)\n"
            "  baseline: least-load\n"
            "            ^");
}

TEST(ScenarioLoader, InvalidYamlIsLocated) {
  const auto errors = error_texts("name: x\nfactors: [a, b\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("s.yaml:3:1: invalid YAML: ", 0), 0u) << errors[0];
}

TEST(ScenarioLoader, ACellNeedsAnEnd) {
  std::string text = kValid;
  text.replace(text.find("  num_requests: 20\n"), 19, "");
  text.replace(text.find("  duration: 1m\n"), 15, "");
  const auto errors = error_texts(text);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("load: give num_requests, duration or both"), std::string::npos);
}

// A minimal scenario around a given load block.
std::string with_load(const std::string& load_block) {
  return "name: l\nfactors: {strategy: [random], concurrency: [2]}\nload:\n" + load_block;
}

TEST(ScenarioLoader, UnreadableFileIsNamed) {
  std::vector<ScenarioError> errors;
  EXPECT_FALSE(load_scenario_file("/nonexistent/x.yaml", &errors, target_kinds()).has_value());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].text,
            "/nonexistent/x.yaml: cannot read the scenario file: No such file or directory");
}

// Issue 15 item 7: devices and FIFOs are one clear error, never read forever.
TEST(ScenarioLoader, OnlyARegularFileIsAScenario) {
  for (const std::string path : {"/dev/urandom", "/dev/zero"}) {
    std::vector<ScenarioError> errors;
    EXPECT_FALSE(load_scenario_file(path, &errors, target_kinds()).has_value());
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].text,
              path + ": cannot read the scenario file: not a regular file (a character device)");
  }
}

// Issue 15 item 7: a size a typo makes huge is refused where it is written.
TEST(ScenarioLoader, SizesBeyondTheirLimitsAreLocatedErrors) {
  std::string text = kValid;
  text.replace(text.find("conversations: 8"), 16, "conversations: 2000000000");
  text.replace(text.find("system_prompt_words: 50"), 23, "system_prompt_words: 2000000000");
  text.replace(text.find("num_requests: 20"), 16, "num_requests: 2000000000");
  const auto errors = error_texts(text);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].rfind("s.yaml:15:20: load.dataset.conversations: expected an integer "
                            "from 1 to 1000000, got \"2000000000\"",
                            0),
            0u)
      << errors[0];
  EXPECT_EQ(errors[1].rfind("s.yaml:17:26: load.dataset.system_prompt_words: expected an "
                            "integer from 0 to 1000000, got \"2000000000\"",
                            0),
            0u)
      << errors[1];
  EXPECT_EQ(errors[2].rfind("s.yaml:21:17: load.num_requests: expected an integer from 1 to "
                            "1000000, got \"2000000000\"",
                            0),
            0u)
      << errors[2];
}

TEST(ScenarioLoader, SizesWithinLimitsThatMakeTooMuchTextAreRefusedTogether) {
  const auto errors = error_texts(
      with_load("  dataset: {kind: synthetic-multiturn, conversations: 1000000, turns: 100,\n"
                "            user_words: 1000, assistant_words: 1000}\n"
                "  num_requests: 5\n"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("s.yaml:4:12: load.dataset: these sizes make about "), std::string::npos)
      << errors[0];
  EXPECT_NE(errors[0].find("more than the 1.0 GiB a dataset may hold"), std::string::npos)
      << errors[0];
}

TEST(ScenarioLoader, ALengthWithoutAMaxIsBoundedByItsSpread) {
  const auto errors = error_texts(
      with_load("  dataset: {kind: synthetic-multiturn, user_words: {mean: 100, stddev: 400000}}\n"
                "  num_requests: 5\n"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("load.dataset.user_words.stddev: with no max, draws reach about "
                           "2400100; give a max of at most 1000000"),
            std::string::npos)
      << errors[0];
}

TEST(ScenarioLoader, ADatasetPathMustBeARegularFile) {
  std::vector<ScenarioError> errors;
  const std::string text = with_load(
      "  dataset: {kind: jsonl, path: /dev/zero}\n"
      "  num_requests: 5\n");
  EXPECT_FALSE(parse_scenario(text, "s.yaml", &errors, target_kinds()).has_value());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].field, "load.dataset.path");
  EXPECT_EQ(errors[0].line, 4);
  EXPECT_EQ(errors[0].message, "/dev/zero: not a regular file (a character device)");
}

TEST(ScenarioLoader, ASweepOfTooManyCellsIsRefused) {
  const auto errors = error_texts(
      "name: l\nfactors:\n  strategy: [random, least-load]\n"
      "  concurrency: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n  repeats: 1000\n"
      "load:\n  num_requests: 5\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("s.yaml:3:3: factors: 2 strategy x 10 concurrency x 1000 repeats "
                           "make 20000 cells, more than the 10000 a sweep may have"),
            std::string::npos)
      << errors[0];
}

TEST(ScenarioLoader, DatasetKindTypoSuggestsTheKnownKind) {
  const auto errors =
      error_texts(with_load("  dataset: {kind: sharegtp, path: x.json}\n"
                            "  num_requests: 5\n"));
  ASSERT_GE(errors.size(), 1u);
  EXPECT_NE(errors[0].find("s.yaml:4:19: load.dataset.kind: expected one of synthetic-multiturn"),
            std::string::npos)
      << errors[0];
  EXPECT_NE(errors[0].find("did you mean 'sharegpt'?"), std::string::npos) << errors[0];
}

TEST(ScenarioLoader, DatasetKeyOfAnotherKindIsAnError) {
  const auto errors =
      error_texts(with_load("  dataset: {kind: synthetic-multiturn, block_size: 512}\n"
                            "  num_requests: 5\n"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("load.dataset.block_size: not used by dataset kind "
                           "synthetic-multiturn (used by: mooncake)"),
            std::string::npos)
      << errors[0];
}

TEST(ScenarioLoader, FileDatasetsNeedAnExistingPathRelativeToTheScenario) {
  std::vector<ScenarioError> errors;
  const std::string text = with_load(
      "  dataset: {kind: jsonl, path: missing.jsonl}\n"
      "  num_requests: 5\n");
  EXPECT_FALSE(parse_scenario(text, "scenarios/s.yaml", &errors, target_kinds()).has_value());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].field, "load.dataset.path");
  EXPECT_EQ(errors[0].message, "no such file: scenarios/missing.jsonl");
}

// A file that cannot be shipped gets a generated stand-in: an absent file is then decided by
// the sweep (stand-in on the simulated fleet, an error on a real target), not by the loader.
TEST(ScenarioLoader, AFileDatasetWithAStandInMayBeAbsent) {
  std::vector<ScenarioError> errors;
  const auto spec = parse_scenario(
      with_load("  dataset:\n"
                "    kind: sharegpt\n"
                "    path: sharegpt_16_messages_or_more.json\n"
                "    stand_in: {kind: synthetic-multiturn, conversations: 800, turns: 10}\n"
                "  num_requests: 5\n"),
      "scenarios/s.yaml", &errors, target_kinds());
  ASSERT_TRUE(spec.has_value()) << (errors.empty() ? "" : errors[0].message);
  ASSERT_TRUE(spec->load.stand_in.has_value());
  EXPECT_EQ(spec->load.stand_in->kind, "synthetic-multiturn");
  EXPECT_EQ(spec->load.stand_in->conversations, 800);
  EXPECT_EQ(spec->load.dataset.path, "scenarios/sharegpt_16_messages_or_more.json");
}

TEST(ScenarioLoader, AStandInIsGeneratedAndOnlyForFileDatasets) {
  auto errors = error_texts(with_load(
      "  dataset: {kind: jsonl, path: x.jsonl, stand_in: {kind: sharegpt, path: y.json}}\n"
      "  num_requests: 5\n"));
  std::string all;
  for (const auto& e : errors) all += e + "\n";
  EXPECT_NE(all.find("load.dataset.stand_in.kind: a stand-in is generated: synthetic-multiturn, "
                     "shared-prefix or random, not sharegpt"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("load.dataset.stand_in.path: no such file: y.json"), std::string::npos) << all;
  errors = error_texts(with_load(
      "  dataset: {kind: synthetic-multiturn, stand_in: {kind: random}}\n  num_requests: 5\n"));
  ASSERT_GE(errors.size(), 1u);
  EXPECT_NE(errors[0].find("load.dataset.stand_in: not used by dataset kind synthetic-multiturn"),
            std::string::npos)
      << errors[0];
}

TEST(ScenarioLoader, MooncakeNeedsAnExplicitBlockSize) {
  const std::string trace = ::testing::TempDir() + "scenario_loader_empty_trace.jsonl";
  std::ofstream(trace).close();
  const auto errors = error_texts(with_load("  dataset: {kind: mooncake, path: " + trace + "}\n"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("load.dataset.block_size: required for mooncake traces"),
            std::string::npos)
      << errors[0];
}

TEST(ScenarioLoader, OpenLoopAndLengthDistributions) {
  std::vector<ScenarioError> errors;
  const auto spec =
      parse_scenario(with_load("  dataset:\n"
                               "    kind: synthetic-multiturn\n"
                               "    user_words: {mean: 50, stddev: 10, min: 10, max: 90}\n"
                               "  request_rate: 800\n"
                               "  burstiness: 0.5\n"
                               "  endpoint: completions\n"
                               "  stream: false\n"
                               "  num_requests: 5\n"),
                     "s.yaml", &errors, target_kinds());
  ASSERT_TRUE(spec.has_value()) << errors.at(0).text;
  EXPECT_DOUBLE_EQ(spec->load.request_rate, 800);
  EXPECT_DOUBLE_EQ(spec->load.burstiness, 0.5);
  EXPECT_EQ(spec->load.endpoint, "completions");
  EXPECT_FALSE(spec->load.stream);
  EXPECT_DOUBLE_EQ(spec->load.dataset.user_words.mean, 50);
  EXPECT_DOUBLE_EQ(spec->load.dataset.user_words.stddev, 10);
  EXPECT_EQ(spec->load.dataset.user_words.max, 90);
}

TEST(ScenarioLoader, RateMustBePositive) {
  const auto errors = error_texts(with_load("  request_rate: 0\n  num_requests: 5\n"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "s.yaml:4:17: load.request_rate: expected a rate in requests/s >= 0.001, at most "
            "1000000, got \"0\"\n"
            "  request_rate: 0\n"
            "                ^");
}

// Issue 15 item 5: a key written twice silently measured only the first list.
TEST(ScenarioLoader, DuplicateKeyIsAnErrorNamingBothPlaces) {
  std::string text = kValid;
  text.replace(text.find("  concurrency: [2, 8]"), 21,
               "  concurrency: [2, 8]\n  strategy: [least-load]");
  const auto errors = error_texts(text);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "s.yaml:12:3: factors.strategy: key written twice in one mapping (first at line 10, "
            "column 3); only one of them would be used: remove the other\n"
            "  strategy: [least-load]\n"
            "  ^");
}

TEST(ScenarioLoader, SecondDocumentIsAnError) {
  const auto errors = error_texts(std::string(kValid) + "---\nname: other\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "s.yaml:28:1: a second YAML document (after ---): the file must hold one; merge it "
            "into the first or remove it\n"
            "name: other\n"
            "^");
}

TEST(ScenarioLoader, InfiniteRateIsRefused) {
  std::string text = kValid;
  text.replace(text.find("  max_tokens: 4"), 15, "  max_tokens: 4\n  request_rate: .inf");
  const auto errors = error_texts(text);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].substr(0, errors[0].find('\n')),
            "s.yaml:21:17: load.request_rate: expected a rate in requests/s >= 0.001, at most "
            "1000000, got \".inf\"");
}

// load.max_event_bytes bounds one SSE event in every phase a cell runs (the pre-pass of a warm
// cache, the warm-up, the measured phase), within the driver's own range.
TEST(ScenarioLoader, MaxEventBytesReachesEveryPhaseAndIsRangeChecked) {
  std::vector<ScenarioError> errors;
  const auto spec = parse_scenario(
      with_load("  num_requests: 4\n  max_event_bytes: 4096\n  cache: warm\n  warmup: "
                "{requests: 2}\n"),
      "s.yaml", &errors, target_kinds());
  ASSERT_TRUE(spec.has_value()) << (errors.empty() ? "" : errors[0].text);
  const CellPlan cell = expand_plan(*spec).at(0);
  for (const CellPhase phase : {CellPhase::kPrepass, CellPhase::kWarmup, CellPhase::kMeasured}) {
    EXPECT_EQ(cell_load_options(cell, "m", phase, Arrivals::kFromLoad).max_event_bytes, 4096u);
  }
  const auto defaults =
      parse_scenario(with_load("  num_requests: 4\n"), "s.yaml", &errors, target_kinds());
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(cell_load_options(expand_plan(*defaults).at(0), "m", CellPhase::kMeasured,
                              Arrivals::kFromLoad)
                .max_event_bytes,
            driver::kDefaultMaxSseEventBytes);
  for (const std::string value : {"1023", "1073741825", "-1"}) {
    const auto texts =
        error_texts(with_load("  num_requests: 4\n  max_event_bytes: " + value + "\n"));
    ASSERT_EQ(texts.size(), 1u) << value;
    EXPECT_EQ(texts[0].rfind("s.yaml:5:20: load.max_event_bytes: expected an integer from 1024 "
                             "to 1073741824, got \"" +
                                 value + "\"",
                             0),
              0u)
        << texts[0];
  }
}

TEST(Plan, StrategyOuterConcurrencyInnerWithStableKeys) {
  std::vector<ScenarioError> errors;
  auto spec = parse_scenario(kValid, "s.yaml", &errors, target_kinds());
  ASSERT_TRUE(spec.has_value());
  spec->repeats = 2;
  const auto cells = expand_plan(*spec);
  ASSERT_EQ(cells.size(), 8u);
  std::vector<std::string> order;
  for (const auto& c : cells) {
    order.push_back(c.arm + "/" + std::to_string(c.concurrency) + "/" + std::to_string(c.repeat));
  }
  EXPECT_EQ(order, (std::vector<std::string>{"random/2/0", "random/2/1", "random/8/0", "random/8/1",
                                             "prefix-hash/2/0", "prefix-hash/2/1",
                                             "prefix-hash/8/0", "prefix-hash/8/1"}));
  EXPECT_EQ(cells[2].factors_json, R"({"concurrency":8,"strategy":"random"})");
  // Same scenario text, same keys; every key distinct.
  const auto again = expand_plan(*spec);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    EXPECT_EQ(cells[i].key, again[i].key);
    EXPECT_EQ(cells[i].ordinal, static_cast<int>(i));
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(cells[i].key, cells[j].key);
  }
  spec->text += "# edited\n";
  EXPECT_NE(expand_plan(*spec)[0].key, cells[0].key);
}

}  // namespace
}  // namespace kvsweep::orchestrator
