// The searching sweep (orchestrator/sweep/search_loop.h) against a fake target whose load step
// answers with a TTFT that grows with the load, so each arm's capacity is known exactly: the
// probes are cells in the store, each arm's search is stored, a guide starts at its value, an
// interrupted search resumes where it stopped, and a client-bound probe never fails the SLO.
#include "orchestrator/sweep/search_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/sweep/runner.h"
#include "orchestrator/targets/target_kinds.h"
#include "tests/orchestrator/sweep/fake_target.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::orchestrator::test {
namespace {

// Two arms; p95 TTFT must stay at or under 200 ms. The fake's TTFT is 10 ms per user in flight
// for random and 4 ms for least-load: capacities 20 and 50 (found within 5%).
constexpr const char* kConcurrencySearch = R"(name: fake-search
target: {kind: sim}
factors:
  strategy: [random, least-load]
load: {num_requests: 40, max_tokens: 2}
slo: {p95_ttft_ms: 200}
search: {factor: concurrency, low: 1, high: 256, precision: 0.05, guide: none}
)";

ScenarioSpec parse_search(const std::string& text) {
  std::vector<ScenarioError> errors;
  auto spec = parse_scenario(text, "search.yaml", &errors, target_kinds());
  if (!spec) ADD_FAILURE() << errors.at(0).text;
  return spec.value_or(ScenarioSpec{});
}

class Lines : public SweepOutput {
 public:
  void line(const std::string& text) override {
    all += text + "\n";
    if (on_line) on_line(text);
  }
  void progress(const std::string&) override {}
  void end_progress() override {}
  std::string all;
  std::function<void(const std::string&)> on_line;
};

// The strategy the fake target runs now: its last apply.
std::string applied_strategy(const std::vector<std::string>& calls) {
  for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
    if (it->rfind("apply ", 0) == 0)
      return it->find("least-load") != std::string::npos ? "ll" : "r";
  }
  return "r";
}

struct FakeSearch {
  explicit FakeSearch(const std::string& text) : spec(parse_search(text)), target(calls) {}

  SweepOutcome run(bool resume = false, std::map<std::string, double> guide = {}) {
    RunnerOptions options;
    options.stop = &stop;
    options.resume = resume;
    options.search_guide = std::move(guide);
    options.load = [this](const driver::LoadOptions& o, const driver::Workload&,
                          const std::function<void(const driver::Progress&)>&) {
      const int users = o.concurrency > 0 ? o.concurrency : o.max_concurrency;
      const double per_user_ms = applied_strategy(calls) == "ll" ? 4 : 10;
      ++loads;
      driver::LoadResult result;
      result.epoch_wall_s = 1'700'000'000.0 + loads;
      for (std::int64_t i = 0; i < o.num_requests; ++i) {
        // More users send sooner (a closed loop) when the fake is told to scale.
        const double sent_s = 0.01 * static_cast<double>(i) / (scale_sends ? users : 1);
        result.records.push_back(ok_record(i, sent_s, per_user_ms * users));
      }
      return result;
    };
    return run_sweep(spec, expand_plan(spec), target, store, output, options);
  }

  testing::TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  ScenarioSpec spec;
  std::vector<std::string> calls;
  FakeTarget target;
  Lines output;
  std::atomic<bool> stop{false};
  int loads = 0;
  bool scale_sends = false;
};

TEST(SearchLoop, FindsEachArmsCapacityAndStoresEveryProbeAsACell) {
  FakeSearch search(kConcurrencySearch);
  const SweepOutcome outcome = search.run();
  ASSERT_EQ(outcome.status, "done") << search.output.all;
  ASSERT_EQ(outcome.capacities.size(), 2u);
  EXPECT_EQ(outcome.capacities[0].key, "random");
  EXPECT_EQ(outcome.capacities[0].result.capacity, 20);
  EXPECT_EQ(outcome.capacities[0].result.first_failing, 21);
  EXPECT_EQ(outcome.capacities[1].key, "least-load");
  // 49 passed and 51 failed: within the precision (5%), so the search ended there.
  EXPECT_EQ(outcome.capacities[1].result.capacity, 49);
  EXPECT_EQ(outcome.capacities[1].result.first_failing, 51);
  // Every probe is a done cell of the experiment, at its concurrency, in the order probed.
  const std::vector<store::CellRow> cells = search.store.cells(outcome.experiment_id);
  const std::size_t probes =
      outcome.capacities[0].probes.size() + outcome.capacities[1].probes.size();
  ASSERT_EQ(cells.size(), probes);
  EXPECT_EQ(outcome.cells_done, static_cast<int>(probes));
  for (std::size_t i = 0; i < outcome.capacities[0].probes.size(); ++i) {
    EXPECT_EQ(cells[i].concurrency, outcome.capacities[0].probes[i].load);
    EXPECT_EQ(cells[i].arm, "random");
    EXPECT_EQ(cells[i].status, "done");
  }
  // The arms' searches are stored for the reports.
  const std::vector<store::ArmSearchRow> rows = search.store.arm_searches(outcome.experiment_id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].arm_key, "least-load");
  EXPECT_EQ(rows[1].capacity, 49);
  EXPECT_NE(rows[1].why.find("within the precision"), std::string::npos) << rows[1].why;
  EXPECT_GT(rows[1].capacity_cell_id, 0);
  EXPECT_NE(search.output.all.find("capacity of least-load: 49 in flight, failing at 51 in flight"),
            std::string::npos)
      << search.output.all;
}

