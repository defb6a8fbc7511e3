// One load run on the virtual fleet: its event schedule (the records it fills: virtual_records.h).
#include "predict/virtual_load.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

#include "common/duration.h"
#include "driver/request_source.h"
#include "predict/event_queue.h"
#include "predict/fleet_samples.h"
#include "predict/replica_request.h"
#include "predict/virtual_flight.h"
#include "predict/virtual_records.h"

namespace kvsweep::predict {
namespace {

// How often the stop flag is read: every this many events (reading an atomic per event would
// cost nothing measurable either; this keeps the loop's shape obvious).
constexpr std::uint64_t kStopCheckEvents = 1024;

enum class Kind : std::uint8_t {
  kWake,       // the request source may have a request to send now
  kArrive,     // a request reaches the router (and its replica)
  kStepStart,  // an idle replica starts a step (deferred, so same-time arrivals join it)
  kStepEnd,    // a replica's step completes
  kAnswered,   // the last byte of an answer (or an error) reaches the client
  kAbandon,    // the client gives up on a request (timeout): its record is final
  kSample,     // a "during" scrape of every replica
};

struct Payload {
  Kind kind = Kind::kWake;
  int replica = 0;
  std::int64_t index = 0;     // the request (kArrive, kAnswered, kAbandon)
  std::uint64_t version = 0;  // kSample: stale when the schedule was restarted
  double wake_s = 0;          // kWake: the source's own time it was armed for (see dispatch)
};

sim::RouteDecider::Clock::time_point router_time(double t_s) {
  using Clock = sim::RouteDecider::Clock;
  return Clock::time_point{} +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(t_s));
}

// vLLM's wording for a prompt that does not fit (sim/http/replica_server.cc context_too_long).
std::string context_too_long(int max_model_len, std::int64_t prompt_tokens, int max_tokens,
                             bool chat) {
  return "This model's maximum context length is " + std::to_string(max_model_len) +
         " tokens. However, you requested " + std::to_string(prompt_tokens + max_tokens) +
         " tokens (" + std::to_string(prompt_tokens) + " in the " + (chat ? "messages" : "prompt") +
         ", " + std::to_string(max_tokens) +
         " in the completion). Please reduce the length of the messages or completion.";
}

// The run: its event queue and the state of every request in flight. Times in the queue are
// the fleet's absolute virtual seconds; records hold them relative to epoch_.
class VirtualRun {
 public:
  VirtualRun(VirtualFleet& fleet, const driver::LoadOptions& options,
             const driver::Workload& workload, const VirtualLoadOptions& virtual_options,
             const std::function<void(const driver::Progress&)>& on_progress)
      : fleet_(fleet),
        options_(options),
        virtual_(virtual_options),
        on_progress_(on_progress),
        source_(options, workload),
        patch_(read_body_patch(options)),
        epoch_(fleet.now_s()),
        records_(options, epoch_),
        latency_(std::max(0.0, virtual_options.network_latency_s)),
        send_cost_(std::max(0.0, virtual_options.client_send_cost_s)),
        by_engine_(static_cast<std::size_t>(fleet.replicas())),
        start_posted_(static_cast<std::size_t>(fleet.replicas()), 0) {}

  VirtualLoadResult run() {
    result_.samples = fleet_samples(fleet_, "before", 0);
    if (virtual_.sample_interval_s > 0) schedule_sample(epoch_ + virtual_.sample_interval_s);
    next_progress_s_ = epoch_ + 1;
    now_ = epoch_;
    dispatch();
    std::uint64_t events = 0;
    while (!finished()) {
      if (++events % kStopCheckEvents == 0 && options_.stop != nullptr && options_.stop->load()) {
        stop();
        break;
      }
      // Nothing left to happen while the source still has work: a defect, never a result.
      if (!step()) {
        throw std::logic_error(
            "predict: the request source has requests left but nothing is due (" +
            std::to_string(flights_.size()) + " in flight at " + std::to_string(rel(now_)) + " s)");
      }
    }
    const double end = now_;
    std::vector<store::MetricSample> after = fleet_samples(fleet_, "after", end - epoch_);
    drain_steps();
    result_.samples.insert(result_.samples.end(), after.begin(), after.end());
    fleet_.advance_to(std::max(end, now_));
    if (on_progress_) on_progress_(progress());
    result_.load = records_.take();
    return std::move(result_);
  }

 private:
  bool finished() const { return source_.exhausted() && flights_.empty(); }

