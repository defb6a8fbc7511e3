// Tests sim/engine/scheduler.cc: chunked prefill, admission, prefix-cache lookups, step time,
// preemption.
#include "sim/engine/scheduler.h"

#include <gtest/gtest.h>

#include <map>

#include "tests/sim/engine/token_ids.h"

namespace kvsweep::sim {
namespace {

// Small numbers so every step can be worked out by hand.
TimingProfile tiny_profile() {
  TimingProfile p;
  p.name = "tiny";
  p.base_us = 1000;
  p.per_prefill_token_us = 10;
  p.per_decode_token_us = 100;
  p.max_num_seqs = 4;
  p.max_num_batched_tokens = 64;
  p.num_gpu_blocks = 32;
  p.block_size = 16;
  return p;
}

using testing::tokens_from;

struct StepLog {
  std::vector<StepPlan> plans;
  std::map<std::uint64_t, std::vector<SeqResult>> results;
};

// Plans and applies steps until nothing is left to do (or a step limit, against loops).
StepLog run_until_idle(Scheduler& s, int max_steps = 1000) {
  StepLog run;
  for (int i = 0; i < max_steps; ++i) {
    StepPlan plan = s.plan();
    if (plan.empty()) break;
    for (const SeqResult& r : s.apply(plan)) run.results[r.id].push_back(r);
    run.plans.push_back(std::move(plan));
  }
  return run;
}

TEST(Scheduler, ChunkedPrefillSplitsLongPromptByBudget) {
  Scheduler s(tiny_profile(), 1);
  s.add(1, tokens_from(0, 150), 2);
  StepLog run = run_until_idle(s);
  ASSERT_EQ(run.plans.size(), 4u);
  EXPECT_EQ(run.plans[0].prefill_tokens, 64);
  EXPECT_EQ(run.plans[1].prefill_tokens, 64);
  EXPECT_EQ(run.plans[2].prefill_tokens, 22);
  EXPECT_EQ(run.plans[3].prefill_tokens, 0);
  EXPECT_EQ(run.plans[3].decode_tokens, 1);
  EXPECT_DOUBLE_EQ(run.plans[0].duration_us, 1000 + 10 * 64);
  EXPECT_DOUBLE_EQ(run.plans[2].duration_us, 1000 + 10 * 22);
  EXPECT_DOUBLE_EQ(run.plans[3].duration_us, 1000 + 100);
  const auto& r = run.results[1];
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].new_tokens, 0);
  EXPECT_EQ(r[1].new_tokens, 0);
  EXPECT_EQ(r[2].new_tokens, 1);  // first token at the end of the step completing prefill
  EXPECT_EQ(r[3].new_tokens, 1);
  EXPECT_TRUE(r[3].finished);
  EXPECT_EQ(r[3].output_tokens, 2);
  EXPECT_EQ(r[3].prompt_tokens, 150);
}

TEST(Scheduler, MaxNumSeqsCapsAdmission) {
  Scheduler s(tiny_profile(), 1);
  for (std::uint64_t id = 1; id <= 6; ++id) s.add(id, tokens_from(100 * id, 8), 3);
  StepPlan plan = s.plan();
  EXPECT_EQ(plan.seqs.size(), 4u);
  EXPECT_EQ(s.num_running(), 4);
  EXPECT_EQ(s.num_waiting(), 2);
  EXPECT_EQ(plan.seqs[0].id, 1u);
  EXPECT_EQ(plan.seqs[3].id, 4u);
}

TEST(Scheduler, StepDurationFollowsLinearModelForMixedBatch) {
  Scheduler s(tiny_profile(), 1);
  s.add(1, tokens_from(0, 10), 5);
  s.apply(s.plan());  // prefill of 1
  s.add(2, tokens_from(500, 20), 5);
  StepPlan plan = s.plan();
  ASSERT_EQ(plan.seqs.size(), 2u);
  EXPECT_TRUE(plan.seqs[0].decode);
  EXPECT_FALSE(plan.seqs[1].decode);
  EXPECT_EQ(plan.decode_tokens, 1);
  EXPECT_EQ(plan.prefill_tokens, 20);
  EXPECT_DOUBLE_EQ(plan.duration_us, 1000 + 10 * 20 + 100 * 1);
  EXPECT_DOUBLE_EQ(plan.duration_us, step_duration_us(s.profile(), 20, 1));
}

