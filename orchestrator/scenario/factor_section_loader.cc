// Reads a scenario's `factors:` section: each factor by the path of the field its levels set
// (or a name of its own for named arms), its levels and everything each sets, its phase.
#include <algorithm>
#include <set>

#include "orchestrator/scenario/cell_settings.h"
#include "orchestrator/scenario/epp_settings.h"
#include "orchestrator/scenario/scenario_reads.h"
#include "orchestrator/scenario/strategy_names.h"

namespace kvsweep::orchestrator {
namespace {

constexpr int kMaxRepeats = 1'000;  // a thousand repeats of every cell is already a typo

// The load section's fields that are factors under their own short name, as before paths.
const std::vector<std::string>& load_shorthands() {
  static const std::vector<std::string> names = {"request_rate", "max_tokens", "cache"};
  return names;
}

bool factor_starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

SourceMark source_mark(const YAML::Node& node) {
  return SourceMark{node.Mark().line + 1, node.Mark().column + 1};
}

std::string suggest(const std::string& word, const std::vector<std::string>& known,
                    const std::string& what) {
  if (auto s = closest_word(word, known)) return what + "; did you mean '" + *s + "'?";
  return what + " (known: " + join(known) + ")";
}

// What one factor key or arm entry may name in this scenario.
class FieldNames {
 public:
  FieldNames(const ScenarioSpec& spec, const TargetKinds& kinds) : spec_(spec) {
    for (const auto& k : kinds) {
      if (k.name == spec.target.kind) kind_ = &k;
      if (k.name == "sim") sim_ = &k;
    }
    if (kind_ != nullptr) knobs_ = kind_->factors_of(spec);
  }

  // The field `name` sets: "concurrency", "seed", "load.<key>", "target.<knob>",
  // "target.base_url", "target.sim.<knob>". "" when `name` is no field (maybe a name for named
  // arms); `problem` says why a field-like name is wrong.
  std::string path_of(const std::string& name, std::string* problem) const {
    if (name == "concurrency" || name == "seed") return name;
    if (contains(load_shorthands(), name)) return "load." + name;
    if (contains(knobs_, name)) return knob_path(name);
    if (factor_starts_with(name, "load.")) {
      if (auto unknown = unknown_load_field(name)) *problem = *unknown;
      return name;
    }
    if (is_epp_setting_path(name)) {
      split_epp_setting_path(spec_, name, problem);
      return name;
    }
    if (name == "target.base_url") {
      if (spec_.target.kind == "sim" || spec_.target.kind == "replicas") {
        *problem = "not used by target kind " + spec_.target.kind +
                   " (used by: kubeai, dynamo, kubectl, endpoints)";
      }
      return name;
    }
    if (factor_starts_with(name, "target.sim.")) {
      const std::string knob = name.substr(11);
      const std::vector<std::string> fleet = sim_ ? sim_->factors : std::vector<std::string>{};
      if (spec_.target.kind == "sim") {
        *problem = "the stand-in's knobs are for the other kinds; on kind sim write target." + knob;
      } else if (!contains(fleet, knob)) {
        *problem = suggest(knob, fleet, "the simulated fleet has no knob " + knob);
      }
      return name;
    }
    if (factor_starts_with(name, "target.")) {
      const std::string knob = name.substr(7);
      if (!contains(knobs_, knob)) {
        *problem = suggest(knob, knobs_,
                           "target kind " + spec_.target.kind + " applies no knob " + knob +
                               (spec_.target.kind == "kubectl" || spec_.target.kind == "endpoints"
                                    ? " (its knobs are the keys of target.levels)"
                                    : ""));
      }
      return name;
    }
    return "";
  }

  // The names a bare unknown factor key is compared with.
  std::vector<std::string> bare_names() const {
    std::vector<std::string> names = knobs_;
    names.insert(names.end(), {"concurrency", "request_rate", "max_tokens", "cache", "seed"});
    names.push_back("repeats");
    return names;
  }

  // The default phase of a setting of `path`.
  FactorPhase phase_of(const std::string& path) const {
    if (kind_ == nullptr) return FactorPhase::kRun;
    // An EPP configuration's setting is applied as the configuration is: as a strategy.
    if (is_epp_setting_path(path)) {
      return contains(knobs_, "strategy") ? kind_->phase_of("strategy") : FactorPhase::kRun;
    }
    const bool knob = factor_starts_with(path, "target.") && path != "target.base_url" &&
                      !factor_starts_with(path, "target.sim.");
    return knob ? kind_->phase_of(path.substr(7)) : FactorPhase::kRun;
  }

