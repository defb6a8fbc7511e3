// The continuous-batching scheduler of one replica: plans a step, then applies its results.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/engine/block_pool.h"
#include "sim/engine/profile.h"
#include "sim/engine/tokenizer.h"

namespace kvsweep::sim {

// The step-time model of profile.h for P prefill (cache-miss) and D decode tokens, with the KV
// pool `kv_usage` (0..1) full and `attention_pairs` (A) computed.
double step_duration_us(const TimingProfile& profile, int prefill_tokens, int decode_tokens,
                        double kv_usage = 0, double attention_pairs = 0);

// The attention pairs of `num_tokens` tokens computed after `num_computed` of the same sequence:
// each attends to every token before it and to itself (profile.h's A).
double attention_pairs(int num_computed, int num_tokens);

// Output length a request "would" stop at on its own when it does not set ignore_eos: a fixed
// function of the prompt tokens (not of the replica), kNaturalMinTokens..kNaturalMaxTokens, so
// the same prompt ends at the same length wherever it is routed.
inline constexpr int kNaturalMinTokens = 16;
inline constexpr int kNaturalMaxTokens = 512;
int natural_output_tokens(const std::vector<TokenId>& prompt);

struct ScheduledSeq {
  std::uint64_t id = 0;
  int num_tokens = 0;   // tokens computed for this sequence in the step
  bool decode = false;  // a decode token (D) rather than prompt/recompute tokens (P)
};

struct StepPlan {
  std::vector<ScheduledSeq> seqs;
  int prefill_tokens = 0;
  int decode_tokens = 0;
  double attention_pairs = 0;  // profile.h's A: summed over the step's sequences
  double duration_us = 0;
  bool empty() const { return seqs.empty(); }
};

// One sequence's outcome of an applied step; mirrors TokenUpdate.
struct SeqResult {
  std::uint64_t id = 0;
  int new_tokens = 0;
  int output_tokens = 0;
  int prompt_tokens = 0;
  int cached_tokens = 0;
  bool finished = false;
  bool stopped = false;  // finished by "EOS" (natural length) rather than max_tokens
};

struct SchedulerStats {
  std::uint64_t prefix_cache_queries = 0;
  std::uint64_t prefix_cache_hits = 0;
  std::uint64_t num_preemptions = 0;
};

// vLLM v1 scheduling with no clock: plan() decides the next step (admissions, chunked
// prefill, block allocation, preemption) and apply() advances the sequences as if the step ran.
// The caller owns time. Between plan() and apply() the caller may add() or abort() requests:
// apply() ignores planned sequences that were aborted. Single-threaded.
//
// With a profile of `engine: slot` (EngineKind::kSlot) the same batching runs over llama.cpp's
// slots instead of the block pool: a request is admitted to the free slot whose retained
// tokens share the longest prefix with its prompt (whole tokens; ties to the slot used least
// recently), reuses that prefix (at most all but the last prompt token) and computes the rest;
// after it the slot retains every computed token (prompt + output but the last sampled one).
// No KV limit applies (a slot holds max_model_len tokens), so nothing is ever preempted. The
// prefix-cache counters count prompt tokens queried and reused; KV events report each full
// block's hash as stored when the first slot holds it and removed when the last one drops it.
class Scheduler {
 public:
  Scheduler(const TimingProfile& profile, std::uint64_t seed);

  // Queues a request at the back of the waiting queue. `id` must be unused.
  // ignore_eos false: the request stops at min(max_tokens, natural_output_tokens(prompt)).
  void add(std::uint64_t id, std::vector<TokenId> prompt, int max_tokens, bool ignore_eos = true);
  // Forgets a request in any state and frees its blocks. Returns false if unknown.
  bool abort(std::uint64_t id);

  StepPlan plan();
  std::vector<SeqResult> apply(const StepPlan& plan);

