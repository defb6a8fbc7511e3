// Tests the slot engine (profile `engine: slot`) as the predictor runs it: a virtual replica
// over sim/engine/scheduler.cc's slots, against the paged engine on the same traffic.
#include <gtest/gtest.h>

#include <map>

#include "predict/virtual_replica.h"
#include "sim/engine/block_hash.h"

namespace kvsweep::predict {
namespace {

sim::TimingProfile two_slots(sim::EngineKind engine = sim::EngineKind::kSlot) {
  sim::TimingProfile p;
  p.name = "two-slots";
  p.base_us = 1000;
  p.per_prefill_token_us = 10;
  p.per_decode_token_us = 100;
  p.max_num_seqs = 2;
  p.max_num_batched_tokens = 256;
  p.num_gpu_blocks = 64;
  p.block_size = 16;
  p.max_model_len = 512;
  p.engine = engine;
  return p;
}

// 40 tokens first, first + 1, ...: prompts built from different `first`s share nothing.
std::vector<sim::TokenId> prompt(int first) {
  std::vector<sim::TokenId> t;
  for (int i = 0; i < 40; ++i) t.push_back(static_cast<sim::TokenId>(first + i));
  return t;
}

// Steps the replica until it is idle; returns each request's cached tokens (as its usage
// reports them) and advances *now_s.
std::map<std::uint64_t, int> run_to_idle(VirtualReplica& replica, double* now_s) {
  std::map<std::uint64_t, int> cached;
  while (auto end = replica.start_step(*now_s)) {
    *now_s = *end;
    for (const sim::SeqResult& r : replica.finish_step(*now_s)) cached[r.id] = r.cached_tokens;
  }
  return cached;
}

// Sends A and B together, then A, C and B one after the other (max_tokens 1: each request's
// slot keeps its 40 prompt tokens); returns the cached tokens of the second A and second B.
std::pair<int, int> repeats_cached(VirtualReplica& replica) {
  double now = 0;
  replica.add(1, prompt(1), 1, true, now);
  replica.add(2, prompt(1001), 1, true, now);
  run_to_idle(replica, &now);
  replica.add(3, prompt(1), 1, true, now);
  const int a_again = run_to_idle(replica, &now).at(3);
  replica.add(4, prompt(2001), 1, true, now);
  run_to_idle(replica, &now);
  replica.add(5, prompt(1001), 1, true, now);
  return {a_again, run_to_idle(replica, &now).at(5)};
}

TEST(SlotEngine, ARepeatedPromptHitsOnlyWhileASlotStillHoldsIt) {
  // A lands on slot 0 and B on slot 1; A again finds slot 0 and reuses all but its last token
  // (whole tokens, not blocks). C, sharing nothing, takes the slot used least recently, B's,
  // so B again finds no slot holding it and computes everything.
  VirtualReplica slot(two_slots(), 1);
  EXPECT_EQ(repeats_cached(slot), std::make_pair(39, 0));
  const ReplicaCounters c = slot.counters();
  EXPECT_EQ(c.prefix_cache_queries, 5u * 40u);
  EXPECT_EQ(c.prefix_cache_hits, 39u);

  // The paged engine on the same traffic shares full blocks across requests and keeps B's in
  // its pool: both repeats hit their two full blocks.
  VirtualReplica paged(two_slots(sim::EngineKind::kPaged), 1);
  EXPECT_EQ(repeats_cached(paged), std::make_pair(32, 32));
}

TEST(SlotEngine, ACopyArrivingWhileItsSlotIsBusyComputesItAll) {
  for (const sim::EngineKind engine : {sim::EngineKind::kSlot, sim::EngineKind::kPaged}) {
    VirtualReplica replica(two_slots(engine), 1);
    double now = 0;
    replica.add(1, prompt(1), 5, true, now);
    now = *replica.start_step(now);
    replica.finish_step(now);  // A's prompt is computed; A keeps its slot, decoding
    replica.add(2, prompt(1), 1, true, now);
    const std::map<std::uint64_t, int> cached = run_to_idle(replica, &now);
    // No sharing across slots; the paged engine hits A's registered blocks.
    EXPECT_EQ(cached.at(2), engine == sim::EngineKind::kSlot ? 0 : 32)
        << sim::engine_kind_name(engine);
  }
}

TEST(SlotEngine, RequestsBeyondTheSlotsWaitInArrivalOrder) {
  VirtualReplica replica(two_slots(), 1);
  replica.add(1, prompt(1), 3, true, 0);
  replica.add(2, prompt(1001), 3, true, 0);
  replica.add(3, prompt(2001), 1, true, 0);
  replica.add(4, prompt(3001), 1, true, 0);
  double now = *replica.start_step(0);
  replica.finish_step(now);
  EXPECT_EQ(replica.counters().num_running, 2);
  EXPECT_EQ(replica.counters().num_waiting, 2);
  // 1 and 2 decode two more steps and free both slots; 3 and 4 are admitted then, together.
  std::vector<std::vector<std::uint64_t>> steps;
  while (auto end = replica.start_step(now)) {
    now = *end;
    steps.emplace_back();
    for (const sim::SeqResult& r : replica.finish_step(now)) steps.back().push_back(r.id);
  }
  EXPECT_EQ(steps, (std::vector<std::vector<std::uint64_t>>{{1, 2}, {1, 2}, {3, 4}}));
}

TEST(SlotEngine, KvEventsAndUsageFollowWhatTheSlotsHold) {
  VirtualReplica replica(two_slots(), 1);
  std::vector<std::pair<bool, std::uint64_t>> events;  // stored?, hash
  replica.set_kv_event_listener([&](const sim::KvEvent& e) {
    events.emplace_back(e.kind == sim::KvEvent::Kind::kStored, e.block_hash);
  });
  auto hashes = [](int first) {
    std::vector<std::uint64_t> h;
    sim::extend_block_hashes(prompt(first), 16, &h);
    return h;
  };
  const auto a = hashes(1), c = hashes(2001), d = hashes(3001);
  ASSERT_EQ(a.size(), 2u);

  double now = 0;
  replica.add(1, prompt(1), 1, true, now);
  run_to_idle(replica, &now);
  // 40 tokens computed: two full blocks stored; usage is the 40 tokens the slot holds over the
  // profile's 64 blocks of 16.
  EXPECT_EQ(events, (std::vector<std::pair<bool, std::uint64_t>>{{true, a[0]}, {true, a[1]}}));
  EXPECT_DOUBLE_EQ(replica.counters().kv_cache_usage, 40.0 / 1024);

  // A twice at once: one copy reuses slot 0, the other computes A again on slot 1. The blocks
  // are held twice now but were stored once: no event.
  replica.add(2, prompt(1), 1, true, now);
  replica.add(3, prompt(1), 1, true, now);
  EXPECT_EQ(run_to_idle(replica, &now), (std::map<std::uint64_t, int>{{2, 39}, {3, 0}}));
  EXPECT_EQ(events.size(), 2u);
  EXPECT_DOUBLE_EQ(replica.counters().kv_cache_usage, 80.0 / 1024);

  // C and D overwrite both slots: A's blocks are removed when the second slot lets go of them
  // (the tail block first), then C's and D's are stored as they are computed.
  replica.add(4, prompt(2001), 1, true, now);
  replica.add(5, prompt(3001), 1, true, now);
  run_to_idle(replica, &now);
  EXPECT_EQ(events, (std::vector<std::pair<bool, std::uint64_t>>{{true, a[0]},
                                                                 {true, a[1]},
                                                                 {false, a[1]},
                                                                 {false, a[0]},
                                                                 {true, c[0]},
                                                                 {true, c[1]},
                                                                 {true, d[0]},
                                                                 {true, d[1]}}));

  // A reset empties every free slot; the prefix-cache counters say reused tokens only.
  events.clear();
  EXPECT_TRUE(replica.reset_prefix_cache());
  EXPECT_EQ(events, (std::vector<std::pair<bool, std::uint64_t>>{
                        {false, c[1]}, {false, c[0]}, {false, d[1]}, {false, d[0]}}));
  EXPECT_EQ(replica.counters().kv_cache_usage, 0);
  EXPECT_EQ(replica.counters().prefix_cache_hits, 39u);
  EXPECT_EQ(replica.counters().prefix_cache_queries, 5u * 40u);
}

TEST(SlotEngine, AResetWhileASlotIsBusyEmptiesItWhenItsRequestEnds) {
  VirtualReplica replica(two_slots(), 1);
  double now = 0;
  replica.add(1, prompt(1), 3, true, now);
  now = *replica.start_step(now);
  replica.finish_step(now);
  EXPECT_TRUE(replica.reset_prefix_cache());
  run_to_idle(replica, &now);
  EXPECT_EQ(replica.counters().kv_cache_usage, 0);
  replica.add(2, prompt(1), 1, true, now);
  EXPECT_EQ(run_to_idle(replica, &now).at(2), 0);
}

}  // namespace
}  // namespace kvsweep::predict
