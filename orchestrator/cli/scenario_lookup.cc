// Finding the scenario a subcommand names, by file or by stored name.
#include "orchestrator/cli/scenario_lookup.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "common/error_kinds.h"
#include "common/input_file.h"
#include "common/spellcheck.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/targets/target_kinds.h"

namespace kvsweep::orchestrator {
namespace {

namespace fs = std::filesystem;

bool looks_like_path(const std::string& text) {
  return text.find('/') != std::string::npos || text.ends_with(".yaml") || text.ends_with(".yml");
}

}  // namespace

ScenarioFileError::ScenarioFileError(const std::string& path, std::vector<std::string> texts)
    : UsageError(std::to_string(texts.size()) + " problem" + (texts.size() == 1 ? "" : "s") +
                 " in " + path + "; nothing was run"),
      texts_(std::move(texts)) {}

ScenarioSpec load_scenario_or_throw(const std::string& path) {
  std::vector<ScenarioError> errors;
  auto spec = load_scenario_file(path, &errors, target_kinds());
  if (spec) return *std::move(spec);
  std::vector<std::string> texts;
  for (const auto& e : errors) texts.push_back(e.text);
  throw ScenarioFileError(path, std::move(texts));
}

std::optional<std::string> missing_scenario_file(const std::string& path) {
  std::error_code error;
  if (fs::exists(path, error)) {
    const auto problem = input_file_problem(path, kMaxScenarioBytes);
    return problem ? std::optional<std::string>(path + ": " + *problem) : std::nullopt;
  }
  std::string message = "no such file: " + path;
  const fs::path wanted(path);
  const fs::path dir = wanted.has_parent_path() ? wanted.parent_path() : fs::path(".");
  std::vector<std::string> names;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    if (it->is_regular_file(error)) names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());  // a stable choice among equally near names
  if (const auto near = closest_word(wanted.filename().string(), names)) {
    message += "; did you mean '" + (wanted.parent_path() / *near).string() + "'?";
  }
  return message;
}

std::string scenario_name_of(const store::RunReader& store, const std::string& file_or_name) {
  std::error_code error;
  if (fs::is_regular_file(file_or_name, error)) {
    return load_scenario_or_throw(file_or_name).name;
  }
  if (looks_like_path(file_or_name)) {
    throw UsageError(*missing_scenario_file(file_or_name));
  }
  std::vector<std::string> names;
  for (const auto& e : store.experiments()) {
    if (e.name == file_or_name) return file_or_name;
    if (std::find(names.begin(), names.end(), e.name) == names.end()) names.push_back(e.name);
  }
  std::string message = "no stored run of scenario \"" + file_or_name + "\" in " + store.path();
  if (const auto near = closest_word(file_or_name, names)) {
    message += "; did you mean '" + *near + "'?";
  } else {
    message += " (see: kvsweep runs)";
  }
  throw UsageError(message);
}

CLI::Validator scenario_file() {
  return CLI::Validator([](std::string& path) { return missing_scenario_file(path).value_or(""); },
                        "FILE");
}

}  // namespace kvsweep::orchestrator
