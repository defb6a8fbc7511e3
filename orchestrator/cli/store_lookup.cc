// Resolving experiments and cells named on the command line; writing output files.
#include "orchestrator/cli/store_lookup.h"

#include <cctype>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "common/atomic_file.h"
#include "common/error_kinds.h"
#include "common/spellcheck.h"

namespace kvsweep::orchestrator {

store::Store open_existing_store(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    throw UsageError("no store at " + path + " (run a scenario first, or --db)");
  }
  // Read-only: a report reads a store in a directory it cannot write (a mounted volume, an
  // archive) and never changes it.
  return store::Store::open(path, store::Store::Access::kReadOnly);
}

store::ExperimentRow resolve_experiment(const store::RunReader& store, const std::string& which) {
  std::optional<store::ExperimentRow> found;
  if (which.empty()) {
    found = store.latest_experiment();
    if (!found) {
      throw UsageError(store.path() + " holds no experiment yet; run one first");
    }
    return *found;
  }
  if (which.find_first_not_of("0123456789") == std::string::npos) {
    found = store.experiment(std::stoll(which));
  }
  // NAME~N: the Nth run of NAME before its latest (a nightly job compares NAME~1 with NAME).
  if (const auto tilde = which.rfind('~'); !found && tilde != std::string::npos) {
    const std::string name = which.substr(0, tilde);
    const std::string back = which.substr(tilde + 1);
    if (back.empty() || back.size() > 6 ||
        back.find_first_not_of("0123456789") != std::string::npos) {
      throw UsageError("\"" + which + "\": expected NAME~N, N a whole number of runs back");
    }
    std::vector<store::ExperimentRow> runs;
    for (auto& e : store.experiments()) {
      if (e.name == name) runs.push_back(std::move(e));
    }
    const std::size_t n = std::stoul(back);
    if (!runs.empty() && n < runs.size()) return runs[runs.size() - 1 - n];
    if (!runs.empty()) {
      throw UsageError("no experiment \"" + which + "\" in " + store.path() + ": " +
                       std::to_string(runs.size()) + " stored run" + (runs.size() == 1 ? "" : "s") +
                       " of " + name);
    }
  }
  if (!found) found = store.experiment_by_name(which);
  if (!found) {
    std::vector<std::string> names;
    for (const auto& e : store.experiments()) names.push_back(e.name);
    std::string message = "no experiment \"" + which + "\" in " + store.path();
    if (const auto near = closest_word(which, names)) {
      message += "; did you mean '" + *near + "'?";
    } else {
      message += " (see: kvsweep runs)";
    }
    throw UsageError(message);
  }
  return *found;
}

store::CellRow resolve_cell(const store::RunReader& store, const std::string& which) {
  const auto colon = which.rfind(':');
  const std::string cell_text = colon == std::string::npos ? "" : which.substr(colon + 1);
  if (cell_text.empty() || cell_text.find_first_not_of("0123456789") != std::string::npos) {
    throw UsageError("\"" + which + "\": expected EXPERIMENT:CELL, e.g. 3:2");
  }
  const store::ExperimentRow experiment = resolve_experiment(store, which.substr(0, colon));
  // More digits than any cell count: no such cell (and no stoi overflow).
  const int position = cell_text.size() > 9 ? -1 : std::stoi(cell_text);
  for (const auto& cell : store.cells(experiment.id)) {
    if (cell.ordinal + 1 == position) return cell;
  }
  throw UsageError("experiment " + std::to_string(experiment.id) + " has no cell " + cell_text +
                   " (see: kvsweep runs " + std::to_string(experiment.id) + ")");
}

std::string file_stem(const std::string& name) {
  std::string stem;
  for (char c : name) {
    const bool safe =
        std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    stem += safe ? c : '-';
  }
  if (stem.empty() || stem.front() == '.') stem = "experiment" + stem;
  return stem;
}

void write_file(const std::string& path, const std::string& text) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  write_file_atomically(path, text);
}

}  // namespace kvsweep::orchestrator