TEST(Scheduler, SharedPrefixOfFullBlocksHits) {
  Scheduler s(tiny_profile(), 1);
  std::vector<TokenId> a = tokens_from(0, 40);
  std::vector<TokenId> b = tokens_from(0, 32);
  for (TokenId t : tokens_from(900, 8)) b.push_back(t);
  s.add(1, a, 1);
  run_until_idle(s);
  s.add(2, b, 1);
  StepLog run = run_until_idle(s);
  ASSERT_EQ(run.plans.size(), 1u);
  EXPECT_EQ(run.plans[0].prefill_tokens, 8);  // only cache misses cost prefill time
  EXPECT_EQ(run.results[2].back().cached_tokens, 32);
  EXPECT_EQ(s.stats().prefix_cache_queries, 80u);
  EXPECT_EQ(s.stats().prefix_cache_hits, 32u);
}

TEST(Scheduler, FullyCachedPromptStillComputesItsLastBlock) {
  Scheduler s(tiny_profile(), 1);
  s.add(1, tokens_from(0, 32), 1);
  run_until_idle(s);
  s.add(2, tokens_from(0, 32), 1);  // cap (32 - 1) / 16 = 1 block
  StepLog run = run_until_idle(s);
  EXPECT_EQ(run.results[2].back().cached_tokens, 16);
  EXPECT_EQ(run.plans[0].prefill_tokens, 16);
  s.add(3, tokens_from(0, 33), 1);  // cap (33 - 1) / 16 = 2 blocks
  run = run_until_idle(s);
  EXPECT_EQ(run.results[3].back().cached_tokens, 32);
  EXPECT_EQ(run.plans[0].prefill_tokens, 1);
  EXPECT_EQ(s.stats().prefix_cache_queries, 32u + 32u + 33u);
  EXPECT_EQ(s.stats().prefix_cache_hits, 16u + 32u);
}

TEST(Scheduler, PartialTailBlockIsNotCached) {
  Scheduler s(tiny_profile(), 1);
  s.add(1, tokens_from(0, 20), 1);
  run_until_idle(s);
  EXPECT_EQ(s.pool().num_cached(), 1);
  std::vector<TokenId> b = tokens_from(0, 20);
  for (TokenId t : tokens_from(700, 20)) b.push_back(t);
  s.add(2, b, 1);
  StepLog run = run_until_idle(s);
  EXPECT_EQ(run.results[2].back().cached_tokens, 16);
}

TEST(Scheduler, SameBlockAfterDifferentPrefixDoesNotHit) {
  Scheduler s(tiny_profile(), 1);
  std::vector<TokenId> a = tokens_from(0, 40);
  std::vector<TokenId> b = a;
  b[3] = 4242;  // first block differs, second and third identical
  s.add(1, a, 1);
  run_until_idle(s);
  s.add(2, b, 1);
  StepLog run = run_until_idle(s);
  EXPECT_EQ(run.results[2].back().cached_tokens, 0);
  EXPECT_EQ(s.stats().prefix_cache_hits, 0u);
}

TEST(Scheduler, GeneratedTokensFillAndCacheBlocks) {
  Scheduler s(tiny_profile(), 1);
  s.add(1, tokens_from(0, 10), 30);  // computes 10 + 29 = 39 tokens: two full blocks
  StepLog run = run_until_idle(s);
  EXPECT_EQ(run.results[1].size(), 30u);
  EXPECT_EQ(s.pool().num_cached(), 2);
}

TEST(Scheduler, FreedBlocksHitUntilReallocated) {
  TimingProfile p = tiny_profile();
  p.num_gpu_blocks = 4;
  Scheduler s(p, 1);
  s.add(1, tokens_from(0, 33), 1);  // 3 blocks, 2 full ones cached
  run_until_idle(s);
  // Free queue now 3, 2, 1, 0 (reverse-order free). Three blocks pop 3, then 1's partial tail
  // block 2, then block 1, evicting its hash; block 0 keeps request 1's first block cached.
  s.add(2, tokens_from(500, 40), 1);
  run_until_idle(s);
  s.add(3, tokens_from(0, 33), 1);
  StepLog run = run_until_idle(s);
  EXPECT_EQ(run.results[3].back().cached_tokens, 16);  // head block survived, tail evicted
}

TEST(Scheduler, PreemptsMostRecentWhenBlocksRunOut) {
  TimingProfile p = tiny_profile();
  p.num_gpu_blocks = 4;
  Scheduler s(p, 1);
  s.add(1, tokens_from(0, 30), 10);
  s.add(2, tokens_from(1000, 30), 10);
  // Steps 1-3 fit in 2 blocks each (up to 32 computed tokens); in step 4 request 1 needs a
  // third block, none is free, so request 2 (admitted last) is preempted.
  for (int step = 1; step <= 3; ++step) {
    s.apply(s.plan());
    EXPECT_EQ(s.stats().num_preemptions, 0u);
  }
  StepPlan plan = s.plan();
  EXPECT_EQ(s.stats().num_preemptions, 1u);
  ASSERT_EQ(plan.seqs.size(), 1u);
  EXPECT_EQ(plan.seqs[0].id, 1u);
  EXPECT_EQ(s.num_running(), 1);
  EXPECT_EQ(s.num_waiting(), 1);
  s.apply(plan);

  StepLog run = run_until_idle(s);
  EXPECT_EQ(run.results[1].back().output_tokens, 10);
  EXPECT_TRUE(run.results[1].back().finished);
  EXPECT_EQ(run.results[2].back().output_tokens, 10);
  EXPECT_TRUE(run.results[2].back().finished);
  EXPECT_EQ(run.results[2].back().cached_tokens, 0);  // first admission's value is kept
  // Re-admission looked up again: 30 prompt + 3 generated tokens, its head block still cached
  // (the preemption freed its tail block first, and request 1 took that one).
  EXPECT_EQ(s.stats().prefix_cache_queries, 30u + 30u + 33u);
  EXPECT_EQ(s.stats().prefix_cache_hits, 16u);
  EXPECT_EQ(s.pool().num_held(), 0);
}

