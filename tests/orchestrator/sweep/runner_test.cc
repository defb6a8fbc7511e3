// Tests for orchestrator/sweep/runner.cc and cell_runner.cc: the sweep loop against a scripted
// target and load step (tests/orchestrator/sweep/fake_target.h), into a real store in a temp
// dir. The order of the calls, a failed deployment failing its group, the cache policy per
// cell, the commands kept with each cell, an interruption, a resume, and the cells' claims.
#include "orchestrator/sweep/runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/wall_clock.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/targets/target_kinds.h"
#include "tests/orchestrator/sweep/fake_target.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::orchestrator::test {
namespace {

// Two deployments (strategy is deploy-time here), two cells each, a warm-up per cell.
constexpr const char* kTwoGroups = R"(name: fake-sweep
target: {kind: sim}
factors:
  strategy: {levels: [random, least-load], phase: deploy}
  concurrency: [1, 2]
load: {num_requests: 4, max_tokens: 2, warmup: {requests: 2}}
)";

ScenarioSpec parse(const std::string& text) {
  std::vector<ScenarioError> errors;
  auto spec = parse_scenario(text, "fake.yaml", &errors, target_kinds());
  if (!spec) ADD_FAILURE() << errors.at(0).text;
  return spec.value_or(ScenarioSpec{});
}

// The console's lines, kept for the test.
class RecordingOutput : public SweepOutput {
 public:
  void line(const std::string& text) override { lines.push_back(text); }
  void progress(const std::string&) override {}
  void end_progress() override {}
  std::string text() const {
    std::string all;
    for (const auto& l : lines) all += l + "\n";
    return all;
  }
  std::vector<std::string> lines;
};

// One sweep on a fake target: what was called, said and stored.
struct FakeSweep {
  explicit FakeSweep(const std::string& scenario) : spec(parse(scenario)), target(calls) {}

  SweepOutcome run(int stop_at_load = 0, bool resume = false, double claim_timeout_s = 60) {
    RunnerOptions options;
    options.stop = &stop;
    options.resume = resume;
    options.claim_timeout_s = claim_timeout_s;
    options.load = FakeLoad(calls, stop, stop_at_load);
    return run_sweep(spec, expand_plan(spec, options.target_override), target, store, output,
                     options);
  }

  static SweepOutcome Outcome(std::int64_t experiment_id) {
    SweepOutcome outcome;
    outcome.experiment_id = experiment_id;
    return outcome;
  }

  std::vector<std::string> statuses(const SweepOutcome& outcome) const {
    std::vector<std::string> out;
    for (const auto& cell : store.cells(outcome.experiment_id)) out.push_back(cell.status);
    return out;
  }

  std::vector<std::string> steps_stored(const store::CellRow& cell) const {
    std::vector<std::string> out;
    for (const auto& command : store.commands(cell.id)) out.push_back(command.step);
    return out;
  }

  testing::TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  ScenarioSpec spec;
  std::vector<std::string> calls;
  FakeTarget target;
  RecordingOutput output;
  std::atomic<bool> stop{false};
};

using Calls = std::vector<std::string>;

// Issue 27 item 8: a dataset smaller than its cell repeated itself silently. The console says
// so before the first cell, once for the experiment (issue 39: not once per cell), with how
// many times each prompt goes out and the fix.
TEST(Runner, ACellThatSendsAPromptTwiceSaysSoOncePerExperiment) {
  FakeSweep sweep(
      "name: small-dataset\ntarget: {kind: sim}\nfactors:\n  concurrency: [1, 2]\n"
      "load: {num_requests: 4, max_tokens: 2,\n"
      "       dataset: {kind: synthetic-multiturn, conversations: 1, turns: 2}}\n");
  const SweepOutcome outcome = sweep.run();
  EXPECT_EQ(outcome.status, "done") << sweep.output.text();
  const std::string said = sweep.output.text();
  const std::string warning =
      "warning: 2 of 2 cells send a prompt more than once within the cell (cell 1 sends each "
      "prompt up to 2 times: 4 requests over a dataset of 2 prompts): raise "
      "load.dataset.conversations from 1 to at least 2\n";
  const std::size_t at = said.find(warning);
  ASSERT_NE(at, std::string::npos) << said;
  EXPECT_EQ(said.find("warning", at + 1), std::string::npos) << said;  // said once
  EXPECT_LT(at, said.find("cell 1/2")) << said;                        // before the cells
}

