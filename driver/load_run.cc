// run_load: one load run (closed or open loop) over a Workload, on one socket-action thread.
#include "driver/load_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>

#include "common/base_url.h"
#include "common/stats.h"
#include "driver/arrival_schedule.h"
#include "driver/pacer.h"
#include "driver/request_body.h"
#include "driver/socket_loop.h"
#include "driver/stream_transfer.h"

namespace kvsweep::driver {
namespace {

using Clock = std::chrono::steady_clock;

// Upper bound on one wait, so the stop flag, first-byte deadlines and the duration bound are
// noticed within this many milliseconds even when every stream is quiet. Sends never wait on
// it: the pacer's timerfd wakes the loop at each scheduled time.
constexpr int kMaxWaitMs = 50;
constexpr double kProgressPeriodS = 1.0;
// Idle keep-alive connections kept by an uncapped open loop (a capped one keeps its cap).
constexpr long kOpenLoopCachedConnections = 4096;

std::string endpoint_url(const std::string& base_url, LoadOptions::Endpoint endpoint) {
  return normalize_base_url(base_url) +
         (endpoint == LoadOptions::Endpoint::kChat ? "/v1/chat/completions" : "/v1/completions");
}

struct VirtualUser {
  int conversation = -1;  // -1: take the next one from the shared cursor
  int turn = 0;
  bool busy = false;
  bool warmup_conversation = false;
  std::vector<std::string> replies;  // the server's replies so far (replies_from_server)
};

// One request to send: which turn, when it was due, who sends it.
struct Job {
  int conversation = 0;
  int turn = 0;
  double scheduled_s = -1;  // open loop only
  int user = -1;            // closed loop only
  bool warmup = false;
};

struct InFlight {
  std::unique_ptr<StreamTransfer> transfer;
  std::size_t record = 0;
  int user = -1;
};

struct FirstByteDeadline {
  double deadline_s = 0;
  std::size_t record = 0;  // identifies the request: easy handle addresses get reused
  CURL* easy = nullptr;
};

// State of one run. Invariants: a request is in `in_flight_` exactly while its handle is added
// to `loop_`; a closed-loop user is busy exactly while its request is there; an open-loop
// job is in `due_` only when its time has come and the in-flight cap was full.
class LoadRun {
 public:
  LoadRun(const LoadOptions& options, const Workload& workload,
          const std::function<void(const Progress&)>& on_progress)
      : options_(options),
        conversations_(workload.conversations),
        on_progress_(on_progress),
        url_(endpoint_url(options.base_url, options.endpoint)),
        open_loop_(is_open_loop(options, workload)) {
    for (const Conversation& c : conversations_) {
      max_turns_ = std::max(max_turns_, static_cast<int>(c.user.size()));
    }
    if (!open_loop_) {
      users_.resize(static_cast<std::size_t>(options.concurrency));
      loop_.set_connection_limits(options.concurrency, options.concurrency);
    } else {
      trace_ = !workload.arrival_s.empty();
      if (trace_) {
        fixed_arrivals_ = workload.arrival_s;
      } else if (options.num_requests > 0 && options.duration_s == 0 && options.warmup_s == 0 &&
                 options.warmup_conversations == 0) {
        fixed_arrivals_ = gamma_arrival_times(options.request_rate, options.burstiness,
                                              options.warmup_requests + options.num_requests,
                                              options.seed);
        counted_ = true;
      } else {
        lazy_arrivals_.emplace(options.request_rate, options.burstiness, options.seed);
      }
      const long cap = options.max_concurrency;
      loop_.set_connection_limits(cap > 0 ? cap : kOpenLoopCachedConnections, cap);
      loop_.watch(pacer_.fd());
    }
  }

  LoadResult run() {
    raise_open_file_limit();
    epoch_ = Clock::now();
    result_.epoch_steady_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(epoch_.time_since_epoch()).count();
    result_.epoch_wall_s =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    double next_progress_s = kProgressPeriodS;
    while (true) {
      if (options_.stop != nullptr && options_.stop->load()) {
        cancel_in_flight();
        result_.interrupted = true;
        break;
      }
      expire_first_byte_deadlines();
      if (open_loop_) {
        release_due();
        if (arrivals_done_ && due_.empty() && in_flight_.empty()) break;
      } else {
        for (std::size_t u = 0; u < users_.size() && !sending_done_; ++u) {
          if (!users_[u].busy) send_closed(static_cast<int>(u));
        }
        if (in_flight_.empty()) break;  // nothing may be sent and nothing is running
      }
      if (loop_.wait_and_drive(kMaxWaitMs)) pacer_.acknowledge();
      notice_measured_underway();
      reap_finished();
      if (on_progress_ && now_s() >= next_progress_s) {
        on_progress_(progress());
        next_progress_s = now_s() + kProgressPeriodS;
      }
    }
    if (on_progress_) on_progress_(progress());
    return std::move(result_);
  }

