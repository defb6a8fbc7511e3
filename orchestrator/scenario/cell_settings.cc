// A cell's scenario fields: the scenario as written with one level of each factor applied,
// every value read by the loader's own reader of its field.
#include "orchestrator/scenario/cell_settings.h"

#include <yaml-cpp/yaml.h>

#include "driver/load_options.h"
#include "orchestrator/scenario/epp_settings.h"
#include "orchestrator/scenario/scenario_reads.h"

namespace kvsweep::orchestrator {
namespace {

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1) {
    parts.push_back(path.substr(start, dot - start));
  }
  parts.push_back(path.substr(start));
  return parts;
}

// Puts `value` at path `parts` (from `i`) under `node`, making mappings on the way. The value
// is a new scalar without a position: the reader's errors about it have none, which tells
// them apart from errors about what the file wrote. Recursion rather than a cursor variable:
// assigning one YAML::Node to another rebinds what it aliases.
void put(YAML::Node node, const std::vector<std::string>& parts, std::size_t i,
         const std::string& value) {
  if (i + 1 == parts.size()) {
    node[parts[i]] = YAML::Node(value);
    return;
  }
  if (!node[parts[i]].IsMap()) node[parts[i]] = YAML::Node(YAML::NodeType::Map);
  put(node[parts[i]], parts, i + 1, value);
}

YAML::Mark yaml_mark(int line, int column) {
  YAML::Mark mark;  // 0-based in yaml-cpp; a 0 (unknown) line becomes -1: no position
  mark.line = line - 1;
  mark.column = column - 1;
  return mark;
}

// The setting an error without a position is about: the one whose path is the longest prefix
// of the error's field, else the first one under `section` ("load.").
std::pair<const LevelChoice*, const Setting*> setting_of(const YamlError& error,
                                                         const std::vector<LevelChoice>& choices,
                                                         const std::string& section) {
  std::pair<const LevelChoice*, const Setting*> best{nullptr, nullptr};
  std::pair<const LevelChoice*, const Setting*> first{nullptr, nullptr};
  for (const auto& choice : choices) {
    for (const auto& setting : choice.level->settings) {
      if (!starts_with(setting.path, section)) continue;
      if (!first.second) first = {&choice, &setting};
      const bool prefix =
          error.field == setting.path || starts_with(error.field, setting.path + ".");
      if (prefix && (!best.second || setting.path.size() > best.second->path.size())) {
        best = {&choice, &setting};
      }
    }
  }
  return best.second ? best : first;
}

// Hands a reader's errors on to `sink`. One without a position is about a value a level put
// there: said at that level. One with a position is about a field the file wrote, which the
// levels made wrong: said there, naming the levels. `skip`: the section's own errors.
bool forward(const std::vector<YamlError>& errors, const std::vector<LevelChoice>& choices,
             const std::string& section, const std::set<std::string>& skip, YamlErrors& sink) {
  bool any = false;
  for (const auto& e : errors) {
    if (skip.count(e.text)) continue;
    any = true;
    const auto [choice, setting] = setting_of(e, choices, section);
    if (e.line > 0 || setting == nullptr) {
      sink.add(yaml_mark(e.line, e.column), e.field,
               e.message + " (with " + describe_choices(choices) + ")");
      continue;
    }
    std::string message = "level \"" + choice->level->label + "\": ";
    if (setting->path != choice->factor->path || e.field != setting->path) {
      message += e.field + ": ";
    }
    sink.add(yaml_mark(setting->mark.line, setting->mark.column), "factors." + choice->factor->name,
             message + e.message);
  }
  return any;
}

// A one-key mapping holding `value` without a position, for a reader of one field.
YAML::Node one_key(const std::string& key, const std::string& value) {
  YAML::Node map(YAML::NodeType::Map);
  map[key] = YAML::Node(value);
  return map;
}

bool has_end(const LoadSpec& load) {
  return load.num_requests > 0 || load.duration_s > 0 || load.dataset.kind == "mooncake";
}

void read_load_of(const YAML::Node& root, ScenarioSpec& spec, YamlErrors& errors) {
  const YAML::Node load = root["load"];
  if (!load.IsDefined() || !load.IsMap()) return;
  YamlMapReader reader(load, "load", errors, &spec.marks);
  read_load(reader, spec, errors);
}

// A copy of the loader's document to put a cell's levels in: the file is never parsed again,
// so a level is read over exactly what the loader read. A spec built in code has none: its
// levels are read over an empty mapping (and resolve_load starts from the spec's own load).
YAML::Node editable_document(const ScenarioSpec& spec) {
  if (spec.document && spec.document->IsMap()) return YAML::Clone(*spec.document);
  return YAML::Node(YAML::NodeType::Map);
}

}  // namespace

std::string describe_choices(const std::vector<LevelChoice>& choices) {
  std::string text;
  for (const auto& c : choices) {
    text += (text.empty() ? "" : ", ") + c.factor->name + "=" + c.level->label;
  }
  return text;
}

