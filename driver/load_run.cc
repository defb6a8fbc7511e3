// run_load: one load run; the run thread paces a RequestSource, transfer threads carry requests.
#include "driver/load_run.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>

#include "common/base_url.h"
#include "common/unique_fd.h"
#include "driver/descriptor_budget.h"
#include "driver/log_histogram.h"
#include "driver/over_capacity_monitor.h"
#include "driver/pacer.h"
#include "driver/request_source.h"
#include "driver/thread_cpu.h"
#include "driver/transfer_worker.h"

namespace kvsweep::driver {
namespace {

using Clock = std::chrono::steady_clock;

// Upper bound on one wait of the run thread, so the stop flag and the progress line are
// noticed even when nothing happens. Sends never wait on it: the pacer's timerfd wakes the
// thread at each scheduled time.
constexpr int kMaxWaitMs = 50;
constexpr double kProgressPeriodS = 1.0;
constexpr std::uint64_t kPacerTag = 1;
constexpr std::uint64_t kDoneTag = 2;

std::string endpoint_url(const std::string& base_url, LoadOptions::Endpoint endpoint) {
  return normalize_base_url(base_url) +
         (endpoint == LoadOptions::Endpoint::kChat ? "/v1/chat/completions" : "/v1/completions");
}

TransferSettings transfer_settings(const LoadOptions& options) {
  TransferSettings settings;
  settings.url = endpoint_url(options.base_url, options.endpoint);
  settings.api_key = options.api_key;
  settings.headers = options.headers;
  settings.stream = options.stream;
  settings.connect_timeout_s = options.connect_timeout_s;
  settings.timeout_s = options.request_timeout_s;
  settings.new_connection = options.new_connection_per_request;
  settings.max_event_bytes = options.max_event_bytes;
  return settings;
}

// The run thread's wait set: the pacer and the completion queue.
class RunWaiter {
 public:
  RunWaiter(int pacer_fd, int done_fd) : fd_(::epoll_create1(EPOLL_CLOEXEC)) {
    if (!fd_) throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
    add(pacer_fd, kPacerTag);
    add(done_fd, kDoneTag);
  }

  // Waits up to max_wait_ms; true when the pacer fired.
  bool wait(int max_wait_ms) {
    std::array<epoll_event, 2> events;
    const int ready = ::epoll_wait(fd_.get(), events.data(), 2, max_wait_ms);
    for (int i = 0; i < ready; ++i) {
      if (events[static_cast<std::size_t>(i)].data.u64 == kPacerTag) return true;
    }
    return false;  // EINTR (a signal: the caller checks its stop flag) or completions
  }

 private:
  void add(int fd, std::uint64_t tag) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = tag;
    if (::epoll_ctl(fd_.get(), EPOLL_CTL_ADD, fd, &event) != 0) {
      throw std::runtime_error(std::string("epoll_ctl: ") + std::strerror(errno));
    }
  }
  UniqueFd fd_;
};

// One run. The run thread owns the RequestSource (the schedule is computed once, here, however
// many threads carry the transfers), the pacer and the records; transfer threads own every
// libcurl handle. Invariant: a job is in flight (counted in in_flight_) from its submit to its
// TransferDone; its record's slot exists from the submit and is filled at the TransferDone.
class LoadRun {
 public:
  LoadRun(const LoadOptions& options, const Workload& workload,
          const std::function<void(const Progress&)>& on_progress)
      : options_(options),
        on_progress_(on_progress),
        source_(options, workload),
        thread_count_(transfer_threads(options, workload)),
        waiter_(pacer_.fd(), done_.fd()) {
    context_.options = &options_;
    context_.settings = transfer_settings(options);
    context_.done = &done_;
    thread_cpu_s_.assign(static_cast<std::size_t>(thread_count_), 0.0);
    context_.thread_cpu_s = &thread_cpu_s_;
    if (options_.on_measured_underway) context_.underway = &underway_;
    in_flight_by_thread_.assign(static_cast<std::size_t>(thread_count_), 0);
    if (options.num_requests > 0 && options.duration_s == 0) {
      result_.records.reserve(
          static_cast<std::size_t>(options.num_requests + options.warmup_requests));
    }
    batches_.resize(static_cast<std::size_t>(thread_count_));
    if (options.stop_when_over_capacity && source_.open_loop()) monitor_.emplace();
  }

