// The searching sweep's loop: arm by arm, probe by probe.
#include "orchestrator/sweep/search_runner.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "common/wall_clock.h"
#include "figures/units.h"
#include "orchestrator/sweep/cell_runner.h"

namespace kvsweep::orchestrator {
namespace {

// One arm's search, probe by probe. State shared by its steps lives here.
class ArmSearch {
 public:
  ArmSearch(const ScenarioSpec& spec, const CellPlan& arm, store::Store& store,
            std::int64_t experiment_id, SweepOutput& output, const RunnerOptions& options,
            CellRunner& runner, const store::ClaimOwner& me,
            const std::map<std::string, store::CellRow>& existing, int& ordinal,
            SearchLoopResult& totals)
      : spec_(spec),
        arm_(arm),
        store_(store),
        experiment_id_(experiment_id),
        output_(output),
        options_(options),
        runner_(runner),
        me_(me),
        existing_(existing),
        ordinal_(ordinal),
        totals_(totals),
        name_(arm_name(spec, arm)) {
    a_.arm = arm.arm;
    a_.concurrency = arm.concurrency;
    a_.key = arm_search_key(spec, arm);
    if (const auto guide = options.search_guide.find(a_.key); guide != options.search_guide.end()) {
      a_.guide = guide->second;
    }
  }

  // Runs the arm's search to its end (or an interruption: returns false), storing its row.
  bool run(int position) {
    output_.line("searching " + name_ +
                 (a_.guide ? " from the predicted " + load_text(spec_, *a_.guide)
                           : " from " + load_text(spec_, spec_.search.low)) +
                 (spec_.slo.empty() ? " for its knee (no SLO)" : ""));
    CapacitySearch search(spec_.search, searches_concurrency(spec_), a_.guide);
    std::optional<double> knee_per_load;
    if (spec_.slo.empty()) {
      // A knee is judged against the lightest load: probe it first (an unguided search's first
      // probe is the same cell, so it runs once).
      const std::optional<store::CellRow> reference = run_probe(spec_.search.low, 0);
      if (!reference) return false;
      if (reference->status != "done") {
        return end_with_failure(search, position,
                                "the lightest load's probe did not finish: " + reference->error);
      }
      knee_per_load = throughput_per_load(store_, *reference, spec_.search.low);
    }
    std::size_t warnings_said = 0;
    while (const std::optional<double> load = search.next_load()) {
      const std::optional<store::CellRow> cell = run_probe(*load, search.next_attempt());
      if (!cell) return false;
      // The tries of this load so far, this one last: judged together.
      if (search.next_attempt() == 0) tries_.clear();
      tries_.push_back(*cell);
      std::string line;
      bool too_short = false;
      const std::optional<ProbeOutcome> outcome =
          probe_outcome(store_, tries_, spec_, probe_load_, line, *load, knee_per_load, &too_short);
      if (too_short) ++too_short_;
      if (!outcome) {
        return end_with_failure(search, position,
                                "a probe at " + load_text(spec_, *load) + " failed: " + line);
      }
      // Under the cell runner's own line for the probe: what the search makes of it.
      output_.line("    search: " + std::string(probe_outcome_name(*outcome)) + "; " + line);
      if (*outcome == ProbeOutcome::kPass) passing_[*load] = cell->id;
      search.record(*load, *outcome);
      probe_cells_.push_back(cell->id);
      a_.probes = search.probes();
      store_arm(store_, experiment_id_, position, spec_, a_, probe_cells_);
      for (; warnings_said < search.warnings().size(); ++warnings_said) {
        output_.line("  warning: " + search.warnings()[warnings_said]);
      }
    }
    a_.result = search.result();
    finish(position);
    return true;
  }

  const ArmCapacity& result() const { return a_; }

