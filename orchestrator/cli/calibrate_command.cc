// `kvsweep calibrate EXPERIMENT`: fit the predictor's step-time coefficients to a stored run
// (orchestrator/calibrate/), print the fit and its errors, and write the profile.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error_kinds.h"
#include "orchestrator/calibrate/stored_calibration.h"
#include "orchestrator/calibrate/stored_run.h"
#include "orchestrator/cli/profile_lookup.h"
#include "orchestrator/cli/signal_guard.h"
#include "orchestrator/cli/store_lookup.h"
#include "orchestrator/cli/subcommand.h"
#include "sim/engine/profile.h"

namespace kvsweep::orchestrator {
namespace {

using predict::CalibrationOptions;
using predict::CalibrationResult;
using predict::Figure;
using predict::figure_name;
using predict::kFigureCount;

struct CalibrateArgs {
  std::string experiment;
  std::string profile;  // START: a name or a file; "" = the scenario's target.sim.profile
  std::string output;   // -o: the profile file; "" = print it
  std::string name;     // the fitted profile's name; "" = "<start>-calibrated"
  std::vector<std::string> holdout;
  std::vector<std::string> fixed;
  int max_replays = 160;
};

std::vector<Holdout> parse_holdouts(const std::vector<std::string>& texts) {
  std::vector<Holdout> out;
  for (const auto& text : texts) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
      throw UsageError("--holdout " + text + ": expected FACTOR=LEVEL, such as concurrency=16");
    }
    out.emplace_back(text.substr(0, eq), text.substr(eq + 1));
  }
  return out;
}

std::string percent(const std::optional<double>& e) {
  if (!e) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", 100 * *e);
  return text;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

void print_result(const StoredRun& run, const CalibrationResult& r) {
  std::printf("fit: %d replays in virtual time%s\n", r.replays,
              r.converged ? "" : " (stopped at --max-replays before converging)");
  std::printf("%-22s %12s %12s %12s\n", "coefficient", "start", "fitted",
              "sensitivity");  // at the fitted point
  for (const auto& c : r.coefficients) {
    std::printf("%-22s %12s %12s %12s%s%s\n", c.name.c_str(), number(c.start).c_str(),
                number(c.fitted).c_str(), c.sensitivity ? number(*c.sensitivity).c_str() : "-",
                c.note.empty() ? "" : "  ", c.note.c_str());
  }
  std::printf("KV pool: %s\n", r.kv_pool.c_str());
  std::printf("\nerror per cell, predicted / measured - 1, before -> after the fit:\n");
  std::printf("%-24s", "cell");
  for (std::size_t f = 0; f < kFigureCount; ++f) {
    std::printf(" %16s", figure_name(static_cast<Figure>(f)).c_str());
  }
  std::printf(" %15s\n", "KV hit meas/fit");
  for (const auto& c : r.cells) {
    std::string label = c.label + (c.held_out ? " (held out)" : "");
    std::printf("%-24s", label.c_str());
    for (std::size_t f = 0; f < kFigureCount; ++f) {
      const std::string cell = percent(c.before[f]) + " -> " + percent(c.after[f]);
      std::printf(" %16s", c.before[f] || c.after[f] ? cell.c_str() : "-");
    }
    std::string hit = "-";
    if (c.kv_hit_measured) {
      char text[48];
      std::snprintf(text, sizeof text, "%.0f%% / %s", 100 * *c.kv_hit_measured,
                    c.kv_hit_after ? (number(100 * *c.kv_hit_after) + "%").c_str() : "-");
      hit = text;
    }
    std::printf(" %15s\n", hit.c_str());
  }
  std::printf("mean |error|: fitted cells %.1f%% -> %.1f%%", 100 * r.fitted_error_before,
              100 * r.fitted_error_after);
  if (r.held_out_error_before && r.held_out_error_after) {
    std::printf("; held-out cells %.1f%% -> %.1f%%", 100 * *r.held_out_error_before,
                100 * *r.held_out_error_after);
  }
  std::printf("\n");
  if (!run.skipped.empty()) {
    std::printf("left out:\n");
    for (const auto& s : run.skipped) std::printf("  %s\n", s.c_str());
  }
}

int run_calibrate(const CalibrateArgs& args, const GlobalOptions& global) {
  if (args.max_replays < 20) throw UsageError("--max-replays: expected at least 20");
  const std::vector<Holdout> holdout = parse_holdouts(args.holdout);
  store::Store store = open_existing_store(global.db_path);
  const store::ExperimentRow experiment = resolve_experiment(store, args.experiment);
  const StoredRun run = load_stored_run(store, experiment.id, holdout);
  const sim::TimingProfile start = profile_named_or_file(
      "--profile", args.profile.empty() ? run.spec.target.sim.profile : args.profile);
  std::size_t held_out = 0;
  for (const auto& c : run.cells) held_out += c.held_out ? 1 : 0;
  Console console(stderr, Console::PlainProgress::kPeriodic, global.verbosity);
  const std::size_t fitted_cells = run.cells.size() - held_out;
  console.line("calibrate: experiment " + std::to_string(experiment.id) + " (" + experiment.name +
               ", ran on " + (run.target_kind.empty() ? "?" : run.target_kind) +
               "): " + std::to_string(fitted_cells) + (fitted_cells == 1 ? " cell" : " cells") +
               " fitted, " + std::to_string(held_out) + " held out, " +
               std::to_string(run.skipped.size()) + " left out; starting from profile " +
               start.name);

  SignalGuard signals;
  CalibrationOptions options;
  options.fixed = args.fixed;
  options.max_replays = args.max_replays;
  options.progress = [&console](const std::string& line) { console.progress(line); };
  const CalibrationResult result = calibrate(run, start, options, &signals.stop_flag());
  console.end_progress();
  print_result(run, result);

  const std::string name = args.name.empty() ? start.name + "-calibrated" : args.name;
  const sim::TimingProfile fitted = calibrated_profile(run, result, name);
  const std::string yaml =
      sim::profile_to_yaml(fitted, "Fitted by kvsweep calibrate (docs/predict.md, Calibrate)");
  if (args.output.empty()) {
    std::printf("\n%s", yaml.c_str());
    return kExitOk;
  }
  write_file(args.output, yaml);
  const std::string dir = std::filesystem::absolute(args.output).parent_path().string();
  std::printf(
      "\nwrote %s: profile %s. Predict with it: KVSWEEP_PROFILE_PATH=%s and "
      "target.sim.profile: %s\n",
      args.output.c_str(), name.c_str(), dir.c_str(), name.c_str());
  return kExitOk;
}

}  // namespace

