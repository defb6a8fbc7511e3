// The continuous-batching scheduler of one replica: plans a step, then applies its results.
#include "sim/engine/scheduler.h"

#include <xxhash.h>

#include <algorithm>

#include "sim/engine/block_hash.h"

namespace kvsweep::sim {
namespace {

// Llama 3's vocabulary size: generated token ids look like real ones.
constexpr std::uint64_t kVocabSize = 128256;

int blocks_for(int num_tokens, int block_size) {
  return (num_tokens + block_size - 1) / block_size;
}

}  // namespace

double step_duration_us(const TimingProfile& profile, int prefill_tokens, int decode_tokens,
                        double kv_usage) {
  return profile.base_us + profile.per_prefill_token_us * prefill_tokens +
         profile.per_decode_token_us * decode_tokens + profile.per_kv_usage_us * kv_usage;
}

int natural_output_tokens(const std::vector<TokenId>& prompt) {
  const std::uint64_t h = XXH3_64bits(prompt.data(), prompt.size() * sizeof(TokenId));
  return kNaturalMinTokens + static_cast<int>(h % (kNaturalMaxTokens - kNaturalMinTokens + 1));
}

Scheduler::Scheduler(const TimingProfile& profile, std::uint64_t seed)
    : profile_(profile), seed_(seed), pool_(profile.num_gpu_blocks) {
  pool_.set_caching(profile_.enable_prefix_caching);
}

void Scheduler::set_prefix_caching(bool enabled) {
  profile_.enable_prefix_caching = enabled;
  pool_.set_caching(enabled);
}

void Scheduler::add(std::uint64_t id, std::vector<TokenId> prompt, int max_tokens,
                    bool ignore_eos) {
  Seq seq;
  seq.num_prompt_tokens = static_cast<int>(prompt.size());
  seq.max_tokens = std::max(max_tokens, 1);
  if (!ignore_eos) {
    const int natural = natural_output_tokens(prompt);
    // Reaching max_tokens first is a "length" finish, as in vLLM; only a shorter natural
    // length is a "stop".
    if (natural < seq.max_tokens) seq.natural_tokens = natural;
  }
  // Seeded by the prompt, so identical prompts generate identical tokens (as greedy decoding
  // would) and their generated blocks can be shared through the cache too.
  seq.output_seed = XXH3_64bits_withSeed(prompt.data(), prompt.size() * sizeof(TokenId), seed_);
  seq.tokens = std::move(prompt);
  extend_block_hashes(seq.tokens, profile_.block_size, &seq.block_hashes);
  seqs_.emplace(id, std::move(seq));
  waiting_.push_back(id);
}

bool Scheduler::abort(std::uint64_t id) {
  auto found = seqs_.find(id);
  if (found == seqs_.end()) return false;
  std::erase(running_, id);
  std::erase(waiting_, id);
  release(found->second);
  seqs_.erase(found);
  return true;
}

void Scheduler::clear() {
  for (auto& [id, seq] : seqs_) release(seq);
  seqs_.clear();
  running_.clear();
  waiting_.clear();
  pool_.reset_cache();
}

StepPlan Scheduler::plan() {
  StepPlan plan;
  const int block_size = profile_.block_size;
  int budget = profile_.max_num_batched_tokens;
  bool preempted = false;

  // Running sequences first, in admission order: decodes take one token, prefills (first time
  // or recompute after preemption) take what the budget leaves (chunked prefill).
  for (std::size_t i = 0; i < running_.size() && budget > 0; ++i) {
    const std::uint64_t id = running_[i];
    Seq& seq = seqs_.at(id);
    const int remaining = static_cast<int>(seq.tokens.size()) - seq.num_computed_tokens;
    const int count = std::min(remaining, budget);
    bool scheduled = true;
    while (!allocate_for(seq, seq.num_computed_tokens + count)) {
      // Out of blocks: preempt the most recently admitted sequence (vLLM v1 pops running's
      // back), possibly this one, and retry.
      const std::uint64_t victim = running_.back();
      preempt(victim);
      preempted = true;
      if (victim == id) {
        scheduled = false;
        break;
      }
    }
    if (!scheduled) break;
    const bool decode = seq.num_output_tokens > 0 && remaining == 1;
    plan.seqs.push_back({id, count, decode});
    budget -= count;
  }

  // Then admissions, FCFS, unless this step had to preempt (vLLM skips them then: the
  // preempted sequences are at the front of the queue and memory is short anyway).
  while (!preempted && !waiting_.empty() && budget > 0 &&
         static_cast<int>(running_.size()) < profile_.max_num_seqs) {
    const std::uint64_t id = waiting_.front();
    Seq& seq = seqs_.at(id);
    const int num_tokens = static_cast<int>(seq.tokens.size());
    // vLLM max_cache_hit_length = num_tokens - 1: the last token is always computed, so that
    // the step has logits to sample from.
    const int max_hit_blocks = (num_tokens - 1) / block_size;
    std::vector<BlockId> hits = pool_.find_cached(seq.block_hashes, max_hit_blocks);
    const int cached_tokens = static_cast<int>(hits.size()) * block_size;
    const int count = std::min(num_tokens - cached_tokens, budget);
    const int new_blocks =
        blocks_for(cached_tokens + count, block_size) - static_cast<int>(hits.size());
    // Hit blocks with ref_cnt 0 sit in the free queue: taking them shrinks what is free.
    const int free_hits = static_cast<int>(
        std::count_if(hits.begin(), hits.end(), [&](BlockId b) { return pool_.ref_cnt(b) == 0; }));
    if (new_blocks > pool_.num_free() - free_hits) break;

    pool_.touch(hits);
    seq.blocks = std::move(hits);
    pool_.allocate(new_blocks, &seq.blocks);
    seq.num_registered_blocks = cached_tokens / block_size;
    seq.num_computed_tokens = cached_tokens;
    if (seq.num_cached_tokens < 0) seq.num_cached_tokens = cached_tokens;
    if (pool_.caching()) {
      stats_.prefix_cache_queries += static_cast<std::uint64_t>(num_tokens);
      stats_.prefix_cache_hits += static_cast<std::uint64_t>(cached_tokens);
    }

    waiting_.pop_front();
    running_.push_back(id);
    const bool decode = seq.num_output_tokens > 0 && num_tokens - cached_tokens == 1;
    plan.seqs.push_back({id, count, decode});
    budget -= count;
  }

  for (const ScheduledSeq& s : plan.seqs) {
    (s.decode ? plan.decode_tokens : plan.prefill_tokens) += s.num_tokens;
  }
  if (!plan.empty()) {
    plan.duration_us =
        step_duration_us(profile_, plan.prefill_tokens, plan.decode_tokens, kv_cache_usage());
  }
  return plan;
}

std::vector<SeqResult> Scheduler::apply(const StepPlan& plan) {
  std::vector<SeqResult> results;
  results.reserve(plan.seqs.size());
  const int block_size = profile_.block_size;
  for (const ScheduledSeq& s : plan.seqs) {
    auto found = seqs_.find(s.id);
    if (found == seqs_.end()) continue;  // aborted while the step ran: its results are dropped
    Seq& seq = found->second;
    seq.num_computed_tokens += s.num_tokens;

    // Blocks now full of computed tokens become hittable (prompt and generated alike). With
    // caching off they stay unregistered, so turning it on mid-request registers them then.
    const int full_blocks = seq.num_computed_tokens / block_size;
    if (pool_.caching()) {
      for (int b = seq.num_registered_blocks; b < full_blocks; ++b) {
        pool_.cache_block(seq.blocks[b], seq.block_hashes[b]);
      }
      seq.num_registered_blocks = std::max(seq.num_registered_blocks, full_blocks);
    }

    SeqResult result;
    result.id = s.id;
    result.prompt_tokens = seq.num_prompt_tokens;
    result.cached_tokens = std::max(seq.num_cached_tokens, 0);
    if (seq.num_computed_tokens == static_cast<int>(seq.tokens.size())) {
      // Every known token is computed: the step sampled one more.
      seq.tokens.push_back(next_output_token(seq));
      extend_block_hashes(seq.tokens, block_size, &seq.block_hashes);
      ++seq.num_output_tokens;
      result.new_tokens = 1;
    }
    result.output_tokens = seq.num_output_tokens;
    const bool stopped = seq.natural_tokens > 0 && seq.num_output_tokens >= seq.natural_tokens;
    if (stopped || seq.num_output_tokens >= seq.max_tokens) {
      result.finished = true;
      result.stopped = stopped;
      std::erase(running_, s.id);
      release(seq);
      seqs_.erase(found);
    }
    results.push_back(result);
  }
  return results;
}

double Scheduler::kv_cache_usage() const {
  if (pool_.num_blocks() == 0) return 0;
  return static_cast<double>(pool_.num_held()) / pool_.num_blocks();
}

// Makes sure `seq` holds enough blocks for its first num_tokens_after tokens.
bool Scheduler::allocate_for(Seq& seq, int num_tokens_after) {
  const int needed =
      blocks_for(num_tokens_after, profile_.block_size) - static_cast<int>(seq.blocks.size());
  if (needed <= 0) return true;
  return pool_.allocate(needed, &seq.blocks);
}

// Recompute-style preemption: the sequence loses its blocks and, when re-admitted, recomputes
// prompt + generated tokens (finding what is still cached); its output so far is kept.
void Scheduler::preempt(std::uint64_t id) {
  Seq& seq = seqs_.at(id);
  std::erase(running_, id);
  release(seq);
  seq.num_computed_tokens = 0;
  waiting_.push_front(id);
  ++stats_.num_preemptions;
}

void Scheduler::release(Seq& seq) {
  pool_.free_blocks(seq.blocks);
  seq.blocks.clear();
  seq.num_registered_blocks = 0;
}

TokenId Scheduler::next_output_token(const Seq& seq) const {
  const int index = seq.num_output_tokens;
  return static_cast<TokenId>(XXH3_64bits_withSeed(&index, sizeof(index), seq.output_seed) %
                              kVocabSize);
}

}  // namespace kvsweep::sim