 private:
  double now_s() const { return std::chrono::duration<double>(Clock::now() - epoch_).count(); }

  // Applies the measured-phase bounds to a job about to be sent (closed loop) or scheduled
  // (open loop, at its scheduled time, so the count is fixed by the seed). False: stop.
  bool within_bounds(const Job& job, double start_s) {
    if (job.warmup) return true;
    if (options_.num_requests > 0 && measured_planned_ >= options_.num_requests) return false;
    if (options_.duration_s > 0 && measured_start_s_ >= 0 &&
        start_s - measured_start_s_ >= options_.duration_s) {
      return false;
    }
    if (measured_start_s_ < 0) measured_start_s_ = start_s;
    ++measured_planned_;
    return true;
  }

  // ---- closed loop ----

  void take_next_conversation(VirtualUser& user) {
    // validate() guarantees a conversation with turns exists, so this ends within one lap.
    do {
      user.conversation = static_cast<int>(cursor_ % conversations_.size());
      ++cursor_;
    } while (conversations_[static_cast<std::size_t>(user.conversation)].user.empty());
    user.turn = 0;
    user.replies.clear();
    user.warmup_conversation = conversations_started_++ < options_.warmup_conversations;
  }

  void send_closed(int user_index) {
    VirtualUser& user = users_[static_cast<std::size_t>(user_index)];
    if (user.conversation < 0) take_next_conversation(user);
    const double now = now_s();
    Job job{user.conversation, user.turn, -1, user_index, false};
    job.warmup = next_index_ < options_.warmup_requests || user.warmup_conversation ||
                 now < options_.warmup_s;
    if (!within_bounds(job, now)) {
      sending_done_ = true;
      return;
    }
    send(job);
  }

  // ---- open loop ----

  // The next job of the schedule, or nullopt when the schedule or trace is exhausted.
  std::optional<Job> draw_job() {
    Job job;
    if (trace_) {  // trace replay: conversation i at arrival_s[i]
      while (next_arrival_ < fixed_arrivals_.size() &&
             conversations_[next_arrival_].user.empty()) {
        ++next_arrival_;
      }
      if (next_arrival_ >= fixed_arrivals_.size()) return std::nullopt;
      job.conversation = static_cast<int>(next_arrival_);
      job.scheduled_s = fixed_arrivals_[next_arrival_++];
      job.warmup = job.conversation < options_.warmup_conversations;
    } else {
      if (counted_) {
        if (next_arrival_ >= fixed_arrivals_.size()) return std::nullopt;
        job.scheduled_s = fixed_arrivals_[next_arrival_++];
      } else {
        job.scheduled_s = lazy_arrivals_->next();
      }
      next_turn_major(job);
    }
    job.warmup = job.warmup || planned_ < options_.warmup_requests ||
                 job.scheduled_s < options_.warmup_s;
    ++planned_;
    return job;
  }

  // Turn-major order over the dataset (see load_run.h); fills conversation and turn.
  void next_turn_major(Job& job) {
    while (true) {
      if (order_conversation_ >= conversations_.size()) {
        order_conversation_ = 0;
        if (++order_turn_ >= max_turns_) {
          order_turn_ = 0;
          ++order_lap_;
        }
      }
      const std::size_t c = order_conversation_++;
      if (static_cast<int>(conversations_[c].user.size()) > order_turn_) {
        job.conversation = static_cast<int>(c);
        job.turn = order_turn_;
        job.warmup =
            order_lap_ == 0 && job.conversation < options_.warmup_conversations;
        return;
      }
    }
  }

  bool slot_free() const {
    return options_.max_concurrency <= 0 ||
           in_flight_.size() < static_cast<std::size_t>(options_.max_concurrency);
  }

  void release_due() {
    const double now = now_s();
    while (!arrivals_done_) {
      if (!upcoming_) {
        upcoming_ = draw_job();
        if (!upcoming_ || !within_bounds(*upcoming_, upcoming_->scheduled_s)) {
          upcoming_.reset();
          arrivals_done_ = true;
          pacer_.disarm();
          break;
        }
        pacer_armed_ = false;
      }
      if (upcoming_->scheduled_s > now) break;
      due_.push_back(*upcoming_);
      upcoming_.reset();
    }
    while (!due_.empty() && slot_free()) {
      send(due_.front());
      due_.pop_front();
    }
    if (upcoming_ && !pacer_armed_) {
      pacer_.arm_at(epoch_ + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(upcoming_->scheduled_s)));
      pacer_armed_ = true;
    }
  }