Subcommand register_calibrate(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<CalibrateArgs>();
  auto* cmd = app.add_subcommand(
      "calibrate",
      "fit the predictor's step-time coefficients to a stored run: its cells replayed in "
      "virtual time (same arrivals, dataset, strategy, cache policy), a robust loss of the log "
      "errors of their TTFT and ITL mean, p50 and p90 and output tok/s minimised; prints the "
      "fit and each cell's error before and after, and writes the profile (docs/predict.md)");
  cmd->add_option("experiment", args->experiment,
                  "the real run: id, or name for its latest run (default: the latest)");
  cmd->add_option("--profile", args->profile,
                  "where the fit starts: a profile name or file (default: the scenario's "
                  "target.sim.profile)");
  cmd->add_option("-o,--output", args->output, "write the fitted profile here (default: print it)");
  cmd->add_option("--name", args->name, "the fitted profile's name (default: <start>-calibrated)");
  cmd->add_option("--holdout", args->holdout,
                  "FACTOR=LEVEL: fit without the cells at that level and report their error "
                  "(cross-validation); repeatable");
  cmd->add_option("--fix", args->fixed,
                  "keep a coefficient at the start profile's value (base_us, "
                  "per_prefill_token_us, per_decode_token_us, per_kv_usage_us, "
                  "per_context_token_us); repeatable");
  cmd->add_option("--max-replays", args->max_replays,
                  "at most this many replays of the run in virtual time")
      ->capture_default_str()
      ->check(CLI::Range(0, 100'000));
  return {cmd, [args, &global] { return run_calibrate(*args, global); }};
}

}  // namespace kvsweep::orchestrator
