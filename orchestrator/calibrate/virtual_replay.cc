#include "orchestrator/calibrate/virtual_replay.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "orchestrator/sweep/predict_wiring.h"
#include "orchestrator/sweep/runner.h"
#include "orchestrator/targets/predict_target.h"
#include "store/store.h"

namespace kvsweep::orchestrator {
namespace {

namespace fs = std::filesystem;

// A replay says nothing while it runs: the calibration reports once per fit.
class ReplayQuietOutput : public SweepOutput {
 public:
  void line(const std::string&) override {}
  void progress(const std::string&) override {}
  void end_progress() override {}
};

void replay_migration_progress(const std::string&) {}

}  // namespace

VirtualReplay::VirtualReplay(const StoredRun& run, const std::atomic<bool>* stop)
    : run_(run), stop_(stop) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/kvsweep-calibrate-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("calibrate: cannot make a scratch directory " + pattern + ": " +
                             std::strerror(errno));
  }
  dir_ = pattern;
}

VirtualReplay::~VirtualReplay() {
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

std::vector<std::optional<predict::CalibrationFigures>> VirtualReplay::figures(
    const sim::TimingProfile& profile, const std::vector<std::size_t>& cells) {
  std::vector<CellPlan> plan;
  for (const std::size_t i : cells) plan.push_back(run_.cells.at(i).plan);
  const std::string path = dir_ + "/replay-" + std::to_string(++replays_) + ".db";
  std::map<std::string, std::optional<predict::CalibrationFigures>> by_key;
  {
    PredictTarget target(run_.spec, plan, 0, silent_log(), profile);
    RunnerOptions options;
    wire_predict_target(target, options);
    options.stop = stop_;
    store::Store store =
        store::Store::open(path, store::Store::Access::kReadWrite, replay_migration_progress);
    ReplayQuietOutput quiet;
    const SweepOutcome outcome = run_sweep(run_.spec, plan, target, store, quiet, options);
    if (outcome.status == "interrupted") throw std::runtime_error("calibrate: stopped");
    const auto metrics = cell_figures(store, outcome.experiment_id);
    for (const auto& cell : store.cells(outcome.experiment_id)) {
      const auto m = metrics.find(cell.id);
      if (m != metrics.end() && m->second.ok > 0) by_key[cell.key] = figures_of(m->second);
    }
  }
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::error_code ignored;
    fs::remove(path + suffix, ignored);
  }
  std::vector<std::optional<predict::CalibrationFigures>> out;
  for (const auto& cell : plan) {
    const auto found = by_key.find(cell.key);
    out.push_back(found == by_key.end() ? std::nullopt : found->second);
  }
  return out;
}

}  // namespace kvsweep::orchestrator