 private:
  const ScenarioSpec& spec_;
  const TargetKind* kind_ = nullptr;
  const TargetKind* sim_ = nullptr;
  std::vector<std::string> knobs_;
};

// The rules the loader knows for a knob's level whatever the kind; "" when fine. Every other
// field's level is read by its own reader (cell_settings.h), the kind's own rules by the target.
std::string check_knob_level(const ScenarioSpec& spec, const std::string& path,
                             const std::string& level) {
  if (is_epp_setting_path(path)) {
    // The configuration with this level put in, read as the EPP reads it.
    std::string problem;
    const auto split = split_epp_setting_path(spec, path, &problem);
    return split ? check_epp_settings(spec, split->config, {{path, level}}) : problem;
  }
  if ((path == "target.strategy" || path == "target.sim.strategy") && !canonical_strategy(level) &&
      !dynamo_router_mode(level) && !spec.epp_config(level)) {
    std::vector<std::string> known = known_strategy_spellings();
    for (const auto& [name, config] : spec.epp_configs) known.push_back(name);
    if (auto s = closest_word(level, known)) return "unknown strategy; did you mean '" + *s + "'?";
    return "unknown strategy (expected one of: " + join(known) +
           "; or an EPP configuration named under epp:, or {epp: FILE})";
  }
  return "";
}

class FactorReader {
 public:
  FactorReader(YamlMapReader& factors, ScenarioSpec& spec, const TargetKinds& kinds,
               YamlErrors& sink)
      : factors_(factors), spec_(spec), names_(spec, kinds), sink_(sink) {}

  void read() {
    // A search of concurrency chooses its levels: the loader adds the factor (check_search).
    if (spec_.search.factor != "concurrency") factors_.require("concurrency");
    factors_.read_int("repeats", &spec_.repeats, 1, kMaxRepeats);
    for (auto it = factors_.node().begin(); it != factors_.node().end(); ++it) {
      if (!it->first.IsScalar()) {  // `: [random]`, `[a]: [b]`: no name to read it by
        sink_.add(it->first.Mark(), "factors",
                  "expected a factor's name before ':', got " + describe_node(it->first));
        continue;
      }
      const std::string name = it->first.Scalar();
      if (name == "repeats") continue;
      read_factor(name, it->first, factors_.get(name));
    }
  }

 private:
  void read_factor(const std::string& name, const YAML::Node& key, const YAML::Node& value) {
    const std::string where = factors_.path_of(name);
    FactorSpec factor;
    factor.name = name;
    factor.mark = source_mark(key);
    std::string problem;
    factor.path = names_.path_of(name, &problem);
    if (!problem.empty()) {
      sink_.add(key.Mark(), where, problem);
      return;
    }
    const bool detail =
        value.IsMap() && (value["levels"].IsDefined() || value["phase"].IsDefined());
    std::string phase;
    // Initialised once, never assigned: assigning one YAML::Node to another rebinds the node
    // they alias, which would overwrite the factor's own mapping in the document.
    const YAML::Node levels = detail ? read_detail(value, where, &phase) : value;
    if (!levels.IsDefined()) return;
    if (factor.path.empty() && !levels.IsMap()) {
      std::string message;
      if (auto s = closest_word(name, names_.bare_names())) {
        message = "unknown key; did you mean '" + *s + "'?";
      } else {
        message = "unknown factor for target kind " + spec_.target.kind +
                  " (known: " + join(names_.bare_names()) +
                  "; or a field by its path: load.<key>, target.<knob>; or named arms: a "
                  "mapping of names to settings)";
      }
      sink_.add(key.Mark(), where, message);
      return;
    }
    if (levels.IsMap()) {
      read_mapped_levels(levels, where, factor);
    } else {
      read_value_levels(levels, where, factor);
    }
    if (factor.levels.empty()) {
      // Only when none was written: a level refused above has its own error.
      if ((levels.IsMap() && levels.size() == 0) ||
          (!levels.IsMap() && scalars_of(levels).empty())) {
        sink_.add(levels.Mark(), where, "give at least one level");
      }
      return;
    }
    set_phase(factor, phase, value, where);
    spec_.factors.push_back(std::move(factor));
  }