// Cells on a cache kept as-is re-send what the cells before them sent: said once, naming them.
TEST(Runner, CellsOnACacheKeptAsIsSayTheyResendEarlierPrompts) {
  FakeSweep sweep(
      "name: as-is\ntarget: {kind: sim}\nfactors:\n  concurrency: [1, 2, 3]\n"
      "load: {num_requests: 4, max_tokens: 2, cache: as-is,\n"
      "       dataset: {kind: synthetic-multiturn, conversations: 4, turns: 2}}\n");
  EXPECT_EQ(sweep.run().status, "done") << sweep.output.text();
  const std::string said = sweep.output.text();
  EXPECT_NE(said.find("warning: 2 of 3 cells (cells 2, 3) re-send the prompts earlier cells "
                      "sent, on a cache kept as-is (cell 3 sends each prompt up to 3 times: 4 "
                      "requests over a dataset of 8 prompts, with what 2 earlier cells sent on "
                      "the cache kept as-is): every cell over one dataset starts at its first "
                      "prompt; set load.cache: cold so each cell starts from empty caches\n"),
            std::string::npos)
      << said;
}

TEST(Runner, AppliesOncePerDeploymentAndMakesEveryCellCold) {
  FakeSweep sweep(kTwoGroups);
  const SweepOutcome outcome = sweep.run();
  EXPECT_EQ(outcome.status, "done") << sweep.output.text();
  EXPECT_EQ(outcome.cells_done, 4);
  // Per cell: cold, endpoints, the warm-up (2 requests), the measured phase (4), then what
  // the target saw during the cell.
  const Calls cell_at_1 = {"cold", "endpoints", "load c=1 n=2", "load c=1 n=4", "cell_finished"};
  const Calls cell_at_2 = {"cold", "endpoints", "load c=2 n=2", "load c=2 n=4", "cell_finished"};
  Calls want = {"start", "apply strategy=random", "wait_ready"};
  want.insert(want.end(), cell_at_1.begin(), cell_at_1.end());
  want.insert(want.end(), cell_at_2.begin(), cell_at_2.end());
  want.insert(want.end(), {"apply strategy=least-load", "wait_ready"});
  want.insert(want.end(), cell_at_1.begin(), cell_at_1.end());
  want.insert(want.end(), cell_at_2.begin(), cell_at_2.end());
  EXPECT_EQ(sweep.calls, want);

  // Every call's commands are stored with the cell they were run for, in order: start's with
  // the first cell run, each deployment's with its first cell.
  const auto cells = sweep.store.cells(outcome.experiment_id);
  ASSERT_EQ(cells.size(), 4u);
  EXPECT_EQ(sweep.steps_stored(cells[0]),
            (Calls{"start", "apply strategy=random", "wait_ready", "cold", "cell_finished"}));
  EXPECT_EQ(sweep.steps_stored(cells[1]), (Calls{"cold", "cell_finished"}));
  EXPECT_EQ(sweep.steps_stored(cells[2]),
            (Calls{"apply strategy=least-load", "wait_ready", "cold", "cell_finished"}));
  const auto counts = sweep.store.request_counts(cells[3].id);
  EXPECT_EQ(counts.measured, 4);
  EXPECT_EQ(counts.warmup, 2);
}

