// The predicted target: the scenario's simulated fleet run in virtual time in this process.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/log.h"
#include "driver/load_options.h"
#include "driver/workload.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/targets/planned_target.h"
#include "predict/virtual_fleet.h"
#include "predict/virtual_load.h"
#include "sim/engine/profile.h"
#include "store/rows.h"

namespace kvsweep::orchestrator {

// What `--target predict` runs: the fleet target.sim describes (replicas, profile) as the
// embedded target would start it, but as predict::VirtualFleet, so a sweep of any size
// finishes in seconds and never touches a socket. It applies the same factors as the sim
// kind (strategy, prefix_caching, the router's knobs) the way the sim's admin API does, and
// its load step (run_load) replaces the driver's: the runner calls it for every phase of every
// cell, and takes the measured phase's server-side samples from measured_samples().
// Thread contract: the runner's thread only; the target outlives every call it hands out.
class PredictTarget : public PlannedTarget {
 public:
  // Throws TargetError for a factor or level the fleet cannot apply, or a profile that cannot
  // be found. `plan`: the run's cells, expand_plan(spec, "predict"), whose treatments are
  // checked here. `network_latency_s`: one way, client <-> replica (predict/virtual_load.h).
  // `profile`: the replicas' timing in place of target.sim.profile's (a calibration's
  // candidate, orchestrator/calibrate/); nullopt: the scenario's, looked up by name.
  PredictTarget(const ScenarioSpec& spec, const std::vector<CellPlan>& plan,
                double network_latency_s = 0, Log log = silent_log(),
                std::optional<sim::TimingProfile> profile = std::nullopt);
  ~PredictTarget() override;

  std::string describe() const override;
  CommandLogs start() override;
  // Sets the strategy, its knobs and prefix caching; a change of a deploy-time factor also
  // restarts the fleet (empty caches, zeroed counters), as the sim target does. Each setting
  // is kept as a command log (argv "predict", "<factor>=<level>").
  CommandLogs apply(const Treatment& t) override;
  CommandLogs wait_ready() override;  // nothing to wait for: the fleet is always ready
  CommandLogs make_cold() override;   // every replica's prefix cache reset
  Endpoints endpoints() const override;

  std::vector<std::vector<std::string>> planned_commands(const Treatment* previous,
                                                         const Treatment& next) const override;

  // One load phase in virtual time (the shape of sweep/cell_load.h's CellLoad).
  driver::LoadResult run_load(const driver::LoadOptions& options, const driver::Workload& workload,
                              const std::function<void(const driver::Progress&)>& on_progress);
  // The server-side samples of the last run_load (before, during every target.metrics
  // interval of virtual time, after), on its epoch.
  std::vector<store::MetricSample> measured_samples();

  const predict::VirtualFleet& fleet() const { return *fleet_; }

  // Counts where each routed request's prompt could have hit (predict/routing_opportunity.h)
  // from now on; last_routing_opportunity() is then the last run_load's. `kvsweep replay`.
  void track_routing_opportunity() { fleet_->track_routing_opportunity(); }
  std::optional<predict::RoutingOpportunity> last_routing_opportunity() const {
    return last_opportunity_;
  }

 private:
  struct Settings {
    std::string strategy;  // canonical
    sim::StrategyParams params;
    std::optional<bool> prefix_caching;
  };
  Settings settings_for(const Treatment& t) const;
  bool changes_deploy_factor(const Treatment& previous, const Treatment& next) const;

  const ScenarioSpec& spec_;
  Log log_;
  predict::VirtualLoadOptions load_options_;
  std::unique_ptr<predict::VirtualFleet> fleet_;
  std::optional<Treatment> applied_;
  sim::StrategyParams params_;  // the router's knobs as last set
  std::vector<store::MetricSample> samples_;
  std::optional<predict::RoutingOpportunity> last_opportunity_;
};

}  // namespace kvsweep::orchestrator