  // ---- both ----

  void send(const Job& job) {
    const Conversation& conversation = conversations_[static_cast<std::size_t>(job.conversation)];
    VirtualUser* user = job.user >= 0 ? &users_[static_cast<std::size_t>(job.user)] : nullptr;
    const bool server_history = user != nullptr && conversation.replies_from_server;

    ChatRequest chat;
    chat.model = options_.model;
    chat.messages =
        messages_for_turn(conversation, job.turn, server_history ? &user->replies : nullptr);
    const auto turn = static_cast<std::size_t>(job.turn);
    chat.max_tokens = turn < conversation.max_tokens.size() && conversation.max_tokens[turn] > 0
                          ? conversation.max_tokens[turn]
                          : options_.max_tokens;
    if (options_.max_tokens_cap > 0) chat.max_tokens = std::min(chat.max_tokens, options_.max_tokens_cap);
    chat.ignore_eos = options_.ignore_eos;
    chat.stream = options_.stream;
    chat.temperature = options_.temperature;
    chat.extra_body_json = options_.extra_body_json;
    StreamRequest request;
    request.url = url_;
    request.api_key = options_.api_key;
    request.headers = options_.headers;
    request.body = options_.endpoint == LoadOptions::Endpoint::kChat
                       ? chat_request_body(chat)
                       : completion_request_body(chat);
    request.stream = options_.stream;
    request.keep_text = server_history || options_.keep_response_text;
    request.connect_timeout_s = options_.connect_timeout_s;
    request.timeout_s = options_.request_timeout_s;

    RequestRecord record;
    record.index = next_index_++;
    record.worker = std::max(job.user, 0);
    record.conversation = job.conversation;
    record.turn = job.turn;
    record.warmup = job.warmup;
    record.scheduled_s = job.scheduled_s;

    InFlight flight{std::make_unique<StreamTransfer>(std::move(request), epoch_),
                    result_.records.size(), job.user};
    record.sent_s = now_s();
    if (job.scheduled_s >= 0) {
      record.schedule_lag_ms = std::max(0.0, record.sent_s - job.scheduled_s) * 1000.0;
    }
    loop_.add(flight.transfer->easy());
    if (options_.first_byte_timeout_s > 0) {
      first_byte_deadlines_.push_back({record.sent_s + options_.first_byte_timeout_s,
                                       flight.record, flight.transfer->easy().get()});
    }
    result_.records.push_back(std::move(record));
    if (user != nullptr) user->busy = true;
    in_flight_.emplace(flight.transfer->easy().get(), std::move(flight));
  }

  void reap_finished() {
    while (const std::optional<CurlDone> done = loop_.next_done()) {
      const auto it = in_flight_.find(done->easy);
      if (it == in_flight_.end()) continue;
      RequestRecord& record = result_.records[it->second.record];
      it->second.transfer->finish(done->result, record);
      complete(it);
    }
  }

  // Fires LoadOptions::on_measured_underway at the first status line of a measured request.
  // Scans the in-flight requests only until it fires.
  void notice_measured_underway() {
    if (underway_noticed_ || !options_.on_measured_underway) return;
    for (const auto& [easy, flight] : in_flight_) {
      if (!result_.records[flight.record].warmup && flight.transfer->got_first_byte()) {
        underway_noticed_ = true;
        options_.on_measured_underway();
        return;
      }
    }
  }

  // Deadlines are pushed in send order with one timeout, so they are sorted: check the front.
  void expire_first_byte_deadlines() {
    if (first_byte_deadlines_.empty()) return;
    const double now = now_s();
    while (!first_byte_deadlines_.empty() && first_byte_deadlines_.front().deadline_s <= now) {
      const FirstByteDeadline deadline = first_byte_deadlines_.front();
      first_byte_deadlines_.pop_front();
      const auto it = in_flight_.find(deadline.easy);
      if (it == in_flight_.end() || it->second.record != deadline.record ||
          it->second.transfer->got_first_byte()) {
        continue;
      }
      RequestRecord& record = result_.records[deadline.record];
      it->second.transfer->keep_response_so_far(record);
      record.ok = false;
      record.error_kind = kErrorTimeout;
      record.error = "first byte timeout: no response within " +
                     std::to_string(options_.first_byte_timeout_s) + " s of the send";
      complete(it);
    }
  }