TEST(Runner, AFailedApplyFailsItsDeploymentGroupAndTheSweepGoesOn) {
  FakeSweep sweep(kTwoGroups);
  sweep.target.fail_apply_of = {"random"};
  const SweepOutcome outcome = sweep.run();
  EXPECT_EQ(outcome.status, "failed");
  EXPECT_EQ(outcome.cells_failed, 2);
  EXPECT_EQ(outcome.cells_done, 2);
  // No gate, no load, no second apply for the group that failed; the next group runs.
  const Calls want_start = {"start", "apply strategy=random", "cell_finished",
                            "apply strategy=least-load", "wait_ready"};
  ASSERT_GE(sweep.calls.size(), want_start.size());
  EXPECT_EQ(Calls(sweep.calls.begin(), sweep.calls.begin() + 5), want_start);

  const auto cells = sweep.store.cells(outcome.experiment_id);
  EXPECT_EQ(sweep.statuses(outcome), (Calls{"failed", "failed", "done", "done"}));
  EXPECT_EQ(cells[0].error, "applying strategy=random: fake refused");
  EXPECT_EQ(cells[1].error,
            "not run: its deployment failed: applying strategy=random: fake refused");
  // The failed apply's command came back in its error and is kept with the cell.
  EXPECT_EQ(sweep.steps_stored(cells[0]),
            (Calls{"start", "apply strategy=random", "cell_finished"}));
  EXPECT_EQ(sweep.store.commands(cells[0].id)[1].exit_code, 1);
  EXPECT_TRUE(sweep.store.commands(cells[1].id).empty());
  EXPECT_EQ(sweep.store.request_count(cells[1].id), 0);
  EXPECT_NE(sweep.output.text().find("cell 2/4 random c=2: not run, its deployment failed"),
            std::string::npos)
      << sweep.output.text();
}

TEST(Runner, AFailedGateFailsItsGroupWithTheGatesCommands) {
  FakeSweep sweep(kTwoGroups);
  sweep.target.fail_gate_of = {"least-load"};
  const SweepOutcome outcome = sweep.run();
  EXPECT_EQ(sweep.statuses(outcome), (Calls{"done", "done", "failed", "failed"}));
  const auto cells = sweep.store.cells(outcome.experiment_id);
  EXPECT_EQ(cells[2].error, "readiness gate fake: never ready");
  EXPECT_EQ(cells[3].error, "not run: its deployment failed: readiness gate fake: never ready");
  EXPECT_EQ(sweep.steps_stored(cells[2]),
            (Calls{"apply strategy=least-load", "wait_ready", "cell_finished"}));
  EXPECT_EQ(sweep.calls.back(), "cell_finished");  // of cell 3; cell 4 never called the target
  EXPECT_EQ(std::count(sweep.calls.begin(), sweep.calls.end(), "apply strategy=least-load"), 1);
}

TEST(Runner, ARunTimeArmsFailedApplyFailsTheRestOfItsArm) {
  // Strategy run-time (the sim's default, a live patch): a failed apply fails the rest of its
  // arm unrun, as a deployment's does; waiting out its gates again per cell would find the same.
  std::string text = kTwoGroups;
  const std::string deploy = "{levels: [random, least-load], phase: deploy}";
  text.replace(text.find(deploy), deploy.size(), "[random, least-load]");
  FakeSweep sweep(text);
  sweep.target.fail_apply_of = {"random"};
  const SweepOutcome outcome = sweep.run();
  EXPECT_EQ(sweep.statuses(outcome), (Calls{"failed", "failed", "done", "done"}));
  const auto cells = sweep.store.cells(outcome.experiment_id);
  EXPECT_EQ(cells[0].error, "applying strategy=random: fake refused");
  EXPECT_EQ(cells[1].error,
            "not run: its deployment failed: applying strategy=random: fake refused");
  EXPECT_EQ(std::count(sweep.calls.begin(), sweep.calls.end(), "apply strategy=random"), 1);
}

