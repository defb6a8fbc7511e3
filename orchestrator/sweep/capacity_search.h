// One arm's capacity search: which load to probe next, given the verdicts so far. Grows
// geometrically until the SLO fails, then bisects (geometrically) until the highest passing
// and lowest failing loads are within the precision. Pure: it never runs anything, so the
// runner, the predictor's guide and a resumed sweep replaying its stored probes all drive the
// same sequence (docs/scenarios.md, "Capacity search").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/search_spec.h"

namespace kvsweep::orchestrator {

enum class ProbeOutcome {
  kPass,        // the SLO held (its interval at or above every target)
  kFail,        // it did not, or the cell was over capacity
  kUndecided,   // the interval straddles a target: tried again, up to max_tries
  kNotCounted,  // client-bound or short of its concurrency: the driver failed, not the server
};

// "pass", "fail", "undecided", "not counted".
const char* probe_outcome_name(ProbeOutcome outcome);

struct SearchProbe {
  double load = 0;
  int attempt = 0;  // 0 for the first try of this load
  ProbeOutcome outcome = ProbeOutcome::kPass;
};

struct CapacityResult {
  bool done = false;
  std::optional<double> capacity;       // the highest load that passed
  std::optional<double> first_failing;  // the lowest load that failed
  std::string why;                      // how the search ended, for a person
};

class CapacitySearch {
 public:
  // `integer`: the load is a count (concurrency) and every probe a whole number. `start`: the
  // first load probed (a guide's predicted capacity); it then moves by the precision first,
  // so a good guess is bracketed by two probes. Without it the search starts at spec.low and
  // moves by spec.growth.
  CapacitySearch(const SearchSpec& spec, bool integer, std::optional<double> start = {});

  // The load to probe next, and which try of it; nullopt when the search is done.
  std::optional<double> next_load() const { return next_; }
  int next_attempt() const { return attempt_; }

  // The verdict of the probe next_load() asked for. Throws std::logic_error for another load.
  void record(double load, ProbeOutcome outcome);

  const CapacityResult& result() const { return result_; }
  const std::vector<SearchProbe>& probes() const { return probes_; }
  // Warnings a person should read (a probe not counted, undecided tries counted as failing).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  double snap(double load) const;  // to the bounds and the probe grid
  std::string show(double load) const;
  void finish(const std::string& why);
  double step_factor(int moves) const;  // of the move after `moves` in that direction
  void choose_next(double last, ProbeOutcome counted);
  void count(double load, ProbeOutcome counted);

  SearchSpec spec_;
  bool integer_;
  double first_step_;  // factor of the first move in a direction
  bool accelerate_;    // guided: each further move in one direction doubles its log step
  std::optional<double> next_;
  int attempt_ = 0;
  std::optional<double> pass_;  // highest passing load
  std::optional<double> fail_;  // lowest failing load
  int moves_up_ = 0;            // consecutive moves up (or down) without a bracket yet
  int moves_down_ = 0;
  std::vector<SearchProbe> probes_;
  std::vector<std::string> warnings_;
  CapacityResult result_;
};

}  // namespace kvsweep::orchestrator