TEST(Scheduler, AbortMidStepDropsResultsAndFreesBlocks) {
  Scheduler s(tiny_profile(), 1);
  s.add(1, tokens_from(0, 20), 5);
  s.add(2, tokens_from(100, 20), 5);
  StepPlan plan = s.plan();
  EXPECT_EQ(s.pool().num_held(), 4);
  EXPECT_TRUE(s.abort(1));
  EXPECT_FALSE(s.abort(1));
  EXPECT_EQ(s.pool().num_held(), 2);
  std::vector<SeqResult> results = s.apply(plan);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].id, 2u);
  EXPECT_EQ(s.num_running(), 1);
}

TEST(Scheduler, AbortWaitingRequest) {
  TimingProfile p = tiny_profile();
  p.max_num_seqs = 1;
  Scheduler s(p, 1);
  s.add(1, tokens_from(0, 20), 2);
  s.add(2, tokens_from(100, 20), 2);
  s.apply(s.plan());
  EXPECT_EQ(s.num_waiting(), 1);
  EXPECT_TRUE(s.abort(2));
  EXPECT_EQ(s.num_waiting(), 0);
  StepLog run = run_until_idle(s);
  EXPECT_EQ(run.results.count(2), 0u);
  EXPECT_TRUE(run.results[1].back().finished);
}

TEST(Scheduler, KvUsageCountsHeldBlocksOnly) {
  Scheduler s(tiny_profile(), 1);
  s.add(1, tokens_from(0, 40), 2);
  s.apply(s.plan());
  EXPECT_DOUBLE_EQ(s.kv_cache_usage(), 3.0 / 32);
  run_until_idle(s);
  EXPECT_DOUBLE_EQ(s.kv_cache_usage(), 0.0);
  EXPECT_EQ(s.pool().num_cached(), 2);  // freed but still cached
}

// Without ignore_eos a request ends at its natural length (a function of the prompt alone) with
// a "stop"; max_tokens below it still ends it first, as a "length".
TEST(Scheduler, WithoutIgnoreEosStopsAtTheNaturalLength) {
  const std::vector<TokenId> prompt = tokens_from(0, 20);
  const int natural = natural_output_tokens(prompt);
  ASSERT_GE(natural, kNaturalMinTokens);
  ASSERT_LE(natural, kNaturalMaxTokens);
  TimingProfile p = tiny_profile();
  p.num_gpu_blocks = 200;
  Scheduler s(p, 1);
  s.add(1, prompt, 10000, /*ignore_eos=*/false);
  s.add(2, prompt, 3, /*ignore_eos=*/false);
  s.add(3, prompt, natural + 5, /*ignore_eos=*/true);
  StepLog run = run_until_idle(s, 5000);
  EXPECT_EQ(run.results[1].back().output_tokens, natural);
  EXPECT_TRUE(run.results[1].back().stopped);
  EXPECT_EQ(run.results[2].back().output_tokens, 3);
  EXPECT_FALSE(run.results[2].back().stopped);
  EXPECT_EQ(run.results[3].back().output_tokens, natural + 5);
  EXPECT_FALSE(run.results[3].back().stopped);
}

// The optional KV-usage term adds per_kv_usage_us times the fraction of blocks held.
TEST(Scheduler, KvUsageTermScalesWithHeldBlocks) {
  TimingProfile p = tiny_profile();
  p.per_kv_usage_us = 3200;
  Scheduler s(p, 1);
  s.add(1, tokens_from(0, 40), 1);
  const StepPlan plan = s.plan();  // 3 of 32 blocks held after admission
  EXPECT_DOUBLE_EQ(plan.duration_us, 1000 + 10 * 40 + 3200 * 3.0 / 32);
}