TEST(Runner, ReadinessRetriesTryTheApplyAndGatesAgainKeepingEveryAttempt) {
  std::string text = kTwoGroups;
  text.replace(text.find("target: {kind: sim}"), 19,
               "target: {kind: sim, readiness: {retries: 1}}");
  FakeSweep sweep(text);
  sweep.target.fail_gate_of = {"random"};
  sweep.target.gate_failures = 1;  // fails once, then opens
  const SweepOutcome outcome = sweep.run();
  EXPECT_EQ(sweep.statuses(outcome), (Calls{"done", "done", "done", "done"}));
  const auto cells = sweep.store.cells(outcome.experiment_id);
  // Both attempts are kept with the cell, the failed one first.
  EXPECT_EQ(sweep.steps_stored(cells[0]),
            (Calls{"start", "apply strategy=random", "wait_ready", "apply strategy=random",
                   "wait_ready", "cold", "cell_finished"}));
  EXPECT_EQ(sweep.store.commands(cells[0].id)[2].exit_code, 1);
  EXPECT_NE(sweep.output.text().find("attempt 1 failed: readiness gate fake: never ready; "
                                     "trying again (target.readiness.retries)"),
            std::string::npos)
      << sweep.output.text();

  // A gate that keeps failing fails the cell after the last attempt, saying how many there were.
  FakeSweep failing(text);
  failing.target.fail_gate_of = {"random"};
  const SweepOutcome failed = failing.run();
  EXPECT_EQ(failing.statuses(failed), (Calls{"failed", "failed", "done", "done"}));
  const auto failed_cells = failing.store.cells(failed.experiment_id);
  EXPECT_EQ(failed_cells[0].error, "readiness gate fake: never ready (attempt 2 of 2)");
  EXPECT_EQ(std::count(failing.calls.begin(), failing.calls.end(), "apply strategy=random"), 2);
}

TEST(Runner, AScrapeThatFailsWhilePodsRollSaysSo) {
  FakeSweep sweep(kTwoGroups);
  sweep.target.metrics_urls = {"http://127.0.0.1:1/metrics"};  // refused: every scrape fails
  sweep.target.health_after_cell =
      "pods changed during the cell: a rollout is in progress: w-0: Terminating";
  sweep.run();
  const std::string text = sweep.output.text();
  EXPECT_NE(text.find("  warning: scrape: http://127.0.0.1:1/metrics"), std::string::npos) << text;
  EXPECT_NE(text.find("(pods changed during the cell: a rollout is in progress: w-0: "
                      "Terminating)\n"),
            std::string::npos)
      << text;
  // ... and the event itself under the cell, as the router's health events are.
  EXPECT_NE(text.find("cell 1/4 random c=1: pods changed during the cell: a rollout is in "
                      "progress: w-0: Terminating"),
            std::string::npos)
      << text;
}

TEST(Runner, TheCachePolicyIsPerCell) {
  FakeSweep sweep(R"(name: caches
target: {kind: sim}
factors:
  cache: [cold, as-is, warm]
  concurrency: [3]
load: {num_requests: 4, max_tokens: 2}
)");
  const SweepOutcome outcome = sweep.run();
  EXPECT_EQ(outcome.status, "done");
  EXPECT_EQ(sweep.calls, (Calls{"start", "apply (no target factor)", "wait_ready",
                                // cold: the target empties the caches first
                                "cold", "endpoints", "load c=3 n=4", "cell_finished",
                                // as-is: nothing before the load
                                "endpoints", "load c=3 n=4", "cell_finished",
                                // warm: the measured workload once, unmeasured, then measured
                                "endpoints", "load c=3 n=4", "load c=3 n=4", "cell_finished"}));
  const auto cells = sweep.store.cells(outcome.experiment_id);
  const auto warm = sweep.store.request_counts(cells[2].id);
  EXPECT_EQ(warm.measured, 4);
  EXPECT_EQ(warm.warmup, 4);  // the pre-pass is stored, flagged
}

TEST(Runner, AStopDuringACellKeepsItsFinishedRequestsAndEndsTheSweep) {
  FakeSweep sweep(kTwoGroups);
  // Load calls 1-4 are cells 1 and 2 (warm-up, measured); call 6 is cell 3's measured phase.
  const SweepOutcome outcome = sweep.run(/*stop_at_load=*/6);
  EXPECT_EQ(outcome.status, "interrupted");
  EXPECT_EQ(sweep.statuses(outcome), (Calls{"done", "done", "interrupted", "pending"}));
  const auto cells = sweep.store.cells(outcome.experiment_id);
  const auto kept = sweep.store.request_counts(cells[2].id);
  EXPECT_EQ(kept.warmup, 2);
  EXPECT_EQ(kept.measured, 2);  // half of 4: what finished before the stop
  EXPECT_EQ(cells[2].error, "stopped by a signal");
  EXPECT_EQ(sweep.calls.back(), "cell_finished");  // cell 3's; cell 4 never started
  EXPECT_EQ(sweep.store.experiment(outcome.experiment_id)->status, "interrupted");
  EXPECT_NE(sweep.output.text().find("cell 3/4 least-load c=1: interrupted; 4 finished requests "
                                     "kept"),
            std::string::npos)
      << sweep.output.text();
}

