// TransferWorker: one event-loop thread carrying a load run's transfers over its curl lanes.
#include "driver/transfer_worker.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "common/duration.h"
#include "driver/event_fd.h"
#include "driver/request_body.h"
#include "driver/thread_cpu.h"

namespace kvsweep::driver {
namespace {

// New transfers started per loop iteration. libcurl connects a new transfer in the
// run_timeouts() that follows, so this bounds the connection setup done between two reads of
// the streams already open (the 10,000-user ramp of docs/performance.md).
constexpr int kStartsPerIteration = 32;
// Longest wait without a wake-up; every send and stop arrives through the eventfd anyway.
constexpr int kWorkerMaxWaitMs = 100;
constexpr std::size_t kMaxEvents = 512;

int make_epoll() {
  ensure_curl_global_init();  // before any thread touches libcurl
  const int fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (fd < 0) throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
  return fd;
}

}  // namespace

// ---- TransferWorker: run thread side ----

TransferWorker::TransferWorker(const TransferContext& context, int thread)
    : context_(context),
      thread_(thread),
      epoll_fd_(make_epoll()),
      lanes_(epoll_fd_.get(), &run_now_) {
  wake_fd_ = make_eventfd("transfer thread");  // epoll_fd_ closes itself if this throws
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = pack({EventKind::kWake, 0, wake_fd_.get()});
  ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, wake_fd_.get(), &event);
  headers_ = request_headers(context_.settings);
  thread_handle_ = std::thread([this] {
    run();
    if (context_.thread_cpu_s != nullptr) {
      (*context_.thread_cpu_s)[static_cast<std::size_t>(thread_)] = thread_cpu_seconds();
    }
  });
}

TransferWorker::~TransferWorker() {
  // A run normally ends with nothing in flight; on an exception it must not wait for streams.
  cancel();
  stop();
  thread_handle_.join();
}

void TransferWorker::submit(std::vector<Job>& jobs) {
  bool was_empty = false;
  {
    std::lock_guard<std::mutex> lock(inbox_mutex_);
    was_empty = inbox_.empty();
    for (Job& job : jobs) inbox_.push_back(std::move(job));
  }
  jobs.clear();
  if (was_empty) signal_eventfd(wake_fd_.get());
}

void TransferWorker::cancel() {
  {
    std::lock_guard<std::mutex> lock(inbox_mutex_);
    cancel_requested_ = true;
  }
  signal_eventfd(wake_fd_.get());
}

void TransferWorker::stop() {
  {
    std::lock_guard<std::mutex> lock(inbox_mutex_);
    stop_requested_ = true;
  }
  signal_eventfd(wake_fd_.get());
}

// ---- TransferWorker: its own thread ----

double TransferWorker::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - context_.epoch).count();
}

void TransferWorker::run() {
  std::array<epoll_event, kMaxEvents> events;
  while (true) {
    const int ready = ::epoll_wait(epoll_fd_.get(), events.data(), kMaxEvents, wait_ms());
    // Reading first: data of open streams, libcurl's timers, the inbox.
    for (int i = 0; i < ready; ++i) {
      const epoll_event& event = events[static_cast<std::size_t>(i)];
      const EventTag tag = unpack(event.data.u64);
      if (tag.kind == EventKind::kWake) {
        take_inbox();
        continue;
      }
      TransferLane* lane = lanes_.find(tag.lane);
      if (lane == nullptr) continue;
      if (tag.kind == EventKind::kTimer) {
        lane->on_timer();
      } else {
        lane->on_socket(tag.fd, event.events);
      }
      reap(lane);
    }
    if (cancelled_) cancel_everything();
    // Then connection setup, bounded per iteration.
    for (int i = 0; i < kStartsPerIteration && !pending_.empty(); ++i) {
      Job job = std::move(pending_.front());
      pending_.pop_front();
      start(std::move(job));
    }
    std::vector<TransferLane*> due;
    due.swap(run_now_);
    for (TransferLane* lane : due) {
      lane->run_timeouts();
      reap(lane);
    }
    expire_first_byte_deadlines();
    if (context_.underway != nullptr && !underway_woken_ &&
        context_.underway->load(std::memory_order_relaxed) == 1) {
      underway_woken_ = true;
      context_.done->wake();
    }
    flush();
    if (stopping_ && active_ == 0 && pending_.empty()) break;
  }
  // libcurl handles are released on the thread that used them: lanes first (every transfer
  // was removed), then the easy handles.
  lanes_.clear();
  flights_.clear();
}

int TransferWorker::wait_ms() const {
  if (!pending_.empty() || !run_now_.empty()) return 0;
  if (deadlines_.empty()) return kWorkerMaxWaitMs;
  const double wait_s = deadlines_.front().at_s - now_s();
  return static_cast<int>(
      std::clamp(std::ceil(wait_s * 1000.0), 0.0, static_cast<double>(kWorkerMaxWaitMs)));
}

void TransferWorker::take_inbox() {
  drain_eventfd(wake_fd_.get());
  std::vector<Job> jobs;
  {
    std::lock_guard<std::mutex> lock(inbox_mutex_);
    jobs.swap(inbox_);
    if (cancel_requested_) cancelled_ = true;
    if (stop_requested_) stopping_ = true;
  }
  for (Job& job : jobs) pending_.push_back(std::move(job));
}

