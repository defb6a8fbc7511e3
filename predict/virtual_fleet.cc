// The simulated fleet in virtual time: N replicas behind the sim's routing decision, one clock.
#include "predict/virtual_fleet.h"

#include <stdexcept>

namespace kvsweep::predict {
namespace {

sim::RouteDeciderOptions decider_options(const VirtualFleetOptions& options) {
  sim::RouteDeciderOptions decider;
  decider.strategy = options.strategy;
  decider.seed = options.seed;
  decider.params = options.params;
  decider.block_size = options.profile.block_size;
  decider.kv_events = true;  // the replicas' own events feed the index, as in the fleet
  return decider;
}

}  // namespace

VirtualFleet::VirtualFleet(VirtualFleetOptions options)
    : options_(std::move(options)), router_(options_.replicas, decider_options(options_)) {
  for (int i = 0; i < options_.replicas; ++i) {
    replicas_.push_back(std::make_unique<VirtualReplica>(
        options_.profile, options_.seed + static_cast<std::uint64_t>(i)));
    replicas_.back()->set_kv_event_listener([this, i](const sim::KvEvent& event) {
      router_.on_kv_event(i, event);
      if (opportunity_ && event.kind == sim::KvEvent::Kind::kStored) {
        opportunity_->on_stored(event.block_hash);
      }
    });
  }
}

void VirtualFleet::advance_to(double t_s) {
  if (t_s > now_s_) now_s_ = t_s;
}

bool VirtualFleet::set_strategy(const std::string& name, const sim::StrategyParams& params) {
  if (!router_.set_strategy(name, params)) return false;
  options_.strategy = name;
  options_.params = params;
  return true;
}

void VirtualFleet::set_prefix_caching(bool enabled) {
  for (auto& replica : replicas_) replica->set_prefix_caching(enabled);
  if (opportunity_) opportunity_->forget_computed();
}

void VirtualFleet::reset_prefix_caches() {
  for (int i = 0; i < replicas(); ++i) {
    replica(i).reset_prefix_cache();
    router_.on_prefix_cache_reset(i);
  }
  if (opportunity_) opportunity_->forget_computed();
}

void VirtualFleet::restart() {
  for (auto& replica : replicas_) replica->restart();
  router_.restart();
  if (opportunity_) opportunity_->forget_computed();
}

void VirtualFleet::note_routed(std::span<const sim::TokenId> prompt, int chosen) {
  // As the real-time router observes each first pick (sim/router/router.cc).
  for (const sim::PrefixLookup& lookup : router_.last_prefix_lookups()) {
    epp_lookups_.hit_bytes_sum += static_cast<double>(lookup.matched_blocks) * lookup.block_chars;
    ++epp_lookups_.hit_bytes_count;
    if (lookup.request_blocks > 0) {
      epp_lookups_.hit_ratio_sum +=
          static_cast<double>(lookup.matched_blocks) / static_cast<double>(lookup.request_blocks);
      ++epp_lookups_.hit_ratio_count;
    }
  }
  if (!opportunity_) return;
  // The index's approximate-mode clock is never read with KV events on: any instant will do.
  opportunity_->note(prompt, options_.profile.block_size, chosen, router_.index(),
                     sim::KvIndex::Clock::time_point{});
}

void VirtualFleet::refresh_server_loads(double now_s) {
  if (!router_.needs_server_loads()) return;
  if (loads_read_s_ >= 0 && now_s - loads_read_s_ < kLoadRefreshS) return;
  loads_read_s_ = now_s;
  for (int r = 0; r < replicas(); ++r) {
    const ReplicaCounters c = replica(r).counters();
    router_.set_server_load(r, {c.num_waiting, c.kv_cache_usage});
  }
}

}  // namespace kvsweep::predict
