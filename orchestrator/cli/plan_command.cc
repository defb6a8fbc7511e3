// `kvsweep plan`: a scenario's cells in order and the exact commands each deployment runs;
// runs nothing.
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrator/cli/dataset_preview.h"
#include "orchestrator/cli/scenario_lookup.h"
#include "orchestrator/cli/subcommand.h"
#include "orchestrator/cli/sweep_preview.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/prompt_repeats.h"
#include "orchestrator/scenario/rehearsal.h"
#include "orchestrator/sweep/cell_runner.h"
#include "orchestrator/targets/child_process.h"
#include "orchestrator/targets/kube/job_shard_launcher.h"
#include "orchestrator/targets/target_factory.h"

namespace kvsweep::orchestrator {
namespace {

// At a change of treatment: the treatment, the exact commands the runner would run, and the
// readiness gates it would open after them.
void print_apply(const TreatmentPlanner& target, const ScenarioSpec& spec,
                 const std::optional<Treatment>& applied, const Treatment& next) {
  std::printf("\n  apply:");
  for (const auto& [factor, level] : next.levels) {
    std::printf(" %s=%s", factor.c_str(), level.c_str());
  }
  for (const auto& [path, value] : next.epp_settings) {
    std::printf(" %s=%s", path.c_str(), value.c_str());
  }
  if (!next.base_url.empty()) std::printf(" base_url=%s", next.base_url.c_str());
  std::printf("%s\n", next.levels.empty() && next.base_url.empty() && next.epp_settings.empty()
                          ? " (nothing to apply)"
                          : "");
  const auto commands = target.planned_commands(applied ? &*applied : nullptr, next);
  for (const auto& argv : commands) std::printf("    $ %s\n", describe_argv(argv).c_str());
  if (commands.empty() && !next.base_url.empty()) {
    std::printf("    (no command: the load goes to %s)\n", next.base_url.c_str());
  }
  const auto gates = target.planned_gates(applied ? &*applied : nullptr, next);
  std::printf("    then the readiness gates%s\n", gates.empty() ? "" : ", in order:");
  for (const auto& gate : gates) std::printf("      %s\n", gate.c_str());
  if (const int retries = spec.target.readiness.retries; retries > 0) {
    std::printf("    a failed apply or gate is tried again up to %d time%s\n", retries,
                retries == 1 ? "" : "s");
  }
}

// The experiment's repeat warning (prompt_repeats.h), as the run says it before its first cell:
// the datasets are loaded as the run loads them. One that cannot be loaded is the run's error
// to report.
std::vector<std::string> repeat_warnings(const ScenarioSpec& spec,
                                         const std::vector<CellPlan>& cells,
                                         const std::string& override_kind) {
  std::vector<Workloads> workloads;
  try {
    workloads = load_workloads(spec, cells, !override_kind.empty() || spec.target.kind == "sim");
  } catch (const std::invalid_argument&) {
    return {};
  }
  const std::vector<WorkloadSize> sizes = workload_sizes(workloads);
  return repeats_warnings(cells, experiment_repeats(cells, sizes), sizes, spec.search.enabled());
}

// load.shards: where each cell's measured phase runs, and the Job a Kubernetes target creates.
void print_shards(const ScenarioSpec& spec, const std::string& override_kind) {
  const LoadSpec& l = spec.load;
  if (l.shards <= 1 || override_kind == "predict") return;
  if (!shards_run_as_job(spec)) {
    std::printf(
        "load shards: each cell's measured phase in %d local processes: kvsweep shard run "
        "--plan PLAN --index K --dir DIR\n",
        l.shards);
    return;
  }
  ShardJobSettings job;
  job.name = "kvsweep-shards-<cell>-<n>";
  job.image = l.shard_job.image;
  job.cpu = l.shard_job.cpu;
  job.memory = l.shard_job.memory;
  job.node_selector = l.shard_job.node_selector;
  job.env_secret = l.shard_job.env_secret;
  std::printf(
      "load shards: each cell's measured phase as an Indexed Job of %d pods, created with "
      "`kubectl create -f` before its load and deleted after:\n%s\n",
      l.shards,
      kube::shard_job_manifest(job, l.shards)
          .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
          .c_str());
}

// `kvsweep plan`: the cells in order and, at each change of treatment, the exact commands the
// runner would run. Builds the target (to validate and describe) but never starts it.
int plan_command(const std::string& scenario_path, const std::string& override_kind) {
  ScenarioSpec spec = load_scenario_or_throw(scenario_path);
  if (override_kind == "sim") spec = rehearsal_of(spec);
  const auto cells = expand_plan(spec, override_kind);
  std::unique_ptr<TreatmentPlanner> target = build_planner(spec, cells, override_kind);
  std::printf("%s\n%s\n", plan_headline(spec, cells, target->describe()).c_str(),
              cell_shape(spec, override_kind == "sim").c_str());
  for (const auto& line : dataset_lines(spec)) std::printf("%s\n", line.c_str());
  for (const auto& line : factor_lines(spec)) std::printf("%s\n", line.c_str());
  print_shards(spec, override_kind);
  for (const auto& line : repeat_warnings(spec, cells, override_kind)) {
    std::printf("warning: %s\n", line.c_str());
  }
  std::optional<Treatment> applied;
  for (const auto& c : cells) {
    if (!applied || !(*applied == c.treatment)) print_apply(*target, spec, applied, c.treatment);
    applied = c.treatment;
    std::string extra;
    for (const auto& s : c.settings) {
      if (s.path.rfind("load.", 0) == 0 || s.path == "seed") {
        extra += " " + s.path.substr(s.path.rfind('.') + 1) + "=" + s.value;
      }
    }
    if (spec.search.enabled()) {
      // The probes are decided as the search goes: each arm's search, not its cells.
      std::printf("  %3d  %-28s %s searched from %g to %g%s\n", c.ordinal + 1, c.arm.c_str(),
                  spec.search.factor.c_str(), spec.search.low, spec.search.high,
                  spec.search.factor == "concurrency"
                      ? ""
                      : (", in-flight cap " + std::to_string(c.concurrency)).c_str());
      continue;
    }
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
  cmd->add_option("--target", *override_kind, "plan for another target: sim, predict")
      ->check(CLI::IsMember({"sim", "predict"}));
  return {cmd, [scenario, override_kind] { return plan_command(*scenario, *override_kind); }};
}

}  // namespace kvsweep::orchestrator
