// Tests sim/engine/engine.cc on a real io_context: updates, cache hits, cancel, reset, metrics.
#include "sim/engine/engine.h"

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <chrono>
#include <map>
#include <memory>

#include "sim/engine/scheduler.h"
#include "tests/sim/engine/token_ids.h"

namespace kvsweep::sim {
namespace {

using namespace std::chrono_literals;

// Steps of a fraction of a millisecond: a test runs for a few ms of real time. Assertions are
// on counts and order only, never on elapsed time.
TimingProfile fast_profile() {
  TimingProfile p;
  p.name = "fast";
  p.base_us = 200;
  p.per_prefill_token_us = 1;
  p.per_decode_token_us = 10;
  p.max_num_seqs = 8;
  p.max_num_batched_tokens = 256;
  p.num_gpu_blocks = 64;
  p.block_size = 16;
  return p;
}

using testing::tokens_from;

// Runs the loop until it has no more work, with a generous bound so a hang fails instead.
void run_to_idle(boost::asio::io_context& io) {
  io.restart();
  io.run_for(20s);
  ASSERT_TRUE(io.stopped()) << "engine did not go idle";
}

TEST(Engine, RequestGetsOneUpdatePerTokenAndFinishesWithLength) {
  boost::asio::io_context io;
  Engine engine(io, fast_profile(), 1);
  std::vector<TokenUpdate> updates;
  engine.submit({1, tokens_from(0, 20), 5}, [&](const TokenUpdate& u) { updates.push_back(u); });
  EXPECT_EQ(engine.metrics().num_waiting, 1);
  run_to_idle(io);
  ASSERT_EQ(updates.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(updates[i].new_tokens, 1);
    EXPECT_EQ(updates[i].output_tokens, i + 1);
    EXPECT_EQ(updates[i].prompt_tokens, 20);
    EXPECT_EQ(updates[i].finished, i == 4);
  }
  EXPECT_EQ(updates.back().finish_reason, "length");
  EngineMetrics m = engine.metrics();
  EXPECT_EQ(m.requests_finished, 1u);
  EXPECT_EQ(m.generation_tokens_total, 5u);
  EXPECT_EQ(m.prompt_tokens_total, 20u);
  EXPECT_EQ(m.num_running, 0);
  EXPECT_EQ(m.num_waiting, 0);
  EXPECT_DOUBLE_EQ(m.kv_cache_usage, 0.0);
}

TEST(Engine, ChunkedPrefillStepsReportZeroNewTokens) {
  boost::asio::io_context io;
  Engine engine(io, fast_profile(), 1);
  std::vector<TokenUpdate> updates;
  engine.submit({1, tokens_from(0, 600), 2}, [&](const TokenUpdate& u) { updates.push_back(u); });
  run_to_idle(io);
  // 600 prompt tokens at 256 per step: 256, 256, 88 (first token), then one decode.
  ASSERT_EQ(updates.size(), 4u);
  EXPECT_EQ(updates[0].new_tokens, 0);
  EXPECT_EQ(updates[1].new_tokens, 0);
  EXPECT_EQ(updates[2].new_tokens, 1);
  EXPECT_TRUE(updates[3].finished);
}

TEST(Engine, SecondIdenticalRequestReportsCachedTokens) {
  boost::asio::io_context io;
  Engine engine(io, fast_profile(), 1);
  TokenUpdate first, second;
  engine.submit({1, tokens_from(0, 40), 3}, [&](const TokenUpdate& u) { first = u; });
  run_to_idle(io);
  engine.submit({2, tokens_from(0, 40), 3}, [&](const TokenUpdate& u) { second = u; });
  run_to_idle(io);
  EXPECT_TRUE(first.finished);
  EXPECT_TRUE(second.finished);
  EXPECT_EQ(first.cached_tokens, 0);
  EXPECT_EQ(second.cached_tokens, 32);
  EngineMetrics m = engine.metrics();
  EXPECT_EQ(m.prefix_cache_queries, 80u);
  EXPECT_EQ(m.prefix_cache_hits, 32u);
  EXPECT_EQ(m.requests_finished, 2u);
}

TEST(Engine, RequestsSubmittedTogetherShareSteps) {
  boost::asio::io_context io;
  Engine engine(io, fast_profile(), 1);
  std::map<std::uint64_t, std::vector<int>> outputs;
  for (std::uint64_t id = 1; id <= 3; ++id) {
    engine.submit({id, tokens_from(100 * id, 10), 4},
                  [&outputs, id](const TokenUpdate& u) { outputs[id].push_back(u.output_tokens); });
  }
  run_to_idle(io);
  for (std::uint64_t id = 1; id <= 3; ++id) {
    EXPECT_EQ(outputs[id], (std::vector<int>{1, 2, 3, 4})) << id;
  }
}

TEST(Engine, CancelMidStepDropsItsResults) {
  boost::asio::io_context io;
  Engine engine(io, fast_profile(), 1);
  int a_updates = 0;
  bool a_finished = false;
  TokenUpdate b_last;
  engine.submit({1, tokens_from(0, 20), 1000}, [&](const TokenUpdate& u) {
    ++a_updates;
    a_finished = u.finished;
    // Posted, so it runs after the next step has been planned with request 1 in it.
    if (u.output_tokens == 3) boost::asio::post(io, [&] { engine.cancel(1); });
  });
  engine.submit({2, tokens_from(500, 20), 6}, [&](const TokenUpdate& u) { b_last = u; });
  run_to_idle(io);
  EXPECT_EQ(a_updates, 3);
  EXPECT_FALSE(a_finished);
  EXPECT_TRUE(b_last.finished);
  EXPECT_EQ(b_last.output_tokens, 6);
  EngineMetrics m = engine.metrics();
  EXPECT_EQ(m.requests_finished, 1u);
  EXPECT_EQ(m.num_running, 0);
  EXPECT_DOUBLE_EQ(m.kv_cache_usage, 0.0);
}

TEST(Engine, CancelWaitingOrUnknownRequest) {
  TimingProfile p = fast_profile();
  p.max_num_seqs = 1;
  boost::asio::io_context io;
  Engine engine(io, p, 1);
  int a_updates = 0, b_updates = 0;
  engine.submit({1, tokens_from(0, 20), 4}, [&](const TokenUpdate&) { ++a_updates; });
  engine.submit({2, tokens_from(500, 20), 4}, [&](const TokenUpdate&) { ++b_updates; });
  engine.cancel(2);
  engine.cancel(99);
  run_to_idle(io);
  EXPECT_EQ(a_updates, 4);
  EXPECT_EQ(b_updates, 0);
  EXPECT_EQ(engine.metrics().num_waiting, 0);
}

TEST(Engine, CancelFromOwnCallbackStopsUpdates) {
  boost::asio::io_context io;
  Engine engine(io, fast_profile(), 1);
  int updates = 0;
  engine.submit({1, tokens_from(0, 20), 50}, [&](const TokenUpdate&) {
    if (++updates == 2) engine.cancel(1);
  });
  run_to_idle(io);
  EXPECT_EQ(updates, 2);
  EXPECT_EQ(engine.metrics().num_running, 0);
}

// The callback, and what it captured, must outlive its own call even when it cancels its own
// request: the engine used to destroy it mid-call (a heap use-after-free under ASan). What it
// captured here records its destruction in a flag outside it, read after the cancel returns.
TEST(Engine, CancelFromOwnCallbackKeepsTheCallbackAliveUntilItReturns) {
  struct DestructionFlag {
    explicit DestructionFlag(bool* flag) : destroyed(flag) {}
    ~DestructionFlag() { *destroyed = true; }
    bool* destroyed;
  };
  boost::asio::io_context io;
  Engine engine(io, fast_profile(), 1);
  bool captures_destroyed = false;
  bool destroyed_during_call = false;
  int updates = 0;
  auto flag = std::make_shared<DestructionFlag>(&captures_destroyed);
  engine.submit({1, tokens_from(0, 20), 50}, [&, flag = std::move(flag)](const TokenUpdate&) {
    if (++updates != 2) return;
    // Copied onto this call's stack first: after the cancel only these are read.
    bool* const destroyed = flag->destroyed;
    bool* const seen = &destroyed_during_call;
    engine.cancel(1);
    *seen = *destroyed;
  });
  run_to_idle(io);
  EXPECT_EQ(updates, 2);
  EXPECT_FALSE(destroyed_during_call) << "the callback was destroyed while it ran";
  EXPECT_TRUE(captures_destroyed) << "a cancelled request's callback is released afterwards";
}

TEST(Engine, ResetPrefixCacheForgetsFreedBlocks) {
  boost::asio::io_context io;
  Engine engine(io, fast_profile(), 1);
  bool reset_while_running = true;
  TokenUpdate first, second;
  engine.submit({1, tokens_from(0, 40), 3}, [&](const TokenUpdate& u) {
    first = u;
    if (u.output_tokens == 1) reset_while_running = engine.reset_prefix_cache();
  });
  run_to_idle(io);
  EXPECT_FALSE(reset_while_running);  // request 1 held its blocks
  EXPECT_TRUE(engine.reset_prefix_cache());
  engine.submit({2, tokens_from(0, 40), 3}, [&](const TokenUpdate& u) { second = u; });
  run_to_idle(io);
  EXPECT_TRUE(second.finished);
  EXPECT_EQ(second.cached_tokens, 0);
  EXPECT_EQ(engine.metrics().prefix_cache_hits, 0u);
}

TEST(Engine, DestroyedWhileBusyIsSafe) {
  boost::asio::io_context io;
  int updates = 0;
  {
    Engine engine(io, fast_profile(), 1);
    engine.submit({1, tokens_from(0, 20), 100}, [&](const TokenUpdate&) { ++updates; });
    io.run_for(1ms);
  }
  run_to_idle(io);  // leftover handlers run and see the engine gone
  EXPECT_LT(updates, 100);
}

TEST(Engine, DemoProfileRunsARequest) {
  boost::asio::io_context io;
  Engine engine(io, *find_profile("demo"), 7);
  TokenUpdate last;
  int count = 0;
  engine.submit({1, tokenize("Explain prefix caching in one paragraph, please."), 8},
                [&](const TokenUpdate& u) { last = u, ++count; });
  run_to_idle(io);
  EXPECT_EQ(count, 8);
  EXPECT_TRUE(last.finished);
  EXPECT_EQ(last.prompt_tokens, 12);
}

TEST(Engine, CountsStepsAndTheirModelledTime) {
  boost::asio::io_context io;
  const TimingProfile profile = fast_profile();
  Engine engine(io, profile, 1);
  engine.submit({1, tokens_from(0, 20), 3}, [](const TokenUpdate&) {});
  run_to_idle(io);
  const EngineMetrics m = engine.metrics();
  // One prefill step (its last token gives the first output), then two decode steps.
  EXPECT_EQ(m.steps_total, 3u);
  const double expected_us = step_duration_us(profile, 20, 0) + 2 * step_duration_us(profile, 0, 1);
  EXPECT_DOUBLE_EQ(m.step_seconds_total, expected_us * 1e-6);
  EXPECT_GE(m.scheduler_cpu_seconds_total, 0);  // host time: only its sign is fixed
  engine.restart();
  EXPECT_EQ(engine.metrics().steps_total, 0u);
  EXPECT_EQ(engine.metrics().step_seconds_total, 0);
}

// The flag is the server's configuration: a restart (redeploy) keeps it, and the profile the
// engine reports says what is in force.
TEST(Engine, PrefixCachingSwitchSurvivesRestart) {
  boost::asio::io_context io;
  Engine engine(io, fast_profile(), 1);
  EXPECT_TRUE(engine.prefix_caching());
  std::map<std::uint64_t, TokenUpdate> last;
  auto run = [&](std::uint64_t id) {
    engine.submit({id, tokens_from(0, 40), 2}, [&last, id](const TokenUpdate& u) { last[id] = u; });
    run_to_idle(io);
  };
  run(1);
  engine.set_prefix_caching(false);
  EXPECT_FALSE(engine.prefix_caching());
  EXPECT_FALSE(engine.profile().enable_prefix_caching);
  run(2);
  EXPECT_EQ(last[2].cached_tokens, 0);
  engine.restart();
  EXPECT_FALSE(engine.prefix_caching());
  run(3);
  run(4);
  EXPECT_EQ(last[4].cached_tokens, 0);
  EXPECT_EQ(engine.metrics().prefix_cache_queries, 0u);

  engine.set_prefix_caching(true);
  run(5);
  run(6);
  EXPECT_EQ(last[5].cached_tokens, 0);  // switching starts cold
  EXPECT_EQ(last[6].cached_tokens, 32);
  EXPECT_EQ(engine.metrics().prefix_cache_queries, 80u);
  EXPECT_EQ(engine.metrics().prefix_cache_hits, 32u);
}

// The real-time engine runs the same scheduler, so a slot profile gives the fleet llama.cpp's
// cache: a repeat reuses all but its last token (whole tokens), a copy sent while the first
// holds its slot reuses nothing.
TEST(Engine, SlotProfileReusesWholeTokensOfOneSlotOnly) {
  boost::asio::io_context io;
  TimingProfile profile = fast_profile();
  profile.engine = EngineKind::kSlot;
  profile.max_num_seqs = 2;
  Engine engine(io, profile, 1);
  std::map<std::uint64_t, TokenUpdate> last;
  auto submit = [&](std::uint64_t id, int max_tokens) {
    engine.submit({id, tokens_from(0, 40), max_tokens},
                  [&last, id](const TokenUpdate& u) { last[id] = u; });
  };
  submit(1, 1);
  run_to_idle(io);
  submit(2, 1);
  run_to_idle(io);
  EXPECT_EQ(last[2].cached_tokens, 39);
  // Two copies at once: one takes the slot holding the prompt, the other the empty slot.
  submit(3, 1);
  submit(4, 1);
  run_to_idle(io);
  EXPECT_EQ(last[3].cached_tokens, 39);
  EXPECT_EQ(last[4].cached_tokens, 0);
  EXPECT_EQ(engine.metrics().prefix_cache_hits, 78u);
  EXPECT_EQ(engine.metrics().prefix_cache_queries, 160u);
}

}  // namespace
}  // namespace kvsweep::sim