TEST(Runner, AResumeSkipsDoneCellsAndTheirDeployment) {
  FakeSweep sweep(kTwoGroups);
  const SweepOutcome first = sweep.run(/*stop_at_load=*/6);
  ASSERT_EQ(first.status, "interrupted");

  // Another process resumes: a new target, the same store.
  sweep.calls.clear();
  sweep.stop = false;
  FakeTarget again(sweep.calls);
  RunnerOptions options;
  options.stop = &sweep.stop;
  options.resume = true;
  options.load = FakeLoad(sweep.calls, sweep.stop);
  RecordingOutput output;
  const SweepOutcome resumed =
      run_sweep(sweep.spec, expand_plan(sweep.spec, options.target_override), again, sweep.store,
                output, options);
  EXPECT_TRUE(resumed.resumed);
  EXPECT_EQ(resumed.experiment_id, first.experiment_id);
  EXPECT_EQ(resumed.status, "done");
  EXPECT_EQ(resumed.cells_skipped, 2);
  EXPECT_EQ(resumed.cells_done, 2);
  // The first deployment's cells are done: it is not applied again.
  EXPECT_EQ(Calls(sweep.calls.begin(), sweep.calls.begin() + 4),
            (Calls{"start", "apply strategy=least-load", "wait_ready", "cold"}));
  EXPECT_NE(output.text().find("deployment 1/2: strategy=random: every cell already done, "
                               "skipped"),
            std::string::npos)
      << output.text();
  // The interrupted cell ran again from scratch: its half-measured rows are gone.
  const auto cells = sweep.store.cells(resumed.experiment_id);
  EXPECT_EQ(sweep.statuses(resumed), (Calls{"done", "done", "done", "done"}));
  const auto counts = sweep.store.request_counts(cells[2].id);
  EXPECT_EQ(counts.measured, 4);
  EXPECT_EQ(counts.warmup, 2);
}

TEST(Runner, ATargetThatCannotStartStoresNothing) {
  FakeSweep sweep(kTwoGroups);
  sweep.target.fail_start = true;
  try {
    sweep.run();
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "starting the target: fake: cannot connect");
  }
  EXPECT_TRUE(sweep.store.experiments().empty());
  EXPECT_EQ(sweep.calls, (Calls{"start"}));
}

// The claims' heartbeats of the experiment's unfinished cells, as another process reads them.
std::vector<double> heartbeats(const std::string& path) {
  std::vector<double> out;
  const store::Store reader = store::Store::open(path);
  for (const auto& claim : reader.claims(1)) out.push_back(claim.heartbeat_s);
  return out;
}

TEST(RunnerClaims, ARunBeatsDuringALongReadinessWait) {
  FakeSweep sweep(kTwoGroups);
  const std::string path = sweep.dir.file("kvsweep.db");
  // The first gate lasts until another connection has seen the heartbeat move twice (at most
  // 20 s; a 0.4 s timeout beats every 0.1 s), as a real gate waits on pods.
  int advances = -1;
  sweep.target.during_wait_ready = [&] {
    if (advances >= 0) return;
    advances = 0;
    std::vector<double> last = heartbeats(path);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (advances < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const std::vector<double> now = heartbeats(path);
      if (now.size() == 4 && last.size() == 4 && now[0] > last[0]) ++advances;
      last = now;
    }
  };
  const SweepOutcome outcome = sweep.run(0, false, /*claim_timeout_s=*/0.4);
  EXPECT_EQ(advances, 2);
  EXPECT_EQ(outcome.status, "done") << sweep.output.text();
  EXPECT_TRUE(sweep.store.claims(outcome.experiment_id).empty());  // released at the end
}

