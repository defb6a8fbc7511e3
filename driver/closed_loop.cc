// Closed-loop load: N virtual users walking multi-turn conversations, on one libcurl multi thread.
#include "driver/closed_loop.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "common/stats.h"
#include "driver/curl_handles.h"
#include "driver/request_body.h"
#include "driver/stream_transfer.h"

namespace kvsweep::driver {
namespace {

using Clock = std::chrono::steady_clock;

// Upper bound on one wait for socket activity, so the stop flag and the duration bound are
// noticed within this many milliseconds even when every stream is quiet.
constexpr int kMaxPollMs = 50;
constexpr double kProgressPeriodS = 1.0;

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("ClosedLoopOptions." + message);
}

void validate(const ClosedLoopOptions& options, const std::vector<Conversation>& conversations) {
  require(!options.base_url.empty(), "base_url: must not be empty");
  require(options.concurrency >= 1,
          "concurrency: expected >= 1, got " + std::to_string(options.concurrency));
  require(options.max_tokens >= 1,
          "max_tokens: expected >= 1, got " + std::to_string(options.max_tokens));
  require(options.num_requests >= 0,
          "num_requests: expected >= 0, got " + std::to_string(options.num_requests));
  require(options.duration_s >= 0,
          "duration_s: expected >= 0, got " + std::to_string(options.duration_s));
  require(options.num_requests > 0 || options.duration_s > 0,
          "num_requests/duration_s: set at least one bound (both are 0)");
  require(options.warmup_requests >= 0,
          "warmup_requests: expected >= 0, got " + std::to_string(options.warmup_requests));
  require(options.connect_timeout_s > 0, "connect_timeout_s: expected > 0");
  require(options.request_timeout_s > 0, "request_timeout_s: expected > 0");
  const bool has_turn = std::any_of(conversations.begin(), conversations.end(),
                                    [](const Conversation& c) { return !c.user.empty(); });
  if (!has_turn) {
    throw std::invalid_argument("conversations: the dataset has no conversation with a turn");
  }
}

std::string chat_url(std::string base_url) {
  while (!base_url.empty() && base_url.back() == '/') base_url.pop_back();
  return base_url + "/v1/chat/completions";
}

struct VirtualUser {
  int conversation = -1;  // -1: take the next one from the shared cursor
  int turn = 0;
  bool busy = false;
};

struct InFlight {
  std::unique_ptr<StreamTransfer> transfer;
  std::size_t record = 0;
  int user = 0;
};

// State of one run. Invariant: a request is in `in_flight_` exactly while its handle is added
// to `multi_`, and its user is busy exactly while it is there.
class ClosedLoopRun {
 public:
  ClosedLoopRun(const ClosedLoopOptions& options, const std::vector<Conversation>& conversations,
                const std::function<void(const Progress&)>& on_progress)
      : options_(options),
        conversations_(conversations),
        on_progress_(on_progress),
        url_(chat_url(options.base_url)),
        users_(static_cast<std::size_t>(options.concurrency)) {}

