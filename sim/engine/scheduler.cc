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
                        double kv_usage, double attention_pairs) {
  return profile.base_us + profile.per_prefill_token_us * prefill_tokens +
         profile.per_decode_token_us * decode_tokens + profile.per_kv_usage_us * kv_usage +
         profile.per_context_token_us * attention_pairs;
}

double attention_pairs(int num_computed, int num_tokens) {
  const double before = num_computed;
  const double n = num_tokens;
  return n * before + n * (n + 1) / 2;
}

int natural_output_tokens(const std::vector<TokenId>& prompt) {
  const std::uint64_t h = XXH3_64bits(prompt.data(), prompt.size() * sizeof(TokenId));
  return kNaturalMinTokens + static_cast<int>(h % (kNaturalMaxTokens - kNaturalMinTokens + 1));
}

Scheduler::Scheduler(const TimingProfile& profile, std::uint64_t seed)
    : profile_(profile),
      seed_(seed),
      // A slot engine keeps its tokens in slots; its pool stays empty, only its caching flag used.
      pool_(profile.engine == EngineKind::kSlot ? 0 : profile.num_gpu_blocks) {
  pool_.set_caching(profile_.enable_prefix_caching);
  if (slot_engine()) slots_.resize(static_cast<std::size_t>(profile_.max_num_seqs));
}

void Scheduler::set_prefix_caching(bool enabled) {
  profile_.enable_prefix_caching = enabled;
  pool_.set_caching(enabled);
  // Off: no slot's blocks are hittable any more (their tokens stay, as llama.cpp's would).
  if (!enabled) {
    for (Slot& slot : slots_) set_slot_blocks(slot, {}, 0);
  }
}

