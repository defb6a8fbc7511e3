// Scenario text run into a scratch store; a closed loop's capacity by doubling its users.
#include "orchestrator/calibrate/scenario_cells.h"

#include <filesystem>
#include <memory>
#include <stdexcept>

#include "common/error_kinds.h"
#include "figures/cell_summary.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/sweep/predict_wiring.h"
#include "orchestrator/sweep/runner.h"
#include "orchestrator/targets/predict_target.h"
#include "orchestrator/targets/target_factory.h"
#include "orchestrator/targets/target_kinds.h"
#include "store/store.h"

namespace kvsweep::orchestrator {
namespace {

namespace fs = std::filesystem;

class QuietOutput : public SweepOutput {
 public:
  void line(const std::string&) override {}
  void progress(const std::string&) override {}
  void end_progress() override {}
};

void no_migration_progress(const std::string&) {}

}  // namespace

std::vector<ScenarioCell> run_scenario_text(const std::string& text, const std::string& path,
                                            const std::string& scratch_dir, CellsOn on) {
  std::vector<ScenarioError> errors;
  const std::optional<ScenarioSpec> spec = parse_scenario(text, path, &errors, target_kinds());
  if (!spec) {
    std::string all;
    for (const auto& e : errors) all += e.text + "\n";
    throw UsageError(all);
  }
  // A fresh store each time: no experiment of an earlier call is resumed or read.
  std::string db;
  for (int i = 1; db.empty() || fs::exists(db); ++i) {
    db = (fs::path(scratch_dir) / ("cells-" + std::to_string(i) + ".db")).string();
  }
  const std::string override_kind = on == CellsOn::kPredict ? "predict" : "";
  const std::vector<CellPlan> plan = expand_plan(*spec, override_kind);
  std::vector<ScenarioCell> out;
  {
    RunnerOptions options;
    std::unique_ptr<Target> target;
    if (on == CellsOn::kPredict) {
      auto predicted = std::make_unique<PredictTarget>(*spec, plan);
      wire_predict_target(*predicted, options);
      target = std::move(predicted);
    } else {
      target = build_target(*spec, plan, override_kind, silent_log());
    }
    store::Store store =
        store::Store::open(db, store::Store::Access::kReadWrite, no_migration_progress);
    QuietOutput quiet;
    const SweepOutcome outcome = run_sweep(*spec, plan, *target, store, quiet, options);
    for (const auto& cell : store.cells(outcome.experiment_id)) {
      if (cell.status != "done") {
        throw std::runtime_error(path + ": cell " + cell.key + " " + cell.status + ": " +
                                 cell.error);
      }
      const auto summary = store.cell_summary(cell.id);
      if (!summary) throw std::runtime_error(path + ": cell " + cell.key + " has no summary");
      ScenarioCell c;
      c.key = cell.key;
      c.arm = cell.arm;
      c.concurrency = cell.concurrency;
      for (const auto& p : plan) {
        if (p.key != cell.key) continue;
        c.request_rate = p.load.request_rate;
        c.seed = p.seed;
      }
      c.metrics = figures::summary_from_row(*summary, figures::SummaryDetail::kFigures).metrics;
      out.push_back(std::move(c));
    }
  }
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::error_code ignored;
    fs::remove(db + suffix, ignored);
  }
  return out;
}

ClosedLoopCapacity closed_loop_capacity(const std::function<std::string(int users)>& scenario_for,
                                        const std::string& scratch_dir, double min_rise,
                                        int max_users) {
  ClosedLoopCapacity out;
  for (int users = 1; users <= max_users; users *= 2) {
    const auto cells = run_scenario_text(
        scenario_for(users), "closed loop of " + std::to_string(users) + " users", scratch_dir);
    if (cells.size() != 1) {
      throw UsageError("closed_loop_capacity: the scenario for " + std::to_string(users) +
                       " users has " + std::to_string(cells.size()) + " cells, want 1");
    }
    const double rate = cells[0].metrics.request_throughput;
    const bool rose = out.steps.empty() || rate > out.steps.back().requests_per_s * (1 + min_rise);
    out.steps.push_back({users, rate});
    if (rate > out.requests_per_s) {
      out.requests_per_s = rate;
      out.users = users;
    }
    if (!rose) break;
  }
  return out;
}

}  // namespace kvsweep::orchestrator
