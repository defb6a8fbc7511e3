// A cell's scenario fields: the scenario as written with one level of each factor applied,
// every value read by the loader's own reader of its field.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/yaml_reader.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/scenario/treatment.h"

namespace kvsweep::orchestrator {

// One level of one factor, as a cell picks it.
struct LevelChoice {
  const FactorSpec* factor = nullptr;
  const FactorLevel* level = nullptr;
};

// Everything a cell's levels decide, typed.
struct CellSettings {
  int concurrency = 0;
  std::uint64_t seed = 1;
  LoadSpec load;        // the load section with the cell's load.* levels applied
  Treatment treatment;  // what the scenario's own target applies (knobs, an arm's base_url)
  // target.sim.<knob>: what --target sim applies in place of the treatment's knob of that name.
  std::vector<std::pair<std::string, std::string>> stand_in;
};

// Resolves cells of one scenario. A level is applied as an override of the scenario's YAML
// (a copy of the loader's document, ScenarioSpec::document, with the level's value put at its
// path; the file is not parsed again) and the section is read again by the same reader as the
// file itself: a level holds exactly what its field accepts, and a level that makes another
// field wrong (a dataset kind under which a written key means nothing) is found as the file's
// own error would be. Combinations already resolved are kept.
// Thread contract: one thread; `spec` outlives the resolver.
class SettingsResolver {
 public:
  explicit SettingsResolver(const ScenarioSpec& spec);

  // The scenario's fields with `choices` applied in order. Problems go to `sink`: a value its
  // field refuses, at the value ("factors.arm: level \"x\": target.base_url: expected ...");
  // a field the combination makes wrong, at that field, saying which levels did it. nullopt
  // when there was a problem. `whole_cell`: `choices` hold a level of every factor, so the
  // cell as a whole is checked too (it has an end); false to check some levels on their own.
  std::optional<CellSettings> resolve(const std::vector<LevelChoice>& choices, YamlErrors& sink,
                                      bool whole_cell = true);

 private:
  std::optional<LoadSpec> resolve_load(const std::vector<LevelChoice>& choices, YamlErrors& sink);

  const ScenarioSpec& spec_;
  std::set<std::string> base_errors_;      // the load section's own errors: not the levels'
  std::map<std::string, LoadSpec> loads_;  // resolved load sections by their settings
};

// When `path` ("load.request_rat") is no field of the load section: what the section's reader
// says of it ("no field load.request_rat; did you mean 'request_rate'?"); nullopt for a field.
std::optional<std::string> unknown_load_field(const std::string& path);

// "arm=k8s-service, concurrency=800": the levels a message is about.
std::string describe_choices(const std::vector<LevelChoice>& choices);

}  // namespace kvsweep::orchestrator
