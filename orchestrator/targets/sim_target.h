// The embedded target: a simulated fleet started in this process on loopback. Also stands in
// for a cluster target under `--target sim`, applying the same factors to the fleet.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/log.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/targets/planned_target.h"
#include "orchestrator/targets/router_admin_client.h"
#include "sim/fleet.h"

namespace kvsweep::orchestrator {

// Factors the fleet applies (target_kinds.cc, kind sim): strategy (any spelling
// strategy_names.h knows), prefix_caching (on | off), and the router's knobs under KubeAI's and
// Dynamo's names: mean_load_factor, prefix_char_length, replication, overlap_score_weight,
// router_temperature.
class SimTarget : public PlannedTarget {
 public:
  // Throws TargetError for a factor or level the fleet cannot apply. `plan`: the run's cells
  // (expand_plan(spec), or expand_plan(spec, "sim") standing in for a cluster target), whose
  // treatments are checked here. Admin requests and gate polls are logged at debug level on
  // `log`.
  SimTarget(const ScenarioSpec& spec, const std::vector<CellPlan>& plan, Log log = silent_log());
  ~SimTarget() override;

  std::string describe() const override;
  CommandLogs start() override;
  // Sets the router's strategy and knobs and the replicas' prefix caching through the admin
  // API, as kubectl patch would. A change of a deploy-time factor also restarts the fleet
  // (empty caches, zeroed counters), as a redeploy would.
  CommandLogs apply(const Treatment& t) override;
  CommandLogs wait_ready() override;
  CommandLogs make_cold() override;
  Endpoints endpoints() const override;
  // A "health" log when the router took a replica out or put it back during the cell.
  CommandLogs cell_finished() override;

  std::vector<std::vector<std::string>> planned_commands(const Treatment* previous,
                                                         const Treatment& next) const override;

 private:
  struct Requests {
    std::string strategy_body;  // POST /admin/strategy, "" when nothing to set
    std::string engine_body;    // POST /admin/engine, "" when nothing to set
  };
  Requests requests_for(const Treatment& t) const;
  bool changes_deploy_factor(const Treatment& previous, const Treatment& next) const;

  const ScenarioSpec& spec_;
  Log log_;
  sim::Fleet fleet_;
  std::optional<Treatment> applied_;
  RouterAdminClient admin_;
};

}  // namespace kvsweep::orchestrator
