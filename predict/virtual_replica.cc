// One simulated vLLM replica in virtual time: the sim's scheduler, stepped by the profile's model.
#include "predict/virtual_replica.h"

#include <utility>

namespace kvsweep::predict {

VirtualReplica::VirtualReplica(const sim::TimingProfile& profile, std::uint64_t seed)
    : profile_(profile), seed_(seed), scheduler_(profile_, seed_) {}

void VirtualReplica::add(std::uint64_t id, std::vector<sim::TokenId> prompt, int max_tokens,
                         bool ignore_eos, double now_s) {
  timings_[id] = Timing{now_s, now_s, 0};
  scheduler_.add(id, std::move(prompt), max_tokens, ignore_eos);
}

bool VirtualReplica::cancel(std::uint64_t id) {
  timings_.erase(id);
  return scheduler_.abort(id);
}

std::optional<double> VirtualReplica::start_step(double now_s) {
  if (stepping_) return std::nullopt;
  current_ = scheduler_.plan();
  if (current_.empty()) return std::nullopt;
  stepping_ = true;
  // The real-time engine waits whole microseconds (steady_timer::expires_after(microseconds)).
  return now_s + static_cast<double>(static_cast<std::int64_t>(current_.duration_us)) * 1e-6;
}

std::vector<sim::SeqResult> VirtualReplica::finish_step(double now_s) {
  std::vector<sim::SeqResult> results = scheduler_.apply(current_);
  current_ = sim::StepPlan{};
  stepping_ = false;
  for (const sim::SeqResult& result : results) {
    own_.generation_tokens_total += static_cast<std::uint64_t>(result.new_tokens);
    const auto found = timings_.find(result.id);
    if (result.new_tokens > 0 && result.output_tokens == 1) {
      own_.prompt_tokens_total += static_cast<std::uint64_t>(result.prompt_tokens);
    }
    if (found != timings_.end() && result.new_tokens > 0) {
      Timing& timing = found->second;
      // One sample per token, as the replica's Generation observes them.
      if (timing.output_tokens == 0) {
        own_.ttft.observe(now_s - timing.arrival_s);
      } else {
        own_.itl.observe(now_s - timing.last_token_s);
      }
      timing.last_token_s = now_s;
      timing.output_tokens = result.output_tokens;
    }
    if (result.finished) {
      ++own_.requests_finished;
      if (result.stopped) ++own_.requests_stopped;
      if (found != timings_.end()) {
        own_.e2e.observe(now_s - found->second.arrival_s);
        timings_.erase(found);
      }
    }
  }
  return results;
}

void VirtualReplica::set_prefix_caching(bool enabled) {
  if (scheduler_.prefix_caching() == enabled) return;
  profile_.enable_prefix_caching = enabled;  // kept for restart()
  scheduler_.set_prefix_caching(enabled);
  scheduler_.reset_prefix_cache();
}

void VirtualReplica::restart() {
  scheduler_.clear();  // every cached block reported removed to the listener
  scheduler_ = sim::Scheduler(profile_, seed_);
  scheduler_.set_kv_event_listener(listener_);
  current_ = sim::StepPlan{};
  stepping_ = false;
  timings_.clear();
  own_ = ReplicaCounters{};
}

void VirtualReplica::set_kv_event_listener(sim::KvEventListener listener) {
  listener_ = listener;
  scheduler_.set_kv_event_listener(std::move(listener));
}

ReplicaCounters VirtualReplica::counters() const {
  ReplicaCounters c = own_;
  const sim::SchedulerStats& stats = scheduler_.stats();
  c.prefix_cache_queries = stats.prefix_cache_queries;
  c.prefix_cache_hits = stats.prefix_cache_hits;
  c.num_preemptions = stats.num_preemptions;
  c.kv_cache_usage = scheduler_.kv_cache_usage();
  c.num_running = scheduler_.num_running();
  c.num_waiting = scheduler_.num_waiting();
  c.num_gpu_blocks = profile_.num_gpu_blocks;
  c.block_size = profile_.block_size;
  c.enable_prefix_caching = prefix_caching();
  return c;
}

}  // namespace kvsweep::predict
