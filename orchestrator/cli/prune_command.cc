// `kvsweep prune`: removes the raw request rows and metric samples of old experiments, keeping
// their summaries, so history, compare and serve still show them and the store stops growing.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error_kinds.h"
#include "common/wall_clock.h"
#include "figures/stored_summaries.h"
#include "orchestrator/cli/console.h"
#include "orchestrator/cli/prune_policy.h"
#include "orchestrator/cli/store_lookup.h"
#include "orchestrator/cli/subcommand.h"
#include "store/prunes.h"
#include "store/store.h"

namespace kvsweep::orchestrator {
namespace {

struct PruneArgs {
  std::optional<int> keep_last;
  std::string older_than;
  std::vector<std::string> experiments;
  bool dry_run = false;
  bool no_vacuum = false;
};

std::int64_t file_bytes(const std::string& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  return error ? 0 : static_cast<std::int64_t>(size);
}

PrunePolicy policy_of(const store::RunReader& store, const PruneArgs& args) {
  PrunePolicy policy;
  for (const std::string& which : args.experiments) {
    policy.experiments.push_back(resolve_experiment(store, which).id);
  }
  if (!policy.experiments.empty() && (args.keep_last || !args.older_than.empty())) {
    throw UsageError(
        "prune: --experiment names what to prune; it does not combine with --keep-last or "
        "--older-than");
  }
  if (args.keep_last) {
    if (*args.keep_last < 0) throw UsageError("prune: --keep-last: not below 0");
    policy.keep_last = *args.keep_last;
  }
  if (!args.older_than.empty()) {
    policy.keep_since_unix_s = unix_now_s() - parse_older_than_s(args.older_than);
  }
  if (policy.experiments.empty() && !policy.keep_last && !policy.keep_since_unix_s) {
    policy.keep_last = kDefaultKeepLast;
  }
  return policy;
}

// Each experiment named with --experiment that is not pruned, and why: a run still marked
// running (maybe a dead one), or one pruned before.
void tell_why_named_kept(const store::RunReader& store, const std::string& db_path,
                         const PrunePolicy& policy,
                         const std::vector<store::ExperimentRow>& chosen) {
  const double now_s = unix_now_s();
  for (const std::int64_t id : policy.experiments) {
    const bool pruned_now = std::any_of(chosen.begin(), chosen.end(),
                                        [id](const store::ExperimentRow& e) { return e.id == id; });
    const auto experiment = store.experiment(id);
    if (pruned_now || !experiment) continue;
    const auto mark = store.prune_mark(id);
    std::optional<double> last_heartbeat_s;
    for (const store::CellClaim& claim : store.claims(id)) {
      last_heartbeat_s = std::max(last_heartbeat_s.value_or(claim.heartbeat_s), claim.heartbeat_s);
    }
    const std::string why = why_not_pruned(
        *experiment, mark ? std::optional<std::string>(mark->pruned_at) : std::nullopt,
        last_heartbeat_s, now_s, db_path);
    if (!why.empty()) std::printf("%s\n", why.c_str());
  }
}

int prune_command(const GlobalOptions& global, const PruneArgs& args) {
  if (!std::filesystem::exists(global.db_path)) {
    throw UsageError(global.db_path + ": no such store");
  }
  Console console(stderr, Console::PlainProgress::kPeriodic, global.verbosity);
  const auto tell = [&console](const std::string& line) { console.line("kvsweep: " + line); };
  store::Store store = store::Store::open(global.db_path);
  // Nothing is pruned before it has its summary: cells an older kvsweep stored get theirs now.
  figures::summarize_stored_cells(store, tell);
  const PrunePolicy policy = policy_of(store, args);
  const std::vector<store::ExperimentRow> all = store.experiments();
  std::set<std::int64_t> already;
  for (const auto& e : all) {
    if (store.prune_mark(e.id)) already.insert(e.id);
  }
  std::set<std::int64_t> started_before;
  if (policy.keep_since_unix_s) {
    for (const std::int64_t id :
         store::experiments_started_before(global.db_path, *policy.keep_since_unix_s)) {
      started_before.insert(id);
    }
  }
  const auto chosen = experiments_to_prune(all, policy, already, started_before);
  tell_why_named_kept(store, global.db_path, policy, chosen);
  const std::int64_t before = file_bytes(global.db_path);
  std::int64_t requests = 0;
  for (const store::ExperimentRow& e : chosen) {
    std::int64_t rows = 0;
    for (const auto& cell : store.cells(e.id)) rows += store.request_count(cell.id);
    requests += rows;
    std::printf("%s experiment %lld %s (%s): %lld request rows\n",
                args.dry_run ? "would prune" : "pruned", static_cast<long long>(e.id),
                e.name.c_str(), e.started_at.c_str(), static_cast<long long>(rows));
    if (!args.dry_run) store.prune_raw_rows({e.id, utc_now_iso8601(), describe(policy)});
  }
  if (chosen.empty()) {
    std::printf("nothing to prune (%s; %zu experiments, %zu pruned before)\n",
                describe(policy).c_str(), all.size(), already.size());
    return kExitOk;
  }
  if (args.dry_run) {
    std::printf("would prune %zu experiments, %lld request rows (%s)\n", chosen.size(),
                static_cast<long long>(requests), describe(policy).c_str());
    return kExitOk;
  }
  if (!args.no_vacuum) {
    tell(global.db_path + ": returning the freed space to the file system");
    store.vacuum();
  }
  std::printf(
      "pruned %zu experiments, %lld request rows (%s); summaries kept; %s: %.1f MB -> "
      "%.1f MB\n",
      chosen.size(), static_cast<long long>(requests), describe(policy).c_str(),
      global.db_path.c_str(), static_cast<double>(before) / 1e6,
      static_cast<double>(file_bytes(global.db_path)) / 1e6);
  return kExitOk;
}

}  // namespace

Subcommand register_prune(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<PruneArgs>();
  auto* cmd = app.add_subcommand(
      "prune",
      "remove the raw request rows and metric samples of old experiments, keeping their "
      "summaries (history, compare and serve still show them); default: keep the last " +
          std::to_string(kDefaultKeepLast) + " runs of each scenario");
  cmd->add_option("--keep-last", args->keep_last,
                  "keep the raw rows of the newest N finished runs of each scenario");
  cmd->add_option("--older-than", args->older_than,
                  "prune only runs started longer ago than this: a number and a unit, s, m, h "
                  "or d (90d, 12h), at most 100 years; with --keep-last, both must hold");
  cmd->add_option("--experiment", args->experiments,
                  "prune these experiments (id or name; repeatable) and nothing else");
  cmd->add_flag("--dry-run", args->dry_run, "list what would be pruned; change nothing");
  cmd->add_flag("--no-vacuum", args->no_vacuum,
                "leave the freed pages inside the file (SQLite reuses them); without it the "
                "space returns to the file system (a store not yet in incremental auto-vacuum "
                "is rewritten once, needing free disk about its size)");
  return {cmd, [args, &global] { return prune_command(global, *args); }};
}

}  // namespace kvsweep::orchestrator
