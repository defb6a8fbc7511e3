// Prints how fast the replica scheduler runs: simulated steps per CPU second, and its CPU cost
// as a fraction of the step time it models (well below 1 is what lets one core run a fleet).
#include <cstdio>
#include <ctime>
#include <string>

#include "sim/engine/profile.h"
#include "sim/engine/scheduler.h"

namespace {

using kvsweep::sim::Scheduler;
using kvsweep::sim::SeqResult;
using kvsweep::sim::StepPlan;
using kvsweep::sim::TimingProfile;
using kvsweep::sim::TokenId;

struct Workload {
  int clients = 256;         // closed loop: a finished request is replaced at once
  int shared_prefix = 1024;  // tokens every prompt starts with (a system prompt)
  int unique_suffix = 256;
  int max_tokens = 128;
  int steps = 20000;
};

std::vector<TokenId> make_prompt(const Workload& w, std::uint64_t id) {
  std::vector<TokenId> tokens;
  for (int i = 0; i < w.shared_prefix; ++i) tokens.push_back(static_cast<TokenId>(i));
  for (int i = 0; i < w.unique_suffix; ++i) {
    tokens.push_back(static_cast<TokenId>(1'000'000 + id * 1000 + static_cast<std::uint64_t>(i)));
  }
  return tokens;
}

void run(const std::string& profile_name, const Workload& w) {
  TimingProfile profile = *kvsweep::sim::find_profile(profile_name);
  Scheduler scheduler(profile, 1);
  std::uint64_t next_id = 0;
  for (int c = 0; c < w.clients; ++c, ++next_id) {
    scheduler.add(next_id, make_prompt(w, next_id), w.max_tokens);
  }
  double simulated_us = 0;
  std::uint64_t tokens = 0;
  int steps = 0;
  const std::clock_t start = std::clock();
  for (; steps < w.steps; ++steps) {
    StepPlan plan = scheduler.plan();
    if (plan.empty()) break;
    simulated_us += plan.duration_us;
    for (const SeqResult& r : scheduler.apply(plan)) {
      tokens += static_cast<std::uint64_t>(r.new_tokens);
      if (r.finished) {
        scheduler.add(next_id, make_prompt(w, next_id), w.max_tokens);
        ++next_id;
      }
    }
  }
  const double cpu_s = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  const auto& stats = scheduler.stats();
  const double hit_rate = stats.prefix_cache_queries == 0
                              ? 0
                              : static_cast<double>(stats.prefix_cache_hits) /
                                    static_cast<double>(stats.prefix_cache_queries);
  std::printf(
      "%-24s %7d steps %8.3f s cpu %10.0f steps/s %8.2f ms/step sim %7.4f%% overhead"
      " %6.1f%% hits %6llu preempt %8.0f tok/s sim\n",
      profile_name.c_str(), steps, cpu_s, steps / cpu_s, simulated_us / steps / 1000,
      100 * (cpu_s * 1e6 / steps) / (simulated_us / steps), 100 * hit_rate,
      static_cast<unsigned long long>(stats.num_preemptions),
      static_cast<double>(tokens) / (simulated_us / 1e6));
}

}  // namespace

int main() {
  Workload w;
  std::printf("closed loop: %d clients, prompts %d shared + %d unique tokens, %d output tokens\n",
              w.clients, w.shared_prefix, w.unique_suffix, w.max_tokens);
  for (const std::string& name : kvsweep::sim::profile_names()) run(name, w);
  return 0;
}