  // `{levels: ..., phase: deploy | run}`: the phase as written ("" when not) and the levels.
  YAML::Node read_detail(const YAML::Node& value, const std::string& where, std::string* phase) {
    YamlMapReader detail(value, where, sink_, &spec_.marks);
    const YAML::Node levels = detail.get("levels");
    detail.read_choice("phase", phase, {"deploy", "run"});
    detail.require("levels");
    detail.finish();
    return levels;
  }

  // [a, b] or one scalar: each level sets the factor's field to itself.
  void read_value_levels(const YAML::Node& levels, const std::string& where, FactorSpec& f) {
    std::set<std::string> seen;
    for (const auto& level : scalars_of(levels)) {
      std::string text;
      if (level.IsMap() && level["epp"].IsDefined() &&
          (f.path == "target.strategy" || f.path == "target.sim.strategy")) {
        // {epp: FILE}: llm-d's endpoint picker with that config, named after the file.
        text = read_epp_level(level, where, spec_, sink_);
        if (text.empty()) continue;
      } else if (!level.IsScalar()) {
        sink_.add(level.Mark(), where, "expected a level (a scalar), got " + describe_node(level));
        continue;
      } else {
        text = level.Scalar();
      }
      if (const std::string problem = check_knob_level(spec_, f.path, text); !problem.empty()) {
        sink_.add(level.Mark(), where, "level \"" + text + "\": " + problem);
      } else if (!seen.insert(text).second) {
        sink_.add(level.Mark(), where, "level \"" + text + "\" is listed twice");
      } else {
        f.levels.push_back({text, {{f.path, text, source_mark(level)}}, source_mark(level)});
      }
    }
  }

  // {label: {path: value, ...}, ...}: named arms (a factor of no field), or values of the
  // factor's field each with more settings (concurrency: {800: {load.request_rate: 800}}).
  void read_mapped_levels(const YAML::Node& levels, const std::string& where, FactorSpec& f) {
    for (auto it = levels.begin(); it != levels.end(); ++it) {
      const std::string label = it->first.Scalar();
      FactorLevel level{label, {}, source_mark(it->first)};
      bool ok = true;
      if (!f.path.empty()) {
        if (const std::string problem = check_knob_level(spec_, f.path, label); !problem.empty()) {
          sink_.add(it->first.Mark(), where, "level \"" + label + "\": " + problem);
          ok = false;
        }
        level.settings.push_back({f.path, label, source_mark(it->first)});
      }
      ok = read_settings(it->second, where, f, level) && ok;
      const bool twice = std::any_of(f.levels.begin(), f.levels.end(),
                                     [&](const FactorLevel& l) { return l.label == label; });
      if (twice) sink_.add(it->first.Mark(), where, "level \"" + label + "\" is listed twice");
      if (ok && !twice) f.levels.push_back(std::move(level));
    }
  }

  // One level's mapping of fields to values. False when something was refused.
  bool read_settings(const YAML::Node& node, const std::string& where, const FactorSpec& f,
                     FactorLevel& level) {
    if (!node.IsDefined() || node.IsNull()) return true;
    const std::string at = where + "." + level.label;
    if (!node.IsMap()) {
      sink_.add(node.Mark(), at,
                "expected a mapping of fields to values, e.g. {load.request_rate: 800}, got " +
                    describe_node(node));
      return false;
    }
    bool ok = true;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = it->first.Scalar();
      std::string problem;
      const std::string path = names_.path_of(key, &problem);
      if (path.empty()) {
        problem = suggest(key, names_.bare_names(), "unknown field") +
                  "; a field is named by its path (load.<key>, target.<knob>)";
      } else if (!problem.empty()) {
        // path_of said why this field-like name is wrong ("target kind sim applies no knob").
      } else if (path == "concurrency" && f.path != "concurrency") {
        problem =
            "concurrency is a factor of its own: give a concurrency level its settings there, "
            "e.g. concurrency: {800: {load.request_rate: 800}}";
      } else if (path == f.path) {
        problem = "the level's label already sets " + path;
      } else if (std::any_of(level.settings.begin(), level.settings.end(),
                             [&](const Setting& s) { return s.path == path; })) {
        problem = path + " is set twice in this level";
      } else if (it->second.IsMap() && it->second["epp"].IsDefined() &&
                 (path == "target.strategy" || path == "target.sim.strategy")) {
        // {epp: FILE} in an arm: llm-d's endpoint picker with that config, by the file's name.
        const std::string name = read_epp_level(it->second, at + "." + key, spec_, sink_);
        if (name.empty()) {
          ok = false;
          continue;
        }
        level.settings.push_back({path, name, source_mark(it->second)});
        continue;
      } else if (!it->second.IsScalar()) {
        problem = "expected a value (a scalar), got " + describe_node(it->second);
      } else {
        problem = check_knob_level(spec_, path, it->second.Scalar());
      }
      if (!problem.empty()) {
        sink_.add(it->first.Mark(), at + "." + key, problem);
        ok = false;
        continue;
      }
      level.settings.push_back({path, it->second.Scalar(), source_mark(it->second)});
    }
    return ok;
  }

