// RequestSource: which request a load run sends next and when, without clocks or sockets.
#include "driver/request_source.h"

#include <algorithm>

namespace kvsweep::driver {

RequestSource::RequestSource(const LoadOptions& options, const Workload& workload)
    : options_(options),
      conversations_(workload.conversations),
      open_loop_(is_open_loop(options, workload)),
      sequential_(open_loop_ && workload.arrival_s.empty() &&
                  options.turns == LoadOptions::Turns::kSequential),
      order_(workload.conversations, options.seed),
      shard_(options.shard),
      sharded_(options.shard.count > 1),
      cap_(options.max_concurrency > 0
               ? (options.max_concurrency + options.shard.count - 1) / options.shard.count
               : 0) {
  if (!open_loop_) {
    users_.resize(static_cast<std::size_t>(options.concurrency));
    for (int u = shard_.index; u < options.concurrency; u += shard_.count) {
      idle_users_.push_back(u);
    }
    for (std::size_t c = 0; c < conversations_.size(); ++c) {
      if (!conversations_[c].user.empty()) dealt_conversations_.push_back(static_cast<int>(c));
    }
    cursor_ = static_cast<std::size_t>(shard_.index);
    // This shard's requests are run indices index, index + count, ...: of the first W + N
    // (warm-up and measured), the measured ones that fall to it.
    if (options.num_requests > 0) {
      measured_limit_ = dealt_below(options.warmup_requests + options.num_requests) -
                        dealt_below(options.warmup_requests);
    }
    return;
  }
  if (options.num_requests > 0) measured_limit_ = options.num_requests;
  trace_ = !workload.arrival_s.empty();
  if (trace_) {
    fixed_arrivals_ = workload.arrival_s;
  } else if (options.num_requests > 0 && options.duration_s == 0 && options.warmup_s == 0 &&
             options.warmup_conversations == 0) {
    fixed_arrivals_ =
        gamma_arrival_times(options.request_rate, options.burstiness,
                            options.warmup_requests + options.num_requests, options.seed);
    counted_ = true;
  } else {
    lazy_arrivals_.emplace(options.request_rate, options.burstiness, options.seed);
  }
  cursor_position_ = order_.first();
  if (sequential_) {
    states_.resize(conversations_.size());
    for (std::size_t c = static_cast<std::size_t>(shard_.index); c < conversations_.size();
         c += static_cast<std::size_t>(shard_.count)) {
      if (!conversations_[c].user.empty()) ready_.push(order_.position(0, 0, static_cast<int>(c)));
    }
  }
}

std::optional<Job> RequestSource::next(double now_s) {
  last_now_s_ = std::max(last_now_s_, now_s);
  return open_loop_ ? next_open(now_s) : next_closed(now_s);
}

bool RequestSource::exhausted() const {
  return open_loop_ ? arrivals_done_ && due_.empty() && !holding() : sending_done_;
}

std::int64_t RequestSource::dealt_below(std::int64_t n) const {
  const std::int64_t k = shard_.index;
  return n > k ? (n - k + shard_.count - 1) / shard_.count : 0;
}

bool RequestSource::owns(const Arrival& arrival) const {
  if (!sharded_) return true;
  const std::int64_t who = arrival.turn ? arrival.turn->conversation : arrival.planned;
  return who % shard_.count == shard_.index;
}

bool RequestSource::holding() const { return hold_until_s_ && last_now_s_ < *hold_until_s_; }

std::optional<double> RequestSource::wake_s() const {
  if (exhausted()) return std::nullopt;
  if (!open_loop_) {
    if (!thinking_.empty()) return thinking_.front().ready_s;
    return std::nullopt;
  }
  if (arrivals_done_ && due_.empty()) return hold_until_s_;  // exhausted() unless holding
  std::optional<double> wake;
  if (upcoming_) wake = upcoming_->scheduled_s;
  if (sequential_ && !due_.empty() && slot_free() && ready_.empty() && !thinking_.empty()) {
    const double ready_s = thinking_.front().ready_s;
    wake = wake ? std::min(*wake, ready_s) : ready_s;
  }
  return wake;
}

// Applies the measured-phase bounds to a job about to start at start_s. False: stop sending.
bool RequestSource::within_bounds(bool warmup, double start_s) {
  if (warmup) {
    if (open_loop_) warmup_end_s_ = std::max(warmup_end_s_, start_s);
    return true;
  }
  if (measured_limit_ >= 0 && measured_planned_ >= measured_limit_) return false;
  // Open loop: the measured phase starts where the warm-up ends (the cell's start without
  // one), not at the first measured arrival, which a low rate puts arbitrarily far away.
  if (open_loop_ && measured_start_s_ < 0) {
    measured_start_s_ = std::max(options_.warmup_s, warmup_end_s_);
  }
  if (options_.duration_s > 0 && measured_start_s_ >= 0 &&
      start_s - measured_start_s_ >= options_.duration_s) {
    // The window is over before this arrival: the cell still lasts its whole duration.
    if (open_loop_) hold_until_s_ = measured_start_s_ + options_.duration_s;
    return false;
  }
  if (measured_start_s_ < 0) measured_start_s_ = start_s;
  ++measured_planned_;
  return true;
}

Job RequestSource::make_job(int conversation, int turn, const std::vector<std::string>* replies) {
  const Conversation& c = conversations_[static_cast<std::size_t>(conversation)];
  Job job;
  job.index = next_index_++;
  job.conversation = conversation;
  job.turn = turn;
  job.messages = messages_for_turn(c, turn, replies);
  const auto t = static_cast<std::size_t>(turn);
  job.max_tokens =
      t < c.max_tokens.size() && c.max_tokens[t] > 0 ? c.max_tokens[t] : options_.max_tokens;
  if (options_.max_tokens_cap > 0)
    job.max_tokens = std::min(job.max_tokens, options_.max_tokens_cap);
  job.prompt_hash = turn_fingerprint(c, turn, job.max_tokens);
  job.wants_reply = replies != nullptr;
  return job;
}

void RequestSource::wake_thinkers(double now_s) {
  while (!thinking_.empty() && thinking_.front().ready_s <= now_s) {
    const int who = thinking_.front().who;
    const double ready_s = thinking_.front().ready_s;
    thinking_.pop_front();
    if (open_loop_) {
      if (held_) released_s_ = std::max(released_s_, ready_s);
      const ConversationState& state = states_[static_cast<std::size_t>(who)];
      ready_.push(order_.position(state.lap, state.turn, who));
    } else {
      users_[static_cast<std::size_t>(who)].ready_s = ready_s;
      idle_users_.push_back(who);
    }
  }
}

// ---- closed loop ----

void RequestSource::take_next_conversation(User& user) {
  // The one-process cursor hands out the conversations with turns in order, wrapping around
  // (validation guarantees there is one); a shard takes every count-th of that sequence.
  user.conversation = dealt_conversations_[cursor_ % dealt_conversations_.size()];
  cursor_ += static_cast<std::size_t>(shard_.count);
  user.turn = 0;
  user.replies.clear();
  const std::int64_t started = conversations_started_++ * shard_.count + shard_.index;
  user.warmup_conversation = started < options_.warmup_conversations;
}

std::optional<Job> RequestSource::next_closed(double now_s) {
  wake_thinkers(now_s);
  if (sending_done_ || idle_users_.empty()) return std::nullopt;
  const int u = idle_users_.front();
  User& user = users_[static_cast<std::size_t>(u)];
  if (user.conversation < 0) take_next_conversation(user);
  const std::int64_t run_index = next_index_ * shard_.count + shard_.index;
  const bool warmup =
      run_index < options_.warmup_requests || user.warmup_conversation || now_s < options_.warmup_s;
  if (!within_bounds(warmup, now_s)) {
    sending_done_ = true;
    return std::nullopt;
  }
  idle_users_.pop_front();
  const Conversation& conversation = conversations_[static_cast<std::size_t>(user.conversation)];
  Job job = make_job(user.conversation, user.turn,
                     conversation.replies_from_server ? &user.replies : nullptr);
  job.run_index = run_index;
  job.user = u;
  job.ready_s = user.ready_s;
  job.warmup = warmup;
  in_flight_.emplace(job.index, Flight{user.conversation, u});
  return job;
}

// ---- open loop ----

// The next arrival of this shard's: every shard draws the whole schedule and applies the
// bounds to every arrival in order, so the set drawn is one process's, then keeps its own.
std::optional<RequestSource::Arrival> RequestSource::draw_arrival() {
  while (std::optional<Arrival> arrival = draw_any_arrival()) {
    // Independent turns: the bounds apply at draw time, so the count is fixed by the seed.
    // Sequential: the conversation (a warm-up criterion) is known only at release, except in
    // a shard, which has no warm-up by conversation (validation) and must count the other
    // shards' arrivals in schedule order.
    arrival->bounded = arrival->turn.has_value() || sharded_;
    if (arrival->bounded && !within_bounds(arrival->warmup, arrival->scheduled_s)) break;
    if (owns(*arrival)) return arrival;
  }
  return std::nullopt;
}

std::optional<RequestSource::Arrival> RequestSource::draw_any_arrival() {
  Arrival arrival;
  if (trace_) {  // trace replay: turn 0 of conversation i at arrival_s[i]
    while (next_arrival_ < fixed_arrivals_.size() && conversations_[next_arrival_].user.empty()) {
      ++next_arrival_;
    }
    if (next_arrival_ >= fixed_arrivals_.size()) return std::nullopt;
    const int c = static_cast<int>(next_arrival_);
    arrival.turn = TurnPosition{0, 0, 0, c};
    arrival.scheduled_s = fixed_arrivals_[next_arrival_++];
    arrival.warmup = c < options_.warmup_conversations;
  } else {
    if (counted_) {
      if (next_arrival_ >= fixed_arrivals_.size()) return std::nullopt;
      arrival.scheduled_s = fixed_arrivals_[next_arrival_++];
    } else {
      arrival.scheduled_s = lazy_arrivals_->next();
    }
    if (!sequential_) {
      arrival.turn = cursor_position_;
      cursor_position_ = order_.after(cursor_position_);
      arrival.warmup =
          arrival.turn->lap == 0 && arrival.turn->conversation < options_.warmup_conversations;
    }
  }
  arrival.planned = planned_++;
  arrival.warmup = arrival.warmup || arrival.planned < options_.warmup_requests ||
                   arrival.scheduled_s < options_.warmup_s;
  return arrival;
}

void RequestSource::release_arrivals(double now_s) {
  while (!arrivals_done_) {
    if (!upcoming_) {
      upcoming_ = draw_arrival();
      if (!upcoming_) {
        arrivals_done_ = true;
        break;
      }
    }
    if (upcoming_->scheduled_s > now_s) break;
    due_.push_back(*upcoming_);
    upcoming_.reset();
  }
}

bool RequestSource::slot_free() const {
  return cap_ <= 0 || in_flight_.size() < static_cast<std::size_t>(cap_);
}

std::optional<Job> RequestSource::next_open(double now_s) {
  release_arrivals(now_s);
  if (sequential_) wake_thinkers(now_s);
  if (due_.empty()) return std::nullopt;
  if (!slot_free()) {
    held_ = true;
    return std::nullopt;
  }
  const Arrival arrival = due_.front();
  if (!sequential_) {
    due_.pop_front();
    Job job = make_job(arrival.turn->conversation, arrival.turn->turn, nullptr);
    job.run_index = arrival.planned;
    job.scheduled_s = arrival.scheduled_s;
    job.ready_s = std::max(arrival.scheduled_s, released_s_);
    job.warmup = arrival.warmup;
    in_flight_.emplace(job.index, Flight{job.conversation, -1});
    return job;
  }
  if (ready_.empty()) {  // the arrival waits for a conversation
    held_ = true;
    return std::nullopt;
  }
  const TurnPosition turn = ready_.top();
  const bool warmup =
      arrival.warmup || (turn.lap == 0 && turn.conversation < options_.warmup_conversations);
  if (!arrival.bounded && !within_bounds(warmup, arrival.scheduled_s)) {
    // Arrivals are released in schedule order, so no later one is within the bounds either.
    arrivals_done_ = true;
    upcoming_.reset();
    due_.clear();
    return std::nullopt;
  }
  due_.pop_front();
  ready_.pop();
  ConversationState& state = states_[static_cast<std::size_t>(turn.conversation)];
  const Conversation& conversation = conversations_[static_cast<std::size_t>(turn.conversation)];
  Job job = make_job(turn.conversation, turn.turn,
                     conversation.replies_from_server ? &state.replies : nullptr);
  job.run_index = arrival.planned;
  job.scheduled_s = arrival.scheduled_s;
  job.ready_s = std::max(arrival.scheduled_s, released_s_);
  job.warmup = warmup;
  in_flight_.emplace(job.index, Flight{turn.conversation, -1});
  return job;
}

// ---- both ----

void RequestSource::complete(std::int64_t index, bool ok, double now_s, std::string reply,
                             std::optional<double> ended_s) {
  const auto it = in_flight_.find(index);
  if (it == in_flight_.end()) return;
  const Flight flight = it->second;
  in_flight_.erase(it);
  const double freed_s = std::min(now_s, ended_s.value_or(now_s));
  if (held_) {  // this completion frees what held a due arrival
    released_s_ = std::max(released_s_, freed_s);
    held_ = false;
  }
  const Conversation& conversation = conversations_[static_cast<std::size_t>(flight.conversation)];
  const double think_s = options_.think_time_s;
  if (!open_loop_) {
    User& user = users_[static_cast<std::size_t>(flight.user)];
    if (ok && conversation.replies_from_server) user.replies.push_back(std::move(reply));
    ++user.turn;
    // A failed turn ends the conversation: later turns would replay a history the server
    // never answered. A new conversation starts at once; a next turn after the think time.
    user.ready_s = freed_s;
    if (!ok || static_cast<std::size_t>(user.turn) >= conversation.user.size()) {
      user.conversation = -1;
      idle_users_.push_back(flight.user);
    } else if (think_s > 0) {
      thinking_.push_back({now_s + think_s, flight.user});
    } else {
      idle_users_.push_back(flight.user);
    }
    return;
  }
  if (!sequential_) return;
  ConversationState& state = states_[static_cast<std::size_t>(flight.conversation)];
  if (ok && conversation.replies_from_server) state.replies.push_back(std::move(reply));
  ++state.turn;
  if (!ok || static_cast<std::size_t>(state.turn) >= conversation.user.size()) {
    ++state.lap;  // the next lap starts the conversation over, at once
    state.turn = 0;
    state.replies.clear();
    ready_.push(order_.position(state.lap, 0, flight.conversation));
  } else if (think_s > 0) {
    thinking_.push_back({now_s + think_s, flight.conversation});
  } else {
    ready_.push(order_.position(state.lap, state.turn, flight.conversation));
  }
}

}  // namespace kvsweep::driver
