// `kvsweep plan`: a scenario's cells in order and the exact commands each deployment runs;
// runs nothing.
#include <cstdio>
#include <memory>
#include <optional>

#include "orchestrator/cli/scenario_lookup.h"
#include "orchestrator/cli/subcommand.h"
#include "orchestrator/cli/sweep_preview.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/rehearsal.h"
#include "orchestrator/targets/child_process.h"

namespace kvsweep::orchestrator {
namespace {

// `kvsweep plan`: the cells in order and, at each change of treatment, the exact commands the
// runner would run. Builds the target (to validate and describe) but never starts it.
int plan_command(const std::string& scenario_path, const std::string& override_kind) {
  ScenarioSpec spec = load_scenario_or_throw(scenario_path);
  if (override_kind == "sim") spec = rehearsal_of(spec);
  const auto cells = expand_plan(spec, override_kind);
  std::unique_ptr<TreatmentPlanner> target = build_planner(spec, override_kind);
  std::printf("%s\n%s\n", plan_headline(spec, cells, target->describe()).c_str(),
              cell_shape(spec, override_kind == "sim").c_str());
  std::optional<Treatment> applied;
  for (const auto& c : cells) {
    if (!applied || !(*applied == c.treatment)) {
      std::printf("\n  apply:");
      for (const auto& [factor, level] : c.treatment.levels) {
        std::printf(" %s=%s", factor.c_str(), level.c_str());
      }
      std::printf("%s\n", c.treatment.levels.empty() ? " (nothing to apply)" : "");
      const auto commands = target->planned_commands(applied ? &*applied : nullptr, c.treatment);
      for (const auto& argv : commands) std::printf("    $ %s\n", describe_argv(argv).c_str());
      const auto gates = target->planned_gates(applied ? &*applied : nullptr, c.treatment);
      std::printf("    then the readiness gates%s\n", gates.empty() ? "" : ", in order:");
      for (const auto& gate : gates) std::printf("      %s\n", gate.c_str());
      if (const int retries = spec.target.readiness.retries; retries > 0) {
        std::printf("    a failed apply or gate is tried again up to %d time%s\n", retries,
                    retries == 1 ? "" : "s");
      }
      applied = c.treatment;
    }
    std::string extra;
    for (const auto& [factor, level] : c.load_levels) extra += " " + factor + "=" + level;
    std::printf("  %3d  %-28s concurrency=%-5d repeat=%d%s  key=%s\n", c.ordinal + 1, c.arm.c_str(),
                c.concurrency, c.repeat + 1, extra.c_str(), c.key.c_str());
  }
  return kExitOk;
}

}  // namespace

Subcommand register_plan(CLI::App& app, const GlobalOptions&) {
  auto scenario = std::make_shared<std::string>();
  auto override_kind = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "plan", "print a scenario's cells in order and the exact commands, run nothing");
  cmd->add_option("scenario", *scenario, "scenario YAML file")->required()->check(scenario_file());
  cmd->add_option("--target", *override_kind, "plan for another target: sim")
      ->check(CLI::IsMember({"sim"}));
  return {cmd, [scenario, override_kind] { return plan_command(*scenario, *override_kind); }};
}

}  // namespace kvsweep::orchestrator
