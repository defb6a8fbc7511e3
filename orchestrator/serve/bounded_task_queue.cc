// kvsweep serve's worker pool: fixed threads, a bounded queue, enqueue() waits for room.
#include "orchestrator/serve/bounded_task_queue.h"

#include <algorithm>

namespace kvsweep::orchestrator::serve {

BoundedTaskQueue::BoundedTaskQueue(std::size_t threads, std::size_t max_queued)
    : max_queued_(std::max<std::size_t>(max_queued, 1)) {
  threads_.reserve(std::max<std::size_t>(threads, 1));
  for (std::size_t i = 0; i < std::max<std::size_t>(threads, 1); ++i) {
    threads_.emplace_back([this] { work(); });
  }
}

BoundedTaskQueue::~BoundedTaskQueue() { shutdown(); }

void BoundedTaskQueue::enqueue(std::function<void()> job) {
  std::unique_lock<std::mutex> lock(mutex_);
  room_.wait(lock, [this] { return jobs_.size() < max_queued_ || shutting_down_; });
  jobs_.push_back(std::move(job));
  lock.unlock();
  job_ready_.notify_one();
}

void BoundedTaskQueue::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    shutting_down_ = true;
  }
  job_ready_.notify_all();
  room_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void BoundedTaskQueue::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      job_ready_.wait(lock, [this] { return !jobs_.empty() || shutting_down_; });
      // A connection already accepted is served even while shutting down: httplib closes it.
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    room_.notify_one();
    job();
  }
}

}  // namespace kvsweep::orchestrator::serve
