// `kvsweep replay EXPERIMENT --strategy S [--replicas N]`: a stored run's traffic in virtual
// time under another routing strategy or fleet size (orchestrator/calibrate/stored_replay.h),
// stored as a predicted experiment and compared cell by cell with what the run measured.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error_kinds.h"
#include "orchestrator/calibrate/stored_replay.h"
#include "orchestrator/calibrate/stored_run.h"
#include "orchestrator/cli/profile_lookup.h"
#include "orchestrator/cli/signal_guard.h"
#include "orchestrator/cli/store_lookup.h"
#include "orchestrator/cli/subcommand.h"
#include "sim/engine/profile.h"
#include "sim/fleet.h"

namespace kvsweep::orchestrator {
namespace {

using predict::CalibrationFigures;
using predict::Figure;

struct ReplayArgs {
  std::string experiment;
  std::string strategy;
  int replicas = 0;
  std::string profile;
};

std::string hit_text(const std::optional<double>& hit) {
  if (!hit) return "n/a";
  char text[16];
  std::snprintf(text, sizeof text, "%.0f%%", 100 * *hit);
  return text;
}

std::string change(const std::optional<double>& before, const std::optional<double>& after) {
  if (!before || !after || !(*before > 0)) return "n/a";
  char text[24];
  std::snprintf(text, sizeof text, "%+.0f%%", 100 * (*after / *before - 1));
  return text;
}

std::string pair_text(const std::optional<double>& before, const std::optional<double>& after,
                      const char* unit) {
  char text[64];
  if (!before) return "n/a";
  if (!after) {
    std::snprintf(text, sizeof text, "%.1f%s -> failed", *before, unit);
  } else {
    std::snprintf(text, sizeof text, "%.1f%s -> %.1f%s (%s)", *before, unit, *after, unit,
                  change(before, after).c_str());
  }
  return text;
}

std::string share(std::int64_t part, std::int64_t whole) {
  if (whole <= 0) return "n/a";
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%",
                100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return text;
}

// Where the replay's prompt blocks could have hit: the KV hit rate split into what the routing
// lost (cached on another replica) and what eviction lost (computed before, evicted everywhere).
void print_opportunities(const ReplayResult& r) {
  bool any = false;
  for (const auto& c : r.cells) any = any || (c.opportunity && c.opportunity->prompt_blocks > 0);
  if (!any) return;
  std::printf("\nthe replay's prompt blocks (full blocks, measured phase):\n");
  std::printf("%-26s %10s %14s %15s %18s\n", "cell", "hit", "routing lost", "eviction lost",
              "not yet computed");
  for (const auto& c : r.cells) {
    if (!c.opportunity || c.opportunity->prompt_blocks <= 0) continue;
    const predict::RoutingOpportunity& o = *c.opportunity;
    std::printf("%-26s %10s %14s %15s %18s\n", c.label.c_str(),
                share(o.chosen_cached, o.prompt_blocks).c_str(),
                share(o.best_cached - o.chosen_cached, o.prompt_blocks).c_str(),
                share(o.computed_before - o.best_cached, o.prompt_blocks).c_str(),
                share(o.prompt_blocks - o.computed_before, o.prompt_blocks).c_str());
  }
  std::printf("\n");
}

// One line per arm of the run: its traffic under the replay's fleet, summed over its cells
// (mean TTFT weighted by each cell's successful requests; KV hit the mean of its cells').
void print_headlines(const ReplayResult& r, const std::string& under) {
  struct Sums {
    double ttft_run = 0, ttft_replay = 0, ok_run = 0, ok_replay = 0;
    double tok_run = 0, tok_replay = 0;
    double hit_run = 0, hit_replay = 0;
    int hits = 0;
  };
  std::vector<std::string> order;
  std::map<std::string, Sums> by_arm;
  for (const auto& c : r.cells) {
    if (!by_arm.count(c.arm)) order.push_back(c.arm);
    Sums& s = by_arm[c.arm];
    if (!c.replayed) continue;
    const auto ttft_run = c.measured[Figure::kTtftMean];
    const auto ttft_replay = (*c.replayed)[Figure::kTtftMean];
    if (ttft_run && ttft_replay) {
      s.ttft_run += *ttft_run * static_cast<double>(c.measured.ok);
      s.ok_run += static_cast<double>(c.measured.ok);
      s.ttft_replay += *ttft_replay * static_cast<double>(c.replayed->ok);
      s.ok_replay += static_cast<double>(c.replayed->ok);
    }
    s.tok_run += c.measured[Figure::kOutputTokS].value_or(0);
    s.tok_replay += (*c.replayed)[Figure::kOutputTokS].value_or(0);
    if (c.measured.kv_hit && c.replayed->kv_hit) {
      s.hit_run += *c.measured.kv_hit;
      s.hit_replay += *c.replayed->kv_hit;
      ++s.hits;
    }
  }
  for (const auto& arm : order) {
    const Sums& s = by_arm[arm];
    std::string hit = "KV hit n/a";
    if (s.hits > 0) {
      hit = "KV hit " + hit_text(s.hit_run / s.hits) + " -> " + hit_text(s.hit_replay / s.hits);
    }
    const std::optional<double> ttft_run =
        s.ok_run > 0 ? std::optional<double>(s.ttft_run / s.ok_run) : std::nullopt;
    const std::optional<double> ttft_replay =
        s.ok_replay > 0 ? std::optional<double>(s.ttft_replay / s.ok_replay) : std::nullopt;
    std::printf("%s's traffic under %s: %s, mean TTFT %s, output tok/s %s\n", arm.c_str(),
                under.c_str(), hit.c_str(), change(ttft_run, ttft_replay).c_str(),
                change(s.tok_run, s.tok_replay).c_str());
  }
}

int run_replay(const ReplayArgs& args, const GlobalOptions& global) {
  if (args.replicas < 0) throw UsageError("--replicas: expected at least 1");
  // Read-write (the replay is stored), but never a new file: there is nothing to replay.
  if (!std::filesystem::exists(global.db_path)) {
    throw UsageError("no store at " + global.db_path + " (run a scenario first, or --db)");
  }
  store::Store store = store::Store::open(global.db_path);
  const store::ExperimentRow experiment = resolve_experiment(store, args.experiment);
  const StoredRun run = load_stored_run(store, experiment.id);
  ReplayOptions options;
  options.strategy = args.strategy;
  options.replicas = args.replicas;
  if (!args.profile.empty()) options.profile = profile_named_or_file("--profile", args.profile);
  SignalGuard signals;
  options.stop = &signals.stop_flag();
  Console console(stderr, Console::PlainProgress::kPeriodic, global.verbosity);
  const ReplayResult r = replay_stored_run(store, run, options, console);
  console.end_progress();
  std::printf(
      "replay of experiment %lld (%s, ran on %s) under %s: stored as experiment %lld "
      "(predicted; kvsweep report %lld)\n",
      static_cast<long long>(experiment.id), experiment.name.c_str(),
      run.target_kind.empty() ? "?" : run.target_kind.c_str(), r.fleet.c_str(),
      static_cast<long long>(r.experiment_id), static_cast<long long>(r.experiment_id));
  std::printf("%-26s %-16s %-30s %-30s %s\n", "cell", "KV hit", "TTFT mean", "TTFT p90",
              "output tok/s");
  for (const auto& c : r.cells) {
    const std::optional<CalibrationFigures>& p = c.replayed;
    const std::string hit =
        hit_text(c.measured.kv_hit) + " -> " + (p ? hit_text(p->kv_hit) : std::string("failed"));
    std::printf(
        "%-26s %-16s %-30s %-30s %s\n", c.label.c_str(), hit.c_str(),
        pair_text(c.measured[Figure::kTtftMean], p ? (*p)[Figure::kTtftMean] : std::nullopt, " ms")
            .c_str(),
        pair_text(c.measured[Figure::kTtftP90], p ? (*p)[Figure::kTtftP90] : std::nullopt, " ms")
            .c_str(),
        pair_text(c.measured[Figure::kOutputTokS], p ? (*p)[Figure::kOutputTokS] : std::nullopt, "")
            .c_str());
  }
  print_opportunities(r);
  print_headlines(r, args.strategy.empty() ? "its own strategy, predicted" : args.strategy);
  for (const auto& s : run.skipped) std::printf("left out: %s\n", s.c_str());
  for (const auto& s : r.traffic_unchecked) std::printf("traffic not checked: %s\n", s.c_str());
  if (!r.traffic_differs.empty()) {
    std::fflush(stdout);  // the table first, then why it does not count
    std::fprintf(stderr,
                 "kvsweep: error: the replay did not regenerate the run's traffic, so it does "
                 "not answer the question (is the dataset file the one the run read?):\n");
    for (const auto& s : r.traffic_differs) std::fprintf(stderr, "  %s\n", s.c_str());
    return kExitFailed;
  }
  const std::size_t checked = r.cells.size() - r.traffic_unchecked.size();
  std::printf(
      "traffic: the run's requests, conversations and turns (an open loop's on its "
      "schedule) in %zu of %zu cells; %s\n",
      checked, r.cells.size(),
      r.prompts_unrecorded ? "the run was stored before prompt fingerprints (schema 13), so what "
                             "each turn asked was not compared"
                           : "what each turn asked, by its fingerprint, in every cell");
  return kExitOk;
}

}  // namespace

Subcommand register_replay(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<ReplayArgs>();
  auto* cmd = app.add_subcommand(
      "replay",
      "a stored run's traffic in virtual time under another routing strategy or fleet size: "
      "each cell's load shape, dataset and seed regenerated, stored as a predicted experiment "
      "and compared with what the run measured (docs/predict.md, Replay)");
  cmd->add_option("experiment", args->experiment,
                  "the run to replay: id, or name for its latest run (default: the latest)");
  cmd->add_option("--strategy", args->strategy,
                  "route with this strategy (random, round-robin, least-load, prefix-hash, "
                  "kv-aware, session, or a system's own name); default: each cell's own");
  cmd->add_option("--replicas", args->replicas,
                  "this many replicas (default: the scenario's target.sim.replicas)")
      ->check(CLI::Range(0, sim::kMaxReplicas));
  cmd->add_option("--profile", args->profile,
                  "the replicas' timing profile, a name or a file (a calibrated one: kvsweep "
                  "calibrate -o; default: the scenario's target.sim.profile)");
  return {cmd, [args, &global] { return run_replay(*args, global); }};
}

}  // namespace kvsweep::orchestrator