TEST(RunnerClaims, AResumeRefusesALiveClaimAndTouchesNothing) {
  FakeSweep sweep(kTwoGroups);
  ASSERT_EQ(sweep.run(/*stop_at_load=*/6).status, "interrupted");
  const auto cells = sweep.store.cells(1);
  // Another process on another host runs the experiment now and beat a second ago.
  sweep.store.claim_cells({cells[2].id, cells[3].id},
                          store::ClaimOwner{"0123456789abcdef", "node-b", 31, "pid:[1]"},
                          unix_now_s() - 1);
  sweep.calls.clear();
  sweep.stop = false;
  try {
    sweep.run(0, /*resume=*/true);
    ADD_FAILURE() << "expected a refusal";
  } catch (const ClaimedByAnotherRun& e) {
    EXPECT_EQ(std::string(e.what()),
              "experiment 1 (fake-sweep) is being run by another kvsweep: pid 31 on node-b (run "
              "0123456789abcdef), last heartbeat 1 s ago; not resuming it. Let that run finish; if "
              "it is dead, resume once its heartbeat is older than --claim-timeout (60 s).");
  }
  EXPECT_EQ(sweep.calls, (Calls{"start"}));  // no load, no apply
  EXPECT_EQ(sweep.statuses(FakeSweep::Outcome(1)),
            (Calls{"done", "done", "interrupted", "pending"}));
  EXPECT_EQ(sweep.store.request_counts(cells[2].id).measured, 2);  // not reset
  EXPECT_EQ(sweep.store.claims(1).size(), 2u);
}

TEST(RunnerClaims, ADeadClaimIsTakenOverAfterItsTimeout) {
  FakeSweep sweep(kTwoGroups);
  ASSERT_EQ(sweep.run(/*stop_at_load=*/6).status, "interrupted");
  const auto cells = sweep.store.cells(1);
  sweep.store.claim_cells({cells[2].id, cells[3].id},
                          store::ClaimOwner{"0123456789abcdef", "node-b", 31, "pid:[1]"},
                          unix_now_s() - 90);
  sweep.stop = false;
  const SweepOutcome resumed = sweep.run(0, /*resume=*/true);
  EXPECT_EQ(resumed.status, "done");
  EXPECT_EQ(resumed.cells_done, 2);
  EXPECT_NE(sweep.output.text().find("taking over from a run that is gone: pid 31 on node-b (run "
                                     "0123456789abcdef), last heartbeat 90 s ago"),
            std::string::npos)
      << sweep.output.text();
  EXPECT_TRUE(sweep.store.claims(1).empty());
}

