// Which experiments `kvsweep prune` removes the raw rows of.
#include "orchestrator/cli/prune_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include "common/duration.h"
#include "common/error_kinds.h"
#include "common/wall_clock.h"

namespace kvsweep::orchestrator {
namespace {

// How long ago, as one reads a heartbeat's age: "40 s", "25 min", "3.0 h", "12.5 days".
std::string age_text(double seconds) {
  char text[32];
  if (seconds < 120) return format_duration_s(seconds);
  if (seconds < 7200) {
    std::snprintf(text, sizeof text, "%.0f min", seconds / 60);
  } else if (seconds < 48 * 3600) {
    std::snprintf(text, sizeof text, "%.1f h", seconds / 3600);
  } else {
    std::snprintf(text, sizeof text, "%.1f days", seconds / 86400);
  }
  return text;
}

}  // namespace

std::string describe(const PrunePolicy& policy) {
  if (!policy.experiments.empty()) return "named on the command line";
  std::string text;
  if (policy.keep_last) {
    text = "keep the last " + std::to_string(*policy.keep_last) + " runs of each scenario";
  }
  if (policy.keep_since_unix_s) {
    text += (text.empty() ? "keep" : " and") + std::string(" runs started since ") +
            utc_iso8601(*policy.keep_since_unix_s);
  }
  return text;
}

double parse_older_than_s(const std::string& text) {
  const auto refuse = [&text](const std::string& why) {
    throw UsageError("prune: --older-than: '" + text + "' " + why +
                     "; write a number and a unit, one of s, m, h or d (90d, 12h, "
                     "30m), at most 100 years (36525d)");
  };
  const std::size_t unit_at = text.find_first_not_of("0123456789.");
  const std::string number = text.substr(0, unit_at);
  const std::string unit = unit_at == std::string::npos ? "" : text.substr(unit_at);
  const bool well_formed = !number.empty() && number.front() != '.' && number.back() != '.' &&
                           std::count(number.begin(), number.end(), '.') <= 1;
  if (!well_formed) refuse("is not a duration");
  double per_unit = 0;
  if (unit.empty()) refuse("has no unit");
  if (unit == "s") per_unit = 1;
  if (unit == "m") per_unit = 60;
  if (unit == "h") per_unit = 3600;
  if (unit == "d") per_unit = 86400;
  if (per_unit == 0) refuse("has an unknown unit '" + unit + "'");
  // Digits and one point only: strtod reads no sign, exponent, hex, nan or inf here. A long
  // string of digits gives a large finite value or infinity, both refused below as doubles,
  // before anything is converted to an integer type.
  const double seconds = std::strtod(number.c_str(), nullptr) * per_unit;
  if (!(seconds > 0)) refuse("is not more than 0");
  if (!(seconds <= kMaxOlderThanS)) refuse("is longer than 100 years");
  return seconds;
}

std::string why_not_pruned(const store::ExperimentRow& e,
                           const std::optional<std::string>& pruned_at,
                           std::optional<double> last_heartbeat_s, double now_s,
                           const std::string& db_path) {
  const std::string which = "experiment " + std::to_string(e.id) + " " + e.name;
  if (pruned_at) return which + ": pruned before, at " + *pruned_at + "; its summaries remain";
  if (e.status != "running") return "";
  std::string text = which + ": not pruned: it is marked running since " + e.started_at;
  // A heartbeat is the owner's clock as stored: one past year 5000 (or not finite) is not
  // turned into a date, whose integer cast would overflow.
  constexpr double kLatestReadableS = 95617584000;  // 5000-01-01
  const bool readable =
      last_heartbeat_s && *last_heartbeat_s >= 0 && *last_heartbeat_s < kLatestReadableS;
  if (last_heartbeat_s && !readable) {
    text += ", its cells' last heartbeat unreadable";
  } else if (last_heartbeat_s) {
    text += ", its cells' last heartbeat " + age_text(now_s - *last_heartbeat_s) + " ago (" +
            utc_iso8601(*last_heartbeat_s) + ")";
  } else {
    text += ", no cell of it claimed by a live run";
  }
  text +=
      "; prune never removes the rows of a running experiment. If that run is dead (its "
      "process gone), finish it with `kvsweep --db " +
      db_path + " run --resume " + (e.scenario_path.empty() ? "SCENARIO" : e.scenario_path) +
      "` (a cell whose heartbeat is older than --claim-timeout is taken over), then prune it";
  return text;
}

std::vector<store::ExperimentRow> experiments_to_prune(
    const std::vector<store::ExperimentRow>& experiments, const PrunePolicy& policy,
    const std::set<std::int64_t>& already_pruned, const std::set<std::int64_t>& started_before) {
  const auto prunable = [&](const store::ExperimentRow& e) {
    return e.status != "running" && already_pruned.count(e.id) == 0;
  };
  std::vector<store::ExperimentRow> chosen;
  if (!policy.experiments.empty()) {
    for (const auto& e : experiments) {
      const bool named = std::find(policy.experiments.begin(), policy.experiments.end(), e.id) !=
                         policy.experiments.end();
      if (named && prunable(e)) chosen.push_back(e);
    }
    return chosen;
  }
  // Newest first within each scenario: a run's rank among its scenario's finished runs.
  std::map<std::string, std::vector<const store::ExperimentRow*>> by_scenario;
  for (const auto& e : experiments) {
    if (e.status != "running") by_scenario[e.name].push_back(&e);
  }
  std::map<std::int64_t, std::size_t> rank;
  for (auto& [name, runs] : by_scenario) {
    std::stable_sort(runs.begin(), runs.end(), [](const auto* a, const auto* b) {
      return a->started_at != b->started_at ? a->started_at > b->started_at : a->id > b->id;
    });
    for (std::size_t i = 0; i < runs.size(); ++i) rank[runs[i]->id] = i;
  }
  for (const auto& e : experiments) {
    if (!prunable(e)) continue;
    bool prune = policy.keep_last || policy.keep_since_unix_s;
    if (policy.keep_last) {
      prune = prune && rank[e.id] >= static_cast<std::size_t>(std::max(0, *policy.keep_last));
    }
    if (policy.keep_since_unix_s) prune = prune && started_before.count(e.id) != 0;
    if (prune) chosen.push_back(e);
  }
  return chosen;
}

}  // namespace kvsweep::orchestrator
