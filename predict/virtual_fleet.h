// The simulated fleet in virtual time: N replicas behind the sim's routing decision, one clock.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "predict/routing_opportunity.h"
#include "predict/virtual_replica.h"
#include "sim/engine/profile.h"
#include "sim/router/route_decider.h"
#include "sim/router/routing_strategy.h"

namespace kvsweep::predict {

struct VirtualFleetOptions {
  int replicas = 4;
  sim::TimingProfile profile;            // every replica's (sim/engine/profile.h)
  std::string model = "sim-model";       // served model id, the metrics' model_name label
  std::uint64_t seed = 1;                // replica i is seeded with seed + i; the router with seed
  std::string strategy = "round-robin";  // a name from sim::strategy_names()
  sim::StrategyParams params;
};

// What llm-d's EPP's prefix-indexer histograms hold (sim/router/epp_metrics.h), as _sum and
// _count: every lookup of the picker's prefix indexes since the fleet began.
struct EppLookupTotals {
  double hit_ratio_sum = 0;  // matched / request blocks, per lookup with a block
  std::uint64_t hit_ratio_count = 0;
  double hit_bytes_sum = 0;  // matched blocks x hashBlockSize, per lookup
  std::uint64_t hit_bytes_count = 0;
};

// What the real-time fleet (sim/fleet.h) is, without HTTP: the same replicas' engines, the
// router's RouteDecider fed by their KV events, the same seeds, and the admin operations the
// sweep's targets use (strategy, prefix caching, reset, restart). Time is virtual: now_s()
// starts at 0 and only load runs (virtual_load.h) move it, forward. Between runs every replica
// is idle. Not copyable or movable (the replicas' KV listeners point at the router).
class VirtualFleet {
 public:
  // Throws std::invalid_argument for replicas < 1 or an unknown strategy.
  explicit VirtualFleet(VirtualFleetOptions options);
  VirtualFleet(const VirtualFleet&) = delete;
  VirtualFleet& operator=(const VirtualFleet&) = delete;

  int replicas() const { return static_cast<int>(replicas_.size()); }
  VirtualReplica& replica(int i) { return *replicas_[static_cast<std::size_t>(i)]; }
  const VirtualReplica& replica(int i) const { return *replicas_[static_cast<std::size_t>(i)]; }
  sim::RouteDecider& router() { return router_; }
  const sim::RouteDecider& router() const { return router_; }
  const std::string& model() const { return options_.model; }
  std::uint64_t seed() const { return options_.seed; }
  const sim::TimingProfile& profile() const { return options_.profile; }

  double now_s() const { return now_s_; }
  // Moves the clock to t (never back: an earlier t leaves it where it is).
  void advance_to(double t_s);

  // POST /admin/strategy: false (and no change) for an unknown name.
  bool set_strategy(const std::string& name, const sim::StrategyParams& params);
  // POST /admin/engine {"enable_prefix_caching"}: every replica; a change resets their caches.
  void set_prefix_caching(bool enabled);
  // POST /reset_prefix_cache on every replica (a cell that starts cold).
  void reset_prefix_caches();
  // POST /admin/restart: a redeploy of every replica (empty caches, zeroed counters), and the
  // router forgets its index and strategy state.
  void restart();

  // Before a pick at now_s by a strategy that reads the replicas' loads (llm-d's EPP): each
  // replica's waiting queue and KV usage as its /metrics shows them, read again once
  // kLoadRefreshS has passed since the last read (the EPP's --refresh-metrics-interval), so
  // the strategy sees figures as old as the real one does.
  void refresh_server_loads(double now_s);
  static constexpr double kLoadRefreshS = 0.05;

  // From now on every routed request is counted by a RoutingOpportunityTracker (it hashes
  // every prompt, which plain predictions need not pay for). Off by default.
  void track_routing_opportunity() {
    if (!opportunity_) opportunity_.emplace();
  }
  // A request with `prompt` was routed to `chosen` (virtual_load.cc, at its arrival): the
  // picker's prefix lookups are counted (epp), and the routing opportunity when tracking.
  void note_routed(std::span<const sim::TokenId> prompt, int chosen);
  const EppLookupTotals& epp_lookups() const { return epp_lookups_; }
  // The totals since tracking began; nullopt when not tracking.
  std::optional<RoutingOpportunity> routing_opportunity() const {
    if (!opportunity_) return std::nullopt;
    return opportunity_->totals();
  }

 private:
  VirtualFleetOptions options_;
  sim::RouteDecider router_;
  std::vector<std::unique_ptr<VirtualReplica>> replicas_;
  double now_s_ = 0;
  double loads_read_s_ = -1;  // when refresh_server_loads() last read them; < 0: never
  std::optional<RoutingOpportunityTracker> opportunity_;
  EppLookupTotals epp_lookups_;
};

}  // namespace kvsweep::predict
