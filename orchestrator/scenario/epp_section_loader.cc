// EndpointPickerConfigs named in a scenario: the `epp:` section and `{epp: FILE}` levels.
#include <filesystem>

#include "common/input_file.h"
#include "orchestrator/scenario/scenario_reads.h"
#include "orchestrator/scenario/strategy_names.h"
#include "sim/router/epp_config.h"

namespace kvsweep::orchestrator {
namespace {

SourceMark mark_of(const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  return m.line < 0 ? SourceMark{} : SourceMark{m.line + 1, m.column + 1};
}

// A config file named at `value` (a path relative to the scenario), its errors located in it.
std::shared_ptr<const sim::EppConfig> read_file(const YAML::Node& value, const ScenarioSpec& spec,
                                                const std::string& field, YamlErrors& sink,
                                                std::string* resolved) {
  std::filesystem::path file = value.Scalar();
  if (file.is_relative()) file = std::filesystem::path(spec.path).parent_path() / file;
  *resolved = file.string();
  std::string text;
  try {
    text = read_input_file(*resolved, kMaxEppFileBytes);
  } catch (const InputFileError& e) {
    sink.add(value.Mark(), field, e.what());
    return nullptr;
  }
  const std::size_t before = sink.count();
  auto config = sim::read_epp_config(*resolved, text, sink.out());
  if (!config) {
    if (sink.count() == before) sink.add(value.Mark(), field, "not an EndpointPickerConfig");
    return nullptr;
  }
  return std::make_shared<const sim::EppConfig>(std::move(*config));
}

bool add_config(const std::string& name, const YAML::Node& at, const std::string& field,
                std::shared_ptr<const sim::EppConfig> config, const std::string& file,
                ScenarioSpec& spec, YamlErrors& sink) {
  if (canonical_strategy(name) || dynamo_router_mode(name) || name == "epp") {
    sink.add(at.Mark(), field,
             "\"" + name + "\" is a strategy's own name; name the EPP configuration otherwise");
    return false;
  }
  if (const EppConfigSpec* before = spec.epp_config(name)) {
    if (before->file == file && !file.empty()) return true;  // the same file named again
    sink.add(at.Mark(), field,
             "an EPP configuration named \"" + name + "\" is already given at line " +
                 std::to_string(before->mark.line));
    return false;
  }
  spec.epp_configs[name] = {name, file, std::move(config), mark_of(at)};
  return true;
}

}  // namespace

void read_epp_configs(const YAML::Node& section, ScenarioSpec& spec, YamlErrors& sink) {
  if (!section.IsMap()) {
    sink.add(section.Mark(), "epp",
             "expected a mapping of names to EndpointPickerConfig files (or configs), got " +
                 describe_node(section));
    return;
  }
  for (auto it = section.begin(); it != section.end(); ++it) {
    const std::string name = it->first.Scalar();
    const std::string field = "epp." + name;
    const YAML::Node value = it->second;
    std::shared_ptr<const sim::EppConfig> config;
    std::string file;
    if (value.IsScalar()) {
      config = read_file(value, spec, field, sink, &file);
    } else if (value.IsMap()) {
      if (auto read = sim::read_epp_config_node(value, field, sink)) {
        config = std::make_shared<const sim::EppConfig>(std::move(*read));
      }
    } else {
      sink.add(value.Mark(), field,
               "expected an EndpointPickerConfig file or the config itself, got " +
                   describe_node(value));
    }
    if (config) add_config(name, it->first, field, std::move(config), file, spec, sink);
  }
}

std::string read_epp_level(const YAML::Node& level, const std::string& field, ScenarioSpec& spec,
                           YamlErrors& sink) {
  YamlMapReader reader(level, field, sink);
  const YAML::Node file_node = reader.get("epp");
  reader.require("epp");
  reader.finish();
  if (!file_node.IsDefined()) return "";
  if (!file_node.IsScalar()) {
    sink.add(file_node.Mark(), field + ".epp",
             "expected an EndpointPickerConfig file, got " + describe_node(file_node));
    return "";
  }
  std::string file;
  auto config = read_file(file_node, spec, field + ".epp", sink, &file);
  if (!config) return "";
  const std::string name = std::filesystem::path(file_node.Scalar()).stem().string();
  return add_config(name, file_node, field + ".epp", std::move(config), file, spec, sink) ? name
                                                                                          : "";
}

}  // namespace kvsweep::orchestrator