SettingsResolver::SettingsResolver(const ScenarioSpec& spec) : spec_(spec) {
  if (!spec_.document) return;  // built in code: no section to read again
  std::vector<YamlError> errors;
  YamlErrors sink(spec_.path, spec_.text, &errors);
  ScenarioSpec base;
  base.path = spec_.path;
  read_load_of(editable_document(spec_), base, sink);
  for (const auto& e : errors) base_errors_.insert(e.text);
}

std::optional<LoadSpec> SettingsResolver::resolve_load(const std::vector<LevelChoice>& choices,
                                                       YamlErrors& sink) {
  std::string signature;
  for (const auto& choice : choices) {
    for (const auto& s : choice.level->settings) {
      if (starts_with(s.path, "load.")) signature += s.path + "=" + s.value + "\n";
    }
  }
  if (signature.empty()) return spec_.load;
  if (const auto it = loads_.find(signature); it != loads_.end()) return it->second;
  YAML::Node root = editable_document(spec_);
  for (const auto& choice : choices) {
    for (const auto& s : choice.level->settings) {
      if (starts_with(s.path, "load.")) put(root, split_path(s.path), 0, s.value);
    }
  }
  ScenarioSpec cell;
  cell.path = spec_.path;
  // The file's section is read whole, as the loader read it; a spec built in code has no
  // section, so its levels are read over the load it holds.
  if (!spec_.document) cell.load = spec_.load;
  std::vector<YamlError> errors;
  YamlErrors local(spec_.path, spec_.text, &errors);
  read_load_of(root, cell, local);
  if (forward(errors, choices, "load.", base_errors_, sink)) return std::nullopt;
  loads_.emplace(signature, cell.load);
  return cell.load;
}

std::optional<CellSettings> SettingsResolver::resolve(const std::vector<LevelChoice>& choices,
                                                      YamlErrors& sink, bool whole_cell) {
  CellSettings cell;
  cell.seed = spec_.seed;
  std::vector<YamlError> errors;
  YamlErrors local(spec_.path, spec_.text, &errors);
  for (const auto& choice : choices) {
    for (const auto& s : choice.level->settings) {
      if (s.path == "concurrency") {
        YamlMapReader reader(one_key("concurrency", s.value), "", local);
        reader.read_int("concurrency", &cell.concurrency, 1, driver::kMaxConcurrency);
      } else if (s.path == "seed") {
        YamlMapReader reader(one_key("seed", s.value), "", local);
        reader.read_int<std::uint64_t>("seed", &cell.seed, 0, kMaxSeed);
      } else if (s.path == "target.base_url") {
        YamlMapReader reader(one_key("base_url", s.value), "target", local);
        read_base_url(reader, "base_url", &cell.treatment.base_url, local);
      } else if (is_epp_setting_path(s.path)) {
        cell.treatment.epp_settings.emplace_back(s.path, s.value);
      } else if (starts_with(s.path, "target.sim.")) {
        cell.stand_in.emplace_back(s.path.substr(11), s.value);
      } else if (starts_with(s.path, "target.")) {
        cell.treatment.levels.emplace_back(s.path.substr(7), s.value);
      }
    }
  }
  bool failed = forward(errors, choices, "", {}, sink);
  const std::optional<LoadSpec> load = resolve_load(choices, sink);
  if (load) cell.load = *load;
  // The loader checks the file's own load section; when levels give the end, each cell.
  const bool levels_end = spec_.factor_setting("load.num_requests") != nullptr ||
                          spec_.factor_setting("load.duration") != nullptr;
  if (whole_cell && load && levels_end && !has_end(cell.load) && !choices.empty()) {
    const SourceMark& at = choices.front().level->mark;
    sink.add(yaml_mark(at.line, at.column), "load",
             "give num_requests, duration or both: a cell needs an end (with " +
                 describe_choices(choices) + ")");
    failed = true;
  }
  if (failed || !load) return std::nullopt;
  return cell;
}

std::optional<std::string> unknown_load_field(const std::string& path) {
  YAML::Node root(YAML::NodeType::Map);
  put(root, split_path(path), 0, "0");
  ScenarioSpec scratch;
  std::vector<YamlError> errors;
  YamlErrors sink("", "", &errors);
  YamlMapReader reader(root["load"], "load", sink, &scratch.marks);
  read_load(reader, scratch, sink);
  for (const auto& e : errors) {
    const bool above = starts_with(path, e.field + ".");
    if ((e.field == path || above) && starts_with(e.message, "unknown key")) {
      return "no field " + e.field + e.message.substr(std::string("unknown key").size());
    }
    if (above) return "no field " + path + ": " + e.field + " holds a value, not keys";
    if (e.field == path && starts_with(e.message, "expected a mapping")) {
      return path + " is a section: a factor sets one of its keys";
    }
  }
  return std::nullopt;
}

}  // namespace kvsweep::orchestrator
