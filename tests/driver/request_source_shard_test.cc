// LoadOptions::shard: N shards of a run together send exactly the requests one process sends,
// by run index, in virtual time (driver/request_source.cc).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "driver/request_source.h"
#include "tests/driver/source_simulation.h"

namespace kvsweep::driver {
namespace {

// What one request of the run is, whichever shard sent it.
struct Planned {
  int conversation = 0;
  int turn = 0;
  double scheduled_s = 0;
  bool warmup = false;
  bool operator==(const Planned&) const = default;
};

using ByRunIndex = std::map<std::int64_t, Planned>;

struct ShardRun {
  std::vector<Sent> sent;
  ByRunIndex by_index;
};

ShardRun run_shard(LoadOptions options, const Workload& workload, int index, int count,
                   double service_s) {
  options.shard = {index, count};
  ShardRun run;
  run.sent = simulate(options, workload, [&](const Job&) { return service_s; });
  for (const Sent& s : run.sent) {
    if (count == 1) {
      EXPECT_EQ(s.job.run_index, s.job.index) << "a whole run's own order";
    }
    const bool fresh = run.by_index
                           .emplace(s.job.run_index, Planned{s.job.conversation, s.job.turn,
                                                             s.job.scheduled_s, s.job.warmup})
                           .second;
    EXPECT_TRUE(fresh) << "run index " << s.job.run_index << " sent twice by shard " << index;
  }
  return run;
}

// Runs the whole run and each of `count` shards; expects the shards' union to be the whole
// run's requests, each sent once, and returns the shards for further checks.
std::vector<ShardRun> expect_union_is_one_process(const LoadOptions& options,
                                                  const Workload& workload, int count,
                                                  double service_s, bool same_requests = true) {
  const ShardRun whole = run_shard(options, workload, 0, 1, service_s);
  EXPECT_FALSE(whole.by_index.empty());
  std::vector<ShardRun> shards;
  ByRunIndex merged;
  for (int k = 0; k < count; ++k) {
    shards.push_back(run_shard(options, workload, k, count, service_s));
    for (const auto& [index, planned] : shards.back().by_index) {
      EXPECT_TRUE(merged.emplace(index, planned).second) << "run index " << index << " twice";
    }
  }
  std::set<std::int64_t> whole_indices;
  std::set<std::int64_t> merged_indices;
  for (const auto& entry : whole.by_index) whole_indices.insert(entry.first);
  for (const auto& entry : merged) merged_indices.insert(entry.first);
  EXPECT_EQ(merged_indices, whole_indices) << count << " shards";
  if (same_requests) {
    EXPECT_TRUE(merged == whole.by_index) << count << " shards send other requests";
  }
  return shards;
}

int most_in_flight(const std::vector<Sent>& sent) {
  std::vector<std::pair<double, int>> events;
  for (const Sent& s : sent) {
    events.emplace_back(s.sent_s, 1);
    events.emplace_back(s.done_s, -1);
  }
  std::sort(events.begin(), events.end());  // an end before a start at the same time
  int now = 0;
  int most = 0;
  for (const auto& [t, delta] : events) most = std::max(most, now += delta);
  return most;
}

TEST(RequestSourceShards, OpenLoopShardsSendTheOneProcessScheduleByRunIndex) {
  const Workload workload = workload_of(7, 3);
  LoadOptions options = open_loop(50, 60);
  options.warmup_requests = 5;
  for (int count : {1, 2, 3}) {
    const auto shards = expect_union_is_one_process(options, workload, count, 0.05);
    for (int k = 0; k < count; ++k) {
      for (const auto& [index, planned] : shards[static_cast<std::size_t>(k)].by_index) {
        EXPECT_EQ(planned.conversation % count, k) << "a conversation's turns stay on one shard";
      }
    }
  }
}

TEST(RequestSourceShards, ADurationBoundedRunWithACapSplitsTheCap) {
  const Workload workload = workload_of(11, 2);
  LoadOptions options = open_loop(40, 0);
  options.duration_s = 3;
  options.warmup_s = 0.5;
  options.max_concurrency = 5;
  // Service long enough that the cap binds: which request waits for a slot differs with the
  // cap's split, so the set of run indices is compared, and each shard's cap checked.
  const auto shards = expect_union_is_one_process(options, workload, 3, 0.3);
  for (const ShardRun& shard : shards) {
    EXPECT_LE(most_in_flight(shard.sent), 2);  // ceil(5 / 3)
    EXPECT_EQ(most_in_flight(shard.sent), 2) << "the cap should bind in this run";
  }
}

TEST(RequestSourceShards, TraceReplayIsDealtByConversation) {
  Workload workload = workload_of(9, 1);
  for (int c = 0; c < 9; ++c) workload.arrival_s.push_back(0.1 * c);
  LoadOptions options = open_loop(0, 0);
  options.request_rate = 0;
  options.warmup_conversations = 2;
  expect_union_is_one_process(options, workload, 2, 0.05);
}

TEST(RequestSourceShards, SequentialTurnsKeepEachConversationOnItsShardInTurnOrder) {
  const Workload workload = workload_of(6, 3);
  LoadOptions options = open_loop(30, 40);
  options.turns = LoadOptions::Turns::kSequential;
  options.think_time_s = 0.1;
  options.warmup_requests = 4;
  // Which conversation an arrival carries depends on which are ready, as in one process
  // from one run to the next; the arrivals themselves (run indices) are the same.
  const auto shards = expect_union_is_one_process(options, workload, 2, 0.05, false);
  for (int k = 0; k < 2; ++k) {
    std::map<int, double> turn_done;  // conversation -> when its previous turn ended
    std::map<int, int> next_turn;
    for (const Sent& s : shards[static_cast<std::size_t>(k)].sent) {
      EXPECT_EQ(s.job.conversation % 2, k);
      EXPECT_EQ(s.job.run_index % 2, k);
      EXPECT_EQ(s.job.turn, next_turn[s.job.conversation]) << "turn order";
      if (s.job.turn > 0) {
        EXPECT_GE(s.sent_s, turn_done[s.job.conversation] + 0.1 - 1e-9);
      }
      next_turn[s.job.conversation] = (s.job.turn + 1) % 3;
      turn_done[s.job.conversation] = s.done_s;
    }
  }
}

TEST(RequestSourceShards, ClosedLoopShardsSplitUsersAndRequestsByRunIndex) {
  const Workload workload = workload_of(10, 2);
  LoadOptions options = closed_loop(5, 23);
  options.warmup_requests = 4;
  for (int count : {2, 3}) {
    const auto shards = expect_union_is_one_process(options, workload, count, 0.1, false);
    std::set<std::int64_t> indices;
    for (int k = 0; k < count; ++k) {
      for (const Sent& s : shards[static_cast<std::size_t>(k)].sent) {
        EXPECT_EQ(s.job.user % count, k);
        EXPECT_EQ(s.job.run_index % count, k);
        EXPECT_EQ(s.job.warmup, s.job.run_index < 4);
        indices.insert(s.job.run_index);
      }
    }
    ASSERT_EQ(indices.size(), 27u);  // 4 warm-up + 23 measured, 0 .. 26
    EXPECT_EQ(*indices.rbegin(), 26);
  }
}

std::string error_of(const LoadOptions& options, const Workload& workload) {
  try {
    validate_load_options(options, workload);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(RequestSourceShards, ValidationNamesWhatAShardCannotDo) {
  const Workload workload = workload_of(3, 2);
  LoadOptions closed = closed_loop(2, 10);
  closed.shard = {0, 3};
  EXPECT_NE(error_of(closed, workload).find("LoadOptions.shard.count: 3 shards but 2 users"),
            std::string::npos);
  LoadOptions open = open_loop(10, 10);
  open.shard = {3, 3};
  EXPECT_NE(error_of(open, workload).find("LoadOptions.shard.index: expected 0 to 2, got 3"),
            std::string::npos);
  open.shard = {0, 4};
  EXPECT_NE(error_of(open, workload).find("shard 3 has no conversation with a turn"),
            std::string::npos);
  open.shard = {0, 2};
  open.stop_when_over_capacity = true;
  EXPECT_NE(error_of(open, workload).find("LoadOptions.stop_when_over_capacity"),
            std::string::npos);
  open.stop_when_over_capacity = false;
  open.turns = LoadOptions::Turns::kSequential;
  open.warmup_conversations = 1;
  EXPECT_NE(error_of(open, workload).find("LoadOptions.warmup_conversations"), std::string::npos);
  open.warmup_conversations = 0;
  EXPECT_EQ(error_of(open, workload), "(no error)");
}

}  // namespace
}  // namespace kvsweep::driver
