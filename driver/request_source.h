// RequestSource: which request a load run sends next and when, without clocks or sockets.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "driver/arrival_schedule.h"
#include "driver/conversation.h"
#include "driver/load_options.h"
#include "driver/turn_major_order.h"
#include "driver/workload.h"

namespace kvsweep::driver {

// One request to send: which turn of which conversation, its prompt, and its place in the run.
struct Job {
  std::int64_t index = 0;  // 0, 1, 2, ... in the order next() yields jobs
  // Its index in the run one process would make (LoadOptions::shard); index when unsharded.
  std::int64_t run_index = 0;
  int conversation = 0;     // Workload::conversations index
  int turn = 0;             // 0-based
  int user = -1;            // closed loop: the virtual user sending it; -1 in open loop
  double scheduled_s = -1;  // open loop: when it was due (its arrival); -1 in closed loop
  // When a driver that acts at once would have sent it: its arrival, or the moment the cap or
  // a sequential turn stopped holding it (the freeing completion's end); closed loop: when
  // its user became ready. sent - ready_s is the driver's own delay (DriverSelf).
  double ready_s = 0;
  bool warmup = false;                // excluded from statistics
  std::vector<ChatMessage> messages;  // system prompt, history, then the turn's user message
  int max_tokens = 0;                 // the turn's own, else LoadOptions::max_tokens; capped
  std::uint64_t prompt_hash = 0;      // turn_fingerprint of the dataset's turn (conversation.h)
  bool wants_reply = false;           // complete() must get the server's reply text (it is history)
};

// The load shape of LoadOptions over a Workload, as a state machine driven by its caller's
// clock: datasets' conversations, closed loop (users), open loop (seeded gamma or trace
// arrivals, max_concurrency), turn order (independent or sequential, think time), warm-up and
// the measured-phase bounds. run_load drives it with the steady clock and sends each job over
// HTTP; a virtual-time predictor drives it with simulated time. It never reads a clock, sleeps,
// or knows about threads or sockets, so the same calls give the same jobs: for a given seed,
// the sequence of next()/complete() calls and their times fully determines every job.
//
// Contract (one thread; times are seconds since the run's start and never decrease):
// - next(now) yields a job to send now, or nullopt when none may be sent now. Call it until it
//   returns nullopt; each yielded job is in flight until complete(job.index, ...).
// - wake_s() is the earliest time after which next() may yield without a completion first
//   (the next arrival, or the end of a think time); nullopt when only a completion can unblock
//   it, or when it is exhausted.
// - complete(index, ok, now, reply, ended_s) ends job `index` at `now`; `reply` is the
//   generated text (used only when the job had wants_reply); `ended_s` (<= now, default now)
//   is when the request really ended, which only Job::ready_s of the jobs it unblocks uses.
// - exhausted(): next() will never yield again. The run is over when exhausted() and
//   in_flight() == 0.
//
// Shapes (load_run.h says the same for users of run_load):
// - Closed loop (concurrency users): each user takes conversations in turn from a shared cursor
//   (wrapping around) and sends turn k as the system prompt + turns 0..k-1 + user message k,
//   after the previous turn finished and think_time_s passed; a failed turn ends its
//   conversation. History holds the dataset's replies, or the server's own when the
//   conversation has replies_from_server.
// - Open loop, turns kIndependent (the default): arrival i carries the i-th turn of the
//   turn-major order (turn_major_order.h: shuffled within each turn), with the dataset's
//   history, whatever became of earlier turns. Trace replay (Workload::arrival_s) sends turn 0
//   of conversation i at arrival_s[i].
// - Open loop, turns kSequential: arrival i carries the first turn, in turn-major order, whose
//   conversation is ready: its previous turn finished and think_time_s passed (a failed turn
//   ends the lap: the conversation starts again at turn 0). An arrival with no ready turn
//   waits, and the wait is schedule lag, as is a wait for max_concurrency.
// - Schedule: trace times; else gamma gaps (arrival_schedule.h), drawn up front and rescaled
//   to end at N/rate when the request count is known (num_requests with at most
//   warmup_requests, no duration or time/conversation warm-up), else drawn one by one.
// - Bounds: num_requests measured jobs; duration_s from the start of the measured phase (closed
//   loop: when its first job is yielded; open loop: when the warm-up ends, at 0 without one,
//   whenever the first measured arrival falls). An open-loop run the duration ended lasts until
//   the window closes (wake_s() is its end), even when no arrival fell in it: at a rate of
//   0.01/s a 2 s cell takes 2 s, not the 100 s to its first arrival. Warm-up (excluded, not
//   counted): the first warmup_requests jobs, jobs of the first warmup_conversations conversations
//   started (open loop: in the first lap), jobs starting before warmup_s.
class RequestSource {
 public:
  // `options` must have passed validate_load_options; both arguments must outlive this.
  RequestSource(const LoadOptions& options, const Workload& workload);

