// Reads and validates a scenario YAML file; every problem is reported with file:line:column.
#include "orchestrator/scenario/scenario_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "common/input_file.h"
#include "common/spellcheck.h"
#include "driver/datasets/dataset_limits.h"
#include "driver/datasets/load_workload.h"
#include "driver/load_options.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_reads.h"
#include "orchestrator/scenario/strategy_names.h"
#include "orchestrator/scenario/target_kind.h"

namespace kvsweep::orchestrator {
namespace {

// A million users is far beyond any fleet kvsweep drives (bench/ measures 10,000 streams); a
// larger level is a typo.
constexpr long long kMaxConcurrencyLevel = driver::kMaxConcurrency;
// A sweep of ten thousand cells runs for days even at a minute each; more is a typo.
constexpr long long kMaxCells = 10'000;
constexpr int kMaxRepeats = 1'000;

// Checks one level of a factor kvsweep knows the meaning of; "" when fine, else the message.
std::string check_level(const std::string& factor, const std::string& level) {
  auto is_number = [&](double min, bool allow_equal) {
    try {
      std::size_t used = 0;
      const double v = std::stod(level, &used);
      return used == level.size() && std::isfinite(v) && (v > min || (allow_equal && v == min));
    } catch (const std::exception&) {
      return false;
    }
  };
  // The runner keeps these levels in an int: a level beyond `max` is refused here, not
  // found out halfway through a sweep.
  auto is_int = [&](long long min, long long max) {
    try {
      std::size_t used = 0;
      const long long v = std::stoll(level, &used);
      return used == level.size() && v >= min && v <= max;
    } catch (const std::exception&) {
      return false;
    }
  };
  if (factor == "concurrency" && !is_int(1, kMaxConcurrencyLevel)) {
    return "expected an integer from 1 to " + std::to_string(kMaxConcurrencyLevel);
  }
  if (factor == "max_tokens" && !is_int(1, driver::kMaxTokens)) {
    return "expected an integer from 1 to " + std::to_string(driver::kMaxTokens);
  }
  if (factor == "request_rate" && !is_number(0, false)) return "expected a rate in requests/s > 0";
  if (factor == "cache" && level != "cold" && level != "warm" && level != "as-is") {
    return "expected cold, warm or as-is";
  }
  if (factor == "strategy" && !canonical_strategy(level) && !dynamo_router_mode(level)) {
    std::string message = "unknown strategy";
    if (auto s = closest_word(level, known_strategy_spellings())) {
      message += "; did you mean '" + *s + "'?";
    } else {
      message += " (expected one of: " + join(known_strategy_spellings()) + ")";
    }
    return message;
  }
  return "";
}

// The `{levels: [...], phase: deploy|run}` form of a factor: sets the phase and returns the
// levels node (undefined when missing, which is reported).
YAML::Node read_factor_detail(const YAML::Node& value, const std::string& name,
                              const std::string& path, FactorSpec& factor, ScenarioSpec& spec,
                              YamlErrors& sink) {
  YamlMapReader detail(value, path, sink, &spec.marks);
  const YAML::Node levels = detail.get("levels");
  std::string phase;
  detail.read_choice("phase", &phase, {"deploy", "run"});
  if (phase == "deploy" && is_load_factor(name)) {
    sink.add(value["phase"].Mark(), path + ".phase",
             name + " is set by the load driver, so it can only be a run-time factor");
  } else if (!phase.empty()) {
    factor.phase = phase == "deploy" ? FactorPhase::kDeploy : FactorPhase::kRun;
  }
  detail.require("levels");
  detail.finish();
  return levels;
}

// factors: each key a factor, its value a list of levels (or one level), or
// {levels: [...], phase: deploy | run}; plus `repeats`.
void read_factors(YamlMapReader& factors, ScenarioSpec& spec, const TargetKind* kind,
                  YamlErrors& sink) {
  factors.require("concurrency");
  factors.read_int("repeats", &spec.repeats, 1, kMaxRepeats);
  for (auto it = factors.node().begin(); it != factors.node().end(); ++it) {
    const std::string name = it->first.Scalar();
    if (name == "repeats") continue;
    const std::string path = factors.path_of(name);
    YAML::Node value = factors.get(name);
    std::vector<std::string> known = kind ? kind->factors_of(spec) : std::vector<std::string>{};
    if (!is_load_factor(name) && std::find(known.begin(), known.end(), name) == known.end()) {
      known.insert(known.end(), {"concurrency", "request_rate", "max_tokens", "cache", "repeats"});
      std::string message = "unknown factor for target kind " + spec.target.kind;
      if (auto s = closest_word(name, known)) {
        message = "unknown key; did you mean '" + *s + "'?";
      } else {
        message += " (known: " + join(known) + ")";
      }
      sink.add(it->first.Mark(), path, message);
      continue;
    }
    FactorSpec factor;
    factor.name = name;
    factor.mark = SourceMark{it->first.Mark().line + 1, it->first.Mark().column + 1};
    factor.phase = kind ? kind->phase_of(name) : FactorPhase::kRun;
    // Initialised once, never assigned: assigning one YAML::Node to another rebinds the node
    // they alias, which would overwrite the factor's own mapping in the document.
    const YAML::Node levels =
        value.IsMap() ? read_factor_detail(value, name, path, factor, spec, sink) : value;
    if (!levels.IsDefined()) continue;
    std::set<std::string> seen;
    for (const auto& level : scalars_of(levels)) {
      if (!level.IsScalar()) {
        sink.add(level.Mark(), path, "expected a level (a scalar), got " + describe_node(level));
        continue;
      }
      const std::string text = level.Scalar();
      if (const std::string problem = check_level(name, text); !problem.empty()) {
        sink.add(level.Mark(), path, "level \"" + text + "\": " + problem);
      } else if (!seen.insert(text).second) {
        sink.add(level.Mark(), path, "level \"" + text + "\" is listed twice");
      } else {
        factor.levels.push_back(text);
      }
    }
    if (factor.levels.empty()) {
      // Only when none was written: a level refused above has its own error.
      if (scalars_of(levels).empty()) sink.add(levels.Mark(), path, "give at least one level");
      continue;
    }
    spec.factors.push_back(std::move(factor));
  }
}

// The cells a sweep expands to: the product of every factor's levels, times the repeats.
void check_cell_count(const YAML::Node& factors, const ScenarioSpec& spec, YamlErrors& sink) {
  double cells = spec.repeats;
  std::string product;
  for (const auto& f : spec.factors) {
    cells *= static_cast<double>(f.levels.size());
    product += std::to_string(f.levels.size()) + " " + f.name + " x ";
  }
  if (cells <= kMaxCells) return;
  sink.add(factors.Mark(), "factors",
           product + std::to_string(spec.repeats) + " repeats make " +
               std::to_string(static_cast<long long>(cells)) + " cells, more than the " +
               std::to_string(kMaxCells) + " a sweep may have; split it into scenarios");
}

// A length read from the scenario, within its limit (driver/datasets/dataset_limits.h).
void read_bounded_length(YamlMapReader& reader, const std::string& key,
                         driver::LengthDistribution* out, int min_value, int limit) {
  read_length(reader, key, out, min_value, limit);
  if (!reader.node()[key].IsDefined()) return;
  if (const auto problem = driver::length_limit_problem(*out, limit)) {
    const YAML::Node value = reader.node()[key];
    const YAML::Node at =
        value.IsMap() && value[problem->field].IsDefined() ? value[problem->field] : value;
    reader.errors().add(at.Mark(), reader.path_of(key) + "." + problem->field, problem->message);
  }
}

// Which dataset kinds read each dataset key: a key given for another kind is an error rather
// than silently ignored.
const std::map<std::string, std::vector<std::string>>& dataset_key_kinds() {
  static const std::map<std::string, std::vector<std::string>> kinds = {
      {"path", {"sharegpt", "chat-threads", "jsonl", "mooncake"}},
      {"min_messages", {"sharegpt"}},
      {"max_conversations", {"sharegpt"}},
      {"conversations", {"synthetic-multiturn"}},
      {"turns", {"synthetic-multiturn"}},
      {"system_prompt_words", {"synthetic-multiturn"}},
      {"user_words", {"synthetic-multiturn"}},
      {"assistant_words", {"synthetic-multiturn"}},
      {"output_tokens", {"synthetic-multiturn", "shared-prefix"}},
      {"prefix_tokens", {"shared-prefix"}},
      {"num_prefixes", {"shared-prefix"}},
      {"prompts_per_prefix", {"shared-prefix"}},
      {"suffix_tokens", {"shared-prefix"}},
      {"ordered", {"shared-prefix"}},
      {"block_size", {"mooncake"}},
      {"time_scale", {"mooncake"}},
  };
  return kinds;
}

void read_dataset(YamlMapReader& dataset, ScenarioSpec& spec, YamlErrors& sink) {
  driver::DatasetOptions& d = spec.load.dataset;
  dataset.read_choice("kind", &d.kind, driver::dataset_kinds());
  for (const auto& [key, kinds] : dataset_key_kinds()) {
    const YAML::Node value = dataset.node()[key];
    if (value.IsDefined() && std::find(kinds.begin(), kinds.end(), d.kind) == kinds.end()) {
      sink.add(value.Mark(), dataset.path_of(key),
               "not used by dataset kind " + d.kind + " (used by: " + join(kinds) + ")");
    }
  }
  dataset.read_string("path", &d.path);
  if (!d.path.empty()) {
    // Relative paths are relative to the scenario file, so a scenario runs from any folder.
    std::filesystem::path file(d.path);
    if (file.is_relative()) {
      file = std::filesystem::path(spec.path).parent_path() / file;
    }
    d.path = file.lexically_normal().string();
    if (!std::filesystem::exists(file)) {
      sink.add(dataset.node()["path"].Mark(), "load.dataset.path", "no such file: " + d.path);
    } else if (const auto problem = input_file_problem(d.path, driver::kMaxDatasetFileBytes)) {
      // /dev/zero, a FIFO, a directory, a file of many gigabytes: refused before the sweep.
      sink.add(dataset.node()["path"].Mark(), "load.dataset.path", d.path + ": " + *problem);
    }
  }
  const auto& kinds = dataset_key_kinds();
  if (std::find(kinds.at("path").begin(), kinds.at("path").end(), d.kind) !=
          kinds.at("path").end() &&
      d.path.empty() && !dataset.node()["path"].IsDefined()) {
    sink.add(dataset.node().Mark(), "load.dataset.path",
             "dataset kind " + d.kind + " reads a file: give its path");
  }
  using driver::kMaxConversations;
  using driver::kMaxMessageWords;
  using driver::kMaxPromptTokens;
  dataset.read_int("min_messages", &d.min_messages, 0);
  dataset.read_int("max_conversations", &d.max_conversations, 0, kMaxConversations);
  dataset.read_int("conversations", &d.conversations, 1, kMaxConversations);
  read_bounded_length(dataset, "turns", &d.turns, 1, driver::kMaxTurns);
  read_bounded_length(dataset, "system_prompt_words", &d.system_prompt_words, 0, kMaxMessageWords);
  read_bounded_length(dataset, "user_words", &d.user_words, 1, kMaxMessageWords);
  read_bounded_length(dataset, "assistant_words", &d.assistant_words, 1, kMaxMessageWords);
  read_bounded_length(dataset, "output_tokens", &d.output_tokens, 1, driver::kMaxOutputTokens);
  dataset.read_int("prefix_tokens", &d.prefix_tokens, 0, kMaxPromptTokens);
  dataset.read_int("num_prefixes", &d.num_prefixes, 1, kMaxConversations);
  dataset.read_int("prompts_per_prefix", &d.prompts_per_prefix, 1, kMaxConversations);
  dataset.read_int("suffix_tokens", &d.suffix_tokens, 0, kMaxPromptTokens);
  dataset.read_bool("ordered", &d.ordered);
  dataset.read_int("block_size", &d.block_size, 1, kMaxPromptTokens);
  dataset.read_double("time_scale", &d.time_scale, 0, false, "a number > 0", driver::kMaxTimeScale);
  if (d.kind == "mooncake" && d.block_size == 0) {
    sink.add(dataset.node().Mark(), "load.dataset.block_size",
             "required for mooncake traces (Mooncake's own traces use 512; vLLM's silent "
             "default of 16 makes prompts 32x too short)");
  }
  // The sizes together: every conversation of a generated dataset is held in memory.
  if (const std::uintmax_t bytes = driver::generated_text_bytes(d);
      sink.empty() && bytes > driver::kMaxWorkloadTextBytes) {
    sink.add(dataset.node().Mark(), "load.dataset",
             "these sizes make about " + format_bytes(bytes) + " of prompt text, more than the " +
                 format_bytes(driver::kMaxWorkloadTextBytes) +
                 " a dataset may hold; lower the counts or lengths");
  }
  dataset.finish();
}

void read_load(YamlMapReader& load, ScenarioSpec& spec, YamlErrors& sink,
               std::map<std::string, SourceMark>& marks) {
  LoadSpec& l = spec.load;
  if (YAML::Node node = load.mapping("dataset"); node.IsDefined()) {
    YamlMapReader dataset(node, "load.dataset", sink, &marks);
    read_dataset(dataset, spec, sink);
  }
  load.read_choice("endpoint", &l.endpoint, {"chat", "completions"});
  load.read_bool("stream", &l.stream);
  load.read_int("max_tokens", &l.max_tokens, 1, driver::kMaxTokens);
  load.read_bool("ignore_eos", &l.ignore_eos);
  if (load.node()["temperature"].IsDefined()) {
    double t = 0;
    load.read_double("temperature", &t, 0, true, "a number >= 0");
    l.temperature = t;
  } else {
    load.get("temperature");
  }
  load.read_double("request_rate", &l.request_rate, 0, false, "a rate in requests/s > 0");
  load.read_double("burstiness", &l.burstiness, 0, false, "a number > 0 (1 = Poisson)");
  load.read_int<std::int64_t>("num_requests", &l.num_requests, 1, driver::kMaxRequests);
  load.read_duration("duration", &l.duration_s);
  load.read_duration("timeout", &l.timeout_s);
  load.read_choice("cache", &l.cache, {"cold", "warm", "as-is"});
  if (YAML::Node node = load.mapping("warmup"); node.IsDefined()) {
    YamlMapReader warmup(node, "load.warmup", sink, &marks);
    warmup.read_int<std::int64_t>("requests", &l.warmup_requests, 0, driver::kMaxRequests);
    warmup.finish();
  }
  load.finish();
}

}  // namespace

void read_length(YamlMapReader& reader, const std::string& key, driver::LengthDistribution* out,
                 int min_value, int max_value) {
  const YAML::Node value = reader.get(key);
  if (!value.IsDefined()) return;
  const std::string path = reader.path_of(key);
  if (value.IsScalar()) {
    if (auto n = reader.to_int<int>(value, key, min_value, max_value)) {
      *out = driver::LengthDistribution{static_cast<double>(*n)};
    }
    return;
  }
  if (!value.IsMap()) {
    reader.errors().add(
        value.Mark(), path,
        "expected a number or {mean, stddev, min, max}, got " + describe_node(value));
    return;
  }
  YamlMapReader fields(value, path, reader.errors(), reader.marks());
  driver::LengthDistribution d;
  fields.read_double("mean", &d.mean, 0, true, "a number >= 0");
  fields.read_double("stddev", &d.stddev, 0, true, "a number >= 0");
  fields.read_int("min", &d.min, 0);
  fields.read_int("max", &d.max, 0);
  fields.finish();
  if (d.max > 0 && d.max < d.min) {
    reader.errors().add(value.Mark(), path, "max is below min");
    return;
  }
  *out = d;
}

namespace {

const TargetKind* find_kind(const TargetKinds& kinds, const std::string& name) {
  for (const auto& kind : kinds) {
    if (kind.name == name) return &kind;
  }
  return nullptr;
}

// The top-level keys and each section, in the order a reader's errors should come.
void read_sections(const YAML::Node& root, ScenarioSpec& spec, const TargetKinds& kinds,
                   YamlErrors& sink) {
  YamlMapReader top(root, "", sink, &spec.marks);
  top.require("name");
  top.require("factors");
  top.read_string("name", &spec.name);
  top.read_string("description", &spec.description);
  top.read_string("model", &spec.model);
  top.read_int<std::uint64_t>("seed", &spec.seed, 0);
  if (YAML::Node node = top.mapping("target"); node.IsDefined()) {
    YamlMapReader target(node, "target", sink, &spec.marks);
    read_target(target, spec, kinds, sink);
  }
  if (YAML::Node node = top.mapping("factors"); node.IsDefined()) {
    YamlMapReader factors(node, "factors", sink, &spec.marks);
    read_factors(factors, spec, find_kind(kinds, spec.target.kind), sink);
    check_cell_count(node, spec, sink);
  }
  if (YAML::Node node = top.mapping("load"); node.IsDefined()) {
    YamlMapReader load(node, "load", sink, &spec.marks);
    read_load(load, spec, sink, spec.marks);
  }
  if (YAML::Node node = top.mapping("report"); node.IsDefined()) {
    YamlMapReader report(node, "report", sink, &spec.marks);
    report.read_string("baseline", &spec.baseline);
    report.finish();
  }
  top.finish();
}

// Checks that span sections: a cell needs an end; every level of a factor that target.levels
// defines has its entry there.
void check_across_sections(const YAML::Node& root, const ScenarioSpec& spec, const TargetKind* kind,
                           YamlErrors& sink) {
  if (spec.load.num_requests == 0 && spec.load.duration_s == 0 &&
      spec.load.dataset.kind != "mooncake" && !spec.marks.count("load.num_requests") &&
      !spec.marks.count("load.duration")) {
    YAML::Node load = root["load"];
    sink.add(load.IsDefined() ? load.Mark() : root.Mark(), "load",
             "give num_requests, duration or both: a cell needs an end");
  }
  if (kind == nullptr || !kind->factors_from_levels) return;
  for (const auto& f : spec.factors) {
    const auto it = spec.target.levels.find(f.name);
    if (it == spec.target.levels.end()) continue;  // a load-driver factor
    for (const auto& level : f.levels) {
      if (it->second.count(level)) continue;
      sink.add(root["factors"][f.name].Mark(), "factors." + f.name,
               "level \"" + level + "\" has no entry in target.levels." + f.name +
                   ": say what it does there");
    }
  }
}

// report.baseline: an arm label, or a bare level naming the one arm it labels alone ("off"
// for the arm "prefix_caching=off"); the first arm when not given.
void resolve_baseline(const YAML::Node& root, ScenarioSpec& spec, YamlErrors& sink) {
  const std::vector<std::string> arms = arm_labels(spec);
  if (spec.baseline.empty()) {
    spec.baseline = arms.front();
  } else if (std::find(arms.begin(), arms.end(), spec.baseline) == arms.end()) {
    std::vector<std::string> matches;
    for (const auto& arm : arms) {
      const std::size_t eq = arm.find('=');
      if (arm.find(", ") == std::string::npos && eq != std::string::npos &&
          arm.substr(eq + 1) == spec.baseline) {
        matches.push_back(arm);
      }
    }
    if (matches.size() == 1) spec.baseline = matches.front();
  }
  if (std::find(arms.begin(), arms.end(), spec.baseline) == arms.end()) {
    sink.add(root["report"]["baseline"].Mark(), "report.baseline",
             "baseline \"" + spec.baseline + "\" is not one of the arms (" + join(arms) + ")");
  }
}

}  // namespace

std::optional<ScenarioSpec> parse_scenario(const std::string& text, const std::string& path,
                                           std::vector<ScenarioError>* errors,
                                           const TargetKinds& kinds) {
  YamlErrors sink(path, text, errors);
  const std::optional<YAML::Node> document = load_yaml_document(text, sink);
  if (!document) return std::nullopt;
  const YAML::Node& root = *document;
  if (!root.IsMap()) {
    sink.add(root.Mark(), "", "a scenario must be a YAML mapping (name:, target:, factors:, ...)");
    return std::nullopt;
  }
  ScenarioSpec spec;
  spec.path = path;
  spec.text = text;
  read_sections(root, spec, kinds, sink);
  check_across_sections(root, spec, find_kind(kinds, spec.target.kind), sink);
  if (!spec.factor("concurrency")) return std::nullopt;  // reported as missing above
  if (!sink.empty()) return std::nullopt;
  resolve_baseline(root, spec, sink);
  if (!sink.empty()) return std::nullopt;
  return spec;
}

std::optional<ScenarioSpec> load_scenario_file(const std::string& path,
                                               std::vector<ScenarioError>* errors,
                                               const TargetKinds& kinds) {
  std::string text;
  try {
    text = read_input_file(path, kMaxScenarioBytes);
  } catch (const InputFileError& e) {
    ScenarioError error;
    error.message = "cannot read the scenario file: " + e.reason();
    error.text = path + ": " + error.message;
    errors->push_back(error);
    return std::nullopt;
  }
  return parse_scenario(text, path, errors, kinds);
}

}  // namespace kvsweep::orchestrator