  // Paged: forgets every free block's hash, false when blocks are held (vLLM refuses then).
  // Slot: forgets what every free slot holds now and what every busy one holds when it
  // frees; true.
  bool reset_prefix_cache();
  // vLLM --[no-]enable-prefix-caching (starts as the profile says). Off: admissions find no
  // hits, computed blocks are not registered and prefix-cache queries/hits are not counted, as
  // vLLM's KVCacheManager does with caching disabled. Does not reset the cache by itself.
  void set_prefix_caching(bool enabled);
  bool prefix_caching() const { return pool_.caching(); }
  // Aborts every request and forgets every cached block (each one reported removed).
  void clear();
  void set_kv_event_listener(KvEventListener listener) {
    listener_ = listener;
    pool_.set_event_listener(std::move(listener));
  }

  const SchedulerStats& stats() const { return stats_; }
  int num_running() const { return static_cast<int>(running_.size()); }
  int num_waiting() const { return static_cast<int>(waiting_.size()); }
  double kv_cache_usage() const;
  const BlockPool& pool() const { return pool_; }
  const TimingProfile& profile() const { return profile_; }

 private:
  struct Seq {
    std::vector<TokenId> tokens;              // prompt, then generated tokens
    std::vector<std::uint64_t> block_hashes;  // of every full block of `tokens`
    std::vector<BlockId> blocks;
    int num_prompt_tokens = 0;
    int max_tokens = 0;
    int natural_tokens = 0;  // stops with "EOS" here when below max_tokens; 0: never
    int num_output_tokens = 0;
    int num_computed_tokens = 0;
    int num_registered_blocks = 0;  // leading blocks whose hash is in the pool's cache
    int num_cached_tokens = -1;     // set at first admission, as vLLM's num_cached_tokens
    std::uint64_t output_seed = 0;
    int slot = -1;  // slot engine: the slot it holds while admitted
  };

  // One llama.cpp slot (slot engine only).
  struct Slot {
    std::vector<TokenId> tokens;              // while free: the tokens the last request computed
    std::vector<std::uint64_t> block_hashes;  // its full blocks' hashes, as its KV events said
    bool busy = false;
    bool clear_when_free = false;  // a prefix-cache reset came while it was busy
    std::uint64_t seq_id = 0;      // the request holding it while busy
    std::uint64_t last_used = 0;
  };

  bool slot_engine() const { return profile_.engine == EngineKind::kSlot; }
  void plan_slot_admissions(StepPlan* plan, int* budget);
  int best_free_slot(const std::vector<TokenId>& prompt, int* shared) const;
  // Makes the slot's KV-event view the first `count` blocks of `hashes`, reporting blocks that
  // stop or start being held by any slot. `extend`: the slot's blocks are known to be a prefix
  // of them (a step only adds computed blocks), so nothing is compared or dropped.
  void set_slot_blocks(Slot& slot, const std::vector<std::uint64_t>& hashes, int count,
                       bool extend = false);
  void clear_slot(Slot& slot);
  void release_slot(Seq& seq);

  bool allocate_for(Seq& seq, int num_tokens_after);
  void preempt(std::uint64_t id);
  void release(Seq& seq);
  TokenId next_output_token(const Seq& seq) const;

  TimingProfile profile_;
  std::uint64_t seed_;
  BlockPool pool_;
  std::unordered_map<std::uint64_t, Seq> seqs_;
  std::deque<std::uint64_t> waiting_;   // FCFS; preempted requests go back to the front
  std::vector<std::uint64_t> running_;  // admission order; the back is preempted first
  SchedulerStats stats_;
  KvEventListener listener_;  // the pool's, kept for the slot engine's events
  std::vector<Slot> slots_;   // slot engine: max_num_seqs of them
  std::unordered_map<std::uint64_t, int> slot_block_refs_;  // hash -> slots holding it
  std::uint64_t slot_clock_ = 0;                            // orders last_used
};

}  // namespace kvsweep::sim
