// Reads and validates a scenario YAML file; every problem is reported with file:line:column.
#include "orchestrator/scenario/scenario_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "common/input_file.h"
#include "orchestrator/scenario/cell_settings.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_reads.h"

namespace kvsweep::orchestrator {
namespace {

// A sweep of ten thousand cells runs for days even at a minute each; more is a typo.
constexpr long long kMaxCells = 10'000;

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
  top.read_string("name", &spec.name);
  top.read_string("description", &spec.description);
  top.read_string("model", &spec.model);
  top.read_int<std::uint64_t>("seed", &spec.seed, 0, kMaxSeed);
  if (YAML::Node node = top.mapping("target"); node.IsDefined()) {
    YamlMapReader target(node, "target", sink, &spec.marks);
    read_target(target, spec, kinds, sink);
  }
  // Before the factors: a search of concurrency takes the place of the concurrency factor.
  if (YAML::Node node = top.mapping("slo"); node.IsDefined()) {
    YamlMapReader slo(node, "slo", sink, &spec.marks);
    read_slo(slo, spec, sink);
  }
  if (YAML::Node node = top.mapping("search"); node.IsDefined()) {
    YamlMapReader search(node, "search", sink, &spec.marks);
    read_search(search, spec, sink);
  }
  // Before the factors: their strategy levels may name these.
  if (YAML::Node node = top.get("epp"); node.IsDefined()) read_epp_configs(node, spec, sink);
  // The one factor every scenario needs is concurrency, which such a search adds itself.
  if (spec.search.factor != "concurrency") top.require("factors");
  if (YAML::Node node = top.mapping("factors"); node.IsDefined()) {
    YamlMapReader factors(node, "factors", sink, &spec.marks);
    read_factors(factors, spec, kinds, sink);
    check_cell_count(node, spec, sink);
  }
  if (YAML::Node node = top.mapping("load"); node.IsDefined()) {
    YamlMapReader load(node, "load", sink, &spec.marks);
    read_load(load, spec, sink);
  }
  if (YAML::Node node = top.mapping("report"); node.IsDefined()) {
    YamlMapReader report(node, "report", sink, &spec.marks);
    report.read_string("baseline", &spec.baseline);
    report.finish();
  }
  top.finish();
}

// Checks that span sections: a cell needs an end (unless every level gives one: the cells are
// checked then); every value a factor gives a knob that target.levels defines has its entry.
void check_across_sections(const YAML::Node& root, const ScenarioSpec& spec, const TargetKind* kind,
                           YamlErrors& sink) {
  const bool factor_ends = spec.factor_setting("load.num_requests") != nullptr ||
                           spec.factor_setting("load.duration") != nullptr;
  if (spec.load.num_requests == 0 && spec.load.duration_s == 0 &&
      spec.load.dataset.kind != "mooncake" && !spec.marks.count("load.num_requests") &&
      !spec.marks.count("load.duration") && !factor_ends) {
    YAML::Node load = root["load"];
    sink.add(load.IsDefined() ? load.Mark() : root.Mark(), "load",
             "give num_requests, duration or both: a cell needs an end");
  }
  if (kind == nullptr || !kind->factors_from_levels) return;
  for (const auto& f : spec.factors) {
    for (const auto& level : f.levels) {
      for (const auto& s : level.settings) {
        const std::string knob = s.path.rfind("target.", 0) == 0 ? s.path.substr(7) : "";
        const auto it = spec.target.levels.find(knob);
        if (it == spec.target.levels.end() || it->second.count(s.value)) continue;
        YAML::Mark mark;
        mark.line = s.mark.line - 1;
        mark.column = s.mark.column - 1;
        const std::string which =
            s.path == f.path ? "level \"" + s.value + "\""
                             : "level \"" + level.label + "\": " + knob + " \"" + s.value + "\"";
        sink.add(mark, "factors." + f.name,
                 which + " has no entry in target.levels." + knob + ": say what it does there");
      }
    }
  }
}

// Every level read alone through its field's reader, then every cell: a value its field
// refuses is said at the value, a combination of levels that makes a field wrong once.
void check_levels(const ScenarioSpec& spec, YamlErrors& sink) {
  SettingsResolver resolver(spec);
  for (const auto& f : spec.factors) {
    for (const auto& level : f.levels) resolver.resolve({LevelChoice{&f, &level}}, sink, false);
  }
  if (sink.empty()) expand_plan_checked(spec, "", sink);
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
  spec.document = std::make_shared<const YAML::Node>(YAML::Clone(root));
  read_sections(root, spec, kinds, sink);
  check_search(root, spec, sink);
  check_across_sections(root, spec, find_kind(kinds, spec.target.kind), sink);
  if (!spec.factor("concurrency")) return std::nullopt;  // reported as missing above
  check_levels(spec, sink);
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