  LoadResult run() {
    epoch_ = Clock::now();
    context_.epoch = epoch_;
    for (int t = 0; t < thread_count_; ++t) {
      workers_.push_back(std::make_unique<TransferWorker>(context_, t));
    }
    result_.epoch_steady_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(epoch_.time_since_epoch()).count();
    result_.epoch_wall_s =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    const double cpu_at_start_s = thread_cpu_seconds();
    double next_progress_s = kProgressPeriodS;
    while (true) {
      if (!stopping_ && options_.stop != nullptr && options_.stop->load()) {
        stopping_ = true;
        result_.interrupted = true;
        for (const auto& worker : workers_) worker->cancel();
      }
      check_over_capacity();
      take_completions();
      notice_measured_underway();
      if (!stopping_) dispatch();
      if ((stopping_ || source_.exhausted()) && in_flight_ == 0) break;
      // A wake-up already due (the clock passed it while dispatching) needs no wait.
      if (arm_pacer() > now_s() && waiter_.wait(kMaxWaitMs)) pacer_.acknowledge();
      if (on_progress_ && now_s() >= next_progress_s) {
        on_progress_(progress());
        next_progress_s = now_s() + kProgressPeriodS;
      }
    }
    workers_.clear();  // stops and joins every transfer thread
    drop_unsent();
    finish_driver_self(thread_cpu_seconds() - cpu_at_start_s);
    if (on_progress_) on_progress_(progress());
    return std::move(result_);
  }

 private:
  double now_s() const { return std::chrono::duration<double>(Clock::now() - epoch_).count(); }

  // Hands every job the source has now to a transfer thread: a closed-loop user always to the
  // same one (its keep-alive connection lives there), open-loop jobs to the least busy.
  void dispatch() {
    const double now = now_s();
    while (std::optional<Job> job = source_.next(now)) {
      std::size_t thread = 0;
      if (job->user >= 0) {
        thread = static_cast<std::size_t>(job->user % thread_count_);
      } else {
        thread = static_cast<std::size_t>(
            std::min_element(in_flight_by_thread_.begin(), in_flight_by_thread_.end()) -
            in_flight_by_thread_.begin());
      }
      ++in_flight_by_thread_[thread];
      ++in_flight_;
      if (monitor_ && !job->warmup) monitor_->sent(job->index, now);
      result_.records.emplace_back();
      ready_s_.push_back(job->ready_s);
      run_index_.push_back(job->run_index);
      batches_[thread].push_back(std::move(*job));
    }
    for (std::size_t t = 0; t < batches_.size(); ++t) {
      if (!batches_[t].empty()) workers_[t]->submit(batches_[t]);
    }
    if (monitor_) monitor_->backlog(now, source_.waiting());
  }

  void take_completions() {
    std::vector<TransferDone> batch = done_.take();
    if (batch.empty()) return;
    const double now = now_s();
    for (TransferDone& done : batch) {
      --in_flight_;
      --in_flight_by_thread_[static_cast<std::size_t>(done.thread)];
      const auto index = static_cast<std::size_t>(done.record.index);
      if (monitor_) {
        monitor_->ended(done.record.index, done.record.ended_s >= 0 ? done.record.ended_s : now);
      }
      if (!done.sent) {
        unsent_.push_back(index);
        continue;
      }
      count(done.record);
      if (!stopping_) {
        source_.complete(done.record.index, done.record.ok, now, std::move(done.reply),
                         done.record.ended_s >= 0 ? done.record.ended_s : now);
      }
      result_.records[index] = std::move(done.record);
    }
  }

  // Jobs the stop caught before they reached libcurl were never requests: no record. A whole
  // run's records are numbered again from 0; a shard's keep their one-process run indices.
  void drop_unsent() {
    if (options_.shard.count > 1) {
      for (std::size_t i = 0; i < result_.records.size(); ++i) {
        result_.records[i].index = run_index_[i];
      }
    }
    if (unsent_.empty()) return;
    std::sort(unsent_.begin(), unsent_.end());
    std::vector<RequestRecord> kept;
    kept.reserve(result_.records.size() - unsent_.size());
    std::size_t u = 0;
    for (std::size_t i = 0; i < result_.records.size(); ++i) {
      if (u < unsent_.size() && unsent_[u] == i) {
        ++u;
        continue;
      }
      kept.push_back(std::move(result_.records[i]));
      if (options_.shard.count == 1) kept.back().index = static_cast<std::int64_t>(kept.size() - 1);
    }
    result_.records = std::move(kept);
  }

  // Arms the pacer at the source's next wake-up and returns it (infinity when there is none).
  double arm_pacer() {
    const std::optional<double> wake = stopping_ ? std::nullopt : source_.wake_s();
    if (wake != armed_s_) {
      armed_s_ = wake;
      if (wake) {
        // Rounded up: a timer that fires a nanosecond early would find the job not yet due.
        pacer_.arm_at(epoch_ +
                      std::chrono::ceil<Clock::duration>(std::chrono::duration<double>(*wake)));
      } else {
        pacer_.disarm();
      }
    }
    return wake.value_or(std::numeric_limits<double>::infinity());
  }

  // Fires LoadOptions::on_measured_underway once, on this thread, after a transfer thread saw
  // the first status line of a measured request.
  void notice_measured_underway() {
    if (context_.underway == nullptr || underway_.load(std::memory_order_relaxed) != 1) return;
    underway_.store(2, std::memory_order_relaxed);
    options_.on_measured_underway();
  }