TEST(RunnerClaims, ARunWhoseCellsWereTakenOverStoresNothingMore) {
  FakeSweep sweep(kTwoGroups);
  // While the second deployment waits for readiness, another run takes every claim over (this
  // run's heartbeat lapsed, say the process was stopped).
  const std::string path = sweep.dir.file("kvsweep.db");
  int waits = 0;
  sweep.target.during_wait_ready = [&] {
    if (++waits != 2) return;
    store::Store other = store::Store::open(path);
    std::vector<std::int64_t> ids;
    for (const auto& cell : other.cells(1)) {
      if (cell.status != "done") ids.push_back(cell.id);
    }
    other.claim_cells(ids, store::ClaimOwner{"feedfacefeedface", "node-c", 8, ""}, unix_now_s());
  };
  try {
    sweep.run();
    ADD_FAILURE() << "expected ClaimedByAnotherRun";
  } catch (const ClaimedByAnotherRun& e) {
    EXPECT_NE(std::string(e.what()).find("experiment 1 was taken over by another run"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("taken over by pid 8 on node-c (run feedfacefeedface"),
              std::string::npos)
        << e.what();
  }
  const auto cells = sweep.store.cells(1);
  // Cell 3 was marked running before its gates; the new owner resets it. Nothing was stored
  // into it, and cell 4 was not started.
  EXPECT_EQ(sweep.statuses(FakeSweep::Outcome(1)), (Calls{"done", "done", "running", "pending"}));
  EXPECT_EQ(sweep.store.request_count(cells[2].id), 0);
  EXPECT_TRUE(sweep.store.commands(cells[2].id).empty());
  EXPECT_EQ(sweep.store.experiment(1)->status, "running");  // the new owner's to finish
  EXPECT_EQ(sweep.store.claims(1).size(), 2u);
  EXPECT_EQ(sweep.store.claims(1)[0].owner.run_id, "feedfacefeedface");
}

TEST(RunnerClaims, AnErrorMidSweepSaysWhatStoppedTheExperiment) {
  FakeSweep sweep(kTwoGroups);
  RunnerOptions options;
  options.stop = &sweep.stop;
  FakeLoad load(sweep.calls, sweep.stop);
  int loads = 0;
  options.load = [&](const driver::LoadOptions& o, const driver::Workload& w,
                     const std::function<void(const driver::Progress&)>& progress) {
    if (++loads == 3) throw std::runtime_error("the load step broke");
    return load(o, w, progress);
  };
  try {
    run_sweep(sweep.spec, expand_plan(sweep.spec, options.target_override), sweep.target,
              sweep.store, sweep.output, options);
    ADD_FAILURE() << "expected SweepStopped";
  } catch (const SweepStopped& e) {
    EXPECT_EQ(std::string(e.what()), "experiment 1 failed: the load step broke");
    EXPECT_EQ(e.experiment_id(), 1);
  }
  EXPECT_EQ(sweep.store.experiment(1)->status, "failed: the load step broke");
  EXPECT_NE(sweep.store.experiment(1)->finished_at, "");
  EXPECT_EQ(sweep.statuses(FakeSweep::Outcome(1)),
            (Calls{"done", "running", "pending", "pending"}));
  EXPECT_TRUE(sweep.store.claims(1).empty());
}

// A reason longer than the room kept for the status (runner.cc, kMaxStatusBytes) is stored
// cut, so the status always fits what was kept free; the console's line has it whole.
TEST(RunnerClaims, AStopReasonLongerThanTheRoomKeptForItIsStoredCut) {
  FakeSweep sweep(kTwoGroups);
  RunnerOptions options;
  options.stop = &sweep.stop;
  const std::string reason = "kubectl said: " + std::string(5000, 'x');
  options.load = [&](const driver::LoadOptions&, const driver::Workload&,
                     const std::function<void(const driver::Progress&)>&) -> driver::LoadResult {
    throw std::runtime_error(reason);
  };
  try {
    run_sweep(sweep.spec, expand_plan(sweep.spec, options.target_override), sweep.target,
              sweep.store, sweep.output, options);
    ADD_FAILURE() << "expected SweepStopped";
  } catch (const SweepStopped& e) {
    EXPECT_EQ(std::string(e.what()), "experiment 1 failed: " + reason);
  }
  const std::string status = sweep.store.experiment(1)->status;
  EXPECT_EQ(status.size(), 1024u);
  EXPECT_EQ(status.rfind("failed: kubectl said: xxx", 0), 0u) << status;
  EXPECT_EQ(status.substr(status.size() - 4), "x...");
}

// The descriptors of this process open on a file that has no name in `dir`: how /proc shows
// an O_TMPFILE file ("<dir>/#<inode> (deleted)") or an unlinked one.
int nameless_files_in(const std::string& dir) {
  int count = 0;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    const std::string target = std::filesystem::read_symlink(fd.path(), error).string();
    const std::string deleted = " (deleted)";
    if (!error && target.rfind(dir + "/", 0) == 0 && target.size() > deleted.size() &&
        target.compare(target.size() - deleted.size(), deleted.size(), deleted) == 0) {
      ++count;
    }
  }
  return count;
}

