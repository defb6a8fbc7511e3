// Expands a scenario's factors into the ordered cells of a sweep, each with its settings
// resolved and typed: nothing downstream reads a level's text again.
#include "orchestrator/scenario/plan.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/error_kinds.h"
#include "driver/datasets/dataset_limits.h"
#include "orchestrator/scenario/cell_settings.h"
#include "orchestrator/scenario/rehearsal.h"

namespace kvsweep::orchestrator {
namespace {

std::string hex64(std::uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

// The factors in plan order: deploy-time first, then run-time, each group as written.
std::vector<const FactorSpec*> plan_order(const ScenarioSpec& spec) {
  std::vector<const FactorSpec*> order;
  for (const auto& f : spec.factors) {
    if (f.phase == FactorPhase::kDeploy) order.push_back(&f);
  }
  for (const auto& f : spec.factors) {
    if (f.phase == FactorPhase::kRun) order.push_back(&f);
  }
  return order;
}

bool shows_level_alone(const FactorSpec& f) {
  return f.named_arms() || f.path == "target.strategy";
}

bool in_label(const FactorSpec& f) {
  return f.path != "concurrency" && (shows_level_alone(f) || f.levels.size() > 1);
}

// How an arm label names each labelled factor: the name as written, or a path's last part
// ("prefix_tokens" for load.dataset.prefix_tokens) unless two factors would share it.
std::map<std::string, std::string> label_names(const ScenarioSpec& spec) {
  std::map<std::string, std::string> names;
  std::map<std::string, int> uses;
  for (const auto& f : spec.factors) {
    const std::size_t dot = f.name.rfind('.');
    names[f.name] = dot == std::string::npos ? f.name : f.name.substr(dot + 1);
    ++uses[names[f.name]];
  }
  for (auto& [name, shown] : names) {
    if (uses[shown] > 1) shown = name;
  }
  return names;
}

// `levels` holds one level label per factor, by factor name.
std::string arm_label(const ScenarioSpec& spec, const std::map<std::string, std::string>& names,
                      const std::map<std::string, std::string>& levels) {
  std::string label;
  for (const auto& f : spec.factors) {
    if (!in_label(f)) continue;
    const std::string& level = levels.at(f.name);
    label += (label.empty() ? "" : ", ") +
             (shows_level_alone(f) ? level : names.at(f.name) + "=" + level);
  }
  return label.empty() ? "all" : label;
}

// What the embedded fleet applies for a cell of a cluster scenario: target.sim.<knob> levels
// in place of (or beside) the target's own; the fleet is the only server, so no base_url.
Treatment stand_in_treatment(const CellSettings& settings) {
  Treatment t = settings.treatment;
  t.base_url.clear();
  for (const auto& knob_level : settings.stand_in) {
    // A named pair, not a structured binding: clang 14 (make sanitize) cannot capture one.
    const std::string& knob = knob_level.first;
    auto it = std::find_if(t.levels.begin(), t.levels.end(),
                           [&](const auto& entry) { return entry.first == knob; });
    if (it != t.levels.end()) {
      it->second = knob_level.second;
    } else {
      t.levels.emplace_back(knob, knob_level.second);
    }
  }
  return t;
}

// vLLM's --num-prompts: a random dataset holds as many prompts as the cell sends (warm-up
// included), unless the scenario says how many (load.dataset.num_prompts, in the file or by a
// factor). With the default 1,000 a cell of 2,000 requests sent every prompt twice, and
// prefix-hash found a 48.8% KV hit on prompts that share nothing. A cell bounded by its
// duration has no count: the default stays, and its repeats are reported after the fact.
class DatasetSizer {
 public:
  explicit DatasetSizer(const ScenarioSpec& spec)
      : given_(spec.marks.count("load.dataset.num_prompts") > 0 ||
               spec.factor_setting("load.dataset.num_prompts") != nullptr) {}

  void operator()(LoadSpec& load) const {
    driver::DatasetOptions& d = load.dataset;
    if (given_ || d.kind != "random" || load.num_requests <= 0) return;
    const std::int64_t requests = load.num_requests + load.warmup_requests;
    d.num_prompts = static_cast<int>(std::min<std::int64_t>(requests, driver::kMaxConversations));
  }

 private:
  bool given_;
};

class Expansion {
 public:
  Expansion(const ScenarioSpec& spec, const std::string& target_override, YamlErrors& sink)
      : spec_(spec),
        override_(target_override),
        sink_(sink),
        hash_(scenario_hash(spec.text, target_override)),
        order_(plan_order(spec)),
        names_(label_names(spec)),
        size_dataset_(spec),
        resolver_(spec) {}

  std::vector<CellPlan> run() {
    if (order_.empty()) return cells_;
    std::vector<std::size_t> position(order_.size(), 0);  // an odometer over the levels
    while (true) {
      add_cells(position);
      // Advance the odometer: the last factor turns fastest.
      std::size_t i = order_.size();
      while (true) {
        --i;
        if (++position[i] < order_[i]->levels.size()) break;
        position[i] = 0;
        if (i == 0) return cells_;
      }
    }
  }

 private:
  void add_cells(const std::vector<std::size_t>& position) {
    std::map<std::string, std::string> labels;
    std::map<const FactorSpec*, const FactorLevel*> chosen;
    std::string deploy_tuple;
    for (std::size_t i = 0; i < order_.size(); ++i) {
      const FactorLevel& level = order_[i]->levels[position[i]];
      labels[order_[i]->name] = level.label;
      chosen[order_[i]] = &level;
      if (order_[i]->phase == FactorPhase::kDeploy) {
        deploy_tuple += order_[i]->name + "=" + level.label + "\n";
      }
    }
    if (first_ || deploy_tuple != previous_deploy_) ++group_;
    first_ = false;
    previous_deploy_ = deploy_tuple;
    // The levels in the order written, so later factors' settings come later.
    std::vector<LevelChoice> choices;
    for (const auto& f : spec_.factors) choices.push_back({&f, chosen.at(&f)});
    const std::optional<CellSettings> settings = resolver_.resolve(choices, sink_);
    if (!settings) return;
    for (int repeat = 0; repeat < spec_.repeats; ++repeat) {
      cells_.push_back(make_cell(choices, labels, *settings, repeat));
    }
  }

  CellPlan make_cell(const std::vector<LevelChoice>& choices,
                     const std::map<std::string, std::string>& labels, const CellSettings& settings,
                     int repeat) {
    CellPlan cell;
    cell.ordinal = static_cast<int>(cells_.size());
    cell.arm = arm_label(spec_, names_, labels);
    cell.concurrency = settings.concurrency;
    cell.repeat = repeat;
    cell.deploy_group = group_;
    cell.seed = settings.seed;
    cell.load = settings.load;
    // A rehearsal and a prediction both run the embedded fleet in a cluster target's place.
    const bool rehearsal =
        (override_ == "sim" || override_ == "predict") && spec_.target.kind != "sim";
    if (override_ == "sim") cut_for_rehearsal(cell.load, spec_.target.sim);
    size_dataset_(cell.load);
    cell.treatment = rehearsal ? stand_in_treatment(settings) : settings.treatment;
    cell.workload = workload_index(cell);
    nlohmann::json factors = nlohmann::json::object();
    for (const auto& choice : choices) {
      cell.levels.emplace_back(choice.factor->name, choice.level->label);
      for (const auto& s : choice.level->settings) cell.settings.push_back(s);
      factors[choice.factor->name] = choice.factor->path == "concurrency"
                                         ? nlohmann::json(cell.concurrency)
                                         : nlohmann::json(choice.level->label);
    }
    cell.factors_json = factors.dump();
    const std::string identity = hash_ + "|" + cell.factors_json + "|" + std::to_string(repeat);
    cell.key = hex64(XXH64(identity.data(), identity.size(), 0));
    return cell;
  }

  int workload_index(const CellPlan& cell) {
    for (std::size_t i = 0; i < workloads_.size(); ++i) {
      if (workloads_[i].first == cell.load.dataset && workloads_[i].second == cell.seed) {
        return static_cast<int>(i);
      }
    }
    workloads_.emplace_back(cell.load.dataset, cell.seed);
    return static_cast<int>(workloads_.size() - 1);
  }

  const ScenarioSpec& spec_;
  const std::string override_;
  YamlErrors& sink_;
  const std::string hash_;
  const std::vector<const FactorSpec*> order_;
  const std::map<std::string, std::string> names_;
  const DatasetSizer size_dataset_;
  SettingsResolver resolver_;
  std::vector<CellPlan> cells_;
  std::vector<std::pair<driver::DatasetOptions, std::uint64_t>> workloads_;
  std::string previous_deploy_;
  bool first_ = true;
  int group_ = -1;
};

}  // namespace

std::string scenario_hash(const std::string& text, const std::string& target_override) {
  const std::string identity =
      target_override.empty() ? text : text + "\n#target=" + target_override;
  return hex64(XXH64(identity.data(), identity.size(), 0));
}

std::vector<CellPlan> expand_plan_checked(const ScenarioSpec& spec,
                                          const std::string& target_override, YamlErrors& sink) {
  return Expansion(spec, target_override, sink).run();
}

std::vector<CellPlan> expand_plan(const ScenarioSpec& spec, const std::string& target_override) {
  std::vector<YamlError> errors;
  YamlErrors sink(spec.path, spec.text, &errors);
  std::vector<CellPlan> cells = expand_plan_checked(spec, target_override, sink);
  if (!errors.empty()) throw UsageError(errors.front().text);
  return cells;
}

std::vector<std::string> arm_labels(const ScenarioSpec& spec) {
  std::vector<std::string> arms;
  const std::map<std::string, std::string> names = label_names(spec);
  // Every combination of labelled levels in plan order, without resolving any cell.
  std::vector<const FactorSpec*> order = plan_order(spec);
  if (order.empty()) return {"all"};
  std::vector<std::size_t> position(order.size(), 0);
  while (true) {
    std::map<std::string, std::string> levels;
    for (std::size_t i = 0; i < order.size(); ++i) {
      levels[order[i]->name] = order[i]->levels[position[i]].label;
    }
    const std::string arm = arm_label(spec, names, levels);
    if (std::find(arms.begin(), arms.end(), arm) == arms.end()) arms.push_back(arm);
    std::size_t i = order.size();
    while (true) {
      --i;
      if (++position[i] < order[i]->levels.size()) break;
      position[i] = 0;
      if (i == 0) return arms;
    }
  }
}

}  // namespace kvsweep::orchestrator