  // Deploy-time when a setting's field is deploy-time on the kind (a knob whose change
  // redeploys), unless the scenario says; a factor of load-driver fields only is run-time.
  void set_phase(FactorSpec& f, const std::string& phase, const YAML::Node& value,
                 const std::string& where) {
    bool targets = false;
    f.phase = FactorPhase::kRun;
    for (const auto& level : f.levels) {
      for (const auto& s : level.settings) {
        targets = targets || factor_starts_with(s.path, "target.") || is_epp_setting_path(s.path);
        if (names_.phase_of(s.path) == FactorPhase::kDeploy) f.phase = FactorPhase::kDeploy;
      }
    }
    if (phase == "deploy" && !targets) {
      sink_.add(value["phase"].Mark(), where + ".phase",
                f.name + " is set by the load driver, so it can only be a run-time factor");
    } else if (!phase.empty()) {
      f.phase = phase == "deploy" ? FactorPhase::kDeploy : FactorPhase::kRun;
    }
  }

  YamlMapReader& factors_;
  ScenarioSpec& spec_;
  FieldNames names_;
  YamlErrors& sink_;
};

// One field, one factor: two factors setting one field would give a cell two values.
void check_one_factor_per_field(const ScenarioSpec& spec, YamlErrors& sink) {
  std::map<std::string, std::string> setter;  // path -> the factor that sets it
  for (const auto& f : spec.factors) {
    std::set<std::string> mine;
    for (const auto& level : f.levels) {
      for (const auto& s : level.settings) {
        const auto [it, fresh] = setter.emplace(s.path, f.name);
        if (!fresh && it->second != f.name && mine.insert(s.path).second) {
          YAML::Mark mark;
          mark.line = s.mark.line - 1;
          mark.column = s.mark.column - 1;
          sink.add(mark, "factors." + f.name,
                   "sets " + s.path + ", which factor " + it->second +
                       " sets too: a cell would get two values");
        }
      }
    }
  }
}

// A setting of an EPP configuration that no strategy level runs would change nothing.
void check_epp_settings_are_run(const ScenarioSpec& spec, YamlErrors& sink) {
  std::set<std::string> run;  // configurations some strategy level names
  for (const auto& f : spec.factors) {
    for (const auto& level : f.levels) {
      for (const auto& s : level.settings) {
        if (s.path == "target.strategy" || s.path == "target.sim.strategy") run.insert(s.value);
      }
    }
  }
  std::set<std::string> told;
  for (const auto& f : spec.factors) {
    for (const auto& level : f.levels) {
      for (const auto& s : level.settings) {
        if (!is_epp_setting_path(s.path)) continue;
        std::string problem;
        const auto split = split_epp_setting_path(spec, s.path, &problem);
        if (!split || run.count(split->config) || !told.insert(s.path).second) continue;
        YAML::Mark mark;
        mark.line = s.mark.line - 1;
        mark.column = s.mark.column - 1;
        sink.add(mark, "factors." + f.name,
                 "sets " + s.path + ", but no strategy level runs EPP configuration " +
                     split->config + ": it would change nothing (give " + split->config +
                     " as a level of strategy)");
      }
    }
  }
}

}  // namespace

void read_factors(YamlMapReader& factors, ScenarioSpec& spec, const TargetKinds& kinds,
                  YamlErrors& sink) {
  FactorReader(factors, spec, kinds, sink).read();
  check_one_factor_per_field(spec, sink);
  check_epp_settings_are_run(spec, sink);
}

}  // namespace kvsweep::orchestrator