  std::optional<Job> next(double now_s);
  std::optional<double> wake_s() const;
  void complete(std::int64_t index, bool ok, double now_s, std::string reply = {},
                std::optional<double> ended_s = std::nullopt);
  bool exhausted() const;
  std::size_t in_flight() const { return in_flight_.size(); }
  bool open_loop() const { return open_loop_; }
  // Open loop: arrivals due by the last next() call and not yet yielded (held by the cap, or
  // sequential turns not ready): the backlog OverCapacityMonitor watches.
  std::size_t waiting() const { return due_.size(); }
  // When the measured phase started (closed loop: its first job was yielded; open loop: the
  // warm-up's end, 0 without one); -1 before that.
  double measured_start_s() const { return measured_start_s_; }

 private:
  struct User {
    int conversation = -1;  // -1: takes the next one from the cursor
    int turn = 0;
    bool warmup_conversation = false;
    std::vector<std::string> replies;  // the server's replies so far (replies_from_server)
    double ready_s = 0;                // when it last became ready to send (Job::ready_s)
  };
  struct ConversationState {  // open loop, sequential turns
    std::int64_t lap = 0;
    int turn = 0;
    std::vector<std::string> replies;
  };
  struct Flight {
    int conversation = 0;
    int user = -1;  // closed loop only
  };
  struct Thinking {  // a conversation or user waiting out its think time
    double ready_s = 0;
    int who = 0;  // user (closed loop) or conversation (sequential)
  };
  struct Arrival {  // open loop: a drawn slot of the schedule
    double scheduled_s = 0;
    std::int64_t planned = 0;          // its place in the schedule, from 0
    std::optional<TurnPosition> turn;  // independent: decided at draw; sequential: at release
    bool warmup = false;
    bool bounded = false;  // the bounds were applied at draw time
  };

  bool within_bounds(bool warmup, double start_s);
  bool holding() const;  // open loop: the duration's window ended sending but is not over yet
  std::optional<Job> next_closed(double now_s);
  std::optional<Job> next_open(double now_s);
  void take_next_conversation(User& user);
  std::optional<Arrival> draw_arrival();      // this shard's next
  std::optional<Arrival> draw_any_arrival();  // the schedule's next, whoever's it is
  bool owns(const Arrival& arrival) const;
  // Closed loop: how many of the run indices 0 .. n-1 fall to this shard.
  std::int64_t dealt_below(std::int64_t n) const;
  void release_arrivals(double now_s);
  void wake_thinkers(double now_s);
  bool slot_free() const;
  Job make_job(int conversation, int turn, const std::vector<std::string>* replies);

  const LoadOptions& options_;
  const std::vector<Conversation>& conversations_;
  const bool open_loop_;
  const bool sequential_;  // open loop with LoadOptions::Turns::kSequential
  TurnMajorOrder order_;
  const LoadOptions::Shard shard_;
  const bool sharded_;
  const int cap_;  // this shard's part of max_concurrency; 0 none
  // Measured requests this shard may send: num_requests, or (closed loop, sharded) its part;
  // -1 without a count.
  std::int64_t measured_limit_ = -1;
  std::int64_t next_index_ = 0;
  std::int64_t measured_planned_ = 0;
  double measured_start_s_ = -1;
  double last_now_s_ = 0;               // the latest time next() was called with
  double warmup_end_s_ = 0;             // open loop: the latest warm-up arrival's time
  std::optional<double> hold_until_s_;  // open loop: the end of the duration's window
  std::unordered_map<std::int64_t, Flight> in_flight_;
  std::deque<Thinking> thinking_;  // ready times ascending: think time is one constant

  // Closed loop.
  std::vector<User> users_;
  std::deque<int> idle_users_;            // ready to send now, in the order they became ready
  std::vector<int> dealt_conversations_;  // the conversations with turns, in cursor order
  std::size_t cursor_ = 0;                // into the endless repetition of those
  int conversations_started_ = 0;
  bool sending_done_ = false;

  // Open loop.
  bool trace_ = false;
  bool counted_ = false;
  std::vector<double> fixed_arrivals_;
  std::optional<GammaArrivals> lazy_arrivals_;
  std::size_t next_arrival_ = 0;
  std::int64_t planned_ = 0;
  TurnPosition cursor_position_;     // independent: the next turn of the order
  std::optional<Arrival> upcoming_;  // drawn, not yet due
  std::deque<Arrival> due_;          // due, waiting for a slot (or, sequential, a ready turn)
  bool arrivals_done_ = false;
  // Job::ready_s: a due arrival found no slot (or no ready turn) at a next() call, and when
  // the last such hold ended.
  bool held_ = false;
  double released_s_ = 0;
  // Sequential: per conversation state, and the ready turns, smallest position first.
  std::vector<ConversationState> states_;
  std::priority_queue<TurnPosition, std::vector<TurnPosition>, std::greater<>> ready_;
};

}  // namespace kvsweep::driver
