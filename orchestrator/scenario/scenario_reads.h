// The scenario loader's reads on top of common/yaml_reader.h: the driver-typed ones (a length
// distribution) and the `target:` section's entry point. Shared by the scenario loader's parts.
#pragma once

#include <limits>
#include <string>

#include "common/join.h"
#include "common/spellcheck.h"
#include "common/yaml_reader.h"
#include "driver/datasets/dataset_options.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/scenario/target_kind.h"

namespace kvsweep::orchestrator {

// A length: a number in [min_value, max_value], or {mean, stddev, min, max} (GuideLLM's form).
void read_length(YamlMapReader& reader, const std::string& key, driver::LengthDistribution* out,
                 int min_value, int max_value = std::numeric_limits<int>::max());

// The `target:` section (target_section_loader.cc): target.kind one of `kinds`, then every key
// that kind reads.
void read_target(YamlMapReader& target, ScenarioSpec& spec, const TargetKinds& kinds,
                 YamlErrors& sink);

}  // namespace kvsweep::orchestrator