  // Removes a finished (or abandoned) request and moves its user on.
  void complete(std::unordered_map<CURL*, InFlight>::iterator it) {
    InFlight& flight = it->second;
    RequestRecord& record = result_.records[flight.record];
    record.ended_s = now_s();
    loop_.remove(flight.transfer->easy());
    if (flight.user >= 0) {
      VirtualUser& user = users_[static_cast<std::size_t>(flight.user)];
      user.busy = false;
      const Conversation& conversation =
          conversations_[static_cast<std::size_t>(user.conversation)];
      if (record.ok && conversation.replies_from_server) {
        user.replies.push_back(flight.transfer->reply_text());
      }
      ++user.turn;
      // A failed turn ends the conversation: later turns would replay a history the server
      // never answered.
      if (!record.ok || static_cast<std::size_t>(user.turn) >= conversation.user.size()) {
        user.conversation = -1;
      }
    }
    if (!options_.keep_response_text) std::string().swap(record.response_text);
    count(record);
    in_flight_.erase(it);
  }

  void cancel_in_flight() {
    while (!in_flight_.empty()) {
      const auto it = in_flight_.begin();
      RequestRecord& record = result_.records[it->second.record];
      it->second.transfer->keep_response_so_far(record);  // the status it had received
      record.ok = false;
      record.error_kind = kErrorCancelled;
      record.error = "run stopped before the response completed";
      complete(it);
    }
  }

  void count(const RequestRecord& record) {
    if (record.warmup) return;
    ++measured_done_;
    if (!record.ok) {
      ++measured_failed_;
    } else if (record.first_token_s >= 0) {
      ttfts_ms_.push_back(record.ttft_ms);
    }
  }

  Progress progress() const {
    Progress progress;
    progress.done = measured_done_;
    progress.total = options_.num_requests;
    progress.failed = measured_failed_;
    progress.elapsed_s = measured_start_s_ >= 0 ? std::max(0.0, now_s() - measured_start_s_) : 0;
    progress.requests_per_s =
        progress.elapsed_s > 0 ? static_cast<double>(measured_done_) / progress.elapsed_s : 0;
    std::vector<double> sorted = ttfts_ms_;
    std::sort(sorted.begin(), sorted.end());
    progress.p50_ttft_ms = percentile(sorted, 50);
    progress.p95_ttft_ms = percentile(sorted, 95);
    return progress;
  }

  const LoadOptions& options_;
  const std::vector<Conversation>& conversations_;
  const std::function<void(const Progress&)>& on_progress_;
  const std::string url_;
  const bool open_loop_;
  int max_turns_ = 0;
  Clock::time_point epoch_;
  LoadResult result_;
  std::int64_t next_index_ = 0;
  std::int64_t measured_planned_ = 0;
  std::int64_t measured_done_ = 0;
  std::int64_t measured_failed_ = 0;
  double measured_start_s_ = -1;
  bool underway_noticed_ = false;
  std::vector<double> ttfts_ms_;

  // Closed loop.
  std::vector<VirtualUser> users_;
  std::size_t cursor_ = 0;
  int conversations_started_ = 0;
  bool sending_done_ = false;

  // Open loop.
  bool trace_ = false;    // trace replay: fixed_arrivals_ is Workload::arrival_s
  bool counted_ = false;  // fixed_arrivals_ was drawn up front for a known request count
  std::vector<double> fixed_arrivals_;
  std::optional<GammaArrivals> lazy_arrivals_;
  std::size_t next_arrival_ = 0;
  std::int64_t planned_ = 0;
  std::size_t order_conversation_ = 0;
  int order_turn_ = 0;
  int order_lap_ = 0;
  std::optional<Job> upcoming_;  // drawn, not yet due
  std::deque<Job> due_;          // due, waiting for an in-flight slot
  bool arrivals_done_ = false;
  bool pacer_armed_ = false;
  Pacer pacer_;

  std::deque<FirstByteDeadline> first_byte_deadlines_;
  // Members are destroyed in reverse order: loop_ goes first and removes every easy handle
  // still added, then in_flight_ cleans the handles up, never while still added.
  std::unordered_map<CURL*, InFlight> in_flight_;
  SocketLoop loop_;
};

}  // namespace

LoadResult run_load(const LoadOptions& options, const Workload& workload,
                    const std::function<void(const Progress&)>& on_progress) {
  validate_load_options(options, workload);
  return LoadRun(options, workload, on_progress).run();
}

}  // namespace kvsweep::driver