  // Processes the next due event or timeout; false when there is none.
  bool step() {
    const double next_event =
        events_.empty() ? std::numeric_limits<double>::infinity() : events_.top().at_s;
    const double next_deadline = earliest_deadline();
    if (std::isinf(next_event) && std::isinf(next_deadline)) return false;
    // A deadline at the same time as an event waits for it: an answer completing exactly at
    // the deadline is in time, as a transfer that ends as its timer fires.
    if (next_deadline < next_event) {
      advance(next_deadline);
      expire_deadlines();
      return true;
    }
    const auto event = events_.pop();
    advance(event.at_s);
    handle(event.payload);
    return true;
  }

  void advance(double t_s) {
    now_ = std::max(now_, t_s);
    while (on_progress_ && now_ >= next_progress_s_) {
      on_progress_(progress());
      next_progress_s_ += 1;
    }
  }

  void handle(const Payload& p) {
    switch (p.kind) {
      case Kind::kWake:
        dispatch(p.wake_s);
        break;
      case Kind::kArrive:
        arrive(p.index);
        break;
      case Kind::kStepStart:
        start_posted_[static_cast<std::size_t>(p.replica)] = 0;
        start_step(p.replica);
        break;
      case Kind::kStepEnd:
        end_step(p.replica);
        break;
      case Kind::kAnswered:
        answered(p.index);
        dispatch();
        break;
      case Kind::kAbandon:
        abandoned(p.index);
        dispatch();
        break;
      case Kind::kSample:
        if (p.version == sample_version_ && !finished()) {
          sample();
          schedule_sample(now_ + virtual_.sample_interval_s);
        }
        break;
    }
  }

  // ---- the client side ----

  // Sends every request the source has now, and arms the next wake-up. A wake-up carries the
  // source's own time: the queue holds epoch + t, and (epoch + t) - epoch can come back a hair
  // short of t, when the source would have nothing due and the run would stall.
  void dispatch(double woken_for_s = 0) {
    const double now = std::max(rel(now_), woken_for_s);
    while (std::optional<driver::Job> job = source_.next(now)) send(std::move(*job));
    const std::optional<double> wake = source_.wake_s();
    if (wake && wake != armed_wake_) {
      Payload payload{Kind::kWake};
      payload.wake_s = *wake;
      events_.push(epoch_ + *wake, payload);
    }
    armed_wake_ = wake;
  }

  void send(driver::Job job) {
    // The client sends one request at a time: requests due at the same instant leave
    // send_cost_ apart, in the order the source gives them.
    const double sent = std::max(now_, client_free_s_);
    client_free_s_ = sent + send_cost_;
    records_.open(job, sent);
    VirtualFlight& flight = flights_[job.index];
    flight.wants_reply = job.wants_reply;
    flight.request = replica_request(job, options_, patch_, fleet_.router().needs_prompt_text());
    deadlines_.push_back({sent + options_.request_timeout_s, job.index});
    if (options_.first_byte_timeout_s > 0) {
      first_byte_deadlines_.push_back({sent + options_.first_byte_timeout_s, job.index});
    }
    events_.push(sent + latency_, Payload{Kind::kArrive, 0, job.index});
  }

  // The answer's last byte reached the client: the record is final.
  void answered(std::int64_t index) {
    const auto found = flights_.find(index);
    if (found == flights_.end()) return;
    finish(index, found->second, records_.answered(index, found->second, now_));
  }

  // The client gave up (kAbandon at its deadline): what had arrived by then stays recorded.
  void abandoned(std::int64_t index) {
    const auto found = flights_.find(index);
    if (found == flights_.end()) return;
    records_.abandoned(index, found->second, now_);
    finish(index, found->second, false);
  }

  void finish(std::int64_t index, VirtualFlight& f, bool ok) {
    records_.count(index, ok);
    source_.complete(index, ok, rel(now_), std::move(f.reply));
    flights_.erase(index);
  }

  // ---- deadlines (the client's timers) ----

  struct Deadline {
    double at_s = 0;  // the client's deadline
    std::int64_t index = 0;
  };

  // The server learns nothing of a deadline; the client stops reading at it. A byte the
  // replica writes after deadline - latency cannot arrive in time, so that is when a request
  // is settled: its tokens so far count, later work on it is cancelled.
  double earliest_deadline() const {
    double t = std::numeric_limits<double>::infinity();
    if (!deadlines_.empty()) t = deadlines_.front().at_s - latency_;
    if (!first_byte_deadlines_.empty())
      t = std::min(t, first_byte_deadlines_.front().at_s - latency_);
    return t;
  }

