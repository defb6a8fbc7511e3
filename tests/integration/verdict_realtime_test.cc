// The cell verdict on the embedded fleet in real time (issue 39, "A measured false-alarm
// rate"; bench/verdict_bench.cc measures the rate in virtual time): seed 000's stand-in
// (conversations of 8-12 turns, about 890 prompt tokens, independent turns) on simulated L4
// replicas behind least-load: 40 s at 10 req/s is valid, and 40 s at three times the fleet's
// capacity is over capacity. The capacity is the completions per
// second of a predicted closed loop whose users double until throughput rises less than 2%,
// so no verdict decides the load the verdict is judged at. The fleet is the fewest replicas
// that put 10 req/s at or under 60% of capacity (where the bench's goal is every cell valid),
// so three times capacity stays a load the loopback driver sends on time; the cells' timeout
// bounds the drain of the queue the second one builds. The in-flight cap (2,000) is above what
// that timeout lets pile up (76.9 req/s x 15 s), so every request is sent on its schedule and
// the second cell ends 15 s after its arrivals: with seed 000's cap of 400 the cap held a
// backlog that it went on sending at the fleet's pace for 80 s more (121 s in all).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "figures/validity.h"
#include "orchestrator/calibrate/scenario_cells.h"
#include "tests/support/temp_dir.h"

namespace kvsweep {
namespace {

using orchestrator::CellsOn;

// Seed 000's fleet and stand-in (scenarios/seed-000-kubeai-l4-prefixhash.yaml), on the
// embedded fleet, with `conversations` conversations and the given shape keys.
constexpr int kReplicas = 2;

std::string seed_000(int conversations, const std::string& factors, const std::string& shape) {
  return "name: verdict-realtime\n"
         "target: {kind: sim, replicas: " +
         std::to_string(kReplicas) +
         ", profile: l4-llama3.1-8b-fp8, metrics: {interval: 2s}}\n"
         "seed: 12345\n"
         "factors:\n"
         "  strategy: [least-load]\n" +
         factors +
         "load:\n"
         "  dataset: {kind: synthetic-multiturn, conversations: " +
         std::to_string(conversations) +
         ", turns: {min: 8, max: 12}, system_prompt_words: 0, user_words: 47, "
         "assistant_words: 53, output_tokens: 82}\n"
         "  turns: independent\n"
         "  timeout: 15s\n"
         "  cache: cold\n" +
         shape;
}

std::string reasons(const figures::CellValidity& v) {
  std::string out = figures::verdict_name(v.verdict);
  for (const auto& r : v.reasons) out += "; " + r;
  for (const auto& r : v.not_evaluated) out += "; not evaluated: " + r;
  return out;
}

TEST(VerdictRealTime, TenASecondIsValidAndThreeTimesCapacityIsOverCapacity) {
  testing::TempDir dir;
  const orchestrator::ClosedLoopCapacity capacity = orchestrator::closed_loop_capacity(
      [](int users) {
        const int requests = std::max(600, 60 * users);
        return seed_000(requests / 8 + 8, "  concurrency: [" + std::to_string(users) + "]\n",
                        "  num_requests: " + std::to_string(requests) + "\n");
      },
      dir.path().string());
  std::string steps;
  for (const auto& step : capacity.steps) {
    steps += " " + std::to_string(step.users) + " users: " + std::to_string(step.requests_per_s);
  }
  ASSERT_GE(capacity.requests_per_s, 10 / 0.6)
      << "10 req/s is not at or under 60% of this fleet's capacity: the test asks nothing;"
      << steps;
  const double over = std::round(3 * capacity.requests_per_s * 10) / 10;
  std::printf("capacity %.2f req/s (closed loop of %d users); cells at 10 and %.1f req/s\n",
              capacity.requests_per_s, capacity.users, over);
  const auto start = std::chrono::steady_clock::now();
  const auto cells = orchestrator::run_scenario_text(
      seed_000(static_cast<int>(over * 40 / 8) + 208,
               "  concurrency: [2000]\n  request_rate: [10, " + std::to_string(over) + "]\n",
               "  request_rate: 10\n  duration: 40s\n"),
      "verdict-realtime", dir.path().string(), CellsOn::kScenarioTarget);
  std::printf("both cells on the embedded fleet: %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  ASSERT_EQ(cells.size(), 2u);
  ASSERT_EQ(cells[0].request_rate, 10);
  const figures::CellValidity& at_ten = cells[0].metrics.validity;
  EXPECT_EQ(at_ten.verdict, figures::CellVerdict::kValid) << reasons(at_ten);
  const figures::CellValidity& at_three_times = cells[1].metrics.validity;
  EXPECT_GT(cells[1].request_rate, 10);
  EXPECT_EQ(at_three_times.verdict, figures::CellVerdict::kOverCapacity) << reasons(at_three_times);
}

}  // namespace
}  // namespace kvsweep
