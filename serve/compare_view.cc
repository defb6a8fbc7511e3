// The compare page's view: kvsweep compare's verdicts and intervals as JSON and text.
#include "serve/compare_view.h"

#include <algorithm>

#include "figures/units.h"
#include "serve/store_views.h"

namespace kvsweep::serve {
namespace {

using Json = nlohmann::ordered_json;

store::ExperimentRow find_experiment(const store::RunReader& store, const std::string& which) {
  std::optional<store::ExperimentRow> found;
  if (!which.empty() && which.size() < 18 &&
      which.find_first_not_of("0123456789") == std::string::npos) {
    found = store.experiment(std::stoll(which));
  }
  if (!found && !which.empty()) found = store.experiment_by_name(which);
  // NAME~N: the Nth run of NAME before its latest, as `kvsweep compare` reads it.
  if (const auto tilde = which.rfind('~'); !found && tilde != std::string::npos) {
    const std::string back = which.substr(tilde + 1);
    if (!back.empty() && back.size() < 7 &&
        back.find_first_not_of("0123456789") == std::string::npos) {
      std::vector<store::ExperimentRow> runs;
      for (auto& e : store.experiments()) {
        if (e.name == which.substr(0, tilde)) runs.push_back(std::move(e));
      }
      const std::size_t n = std::stoul(back);
      if (n < runs.size()) found = runs[runs.size() - 1 - n];
    }
  }
  if (!found) throw NotFound{"no experiment \"" + which + "\" in " + store_file_name(store)};
  return *found;
}

store::CellRow find_cell(const store::RunReader& store, const std::string& which) {
  const auto colon = which.rfind(':');
  const std::string k = which.substr(colon + 1);
  const store::ExperimentRow e = find_experiment(store, which.substr(0, colon));
  if (!k.empty() && k.size() < 9 && k.find_first_not_of("0123456789") == std::string::npos) {
    for (const auto& cell : store.cells(e.id)) {
      if (cell.ordinal + 1 == std::stoi(k)) return cell;
    }
  }
  throw NotFound{"experiment " + std::to_string(e.id) + " has no cell \"" + k + "\""};
}

std::string signed_percent(double fraction) {
  return (fraction >= 0 ? "+" : "") + figures::format_fixed(fraction * 100, 1) + "%";
}

std::string verdict_class(const std::string& verdict) {
  if (verdict == "regression" || verdict == "improvement") return verdict;
  return verdict == "no change" ? "no-change" : "insufficient";
}

}  // namespace

nlohmann::ordered_json compare_view(const store::StoreReader& store, const std::string& a,
                                    const std::string& b, const figures::CompareOptions& options) {
  const bool cells = a.find(':') != std::string::npos || b.find(':') != std::string::npos;
  const figures::CompareResult result =
      cells ? figures::compare_cells(store, find_cell(store, a), find_cell(store, b), options)
            : figures::compare_experiments(store, find_experiment(store, a).id,
                                           find_experiment(store, b).id, options);
  Json doc = figures::compare_json(result, options);
  std::size_t regressions = 0;
  for (auto& row : doc["rows"]) {
    for (auto& m : row["metrics"]) {
      const std::string verdict = m["verdict"].get<std::string>();
      regressions += verdict == "regression";
      m["verdict_class"] = verdict_class(verdict);
      m["change_text"] = m["change"].is_null() ? "" : signed_percent(m["change"].get<double>());
      m["interval_text"] = m["ci_low"].is_null()
                               ? ""
                               : "[" + signed_percent(m["ci_low"].get<double>()) + ", " +
                                     signed_percent(m["ci_high"].get<double>()) + "]";
    }
  }
  doc["regressions"] = regressions;
  doc["a_query"] = a;
  doc["b_query"] = b;
  return doc;
}

nlohmann::ordered_json experiment_choices(const store::RunReader& store) {
  Json list = Json::array();
  auto rows = store.experiments();
  std::reverse(rows.begin(), rows.end());
  for (const auto& e : rows) {
    list.push_back({{"id", e.id},
                    {"label", std::to_string(e.id) + " " + e.name + " " + e.started_at + " (" +
                                  e.status + ")"}});
  }
  return list;
}

}  // namespace kvsweep::serve