  void expire_deadlines() {
    while (!first_byte_deadlines_.empty() &&
           first_byte_deadlines_.front().at_s - latency_ <= now_) {
      const Deadline d = first_byte_deadlines_.front();
      first_byte_deadlines_.pop_front();
      const auto found = flights_.find(d.index);
      if (found == flights_.end() || !found->second.abandon_kind.empty()) continue;
      // The status line reaches the client `latency` after the replica writes it.
      const bool got_status =
          found->second.status_client_s >= 0 && found->second.status_client_s <= d.at_s;
      const bool answered_in_time = found->second.server_done;
      if (got_status || answered_in_time) continue;
      abandon(d, found->second,
              "first byte timeout: no response within " +
                  format_duration_s(options_.first_byte_timeout_s) + " of the send");
    }
    while (!deadlines_.empty() && deadlines_.front().at_s - latency_ <= now_) {
      const Deadline d = deadlines_.front();
      deadlines_.pop_front();
      const auto found = flights_.find(d.index);
      if (found == flights_.end() || found->second.server_done ||
          !found->second.abandon_kind.empty()) {
        continue;  // answered in time (its last byte is on the way) or already given up
      }
      abandon(d, found->second,
              "total timeout after " + format_duration_s(options_.request_timeout_s) +
                  ": the request had not completed (predicted, virtual time)");
    }
  }

  void abandon(const Deadline& d, VirtualFlight& f, std::string why) {
    f.abandon_kind = driver::kErrorTimeout;
    f.abandon_error = std::move(why);
    drop_on_server(f);
    events_.push(d.at_s, Payload{Kind::kAbandon, 0, d.index});
  }

  // The client closed its connection: the replica cancels the request and the router stops
  // counting it, as the HTTP exchange's end does.
  void drop_on_server(VirtualFlight& f) {
    if (f.server_done) return;
    f.server_done = true;
    if (f.replica >= 0) {
      fleet_.replica(f.replica).cancel(f.engine_id);
      by_engine_[static_cast<std::size_t>(f.replica)].erase(f.engine_id);
    }
    if (f.routed) fleet_.router().on_finished(f.decision);
  }

  // The stop flag: every request in flight ends as cancelled, now.
  void stop() {
    records_.set_interrupted();
    for (auto& [index, f] : flights_) {
      drop_on_server(f);
      records_.cancelled(index, f, now_);
    }
    flights_.clear();
  }

  // ---- the server side ----

  void arrive(std::int64_t index) {
    const auto found = flights_.find(index);
    if (found == flights_.end()) return;  // given up before it arrived
    VirtualFlight& f = found->second;
    if (!f.abandon_kind.empty()) return;
    sim::RouteDecider& router = fleet_.router();
    const std::span<const sim::TokenId> tokens =
        router.needs_tokens() ? std::span<const sim::TokenId>(f.request.prompt)
                              : std::span<const sim::TokenId>{};
    fleet_.refresh_server_loads(now_);
    f.decision = router.pick(sim::RouteRequest{f.request.key, {}, tokens, f.request.epp_text}, {},
                             router_time(now_));
    router.on_routed(f.decision, router_time(now_));
    fleet_.note_routed(f.request.prompt, f.decision.replica);
    f.routed = true;
    f.replica = f.decision.replica;
    VirtualReplica& replica = fleet_.replica(f.replica);
    const sim::TimingProfile& profile = replica.profile();
    f.engine_id = replica.take_request_id();
    const int max_tokens = f.request.max_tokens.value_or(profile.default_max_tokens);
    const auto prompt_tokens = static_cast<std::int64_t>(f.request.prompt.size());
    if (f.request.error.empty() && prompt_tokens + max_tokens > profile.max_model_len) {
      f.request.error = context_too_long(profile.max_model_len, prompt_tokens, max_tokens,
                                         options_.endpoint == driver::LoadOptions::Endpoint::kChat);
    }
    if (!f.request.error.empty()) {  // answered at once; the router's count goes again
      f.error = f.request.error;
      f.server_done = true;
      router.on_finished(f.decision);
      f.status_client_s = now_ + latency_;
      events_.push(now_ + latency_, Payload{Kind::kAnswered, 0, index});
      return;
    }
    // The replica's text seed (replica_server.cc start()): its seed and its request number.
    f.piece_seed = (fleet_.seed() + static_cast<std::uint64_t>(f.replica)) * 0x9E3779B97F4A7C15ull +
                   f.engine_id;
    if (options_.stream) {
      // The stream's status line goes out as the request starts.
      f.status_client_s = now_ + latency_;
      notice_status(index, f);
    }
    by_engine_[static_cast<std::size_t>(f.replica)][f.engine_id] = index;
    replica.add(f.engine_id, std::move(f.request.prompt), max_tokens, f.request.ignore_eos, now_);
    f.request.prompt = {};
    if (!replica.stepping() && !start_posted_[static_cast<std::size_t>(f.replica)]) {
      start_posted_[static_cast<std::size_t>(f.replica)] = 1;
      events_.push(now_, Payload{Kind::kStepStart, f.replica});
    }
  }