// The optional context term adds per_context_token_us per attention pair: a prompt's tokens
// attend to the cached prefix before them and to each other, a decode to its whole sequence.
TEST(Scheduler, ContextTermChargesEachTokensAttentionOverItsSequence) {
  TimingProfile p = tiny_profile();
  p.per_context_token_us = 0.5;
  Scheduler s(p, 1);
  s.add(1, tokens_from(0, 40), 3);
  StepLog first = run_until_idle(s);
  ASSERT_EQ(first.plans.size(), 3u);
  // 40 prompt tokens: 40 * 41 / 2 = 820 pairs; then decodes of a sequence holding 40, 41.
  EXPECT_DOUBLE_EQ(first.plans[0].attention_pairs, 820);
  EXPECT_DOUBLE_EQ(first.plans[0].duration_us, 1000 + 10 * 40 + 0.5 * 820);
  EXPECT_DOUBLE_EQ(first.plans[1].duration_us, 1000 + 100 + 0.5 * 41);
  EXPECT_DOUBLE_EQ(first.plans[2].duration_us, 1000 + 100 + 0.5 * 42);
  // The same 32-token prefix again plus 8 new tokens: 2 blocks hit, the 8 attend to the 32.
  std::vector<TokenId> prompt = tokens_from(0, 32);
  const std::vector<TokenId> tail = tokens_from(500, 8);
  prompt.insert(prompt.end(), tail.begin(), tail.end());
  s.add(2, prompt, 1);
  const StepPlan plan = s.plan();
  EXPECT_EQ(plan.prefill_tokens, 8);
  EXPECT_DOUBLE_EQ(plan.attention_pairs, 8 * 32 + 8 * 9 / 2);
  EXPECT_DOUBLE_EQ(plan.duration_us, 1000 + 10 * 8 + 0.5 * (8 * 32 + 36));
  // Without the term (every shipped profile) the pairs are counted but cost nothing.
  Scheduler plain(tiny_profile(), 1);
  plain.add(1, tokens_from(0, 40), 1);
  EXPECT_DOUBLE_EQ(plain.plan().duration_us, 1000 + 10 * 40);
}

// vLLM --no-enable-prefix-caching: an identical prompt is computed again in full, its blocks
// are still allocated and freed, and the prefix-cache counters stay 0 (vLLM's KVCacheManager
// does not count queries with caching off, so reports show the hit rate as n/a).
TEST(Scheduler, PrefixCachingOffNeverHitsAndCountsNothing) {
  TimingProfile p = tiny_profile();
  p.enable_prefix_caching = false;
  Scheduler s(p, 1);
  EXPECT_FALSE(s.prefix_caching());
  s.add(1, tokens_from(0, 40), 1);
  run_until_idle(s);
  s.add(2, tokens_from(0, 40), 1);
  const StepPlan plan = s.plan();
  EXPECT_EQ(plan.prefill_tokens, 40);  // no cached block skipped any prefill
  EXPECT_EQ(s.pool().num_held(), 3);   // ceil(40 / 16) blocks held as usual
  const std::vector<SeqResult> results = s.apply(plan);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].finished);
  EXPECT_EQ(results[0].cached_tokens, 0);
  EXPECT_EQ(s.stats().prefix_cache_queries, 0u);
  EXPECT_EQ(s.stats().prefix_cache_hits, 0u);
  EXPECT_EQ(s.pool().num_cached(), 0);  // nothing registered
  EXPECT_EQ(s.pool().num_free(), p.num_gpu_blocks);
}

TEST(Scheduler, PrefixCachingSwitchedAtRunTime) {
  TimingProfile p = tiny_profile();
  p.enable_prefix_caching = false;
  Scheduler s(p, 1);
  s.add(1, tokens_from(0, 40), 1);
  run_until_idle(s);
  s.set_prefix_caching(true);
  EXPECT_TRUE(s.prefix_caching());
  s.add(2, tokens_from(0, 40), 1);  // nothing was registered while off
  StepLog run = run_until_idle(s);
  EXPECT_EQ(run.results[2].back().cached_tokens, 0);
  s.add(3, tokens_from(0, 40), 1);
  run = run_until_idle(s);
  EXPECT_EQ(run.results[3].back().cached_tokens, 32);
  EXPECT_EQ(s.stats().prefix_cache_queries, 80u);  // requests 2 and 3 only
  EXPECT_EQ(s.stats().prefix_cache_hits, 32u);

  s.set_prefix_caching(false);  // forgets what is cached, as the block pool is told to
  EXPECT_EQ(s.pool().num_cached(), 0);
  s.add(4, tokens_from(0, 40), 1);
  run = run_until_idle(s);
  EXPECT_EQ(run.results[4].back().cached_tokens, 0);
  EXPECT_EQ(s.stats().prefix_cache_queries, 80u);
  EXPECT_EQ(s.stats().prefix_cache_hits, 32u);
}

}  // namespace
}  // namespace kvsweep::sim
