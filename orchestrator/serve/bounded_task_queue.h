// kvsweep serve's worker pool for cpp-httplib: a fixed number of threads and a bounded queue
// of accepted connections, so a flood of clients waits in the kernel rather than in memory.
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kvsweep::orchestrator::serve {

// httplib's own ThreadPool (0.11) queues every accepted connection without limit. Here
// enqueue() blocks while max_queued connections already wait for a thread: httplib's accept
// loop stops accepting, and further clients wait in the listen backlog (or are refused by the
// kernel) until a thread frees, which the server's read timeout bounds.
// Thread contract: enqueue() and shutdown() from the accept loop's thread (httplib calls them
// there); jobs run on the pool's threads.
class BoundedTaskQueue : public httplib::TaskQueue {
 public:
  // threads >= 1; max_queued >= 1 (0 is taken as 1).
  BoundedTaskQueue(std::size_t threads, std::size_t max_queued);
  ~BoundedTaskQueue() override;
  BoundedTaskQueue(const BoundedTaskQueue&) = delete;
  BoundedTaskQueue& operator=(const BoundedTaskQueue&) = delete;

  void enqueue(std::function<void()> job) override;
  // Runs the queued jobs, then joins the threads; idempotent.
  void shutdown() override;

 private:
  void work();

  const std::size_t max_queued_;
  std::mutex mutex_;
  std::condition_variable job_ready_;
  std::condition_variable room_;
  std::deque<std::function<void()>> jobs_;
  bool shutting_down_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kvsweep::orchestrator::serve