bool Scheduler::reset_prefix_cache() {
  if (!slot_engine()) return pool_.reset_cache();
  for (Slot& slot : slots_) {
    if (slot.busy) {
      slot.clear_when_free = true;
    } else {
      clear_slot(slot);
    }
  }
  return true;
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
  for (Slot& slot : slots_) clear_slot(slot);
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
    // A slot holds max_model_len tokens of its own: nothing to allocate, nobody to preempt.
    while (!slot_engine() && !allocate_for(seq, seq.num_computed_tokens + count)) {
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

  if (slot_engine()) plan_slot_admissions(&plan, &budget);

  // Then admissions, FCFS, unless this step had to preempt (vLLM skips them then: the
  // preempted sequences are at the front of the queue and memory is short anyway).
  while (!slot_engine() && !preempted && !waiting_.empty() && budget > 0 &&
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
    plan.attention_pairs += attention_pairs(seqs_.at(s.id).num_computed_tokens, s.num_tokens);
  }
  if (!plan.empty()) {
    plan.duration_us = step_duration_us(profile_, plan.prefill_tokens, plan.decode_tokens,
                                        kv_cache_usage(), plan.attention_pairs);
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
    if (slot_engine()) {
      if (pool_.caching()) {
        set_slot_blocks(slots_[static_cast<std::size_t>(seq.slot)], seq.block_hashes, full_blocks,
                        /*extend=*/true);
      }
    } else if (pool_.caching()) {
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
  if (slot_engine()) {
    // Tokens the slots hold over the capacity the profile gives them (num_gpu_blocks blocks).
    const double capacity = static_cast<double>(profile_.num_gpu_blocks) * profile_.block_size;
    double held = 0;
    for (const Slot& slot : slots_) {
      held += slot.busy ? seqs_.at(slot.seq_id).num_computed_tokens
                        : static_cast<double>(slot.tokens.size());
    }
    return capacity > 0 ? std::min(held / capacity, 1.0) : 0;
  }
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
  if (seq.slot >= 0) release_slot(seq);
  pool_.free_blocks(seq.blocks);
  seq.blocks.clear();
  seq.num_registered_blocks = 0;
}

// ---- the slot engine ----

void Scheduler::plan_slot_admissions(StepPlan* plan, int* budget) {
  const int block_size = profile_.block_size;
  while (!waiting_.empty() && *budget > 0 && num_running() < profile_.max_num_seqs) {
    const std::uint64_t id = waiting_.front();
    Seq& seq = seqs_.at(id);
    int shared = 0;
    const int index = best_free_slot(seq.tokens, &shared);
    if (index < 0) break;
    Slot& slot = slots_[static_cast<std::size_t>(index)];
    const int num_tokens = static_cast<int>(seq.tokens.size());
    // The last prompt token is always computed: the step needs its logits to sample from.
    const int cached = pool_.caching() ? std::min(shared, num_tokens - 1) : 0;
    slot.busy = true;
    slot.seq_id = id;
    slot.last_used = ++slot_clock_;
    // What the slot held past the shared prefix is erased (removed events for its blocks).
    set_slot_blocks(slot, seq.block_hashes, pool_.caching() ? cached / block_size : 0);
    seq.slot = index;
    seq.num_computed_tokens = cached;
    if (seq.num_cached_tokens < 0) seq.num_cached_tokens = cached;
    if (pool_.caching()) {
      stats_.prefix_cache_queries += static_cast<std::uint64_t>(num_tokens);
      stats_.prefix_cache_hits += static_cast<std::uint64_t>(cached);
    }
    const int count = std::min(num_tokens - cached, *budget);
    waiting_.pop_front();
    running_.push_back(id);
    plan->seqs.push_back({id, count, seq.num_output_tokens > 0 && num_tokens - cached == 1});
    *budget -= count;
  }
}

int Scheduler::best_free_slot(const std::vector<TokenId>& prompt, int* shared) const {
  int best = -1;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const Slot& slot = slots_[i];
    if (slot.busy) continue;
    const auto mismatch =
        std::mismatch(slot.tokens.begin(), slot.tokens.end(), prompt.begin(), prompt.end());
    const int common = static_cast<int>(mismatch.first - slot.tokens.begin());
    // Ties go to the slot used least recently, so that a prompt with nothing to reuse does not
    // overwrite a slot another prompt could (bench/real_engine/server.mjs picks the same way).
    if (best < 0 || common > *shared ||
        (common == *shared && slot.last_used < slots_[static_cast<std::size_t>(best)].last_used)) {
      best = static_cast<int>(i);
      *shared = common;
    }
  }
  return best;
}

void Scheduler::set_slot_blocks(Slot& slot, const std::vector<std::uint64_t>& hashes, int count,
                                bool extend) {
  std::size_t keep = slot.block_hashes.size();
  if (!extend) {
    keep = 0;
    while (keep < slot.block_hashes.size() && keep < static_cast<std::size_t>(count) &&
           slot.block_hashes[keep] == hashes[keep]) {
      ++keep;
    }
    // Dropped last block first, as the pool evicts a request's tail before its head.
    for (std::size_t b = slot.block_hashes.size(); b-- > keep;) {
      const auto found = slot_block_refs_.find(slot.block_hashes[b]);
      if (--found->second == 0) {
        slot_block_refs_.erase(found);
        if (listener_) listener_(KvEvent{KvEvent::Kind::kRemoved, slot.block_hashes[b]});
      }
    }
    slot.block_hashes.resize(keep);
  }
  for (std::size_t b = keep; b < static_cast<std::size_t>(count); ++b) {
    if (++slot_block_refs_[hashes[b]] == 1 && listener_) {
      listener_(KvEvent{KvEvent::Kind::kStored, hashes[b]});
    }
    slot.block_hashes.push_back(hashes[b]);
  }
}

void Scheduler::clear_slot(Slot& slot) {
  set_slot_blocks(slot, {}, 0);
  slot.tokens.clear();
  slot.clear_when_free = false;
}

// The request leaves its slot, which keeps every token computed for it.
void Scheduler::release_slot(Seq& seq) {
  Slot& slot = slots_[static_cast<std::size_t>(seq.slot)];
  seq.slot = -1;
  slot.busy = false;
  slot.seq_id = 0;
  slot.tokens.assign(seq.tokens.begin(), seq.tokens.begin() + seq.num_computed_tokens);
  if (slot.clear_when_free) clear_slot(slot);
}

TokenId Scheduler::next_output_token(const Seq& seq) const {
  const int index = seq.num_output_tokens;
  return static_cast<TokenId>(XXH3_64bits_withSeed(&index, sizeof(index), seq.output_seed) %
                              kVocabSize);
}

}  // namespace kvsweep::sim
