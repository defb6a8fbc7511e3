// `kvsweep calibrate` and `kvsweep replay` end to end: tests/fixtures/calibrate/calibrate.yaml
// run with a known profile (calibrate-truth), on the real-time embedded fleet (real HTTP/SSE on
// loopback) and in virtual time, then fitted from a profile far off (calibrate-start): the fit
// recovers the known coefficients, predicts a held-out cell, writes a profile `predict` uses,
// and refuses what a run cannot constrain; replay.yaml's real-time run replayed under another
// strategy agrees with a real run of it (docs/predict.md, "Calibrate" and "Replay").
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "orchestrator/calibrate/stored_calibration.h"
#include "orchestrator/calibrate/stored_replay.h"
#include "orchestrator/calibrate/stored_run.h"
#include "orchestrator/targets/child_process.h"
#include "sim/engine/profile.h"
#include "store/sqlite_handles.h"
#include "store/store.h"
#include "tests/support/sanitized_build.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::orchestrator {
namespace {

using predict::CalibrationFigures;
using predict::CalibrationResult;
using predict::Figure;

const std::string kFixtures = KVSWEEP_FIXTURES "/calibrate";
const std::string kProfiles = kFixtures + "/profiles";

// Why the two real-time tests do not run under `make sanitize`: their bounds measure how closely
// the real-time fleet keeps the model's clock, and ASan slows it several times (a cell turns
// client-bound and is left out; prefix-hash's mean TTFT came out twice the model's). The
// calibration and replay code runs under ASan in the other tests.
constexpr const char* kRealTimeUnderAsan =
    "real-time fidelity is not measurable under ASan (docs/reliability.md)";

struct CliRun {
  int exit_code = 0;
  std::string out;
  std::string err;
};

CliRun kvsweep(const std::vector<std::string>& args, std::map<std::string, std::string> env = {}) {
  std::vector<std::string> argv = {KVSWEEP_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  env.emplace("KVSWEEP_PROFILE_PATH", kProfiles);
  const ProcessResult r = run_process(argv, 300, env);
  return {r.exit_code, r.out, r.err};
}

std::string fixture_text(const std::string& name = "calibrate.yaml") {
  std::ifstream in(kFixtures + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

sim::TimingProfile profile(const std::string& name) {
  std::string error;
  const auto p = sim::find_profile(name, {kProfiles}, &error);
  EXPECT_TRUE(p) << error;
  return p.value_or(sim::TimingProfile{});
}

class Calibrate : public ::testing::Test {
 protected:
  // The stored scenario names calibrate-truth: reloading it looks the profile up, as the CLI
  // does with the same variable set.
  void SetUp() override { ::setenv("KVSWEEP_PROFILE_PATH", kProfiles.c_str(), 1); }
  void TearDown() override { ::unsetenv("KVSWEEP_PROFILE_PATH"); }

  // The store's latest experiment, after `kvsweep <verb> SCENARIO` of the fixture's text with
  // `from` replaced by `to`.
  std::int64_t store_run(const std::string& verb, const std::string& from = "",
                         const std::string& to = "",
                         const std::string& fixture = "calibrate.yaml") {
    std::string text = fixture_text(fixture);
    if (!from.empty()) {
      const auto at = text.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      if (at != std::string::npos) text.replace(at, from.size(), to);
    }
    const std::string path = dir_.file(verb + std::to_string(++runs_) + ".yaml");
    std::ofstream(path) << text;
    const CliRun run = kvsweep({"--db", db(), "-q", verb, path, "--no-print"});
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    const store::Store store = store::Store::open(db());
    const auto experiment = store.latest_experiment();
    EXPECT_TRUE(experiment);
    return experiment ? experiment->id : 0;
  }

  CalibrationResult fit(std::int64_t experiment, const std::vector<Holdout>& holdout = {},
                        const std::string& start = "calibrate-start") {
    const store::Store store = store::Store::open(db());
    run_ = load_stored_run(store, experiment, holdout);
    return calibrate(run_, profile(start));
  }

  std::string db() const { return dir_.file(db_name_); }
  // Later real-time attempts store into a fresh file, so each attempt's store holds its run alone.
  void use_fresh_store(int attempt) { db_name_ = "k" + std::to_string(attempt) + ".db"; }

  testing::TempDir dir_;
  std::string db_name_ = "k.db";
  StoredRun run_;
  int runs_ = 0;
};

// The test's standard: base and prefill within 10% of the profile the fleet ran with, decode
// within 15%, from a start 2x / 0.5x / 2x off; the held-out cell (8 in flight) predicted
// within 15% on average over its figures. The real-time fleet runs the same engine code on a real
// clock, behind real HTTP: the fit absorbs that overhead, which is why the bound is 10% and not
// exact.
TEST_F(Calibrate, RecoversAKnownProfileFromTheRealTimeFleet) {
  if (testing::kSanitizedBuild) GTEST_SKIP() << kRealTimeUnderAsan;
  const std::int64_t id = store_run("run");
  const CalibrationResult r = fit(id, {{"concurrency", "8"}});
  const sim::TimingProfile truth = profile("calibrate-truth");
  std::printf(
      "fitted: base_us %.1f, per_prefill_token_us %.2f, per_decode_token_us %.1f; "
      "mean |error| fitted %.1f%%, held out %.1f%%\n",
      r.fitted.base_us, r.fitted.per_prefill_token_us, r.fitted.per_decode_token_us,
      100 * r.fitted_error_after, 100 * r.held_out_error_after.value_or(-1));
  ASSERT_EQ(r.coefficients.size(), 5u);
  EXPECT_NEAR(r.fitted.base_us / truth.base_us, 1, 0.10) << r.fitted.base_us;
  EXPECT_NEAR(r.fitted.per_prefill_token_us / truth.per_prefill_token_us, 1, 0.10)
      << r.fitted.per_prefill_token_us;
  // The real-time fleet reads the per-sequence cost low: -2% to -11% over ten runs on this
  // 2-core machine (the model's own error against its real-time self, docs/predict.md), so
  // 15% here where the other two hold 10%.
  EXPECT_NEAR(r.fitted.per_decode_token_us / truth.per_decode_token_us, 1, 0.15)
      << r.fitted.per_decode_token_us;
  EXPECT_EQ(r.fitted.per_kv_usage_us, 0);
  EXPECT_FALSE(r.coefficients[3].free);
  EXPECT_FALSE(r.coefficients[4].free);  // nor the context term: the start has none
  EXPECT_EQ(r.fitted.per_context_token_us, 0);
  // The pool is read, not fitted: the start's 1,024 blocks, the servers' 4,096.
  EXPECT_EQ(r.fitted.num_gpu_blocks, truth.num_gpu_blocks);
  EXPECT_EQ(r.kv_pool,
            "num_gpu_blocks 1024 -> 4096, block_size 16 -> 16: read from the servers' "
            "vllm:cache_config_info");
  ASSERT_EQ(r.cells.size(), 4u);
  EXPECT_TRUE(r.cells[2].held_out);
  EXPECT_EQ(r.cells[2].label, "least-load@8");
  ASSERT_TRUE(r.held_out_error_after);
  EXPECT_LT(*r.held_out_error_after, 0.15);  // 0.8% to 8.2% over ten runs
  EXPECT_LT(r.fitted_error_after, 0.10);
  EXPECT_GT(r.fitted_error_before, 0.30);  // the start was far off: the fit did the work
}

// In virtual time the run and its replay are the same computation: the fit is exact.
TEST_F(Calibrate, FitsAPredictedRunExactly) {
  const std::int64_t id = store_run("predict");
  const CalibrationResult r = fit(id);
  const sim::TimingProfile truth = profile("calibrate-truth");
  EXPECT_NEAR(r.fitted.base_us / truth.base_us, 1, 0.01);
  EXPECT_NEAR(r.fitted.per_prefill_token_us / truth.per_prefill_token_us, 1, 0.01);
  EXPECT_NEAR(r.fitted.per_decode_token_us / truth.per_decode_token_us, 1, 0.01);
  EXPECT_LT(r.fitted_error_after, 0.01);
  for (const auto& c : r.coefficients) {
    if (c.free) {
      EXPECT_GT(c.sensitivity.value_or(0), 0.05) << c.name;
    }
  }
}

// The context term (per_context_token_us) is fitted when the start profile has one: a run made
// with it (calibrate-context.yaml) is recovered, the term among the others, from a start half
// or twice off each.
TEST_F(Calibrate, RecoversTheContextTermOfAKnownProfile) {
  const std::int64_t id = store_run("predict", "", "", "calibrate-context.yaml");
  const CalibrationResult r = fit(id, {}, "calibrate-context-start");
  const sim::TimingProfile truth = profile("calibrate-context-truth");
  ASSERT_TRUE(r.coefficients[4].free);
  EXPECT_GT(r.coefficients[4].sensitivity.value_or(0), 0.05);
  EXPECT_NEAR(r.fitted.per_context_token_us / truth.per_context_token_us, 1, 0.02);
  EXPECT_NEAR(r.fitted.base_us / truth.base_us, 1, 0.02);
  EXPECT_NEAR(r.fitted.per_prefill_token_us / truth.per_prefill_token_us, 1, 0.02);
  EXPECT_NEAR(r.fitted.per_decode_token_us / truth.per_decode_token_us, 1, 0.02);
  EXPECT_LT(r.fitted_error_after, 0.01);
  // Without the term the same start cannot describe the run: its best fit misses by more
  // (10.1% against 0.1% when written).
  EXPECT_GT(fit(id, {}, "calibrate-start").fitted_error_after, 2 * r.fitted_error_after + 0.01);
}

// The CLI writes a profile that `predict` finds by name; predicting the real run's scenario
// with it lands near what the real run measured, where the start profile did not.
TEST_F(Calibrate, WritesAProfilePredictUses) {
  const std::int64_t id = store_run("predict");
  const std::string out_dir = dir_.file("fitted");
  const CliRun cli = kvsweep({"--db", db(), "calibrate", std::to_string(id), "--profile",
                              kProfiles + "/calibrate-start.yaml", "--name", "fitted-here", "-o",
                              out_dir + "/fitted.yaml"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("wrote " + out_dir + "/fitted.yaml: profile fitted-here"),
            std::string::npos)
      << cli.out;
  EXPECT_NE(cli.out.find("mean |error|: fitted cells"), std::string::npos) << cli.out;
  std::string error;
  const auto written = sim::find_profile("fitted-here", {out_dir}, &error);
  ASSERT_TRUE(written) << error;
  EXPECT_NE(
      written->source.find("calibrated by kvsweep calibrate from experiment " + std::to_string(id)),
      std::string::npos)
      << written->source;
  EXPECT_NEAR(written->per_decode_token_us / profile("calibrate-truth").per_decode_token_us, 1,
              0.01);
  // predict with it, by name, from the directory the CLI said; and with the start profile.
  const std::map<std::string, std::string> env = {
      {"KVSWEEP_PROFILE_PATH", out_dir + ":" + kProfiles}};
  const auto predict_with = [&](const std::string& name) {
    std::string text = fixture_text();
    text.replace(text.find("profile: calibrate-truth"), 24, "profile: " + name);
    const std::string path = dir_.file("with-" + name + ".yaml");
    std::ofstream(path) << text;
    const CliRun predicted = kvsweep({"--db", db(), "-q", "predict", path, "--no-print"}, env);
    EXPECT_EQ(predicted.exit_code, 0) << predicted.err;
    const store::Store store = store::Store::open(db());
    ::setenv("KVSWEEP_PROFILE_PATH", env.at("KVSWEEP_PROFILE_PATH").c_str(), 1);
    return load_stored_run(store, store.latest_experiment()->id).cells;
  };
  const auto with_fit = predict_with("fitted-here");
  const auto with_start = predict_with("calibrate-start");
  const store::Store store = store::Store::open(db());
  const auto measured = load_stored_run(store, id).cells;
  ASSERT_EQ(with_fit.size(), measured.size());
  ASSERT_EQ(with_start.size(), measured.size());
  double worst_fit = 0, worst_start = 0;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    for (const Figure f : {Figure::kTtftMean, Figure::kItlMean, Figure::kOutputTokS}) {
      const double m = *measured[i].measured[f];
      worst_fit = std::max(worst_fit, std::abs(*with_fit[i].measured[f] / m - 1));
      worst_start = std::max(worst_start, std::abs(*with_start[i].measured[f] / m - 1));
    }
  }
  EXPECT_LT(worst_fit, 0.03);    // the 4-digit profile predicts the run it was fitted to
  EXPECT_GT(worst_start, 0.30);  // the start did not
}

// A run whose cells never held two requests at once cannot say what a step costs per
// sequence: refused, by name, with the way out; --fix keeps it and fits the rest.
TEST_F(Calibrate, RefusesARunThatNeverQueuedForCapacity) {
  const std::int64_t id = store_run("predict", "concurrency: [1, 4, 8, 32]", "concurrency: [1]");
  const CliRun refused = kvsweep({"--db", db(), "calibrate", std::to_string(id)});
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("per_decode_token_us: no fitted cell ran two requests at once"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("--fix NAME"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.out.find("name:"), std::string::npos) << "no profile printed";
  const CliRun fixed = kvsweep({"--db", db(), "calibrate", std::to_string(id), "--profile",
                                "calibrate-start", "--fix", "per_decode_token_us"});
  EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_NE(fixed.out.find("per_decode_token_us"), std::string::npos);
  EXPECT_NE(fixed.out.find("kept (--fix)"), std::string::npos) << fixed.out;
}

TEST_F(Calibrate, BadArgumentsAreUsageErrorsNamingTheOption) {
  const std::int64_t id = store_run("predict", "num_requests: 64", "num_requests: 16");
  const std::string exp = std::to_string(id);
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--holdout", "concurrency"}, "--holdout concurrency: expected FACTOR=LEVEL"},
      {{"--holdout", "concurrency=9"}, "--holdout concurrency=9: no calibrated cell"},
      {{"--fix", "speed"}, "--fix speed: not a coefficient; valid: base_us"},
      {{"--profile", "no-such-profile"}, "--profile no-such-profile"},
      {{"--max-replays", "3"}, "--max-replays: expected at least 20"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"--db", db(), "calibrate", exp};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const CliRun r = kvsweep(args);
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
  const CliRun none = kvsweep({"--db", db(), "calibrate", "99"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("99"), std::string::npos) << none.err;
  // Neither command makes a store where there is none.
  const std::string nowhere = dir_.file("none.db");
  for (const std::string verb : {"calibrate", "replay"}) {
    const CliRun r = kvsweep({"--db", nowhere, verb});
    EXPECT_EQ(r.exit_code, 2) << verb;
    EXPECT_NE(r.err.find("no store at " + nowhere), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(nowhere)) << verb;
  }
}

// A replay's figures by the run's cell label.
std::map<std::string, ReplayedCell> by_label(const ReplayResult& r) {
  std::map<std::string, ReplayedCell> out;
  for (const auto& c : r.cells) out.emplace(c.label, c);
  return out;
}

double figure(const CalibrationFigures& f, Figure which) { return f[which].value_or(-1); }

// A SweepOutput that keeps nothing: the replay's progress is not what these tests check.
class Quiet : public SweepOutput {
 public:
  void line(const std::string&) override {}
  void progress(const std::string&) override {}
  void end_progress() override {}
};

// Timing figures of the real-time fleet against their replay: each a ratio to hold within its
// bound. A real-time run on a shared machine is only ever slowed by its neighbours (a late
// wake-up adds to a TTFT, never takes from it), so the test gives these up to three runs, as
// the agreement test does (tests/predict/agreement_test.cc), while a model that disagrees does
// so in every run. CI once measured prefix-hash's mean TTFT at 32 in flight 31% above its
// replay in its one run, with the KV hit rates within their bounds.
constexpr int kRealTimeAttempts = 3;

struct TimingCheck {
  std::string what;
  double ratio = 0;
  double bound = 0;
};

// The real-time fleet ran random and prefix-hash on the same traffic. The random cells replayed
// under prefix-hash in virtual time agree with the prefix-hash cells the fleet really ran, and
// the prefix-hash cells replayed under their own strategy reproduce themselves: the KV hit rate
// within 3 points, mean TTFT and output tok/s within 20%. The agreement test holds 10% as the
// best of three real-time runs; two real-time runs of this fixture on one quiet machine put
// prefix-hash's mean TTFT at 32 in flight at 25.0 and 28.7 ms, 15% apart, with the prediction
// at 25.3.
// Random routing's own replay is held looser: its draws fall on other replicas once real-time
// arrivals reorder them, so only its hit rate (5 points) and throughput (25%) are held.
TEST_F(Calibrate, ReplayUnderAnotherStrategyAgreesWithARealRunOfIt) {
  if (testing::kSanitizedBuild) GTEST_SKIP() << kRealTimeUnderAsan;
  std::map<std::string, TimingCheck> outside;  // timing figures not yet within, at their closest
  bool timed_once = false;                     // an attempt has had its timing figures checked
  std::string left_out;                        // the last attempt's cells left out, and why
  for (int attempt = 1; attempt <= kRealTimeAttempts; ++attempt) {
    if (attempt > 1) use_fresh_store(attempt);
    const std::int64_t id = store_run("run", "", "", "replay.yaml");
    store::Store store = store::Store::open(db());
    const StoredRun run = load_stored_run(store, id);
    // A cell whose driver fell behind its schedule (client-bound: CI's 2 cores busy with the
    // other tests) measured the machine and is left out of the replay, as it should be; that
    // attempt then counts as one whose figures were not within. Stop 48's clean-clone CI found
    // 3 cells of 4 in its one run and did not print why (client-bound is the likeliest reason a
    // finished real-time cell is left out); any other reason now fails at once, naming it.
    if (run.cells.size() != 4u) {
      left_out.clear();
      for (const std::string& s : run.skipped) {
        ASSERT_NE(s.find(": client-bound ("), std::string::npos) << s;
        left_out += s + "\n";
      }
      ASSERT_FALSE(run.skipped.empty()) << run.cells.size() << " cells and none left out";
      std::printf("-- real-time attempt %d: %zu of 4 cells client-bound\n%s", attempt,
                  run.skipped.size(), left_out.c_str());
      continue;
    }
    std::vector<TimingCheck> timing;
    Quiet quiet;
    ReplayOptions under_prefix_hash;
    under_prefix_hash.strategy = "PrefixHash";  // KubeAI's spelling: canonical prefix-hash
    const ReplayResult replay = replay_stored_run(store, run, under_prefix_hash, quiet);
    EXPECT_TRUE(replay.traffic_differs.empty());
    EXPECT_NE(replay.fleet.find("prefix-hash on 4 replicas"), std::string::npos) << replay.fleet;
    const auto replayed = by_label(replay);
    for (const std::string c : {"8", "32"}) {
      const ReplayedCell& random = replayed.at("random@" + c);
      const ReplayedCell& real = replayed.at("prefix-hash@" + c);
      ASSERT_TRUE(random.replayed) << c;
      ASSERT_TRUE(real.replayed) << c;
      const CalibrationFigures& predicted = *random.replayed;
      const CalibrationFigures& measured = real.measured;
      EXPECT_NEAR(*predicted.kv_hit, *measured.kv_hit, 0.03) << c;
      EXPECT_GT(*predicted.kv_hit, *random.measured.kv_hit + 0.1) << c;  // routing's gain shows
      const auto ratio = [](const CalibrationFigures& a, const CalibrationFigures& b, Figure f) {
        return figure(a, f) / figure(b, f);
      };
      timing.push_back({"random@" + c + " under prefix-hash: mean TTFT / prefix-hash's",
                        ratio(predicted, measured, Figure::kTtftMean), 0.20});
      timing.push_back({"random@" + c + " under prefix-hash: output tok/s / prefix-hash's",
                        ratio(predicted, measured, Figure::kOutputTokS), 0.20});
      // Its own replay: prefix-hash's routing is deterministic, so the same bounds.
      const CalibrationFigures& own = *real.replayed;
      EXPECT_NEAR(*own.kv_hit, *measured.kv_hit, 0.03) << c;
      timing.push_back({"prefix-hash@" + c + " replayed: mean TTFT / measured",
                        ratio(own, measured, Figure::kTtftMean), 0.20});
    }
    ReplayOptions own;
    const ReplayResult itself = replay_stored_run(store, run, own, quiet);
    // Where the blocks could have hit: random routing leaves a fifth of them on other replicas,
    // prefix-hash almost none; the replay's block hit share is its KV hit rate.
    for (const auto& c : itself.cells) {
      ASSERT_TRUE(c.opportunity) << c.label;
      const predict::RoutingOpportunity& o = *c.opportunity;
      ASSERT_GT(o.prompt_blocks, 0);
      const double blocks = static_cast<double>(o.prompt_blocks);
      const double routing_lost = static_cast<double>(o.best_cached - o.chosen_cached) / blocks;
      if (c.arm == "random") {
        EXPECT_GT(routing_lost, 0.10) << c.label;
      } else {
        EXPECT_LT(routing_lost, 0.03) << c.label;
      }
      EXPECT_NEAR(static_cast<double>(o.chosen_cached) / blocks, *c.replayed->kv_hit, 0.05)
          << c.label;
      EXPECT_LE(o.chosen_cached, o.best_cached);
      EXPECT_LE(o.best_cached, o.computed_before);
      EXPECT_LE(o.computed_before, o.prompt_blocks);
    }
    for (const auto& c : itself.cells) {
      ASSERT_TRUE(c.replayed) << c.label;
      EXPECT_NEAR(*c.replayed->kv_hit, *c.measured.kv_hit, 0.05) << c.label;
      timing.push_back(
          {c.label + " replayed: output tok/s / measured",
           figure(*c.replayed, Figure::kOutputTokS) / figure(c.measured, Figure::kOutputTokS),
           0.25});
    }
    // Both replays are experiments of their own, predicted, never the run's.
    const auto experiments = store.experiments();
    ASSERT_EQ(experiments.size(), 3u);
    EXPECT_EQ(experiments[1].name, "replay-grid-replay");
    EXPECT_EQ(experiments[1].setup.target_kind(), "predict");
    EXPECT_EQ(experiments[1].scenario_text.rfind("# kvsweep replay of experiment", 0), 0u);
    EXPECT_NE(experiments[1].scenario_hash, experiments[0].scenario_hash);

    for (const TimingCheck& check : timing) {
      const double error = std::abs(check.ratio - 1);
      if (timed_once && !outside.count(check.what)) continue;  // already within
      if (error <= check.bound) {
        outside.erase(check.what);
      } else if (!outside.count(check.what) || error < std::abs(outside[check.what].ratio - 1)) {
        outside[check.what] = check;
      }
    }
    timed_once = true;
    if (outside.empty()) return;
    std::printf("-- real-time attempt %d: %zu timing figures outside their bounds\n", attempt,
                outside.size());
  }
  ASSERT_TRUE(timed_once) << "a cell was client-bound in each of " << kRealTimeAttempts
                          << " real-time runs; the last:\n"
                          << left_out;
  std::string lines;
  for (const auto& [what, check] : outside) {
    lines += what + " = " + std::to_string(check.ratio) + " (bound 1 +/- " +
             std::to_string(check.bound) + ")\n";
  }
  FAIL() << "outside their bounds in each of " << kRealTimeAttempts
         << " real-time runs (closest shown):\n"
         << lines;
}

// The CLI's view: the headline per arm, the replay stored, fewer replicas; and an open loop
// whose schedule the replay cannot regenerate (its scenario's seed edited in the store, as a
// changed dataset would do) is refused, naming the cell and what differs.
TEST_F(Calibrate, ReplayChecksItRegeneratedTheRunsTraffic) {
  const std::int64_t id =
      store_run("predict", "  num_requests: 64\n", "  num_requests: 40\n  request_rate: 200\n");
  const CliRun ok = kvsweep(
      {"--db", db(), "replay", std::to_string(id), "--strategy", "round-robin", "--replicas", "1"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("under round-robin on 1 replicas"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("least-load's traffic under round-robin: KV hit"), std::string::npos)
      << ok.out;
  EXPECT_NE(ok.out.find("in 4 of 4 cells"), std::string::npos) << ok.out;
  {
    const store::SqliteDb raw = store::SqliteDb::open(db());
    raw.exec(
        "UPDATE experiments SET scenario_text = replace(scenario_text, 'seed: 11', "
        "'seed: 12') WHERE id = " +
        std::to_string(id));
  }
  const CliRun refused = kvsweep({"--db", db(), "replay", std::to_string(id)});
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_NE(refused.err.find("the replay did not regenerate the run's traffic"), std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("least-load@1: "), std::string::npos) << refused.err;
  // Cells their duration ended send as many requests as the servers' speed allows: on one
  // replica the replay sends fewer than the run did, and that is not a different traffic.
  const std::int64_t timed =
      store_run("predict", "  num_requests: 64\n", "  num_requests: 64\n  duration: 2s\n");
  const CliRun slower = kvsweep({"--db", db(), "replay", std::to_string(timed), "--replicas", "1"});
  EXPECT_EQ(slower.exit_code, 0) << slower.out << slower.err;
  EXPECT_NE(slower.out.find("traffic not checked: least-load@1: its duration ended it"),
            std::string::npos)
      << slower.out;
  const CliRun unknown =
      kvsweep({"--db", db(), "replay", std::to_string(id), "--strategy", "fastest"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--strategy fastest: unknown"), std::string::npos) << unknown.err;
}

// A dataset file edited in place to the very same shape (as many prompts, as long, the same
// output lengths) regenerates as many requests of the same conversations on the same schedule:
// only the stored fingerprints of what each turn asked tell the replay it is another traffic.
// A run stored before fingerprints (schema 13, here its rows' hashes zeroed) is compared as
// before, and the replay says what it could not compare.
TEST_F(Calibrate, ReplayRefusesADatasetFileEditedInPlace) {
  const std::string dataset = dir_.file("prompts.jsonl");
  const auto write_prompts = [&dataset](const std::string& topic) {
    std::ofstream out(dataset);
    for (int i = 0; i < 6; ++i) {
      out << R"({"prompt": "question )" << i << " about " << topic
          << R"( and how the router keeps them warm", "max_tokens": 8})"
          << "\n";
    }
  };
  write_prompts("caches");
  const std::int64_t id =
      store_run("predict",
                "  dataset: {kind: random, random_input_len: 256, random_output_len: 24, "
                "random_range_ratio: 0.75}\n",
                "  dataset: {kind: jsonl, path: " + dataset + "}\n");
  const CliRun same = kvsweep({"--db", db(), "replay", std::to_string(id)});
  ASSERT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("what each turn asked, by its fingerprint, in every cell"),
            std::string::npos)
      << same.out;

  write_prompts("queues");  // as long as "caches"
  const CliRun edited = kvsweep({"--db", db(), "replay", std::to_string(id)});
  EXPECT_EQ(edited.exit_code, 1) << edited.out;
  EXPECT_NE(edited.err.find("the replay did not regenerate the run's traffic"), std::string::npos)
      << edited.err;
  EXPECT_NE(edited.err.find("least-load@1: conversation 0 turn 0 asked another prompt in the "
                            "replay than in the run (its fingerprint differs)"),
            std::string::npos)
      << edited.err;

  {
    const store::SqliteDb raw = store::SqliteDb::open(db());
    raw.exec(
        "UPDATE requests SET prompt_hash = 0 WHERE cell_id IN (SELECT id FROM cells WHERE "
        "experiment_id = " +
        std::to_string(id) + ")");
  }
  const CliRun unrecorded = kvsweep({"--db", db(), "replay", std::to_string(id)});
  EXPECT_EQ(unrecorded.exit_code, 0) << unrecorded.out << unrecorded.err;
  EXPECT_NE(unrecorded.out.find("the run was stored before prompt fingerprints (schema 13), so "
                                "what each turn asked was not compared"),
            std::string::npos)
      << unrecorded.out;
}

}  // namespace
}  // namespace kvsweep::orchestrator