TransferWorker::Flight* TransferWorker::acquire() {
  if (!free_flights_.empty()) {
    Flight* flight = free_flights_.back();
    free_flights_.pop_back();
    return flight;
  }
  auto flight = std::make_unique<Flight>();
  flight->transfer = std::make_unique<StreamTransfer>(context_.settings, headers_, context_.epoch);
  curl_easy_setopt(flight->transfer->easy().get(), CURLOPT_PRIVATE, flight.get());
  flights_.push_back(std::move(flight));
  return flights_.back().get();
}

void TransferWorker::start(Job job) {
  const LoadOptions& options = *context_.options;
  Flight* flight = acquire();
  RequestRecord& record = flight->record;
  record = RequestRecord{};
  record.index = job.index;
  record.worker = std::max(job.user, 0);
  record.conversation = job.conversation;
  record.turn = job.turn;
  record.prompt_hash = job.prompt_hash;
  record.warmup = job.warmup;
  record.scheduled_s = job.scheduled_s;
  flight->wants_reply = job.wants_reply;
  try {
    ChatRequest chat;
    chat.model = options.model;
    chat.messages = std::move(job.messages);
    chat.max_tokens = job.max_tokens;
    chat.ignore_eos = options.ignore_eos;
    chat.stream = options.stream;
    chat.temperature = options.temperature;
    chat.extra_body_json = options.extra_body_json;
    std::string body = options.endpoint == LoadOptions::Endpoint::kChat
                           ? chat_request_body(chat)
                           : completion_request_body(chat);
    TransferLane* lane = lanes_.pick();
    flight->transfer->begin(std::move(body), job.wants_reply || options.keep_response_text,
                            lane->connections(), job.warmup ? nullptr : context_.underway);
    flight->lane = lane;
    ++flight->generation;
    record.sent_s = now_s();
    if (job.scheduled_s >= 0) {
      record.schedule_lag_ms = std::max(0.0, record.sent_s - job.scheduled_s) * 1000.0;
    }
    lane->add(flight->transfer->easy().get());
  } catch (const std::exception& e) {
    fail_to_start(flight, e.what());
    return;
  }
  flight->active = true;
  ++active_;
  if (options.first_byte_timeout_s > 0) {
    deadlines_.push_back(
        {record.sent_s + options.first_byte_timeout_s, flight, flight->generation});
  }
}

// The transfer could not be handed to libcurl (no descriptor for a new lane's timer, no
// memory): a failure of the client, recorded as such, and the run goes on.
void TransferWorker::fail_to_start(Flight* flight, const std::string& why) {
  RequestRecord& record = flight->record;
  if (record.sent_s == 0) record.sent_s = now_s();
  record.ended_s = now_s();
  record.ok = false;
  record.error_kind = kErrorClientResources;
  record.error = "could not start the request: " + why;
  TransferDone done;
  done.record = std::move(record);
  done.thread = thread_;
  outbox_.push_back(std::move(done));
  free_flights_.push_back(flight);
}

void TransferWorker::reap(TransferLane* lane) {
  while (const std::optional<CurlDone> done = lane->next_done()) {
    Flight* flight = nullptr;
    curl_easy_getinfo(done->easy, CURLINFO_PRIVATE, &flight);
    if (flight == nullptr || !flight->active) continue;
    flight->transfer->finish(done->result, flight->record);
    retire(flight);
  }
}

void TransferWorker::retire(Flight* flight) {
  RequestRecord& record = flight->record;
  record.ended_s = now_s();
  TransferLane* lane = flight->lane;
  lane->remove(flight->transfer->easy().get());
  flight->active = false;
  --active_;
  TransferDone done;
  if (flight->wants_reply) done.reply = flight->transfer->reply_text();
  if (!context_.options->keep_response_text) std::string().swap(record.response_text);
  done.record = std::move(record);
  done.thread = thread_;
  outbox_.push_back(std::move(done));
  lanes_.on_transfer_removed(lane);
  free_flights_.push_back(flight);
}

// Deadlines are pushed in start order with one timeout, so they are sorted: check the front.
void TransferWorker::expire_first_byte_deadlines() {
  if (deadlines_.empty()) return;
  const double now = now_s();
  while (!deadlines_.empty() && deadlines_.front().at_s <= now) {
    const Deadline deadline = deadlines_.front();
    deadlines_.pop_front();
    Flight* flight = deadline.flight;
    if (!flight->active || flight->generation != deadline.generation ||
        flight->transfer->got_first_byte()) {
      continue;
    }
    RequestRecord& record = flight->record;
    flight->transfer->keep_response_so_far(record);
    record.ok = false;
    record.error_kind = kErrorTimeout;
    record.error = "first byte timeout: no response within " +
                   format_duration_s(context_.options->first_byte_timeout_s) + " of the send";
    retire(flight);
  }
}

void TransferWorker::cancel_everything() {
  for (const std::unique_ptr<Flight>& flight : flights_) {
    if (!flight->active) continue;
    RequestRecord& record = flight->record;
    flight->transfer->keep_response_so_far(record);  // the status it had received
    record.ok = false;
    record.error_kind = kErrorCancelled;
    record.error = "run stopped before the response completed";
    retire(flight.get());
  }
  for (Job& job : pending_) {
    TransferDone done;
    done.record.index = job.index;
    done.thread = thread_;
    done.sent = false;
    outbox_.push_back(std::move(done));
  }
  pending_.clear();
}

void TransferWorker::flush() {
  if (!outbox_.empty()) context_.done->push(outbox_);
}

}  // namespace kvsweep::driver
