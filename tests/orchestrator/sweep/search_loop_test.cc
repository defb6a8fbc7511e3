// The searching sweep (orchestrator/sweep/search_loop.h) against a fake target whose load step
// answers with a TTFT that grows with the load, so each arm's capacity is known exactly: the
// probes are cells in the store, each arm's search is stored, a guide starts at its value, an
// interrupted search resumes where it stopped, and a client-bound probe never fails the SLO.
#include "orchestrator/sweep/search_loop.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "driver/load_options.h"
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
search: {factor: concurrency, low: 1, high: 256, precision: 0.05, guide: none, min_probe: 100ms}
)";

// An open-loop rate search: probes of at least 20 s of arrivals (the load's 100 requests are
// raised to rate x 20 s from 5 req/s up).
constexpr const char* kRateSearch = R"(name: fake-rate-search
target: {kind: sim}
factors:
  strategy: [least-load]
  concurrency: [10000]
load: {num_requests: 100, max_tokens: 2}
slo: {p95_ttft_ms: 200}
search: {factor: load.request_rate, low: 10, high: 80, precision: 0.05, guide: none, min_probe: 20s}
)";

ScenarioSpec parse(const std::string& text) {
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
  explicit FakeSearch(const std::string& text) : spec(parse(text)), target(calls) {}

  SweepOutcome run(bool resume = false, std::map<std::string, double> guide = {}) {
    RunnerOptions options;
    options.stop = &stop;
    options.resume = resume;
    options.search_guide = std::move(guide);
    options.load = [this](const driver::LoadOptions& o, const driver::Workload&,
                          const std::function<void(const driver::Progress&)>&) {
      if (open_loop) {
        ++loads;
        driver::LoadResult result = open_loop(o);
        result.epoch_wall_s = 1'700'000'000.0 + loads;
        return result;
      }
      const int users = o.concurrency > 0 ? o.concurrency : o.max_concurrency;
      const double per_user_ms = applied_strategy(calls) == "ll" ? 4 : 10;
      ++loads;
      driver::LoadResult result;
      result.epoch_wall_s = 1'700'000'000.0 + loads;
      for (std::int64_t i = 0; i < o.num_requests; ++i) {
        driver::RequestRecord r;
        r.index = i;
        r.ok = true;
        r.http_status = 200;
        // More users send sooner (a closed loop) when the fake is told to scale.
        r.sent_s = 0.01 * static_cast<double>(i) / (scale_sends ? users : 1);
        r.ttft_ms = per_user_ms * users;
        r.first_token_s = r.sent_s + r.ttft_ms / 1000;
        r.last_token_s = r.first_token_s + 0.002;
        r.ended_s = r.last_token_s;
        r.e2e_ms = r.ttft_ms + 2;
        r.tpot_ms = 2;
        r.prompt_tokens = 10;
        r.output_tokens = 2;
        r.cached_tokens = 0;
        result.records.push_back(r);
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
  // When set, answers every load (an open loop's probes) in place of the closed-loop fake.
  std::function<driver::LoadResult(const driver::LoadOptions&)> open_loop;
};

// An open loop at o.request_rate whose fleet serves `capacity` req/s: at or below it every
// request takes 50 ms (TTFT 10 ms); above it request i finishes at i / capacity, so the number
// in flight grows through the probe, while TTFT rises only from 10 to 60 ms: well inside a
// 200 ms SLO, even a cell-length further up its trend. `sent`: at most this many requests.
driver::LoadResult queueing_fleet(const driver::LoadOptions& o, double capacity,
                                  std::int64_t sent = -1) {
  driver::LoadResult result;
  const std::int64_t n = sent >= 0 ? std::min(sent, o.num_requests) : o.num_requests;
  const double rate = o.request_rate;
  const double span = static_cast<double>(n) / rate;
  for (std::int64_t i = 0; i < n; ++i) {
    driver::RequestRecord r;
    r.index = i;
    r.ok = true;
    r.http_status = 200;
    r.scheduled_s = static_cast<double>(i) / rate;
    r.sent_s = r.scheduled_s;
    const bool over = rate > capacity;
    r.ttft_ms = over ? 10 + 50 * r.sent_s / span : 10;
    r.first_token_s = r.sent_s + r.ttft_ms / 1000;
    r.last_token_s = over ? std::max(static_cast<double>(i) / capacity, r.first_token_s) + 0.04
                          : r.sent_s + 0.05;
    r.ended_s = r.last_token_s;
    r.e2e_ms = (r.last_token_s - r.sent_s) * 1000;
    r.tpot_ms = r.e2e_ms - r.ttft_ms;
    r.prompt_tokens = 10;
    r.output_tokens = 2;
    r.cached_tokens = 0;
    result.records.push_back(r);
  }
  return result;
}

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
search: {factor: concurrency, low: 1, high: 256, precision: 0.05, guide: none, min_probe: 100ms}
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

// Above 40 req/s the fake fleet's queue grows while TTFT stays far inside the SLO: such a probe
// is over capacity and fails though its SLO passed (no projection up the TTFT trend passes it),
// so the capacity is 40 req/s, not the upper bound. Each probe sent rate x 20 s of requests.
TEST(SearchLoop, AnOverCapacityProbeFailsThoughItsSloPasses) {
  FakeSearch search(kRateSearch);
  std::map<double, std::int64_t> sent;  // rate -> requests asked for
  search.open_loop = [&](const driver::LoadOptions& o) {
    sent[o.request_rate] = o.num_requests;
    return queueing_fleet(o, 40);
  };
  const SweepOutcome outcome = search.run();
  ASSERT_EQ(outcome.status, "done") << search.output.all;
  ASSERT_EQ(outcome.capacities.size(), 1u);
  const CapacityResult& r = outcome.capacities[0].result;
  ASSERT_TRUE(r.capacity && r.first_failing) << r.why << "\n" << search.output.all;
  EXPECT_LE(*r.capacity, 40) << search.output.all;
  EXPECT_GT(*r.first_failing, 40);
  EXPECT_LE(*r.first_failing, 40 * 1.05 * 1.01) << search.output.all;
  EXPECT_NE(search.output.all.find("search: fail; fails as over capacity: "), std::string::npos)
      << search.output.all;
  EXPECT_EQ(search.output.all.find("a cell-length later"), std::string::npos);
  ASSERT_FALSE(sent.empty());
  for (const auto& [rate, requests] : sent) {
    EXPECT_EQ(requests,
              std::max<std::int64_t>(100, static_cast<std::int64_t>(std::ceil(rate * 20))))
        << rate;
  }
}

// A probe whose arrivals end before search.min_probe (here the default 60 s on a real target:
// the fleet answers only 100 requests, as a dataset that ran out would) is not judged: the
// arm's search ends, saying which probe, how long it ran and the minimum.
TEST(SearchLoop, AProbeShorterThanTheMinimumIsTooShortToJudge) {
  std::string text = kRateSearch;
  text.replace(text.find(", min_probe: 20s"), std::string(", min_probe: 20s").size(), "");
  FakeSearch search(text);
  search.open_loop = [](const driver::LoadOptions& o) { return queueing_fleet(o, 40, 100); };
  const SweepOutcome outcome = search.run();
  ASSERT_EQ(outcome.status, "done") << search.output.all;
  ASSERT_EQ(outcome.capacities.size(), 1u);
  const ArmCapacity& a = outcome.capacities[0];
  ASSERT_EQ(a.probes.size(), 1u);
  EXPECT_EQ(a.probes[0].outcome, ProbeOutcome::kTooShort);
  EXPECT_FALSE(a.result.capacity);
  EXPECT_EQ(a.result.why,
            "the probe at 10 req/s was too short to judge: 100 requests, 10.0 s of arrivals, "
            "under the 60 s a probe needs to reach its steady state (search.min_probe); raise "
            "load.num_requests or load.duration, or set search.min_probe");
  const auto rows = search.store.arm_searches(outcome.experiment_id);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].why, a.result.why);
  EXPECT_NE(rows[0].probes.find("\"too short\""), std::string::npos) << rows[0].probes;
}

TEST(SearchLoop, AProbeIsSizedFromItsRateAndNeverShortened) {
  struct Case {
    std::int64_t requests;
    double duration_s;
    double rate;
    std::int64_t want_requests;
    double want_duration_s;
  };
  const std::vector<Case> cases = {
      {2000, 300, 104, 12480, 300},              // seed 002's 2,000 requests: 19 s at 104 req/s
      {2000, 300, 10, 2000, 300},                // 200 s at 10 req/s: long enough already
      {0, 30, 50, 0, 120},                       // bounded by duration alone: the duration raised
      {500, 0, 20000, driver::kMaxRequests, 0},  // rate x 120 s past the request bound
  };
  for (const Case& c : cases) {
    LoadSpec load;
    load.num_requests = c.requests;
    load.duration_s = c.duration_s;
    size_probe(load, true, c.rate, 120);
    EXPECT_EQ(load.num_requests, c.want_requests) << c.rate;
    EXPECT_DOUBLE_EQ(load.duration_s, c.want_duration_s) << c.rate;
  }
  // A concurrency search has no rate to size a count by: only the duration moves.
  LoadSpec closed;
  closed.num_requests = 40;
  closed.duration_s = 10;
  size_probe(closed, false, 64, 60);
  EXPECT_EQ(closed.num_requests, 40);
  EXPECT_DOUBLE_EQ(closed.duration_s, 60);
  // The minimum by where the probes run: predicted (a guide, `kvsweep predict`) or real.
  ScenarioSpec spec = parse(kConcurrencySearch);
  spec.search.min_probe_s.reset();
  EXPECT_DOUBLE_EQ(probe_minimum_s(spec, "predict"), 120);
  EXPECT_DOUBLE_EQ(probe_minimum_s(spec, ""), 60);
  EXPECT_DOUBLE_EQ(probe_minimum_s(spec, "sim"), 60);
}

}  // namespace
}  // namespace kvsweep::orchestrator::test