 private:
  // The probe's cell, run unless done already; nullopt when the sweep must stop.
  std::optional<store::CellRow> run_probe(double load, int attempt) {
    if (options_.stop && options_.stop->load()) return std::nullopt;
    CellPlan probe = probe_cell(spec_, arm_, load, attempt, options_.target_override);
    probe_load_ = probe.load;
    label_ = "probe: " + name_ + " at " + load_text(spec_, load) +
             (attempt > 0 ? ", try " + std::to_string(attempt + 1) : "");
    if (const auto ran = ran_here_.find(probe.key); ran != ran_here_.end()) return ran->second;
    store::CellRow cell;
    if (auto it = existing_.find(probe.key); it != existing_.end()) {
      cell = it->second;
      if (cell.status == "done") {
        ++totals_.cells_skipped;
        ran_here_[probe.key] = cell;
        return cell;
      }
      store_.reset_cell(cell.id);  // whatever it half-measured is gone
      cell.status = "pending";
    } else {
      probe.ordinal = ordinal_++;
      cell.experiment_id = experiment_id_;
      cell.ordinal = probe.ordinal;
      cell.key = probe.key;
      // A rate search's probes share their cap: each keeps its rate in its arm's label, so
      // the reports (which group an arm's cells by concurrency) never pool two rates.
      cell.arm =
          searches_concurrency(spec_) ? probe.arm : probe.arm + " @ " + load_text(spec_, load);
      cell.concurrency = probe.concurrency;
      cell.repeat = probe.repeat;
      cell.factors = store::decode_factors(probe.factors_json);
      cell.status = "pending";
      cell.id = store_.add_cell(cell);
    }
    probe.ordinal = cell.ordinal;
    store_.claim_cells({cell.id}, me_, unix_now_s());
    const bool go_on = runner_.run(cell, probe, label_);
    if (cell.status == "done") ++totals_.cells_done;
    if (cell.status == "failed") ++totals_.cells_failed;
    if (!go_on) return std::nullopt;
    ran_here_[probe.key] = cell;
    return cell;
  }

  bool end_with_failure(const CapacitySearch& search, int position, const std::string& why) {
    a_.probes = search.probes();
    a_.result.done = true;
    a_.result.capacity = search.result().capacity;
    a_.result.first_failing = search.result().first_failing;
    a_.result.why = why;
    finish(position);
    return true;
  }

  // The capacity probe's cell, the stored row, the closing line.
  void finish(int position) {
    if (too_short_ > 0) {
      // Said where the result is, so the reports carry it too.
      a_.result.why += "; " + std::to_string(too_short_) + " of its probes too short to judge " +
                       "over capacity (under search.min_probe " +
                       figures::format_fixed(spec_.search.min_probe_s, 0) +
                       " s of arrivals): a capacity from them may be a burst the fleet absorbed, " +
                       "not a load it sustains";
    }
    if (a_.result.capacity && passing_.count(*a_.result.capacity) > 0) {
      a_.capacity_cell = passing_[*a_.result.capacity];
    }
    store_arm(store_, experiment_id_, position, spec_, a_, probe_cells_);
    output_.line(result_line(spec_, name_, a_));
  }

  const ScenarioSpec& spec_;
  const CellPlan& arm_;
  store::Store& store_;
  const std::int64_t experiment_id_;
  SweepOutput& output_;
  const RunnerOptions& options_;
  CellRunner& runner_;
  const store::ClaimOwner& me_;
  const std::map<std::string, store::CellRow>& existing_;
  int& ordinal_;
  SearchLoopResult& totals_;
  const std::string name_;
  std::string label_;  // the current probe's, for the console
  ArmCapacity a_;
  std::map<double, std::int64_t> passing_;          // load -> its last passing probe cell
  std::vector<std::int64_t> probe_cells_;           // the cell of each recorded probe
  std::map<std::string, store::CellRow> ran_here_;  // probes this arm already has, by key
  std::vector<store::CellRow> tries_;               // the current load's tries, in order
  LoadSpec probe_load_;                             // the last probe cell's load section
  int too_short_ = 0;                               // probes shorter than search.min_probe
};

}  // namespace

SearchLoopResult run_search_loop(const ScenarioSpec& spec, const std::vector<CellPlan>& plan,
                                 store::Store& store, std::int64_t experiment_id,
                                 SweepOutput& output, const RunnerOptions& options,
                                 CellRunner& runner, const store::ClaimOwner& me) {
  SearchLoopResult out;
  // What a resumed experiment already has, by key; new probes take the next ordinals.
  std::map<std::string, store::CellRow> existing;
  int ordinal = 0;
  for (store::CellRow& cell : store.cells(experiment_id)) {
    ordinal = std::max(ordinal, cell.ordinal + 1);
    existing[cell.key] = cell;
  }
  int position = 0;
  for (const CellPlan& arm : search_arms(spec, plan)) {
    ArmSearch search(spec, arm, store, experiment_id, output, options, runner, me, existing,
                     ordinal, out);
    if (!search.run(position++)) {
      out.interrupted = true;
      break;
    }
    out.arms.push_back(search.result());
  }
  return out;
}

}  // namespace kvsweep::orchestrator