  void start_step(int r) {
    if (const std::optional<double> end = fleet_.replica(r).start_step(now_)) {
      events_.push(*end, Payload{Kind::kStepEnd, r});
    }
  }

  void end_step(int r) {
    VirtualReplica& replica = fleet_.replica(r);
    auto& owners = by_engine_[static_cast<std::size_t>(r)];
    for (const sim::SeqResult& result : replica.finish_step(now_)) {
      const auto owner = owners.find(result.id);
      if (owner == owners.end()) continue;
      const std::int64_t index = owner->second;
      VirtualFlight& f = flights_.at(index);
      if (result.new_tokens > 0) {
        const double at = now_ + latency_;
        driver::RequestRecord& rec = record(index);
        if (f.tokens == 0) {
          fleet_.router().on_first_token(f.decision);  // the answer's first byte (chunk)
          rec.first_token_s = rel(at);
        } else {
          // To the microsecond, the profiles' resolution: a gap of whole-microsecond steps
          // stored as 70.123, not as the 17 digits its subtraction in seconds leaves, which on
          // a sweep of millions of tokens is most of what the store writes.
          rec.itl_ms.push_back(std::round((at - f.last_token_s) * 1e6) / 1e3);
        }
        f.tokens += result.new_tokens;
        f.last_token_s = at;
        if (f.wants_reply) f.reply += sim::generated_piece(f.piece_seed, result.output_tokens - 1);
      }
      if (!result.finished) continue;
      f.server_done = true;
      f.prompt_tokens = result.prompt_tokens;
      f.cached_tokens = result.cached_tokens;
      f.output_tokens = result.output_tokens;
      fleet_.router().on_finished(f.decision);
      owners.erase(owner);
      if (!options_.stream) {
        f.status_client_s = now_ + latency_;
        notice_status(index, f);
      }
      events_.push(now_ + latency_, Payload{Kind::kAnswered, 0, index});
    }
    start_step(r);
  }

  // A measured request's status line reached the client: the sweep scrapes at once then.
  void notice_status(std::int64_t index, const VirtualFlight& f) {
    if (underway_ || virtual_.sample_interval_s <= 0 || record(index).warmup) return;
    underway_ = true;
    ++sample_version_;  // the period restarts from this scrape
    events_.push(f.status_client_s, Payload{Kind::kSample, 0, 0, sample_version_});
  }

  void schedule_sample(double at_s) {
    events_.push(at_s, Payload{Kind::kSample, 0, 0, sample_version_});
  }

  void sample() {
    std::vector<store::MetricSample> during = fleet_samples(fleet_, "during", rel(now_));
    result_.samples.insert(result_.samples.end(), during.begin(), during.end());
  }

  // Steps still running after the last answer (their requests were cancelled): the GPU runs
  // them out; the fleet is left idle for the next run.
  void drain_steps() {
    while (!events_.empty()) {
      const auto event = events_.pop();
      if (event.payload.kind != Kind::kStepEnd && event.payload.kind != Kind::kStepStart) continue;
      advance(event.at_s);
      handle(event.payload);
    }
  }

  driver::Progress progress() const { return records_.progress(now_, source_.measured_start_s()); }

  double rel(double t_s) const { return records_.rel(t_s); }
  driver::RequestRecord& record(std::int64_t index) { return records_.at(index); }

  VirtualFleet& fleet_;
  const driver::LoadOptions& options_;
  const VirtualLoadOptions& virtual_;
  const std::function<void(const driver::Progress&)>& on_progress_;
  driver::RequestSource source_;
  const BodyPatch patch_;
  const double epoch_;
  VirtualRecords records_;
  const double latency_;
  const double send_cost_;
  double client_free_s_ = 0;  // when the client can send its next request
  double now_ = 0;
  EventQueue<Payload> events_;
  std::unordered_map<std::int64_t, VirtualFlight> flights_;
  std::vector<std::unordered_map<std::uint64_t, std::int64_t>> by_engine_;  // per replica
  std::vector<std::uint8_t> start_posted_;                                  // per replica
  std::deque<Deadline> deadlines_;             // sends are in time order: so are these
  std::deque<Deadline> first_byte_deadlines_;  // likewise
  std::optional<double> armed_wake_;
  bool underway_ = false;
  std::uint64_t sample_version_ = 0;
  double next_progress_s_ = 0;
  VirtualLoadResult result_;
};

}  // namespace

VirtualLoadResult run_virtual_load(
    VirtualFleet& fleet, const driver::LoadOptions& options, const driver::Workload& workload,
    const VirtualLoadOptions& virtual_options,
    const std::function<void(const driver::Progress&)>& on_progress) {
  driver::validate_load_options(options, workload);
  return VirtualRun(fleet, options, workload, virtual_options, on_progress).run();
}

}  // namespace kvsweep::predict
