// A stored run's cells replayed in virtual time with a candidate profile: the same runner that
// `kvsweep predict` drives (same arrivals, dataset, strategy, cache policy, warm-up), into a
// scratch store of its own, and each cell's figures read from its summary as the measured
// ones were.
#pragma once

#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/calibrate/stored_run.h"
#include "predict/calibrate/calibration.h"
#include "sim/engine/profile.h"

namespace kvsweep::orchestrator {

class VirtualReplay final : public predict::CellReplayer {
 public:
  // `run` outlives the replay. The scratch stores live in a private directory under $TMPDIR
  // (else /tmp), removed with the replay. Throws std::runtime_error when it cannot be made.
  explicit VirtualReplay(const StoredRun& run, const std::atomic<bool>* stop = nullptr);
  ~VirtualReplay();
  VirtualReplay(const VirtualReplay&) = delete;
  VirtualReplay& operator=(const VirtualReplay&) = delete;

  // The figures of run.cells[i] for each i of `cells`, predicted with `profile`, in that
  // order; nullopt for a cell the prediction did not complete (failed, or nothing ok).
  // Throws std::runtime_error when the sweep cannot run (a dataset that no longer loads) or
  // was stopped.
  std::vector<std::optional<predict::CalibrationFigures>> figures(
      const sim::TimingProfile& profile, const std::vector<std::size_t>& cells) override;

  int replays() const override { return replays_; }

 private:
  const StoredRun& run_;
  const std::atomic<bool>* stop_;
  std::string dir_;
  int replays_ = 0;
};

}  // namespace kvsweep::orchestrator