TEST(SearchLoop, AGuideStartsTheSearchAtItsValueAndSavesProbes) {
  FakeSearch unguided(kConcurrencySearch);
  const SweepOutcome u = unguided.run();
  FakeSearch guided(kConcurrencySearch);
  const SweepOutcome g = guided.run(false, {{"random", 19}, {"least-load", 52}});
  ASSERT_EQ(g.capacities.size(), 2u);
  EXPECT_EQ(g.capacities[0].probes.front().load, 19);
  EXPECT_EQ(g.capacities[1].probes.front().load, 52);
  EXPECT_EQ(g.capacities[0].result.capacity, 20);
  EXPECT_EQ(g.capacities[1].result.capacity, 50);  // 52 failed, 50 passed, 51 failed
  EXPECT_LE(2 * (g.capacities[0].probes.size() + g.capacities[1].probes.size()),
            u.capacities[0].probes.size() + u.capacities[1].probes.size());
}

TEST(SearchLoop, AnInterruptedSearchResumesWhereItStopped) {
  FakeSearch whole(kConcurrencySearch);
  const SweepOutcome reference = whole.run();

  FakeSearch cut(kConcurrencySearch);
  int probes_said = 0;
  cut.output.on_line = [&](const std::string& line) {
    // A probe's verdict line (the cell runner's own line about it comes before).
    const bool verdict = line.rfind("    search: ", 0) == 0;
    if (verdict && ++probes_said == 5) cut.stop = true;
  };
  const SweepOutcome first = cut.run();
  EXPECT_EQ(first.status, "interrupted") << cut.output.all;
  cut.stop = false;
  cut.output.on_line = nullptr;
  const int loads_before = cut.loads;
  const SweepOutcome resumed = cut.run(/*resume=*/true);
  ASSERT_EQ(resumed.status, "done") << cut.output.all;
  EXPECT_EQ(resumed.experiment_id, first.experiment_id);
  EXPECT_EQ(resumed.cells_skipped, 5);
  ASSERT_EQ(resumed.capacities.size(), 2u);
  for (std::size_t arm = 0; arm < 2; ++arm) {
    const auto& a = resumed.capacities[arm].probes;
    const auto& b = reference.capacities[arm].probes;
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].load, b[i].load);
  }
  // Only the probes not done before were run again.
  const std::size_t all =
      reference.capacities[0].probes.size() + reference.capacities[1].probes.size();
  EXPECT_EQ(static_cast<std::size_t>(cut.loads - loads_before), all - 5);
}

// Without an SLO: the knee. The fake's sends speed up with the users while each request's TTFT
// grows with them, so throughput per user falls from some concurrency on: the search ends
// where it falls under 90% of the lightest load's, the lightest load probed first.
TEST(SearchLoop, WithoutAnSloItFindsTheKnee) {
  FakeSearch search(R"(name: fake-knee
target: {kind: sim}
factors:
  strategy: [random]
load: {num_requests: 40, max_tokens: 2}
search: {factor: concurrency, low: 1, high: 256, precision: 0.05, guide: none}
)");
  search.scale_sends = true;
  const SweepOutcome outcome = search.run();
  ASSERT_EQ(outcome.status, "done") << search.output.all;
  ASSERT_EQ(outcome.capacities.size(), 1u);
  const CapacityResult& r = outcome.capacities[0].result;
  ASSERT_TRUE(r.capacity && r.first_failing) << r.why;
  EXPECT_EQ(outcome.capacities[0].probes.front().load, 1);  // the reference first
  // The knee by the stored cells themselves: at it, 90% or more of the reference's
  // throughput per user; at the first failing load, less.
  std::map<double, double> per_user;
  for (const store::CellRow& cell : search.store.cells(outcome.experiment_id)) {
    per_user[cell.concurrency] = throughput_per_load(search.store, cell, cell.concurrency);
  }
  ASSERT_GT(per_user.at(1), 0);
  EXPECT_GE(per_user.at(*r.capacity) / per_user.at(1), 0.9) << *r.capacity;
  EXPECT_LT(per_user.at(*r.first_failing) / per_user.at(1), 0.9) << *r.first_failing;
  EXPECT_GT(*r.capacity, 1);
  EXPECT_NE(search.output.all.find("for its knee (no SLO)"), std::string::npos);
  const auto rows = search.store.arm_searches(outcome.experiment_id);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].capacity, r.capacity);
}