// While the cells run, the room to store the run's end is held beside the store in a file
// without a name, real blocks; it is given back when the sweep ends, and the directory never
// shows it.
TEST(RunnerReserve, RoomIsHeldBesideTheStoreWhileCellsRunAndGivenBackAtTheEnd) {
  FakeSweep sweep(kTwoGroups);
  const std::string dir = sweep.dir.path().string();
  FakeLoad load(sweep.calls, sweep.stop);
  std::vector<int> held;
  std::vector<std::string> listed;
  RunnerOptions options;
  options.stop = &sweep.stop;
  options.load = [&](const driver::LoadOptions& o, const driver::Workload& w,
                     const std::function<void(const driver::Progress&)>& progress) {
    held.push_back(nameless_files_in(dir));
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      listed.push_back(entry.path().filename().string());
    }
    return load(o, w, progress);
  };
  ASSERT_EQ(nameless_files_in(dir), 0);
  run_sweep(sweep.spec, expand_plan(sweep.spec, options.target_override), sweep.target, sweep.store,
            sweep.output, options);
  EXPECT_EQ(held, std::vector<int>(8, 1));  // 4 cells, a warm-up and a measured phase each
  for (const std::string& name : listed) {
    EXPECT_TRUE(name == "kvsweep.db" || name == "kvsweep.db-wal" || name == "kvsweep.db-shm")
        << name;
  }
  EXPECT_EQ(nameless_files_in(dir), 0);
}

// A sweep that stops on an error gives the room back too.
TEST(RunnerReserve, AStoppedSweepGivesTheRoomBack) {
  FakeSweep sweep(kTwoGroups);
  RunnerOptions options;
  options.stop = &sweep.stop;
  options.load = [&](const driver::LoadOptions&, const driver::Workload&,
                     const std::function<void(const driver::Progress&)>&) -> driver::LoadResult {
    throw std::runtime_error("the load step broke");
  };
  EXPECT_THROW(run_sweep(sweep.spec, expand_plan(sweep.spec, options.target_override), sweep.target,
                         sweep.store, sweep.output, options),
               SweepStopped);
  EXPECT_EQ(nameless_files_in(sweep.dir.path().string()), 0);
}

// Each load phase's progress is stored as it comes, committed at once: another process
// reading the file mid-cell (kvsweep serve) sees the cell running and its snapshot, while the
// cell's requests are still only in memory (they are stored in one transaction at its end).
TEST(Runner, ProgressIsStoredWhileTheCellRunsAndKeptWithIt) {
  FakeSweep sweep(kTwoGroups);
  std::vector<std::string> seen_mid_cell;
  FakeLoad fake(sweep.calls, sweep.stop);
  RunnerOptions options;
  options.load = [&](const driver::LoadOptions& o, const driver::Workload& w,
                     const std::function<void(const driver::Progress&)>& on_progress) {
    driver::LoadResult result = fake(o, w, on_progress);
    const store::Store reader = store::Store::open_read_only(sweep.store.path());
    for (const auto& e : reader.experiments()) {
      for (const auto& cell : reader.cells(e.id)) {
        if (cell.status != "running") continue;
        const auto snapshots = reader.progress(cell.id);
        seen_mid_cell.push_back(cell.key.substr(cell.key.find('/') + 1) + " " +
                                std::to_string(snapshots.size()) + " " + snapshots.back().phase +
                                " requests=" + std::to_string(reader.request_count(cell.id)));
      }
    }
    return result;
  };
  const SweepOutcome outcome =
      run_sweep(sweep.spec, expand_plan(sweep.spec, options.target_override), sweep.target,
                sweep.store, sweep.output, options);
  ASSERT_EQ(outcome.status, "done") << sweep.output.text();
  ASSERT_EQ(seen_mid_cell.size(), 8u);  // 4 cells x (warm-up, measured)
  EXPECT_NE(seen_mid_cell[0].find(" 1 warm-up requests=0"), std::string::npos) << seen_mid_cell[0];
  EXPECT_NE(seen_mid_cell[1].find(" 2 measured requests=0"), std::string::npos) << seen_mid_cell[1];

  const auto cells = sweep.store.cells(outcome.experiment_id);
  const auto kept = sweep.store.progress(cells[0].id);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[1].phase, "measured");
  EXPECT_EQ(kept[1].done, 4);
  EXPECT_EQ(kept[1].total, 4);
  EXPECT_EQ(kept[1].ttft_p50_ms, 2);
  EXPECT_EQ(kept[1].ttft_p95_ms, 3);
  EXPECT_GT(kept[1].wall_s, 1.6e9);
}

}  // namespace
}  // namespace kvsweep::orchestrator::test