  LoadResult run() {
    epoch_ = Clock::now();
    result_.epoch_wall_s =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    double next_progress_s = kProgressPeriodS;
    while (true) {
      if (options_.stop != nullptr && options_.stop->load()) {
        cancel_in_flight();
        result_.interrupted = true;
        break;
      }
      for (std::size_t u = 0; u < users_.size() && may_send(); ++u) {
        if (!users_[u].busy) send_next(static_cast<int>(u));
      }
      if (in_flight_.empty()) break;  // nothing may be sent and nothing is running
      multi_.poll(kMaxPollMs);
      multi_.perform();
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

  bool may_send() const {
    if (next_index_ < options_.warmup_requests) return true;
    if (options_.num_requests > 0 && measured_sent_ >= options_.num_requests) return false;
    if (options_.duration_s > 0 && measured_start_s_ >= 0 &&
        now_s() - measured_start_s_ >= options_.duration_s) {
      return false;
    }
    return true;
  }

  void take_next_conversation(VirtualUser& user) {
    // validate() guarantees a conversation with turns exists, so this ends within one lap.
    do {
      user.conversation = static_cast<int>(cursor_ % conversations_.size());
      ++cursor_;
    } while (conversations_[static_cast<std::size_t>(user.conversation)].user.empty());
    user.turn = 0;
  }

  void send_next(int user_index) {
    VirtualUser& user = users_[static_cast<std::size_t>(user_index)];
    if (user.conversation < 0) take_next_conversation(user);
    const Conversation& conversation = conversations_[static_cast<std::size_t>(user.conversation)];

    ChatRequest chat;
    chat.model = options_.model;
    chat.messages = messages_for_turn(conversation, user.turn);
    chat.max_tokens = options_.max_tokens;
    chat.ignore_eos = options_.ignore_eos;
    StreamRequest request;
    request.url = url_;
    request.api_key = options_.api_key;
    request.body = chat_request_body(chat);
    request.connect_timeout_s = options_.connect_timeout_s;
    request.timeout_s = options_.request_timeout_s;

    RequestRecord record;
    record.index = next_index_++;
    record.worker = user_index;
    record.conversation = user.conversation;
    record.turn = user.turn;
    record.warmup = record.index < options_.warmup_requests;

    InFlight flight{std::make_unique<StreamTransfer>(std::move(request), epoch_),
                    result_.records.size(), user_index};
    record.sent_s = now_s();
    multi_.add(flight.transfer->easy());
    if (!record.warmup) {
      if (measured_start_s_ < 0) measured_start_s_ = record.sent_s;
      ++measured_sent_;
    }
    result_.records.push_back(std::move(record));
    user.busy = true;
    in_flight_.emplace(flight.transfer->easy().get(), std::move(flight));
  }

  void reap_finished() {
    while (const std::optional<CurlDone> done = multi_.next_done()) {
      const auto it = in_flight_.find(done->easy);
      if (it == in_flight_.end()) continue;
      InFlight& flight = it->second;
      RequestRecord& record = result_.records[flight.record];
      flight.transfer->finish(done->result, record);
      multi_.remove(flight.transfer->easy());

      VirtualUser& user = users_[static_cast<std::size_t>(flight.user)];
      user.busy = false;
      ++user.turn;
      // A failed turn ends the conversation: later turns would replay a history the server
      // never answered.
      const auto turns = conversations_[static_cast<std::size_t>(user.conversation)].user.size();
      if (!record.ok || static_cast<std::size_t>(user.turn) >= turns) user.conversation = -1;
      count(record);
      in_flight_.erase(it);
    }
  }

  void cancel_in_flight() {
    for (auto& [easy, flight] : in_flight_) {
      multi_.remove(flight.transfer->easy());
      RequestRecord& record = result_.records[flight.record];
      record.ok = false;
      record.error_kind = kErrorCancelled;
      record.error = "run stopped before the response completed";
      users_[static_cast<std::size_t>(flight.user)].busy = false;
      count(record);
    }
    in_flight_.clear();
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
    progress.elapsed_s = measured_start_s_ >= 0 ? now_s() - measured_start_s_ : 0;
    progress.requests_per_s =
        progress.elapsed_s > 0 ? static_cast<double>(measured_done_) / progress.elapsed_s : 0;
    std::vector<double> sorted = ttfts_ms_;
    std::sort(sorted.begin(), sorted.end());
    progress.p50_ttft_ms = percentile(sorted, 50);
    return progress;
  }

  const ClosedLoopOptions& options_;
  const std::vector<Conversation>& conversations_;
  const std::function<void(const Progress&)>& on_progress_;
  const std::string url_;
  std::vector<VirtualUser> users_;
  Clock::time_point epoch_;
  LoadResult result_;
  std::size_t cursor_ = 0;
  std::int64_t next_index_ = 0;
  std::int64_t measured_sent_ = 0;
  std::int64_t measured_done_ = 0;
  std::int64_t measured_failed_ = 0;
  double measured_start_s_ = -1;
  std::vector<double> ttfts_ms_;
  // Members are destroyed in reverse order: multi_ goes first and its destructor removes every
  // easy handle still added, then in_flight_ cleans the handles up, never while still added.
  std::unordered_map<CURL*, InFlight> in_flight_;
  CurlMulti multi_;
};

}  // namespace

LoadResult run_closed_loop(const ClosedLoopOptions& options,
                           const std::vector<Conversation>& conversations,
                           const std::function<void(const Progress&)>& on_progress) {
  validate(options, conversations);
  return ClosedLoopRun(options, conversations, on_progress).run();
}

}  // namespace kvsweep::driver