// An open-loop probe sends for search.min_probe at its rate: 2,000 requests at 50 req/s would
// end in 40 s, so the probe sends 6,000; at 1 req/s the 2,000 already span longer. A duration
// shorter than min_probe is raised to it; min_probe 0 leaves the load section alone; a
// rehearsal's cut (target.sim.num_requests) still cuts, and such a probe is said too short.
constexpr const char* kRateSearch = R"(name: rate-search
target: {kind: sim}
factors:
  strategy: [least-load]
  concurrency: [512]
load: {num_requests: 2000, duration: 30s, max_tokens: 2}
slo: {p95_ttft_ms: 200}
search: {factor: load.request_rate, low: 1, high: 400, guide: none}
)";

CellPlan first_probe(const std::string& text, double load, const std::string& target = "") {
  const ScenarioSpec spec = parse_search(text);
  const std::vector<CellPlan> arms = search_arms(spec, expand_plan(spec, target));
  EXPECT_EQ(arms.size(), 1u);
  return probe_cell(spec, arms.at(0), load, 0, target);
}

TEST(SearchLoop, AnOpenLoopProbeSendsForAtLeastMinProbeAtItsRate) {
  const CellPlan fast = first_probe(kRateSearch, 50);
  EXPECT_EQ(fast.load.request_rate, 50);
  EXPECT_EQ(fast.load.num_requests, 6000);
  EXPECT_EQ(fast.load.duration_s, 120);
  const CellPlan slow = first_probe(kRateSearch, 1);
  EXPECT_EQ(slow.load.num_requests, 2000);
  EXPECT_EQ(slow.load.duration_s, 120);
  // The probe's key is its level's, whatever the sizing: a resumed search finds its probes.
  const ScenarioSpec spec = parse_search(kRateSearch);
  EXPECT_EQ(fast.key, first_probe(kRateSearch, 50).key);
  EXPECT_NE(fast.key, slow.key);
  std::string off = kRateSearch;
  off.replace(off.find("guide: none}"), 12, "guide: none, min_probe: 0}");
  const CellPlan as_written = first_probe(off, 50);
  EXPECT_EQ(as_written.load.num_requests, 2000);
  EXPECT_EQ(as_written.load.duration_s, 30);
  EXPECT_EQ(spec.search.min_probe_s, 120);
}

TEST(SearchLoop, AProbeCutShortOfMinProbeIsSaidToBeTooShort) {
  std::string text = kRateSearch;
  text.replace(text.find("target: {kind: sim}"), 19,
               "target: {kind: kubeai, resource: m, replicas: 2, base_url: \"http://k/openai\", "
               "sim: {num_requests: 400}}");
  const CellPlan rehearsed = first_probe(text, 50, "sim");
  EXPECT_EQ(rehearsed.load.num_requests, 400);  // the rehearsal's cut stands
  const ScenarioSpec spec = parse_search(text);
  std::vector<store::RequestRow> rows(400);
  const auto short_by = probe_too_short(spec.search, rows, rehearsed.load);
  ASSERT_TRUE(short_by);
  EXPECT_DOUBLE_EQ(*short_by, 8.0);  // 400 requests at 50 req/s
  rows.resize(6000);
  EXPECT_FALSE(probe_too_short(spec.search, rows, first_probe(kRateSearch, 50).load));
  for (auto& r : rows) r.warmup = true;  // warm-up requests are no arrivals of the probe
  EXPECT_TRUE(probe_too_short(spec.search, rows, first_probe(kRateSearch, 50).load));
  // Sized to exactly rate x min_probe: 2712 requests at 22.6 req/s are 120 s, not 119.99999.
  LoadSpec exact = rehearsed.load;
  exact.request_rate = 22.6;
  rows.assign(2712, store::RequestRow{});
  EXPECT_FALSE(probe_too_short(spec.search, rows, exact));
  rows.pop_back();
  EXPECT_TRUE(probe_too_short(spec.search, rows, exact));
  LoadSpec closed;  // no rate: a closed loop is never too short for an over-capacity rule
  EXPECT_FALSE(probe_too_short(spec.search, rows, closed));
}

}  // namespace
}  // namespace kvsweep::orchestrator::test
