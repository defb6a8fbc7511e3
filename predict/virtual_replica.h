// One simulated vLLM replica in virtual time: the sim's scheduler, stepped by the profile's model.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "sim/engine/block_pool.h"
#include "sim/engine/profile.h"
#include "sim/engine/scheduler.h"
#include "sim/engine/tokenizer.h"

namespace kvsweep::predict {

// A histogram's _sum and _count, all the sweep's scraper keeps of one (it drops the buckets).
struct LatencySum {
  double sum_s = 0;
  std::uint64_t count = 0;
  void observe(double seconds) {
    sum_s += seconds;
    ++count;
  }
};

// What the replica's /metrics would report: the scheduler's counters plus the replica's own
// (sim/engine/engine.h EngineMetrics and sim/http/latency_histogram.h, as the real-time
// replica keeps them).
struct ReplicaCounters {
  std::uint64_t prefix_cache_queries = 0;
  std::uint64_t prefix_cache_hits = 0;
  double kv_cache_usage = 0;
  int num_running = 0;
  int num_waiting = 0;
  std::uint64_t num_preemptions = 0;
  std::uint64_t prompt_tokens_total = 0;
  std::uint64_t generation_tokens_total = 0;
  std::uint64_t requests_finished = 0;
  std::uint64_t requests_stopped = 0;
  LatencySum ttft;  // arrival at the replica to first token
  LatencySum itl;   // between consecutive tokens of one request
  LatencySum e2e;   // arrival at the replica to the last token
  // The KV pool (sim::EngineMetrics' fields of the same names).
  int num_gpu_blocks = 0;
  int block_size = 0;
  bool enable_prefix_caching = true;
};

// The real-time Engine (sim/engine/engine.h) with virtual time instead of a timer: a step
// planned at t ends at t + its modelled duration, and nothing happens in between. The caller
// owns the clock and the event order: start_step() when the replica may be idle, finish_step()
// at the end time start_step() returned. Requests added while a step runs join a later step,
// as they queue behind the engine's busy loop. Single-threaded.
class VirtualReplica {
 public:
  VirtualReplica(const sim::TimingProfile& profile, std::uint64_t seed);
  VirtualReplica(const VirtualReplica&) = delete;
  VirtualReplica& operator=(const VirtualReplica&) = delete;

  // The next engine request id (from 1, never reused, a restart included), as the HTTP
  // replica numbers its requests: the generated text is a function of it.
  std::uint64_t take_request_id() { return next_request_id_++; }
  // Queues a request that reached the replica at now_s (FCFS).
  void add(std::uint64_t id, std::vector<sim::TokenId> prompt, int max_tokens, bool ignore_eos,
           double now_s);
  // The client went away: frees its blocks; its part of a step in flight is dropped.
  bool cancel(std::uint64_t id);

  // Plans a step at now_s unless one runs; returns its end time, or nullopt when the replica
  // is (or stays) idle.
  std::optional<double> start_step(double now_s);
  bool stepping() const { return stepping_; }
  // Applies the step in flight, at its end time: every sequence it advanced, as the engine's
  // updates (sim/engine/scheduler.h SeqResult).
  std::vector<sim::SeqResult> finish_step(double now_s);

  // vLLM --[no-]enable-prefix-caching at run time: a change also resets the prefix cache.
  void set_prefix_caching(bool enabled);
  bool prefix_caching() const { return scheduler_.prefix_caching(); }
  bool reset_prefix_cache() { return scheduler_.reset_prefix_cache(); }
  // A redeploy: every request dropped, the KV pool empty, the counters zero; the prefix-caching
  // setting and the KV event listener are kept.
  void restart();
  void set_kv_event_listener(sim::KvEventListener listener);

  ReplicaCounters counters() const;
  const sim::TimingProfile& profile() const { return profile_; }
  bool idle() const {
    return !stepping_ && scheduler_.num_running() == 0 && scheduler_.num_waiting() == 0;
  }

 private:
  struct Timing {
    double arrival_s = 0;
    double last_token_s = 0;
    int output_tokens = 0;
  };

  sim::TimingProfile profile_;
  std::uint64_t seed_;
  sim::Scheduler scheduler_;
  sim::KvEventListener listener_;
  sim::StepPlan current_;
  bool stepping_ = false;
  std::unordered_map<std::uint64_t, Timing> timings_;
  ReplicaCounters own_;  // the replica's counters; the scheduler's are read in counters()
  std::uint64_t next_request_id_ = 1;
};

}  // namespace kvsweep::predict