  void count(const RequestRecord& record) {
    if (record.warmup) return;
    ++measured_done_;
    const double ready_s = ready_s_[static_cast<std::size_t>(record.index)];
    send_delay_ms_.add(std::max(0.0, record.sent_s - ready_s) * 1000.0);
    send_delay_max_ms_ = std::max(send_delay_max_ms_, (record.sent_s - ready_s) * 1000.0);
    first_ready_s_ = std::min(first_ready_s_, ready_s);
    last_ready_s_ = std::max(last_ready_s_, ready_s);
    first_sent_s_ = std::min(first_sent_s_, record.sent_s);
    last_sent_s_ = std::max(last_sent_s_, record.sent_s);
    if (!record.ok) {
      ++measured_failed_;
    } else if (record.first_token_s >= 0) {
      ttft_ms_.add(record.ttft_ms);
    }
  }

  // LoadOptions::stop_when_over_capacity: ends the run as done once the backlog or the
  // requests in flight say the open loop outruns the servers; requests in flight are cancelled.
  void check_over_capacity() {
    if (!monitor_ || stopping_) return;
    const std::optional<std::string> reason = monitor_->check(now_s(), source_.measured_start_s());
    if (!reason) return;
    stopping_ = true;
    result_.driver.stopped_over_capacity = true;
    result_.driver.stop_reason = *reason;
    for (const auto& worker : workers_) worker->cancel();
  }

  void finish_driver_self(double run_thread_cpu_s) {
    DriverSelf& self = result_.driver;
    self.measured = true;
    self.threads = thread_count_;
    self.cores = usable_cores();
    self.wall_s = now_s();
    self.cpu_s = run_thread_cpu_s;
    for (double cpu_s : thread_cpu_s_) self.cpu_s += cpu_s;
    self.send_delay_count = send_delay_ms_.count();
    if (self.send_delay_count > 0) {
      self.send_delay_p50_ms = send_delay_ms_.percentile(50);
      self.send_delay_p99_ms = send_delay_ms_.percentile(99);
      self.send_delay_max_ms = std::max(0.0, send_delay_max_ms_);
      self.ready_span_s = last_ready_s_ - first_ready_s_;
      self.sent_span_s = last_sent_s_ - first_sent_s_;
      self.first_ready_s = first_ready_s_;
      self.first_sent_s = first_sent_s_;
    }
  }

  Progress progress() const {
    Progress progress;
    progress.done = measured_done_;
    progress.total = options_.num_requests;
    progress.failed = measured_failed_;
    const double start_s = source_.measured_start_s();
    progress.elapsed_s = start_s >= 0 ? std::max(0.0, now_s() - start_s) : 0;
    progress.requests_per_s =
        progress.elapsed_s > 0 ? static_cast<double>(measured_done_) / progress.elapsed_s : 0;
    progress.p50_ttft_ms = ttft_ms_.percentile(50);
    progress.p95_ttft_ms = ttft_ms_.percentile(95);
    return progress;
  }

  const LoadOptions& options_;
  const std::function<void(const Progress&)>& on_progress_;
  RequestSource source_;
  const int thread_count_;
  Pacer pacer_;
  CompletionQueue done_;
  RunWaiter waiter_;
  std::atomic<int> underway_{0};
  TransferContext context_;
  Clock::time_point epoch_;
  LoadResult result_;
  std::optional<double> armed_s_;
  std::size_t in_flight_ = 0;
  std::vector<std::size_t> in_flight_by_thread_;
  std::vector<std::vector<Job>> batches_;
  std::vector<std::size_t> unsent_;
  bool stopping_ = false;
  std::int64_t measured_done_ = 0;
  std::int64_t measured_failed_ = 0;
  LogHistogram ttft_ms_;
  // DriverSelf: when each job became ready (by index), its send delays, the spans.
  std::vector<double> ready_s_;
  std::vector<std::int64_t> run_index_;  // by job index: LoadOptions::shard's run index
  std::vector<double> thread_cpu_s_;
  LogHistogram send_delay_ms_;
  double send_delay_max_ms_ = 0;
  double first_ready_s_ = std::numeric_limits<double>::infinity();
  double last_ready_s_ = -std::numeric_limits<double>::infinity();
  double first_sent_s_ = std::numeric_limits<double>::infinity();
  double last_sent_s_ = -std::numeric_limits<double>::infinity();
  std::optional<OverCapacityMonitor> monitor_;
  // Last: destroyed first, so the threads stop before anything they read goes away.
  std::vector<std::unique_ptr<TransferWorker>> workers_;
};

}  // namespace

LoadResult run_load(const LoadOptions& options, const Workload& workload,
                    const std::function<void(const Progress&)>& on_progress) {
  validate_load_options(options, workload);
  check_descriptor_budget(options, workload);
  return LoadRun(options, workload, on_progress).run();
}

}  // namespace kvsweep::driver
