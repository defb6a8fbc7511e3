// TransferWorker: one event-loop thread carrying a load run's transfers over its curl lanes.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/unique_fd.h"
#include "driver/completion_queue.h"
#include "driver/lane_pool.h"
#include "driver/load_options.h"
#include "driver/request_record.h"
#include "driver/request_source.h"
#include "driver/stream_transfer.h"
#include "driver/transfer_lane.h"

namespace kvsweep::driver {

// What the workers of a run share; read-only once they run.
struct TransferContext {
  const LoadOptions* options = nullptr;
  TransferSettings settings;
  std::chrono::steady_clock::time_point epoch;  // set before the first submit()
  std::atomic<int>* underway = nullptr;         // 0 -> 1 at a measured request's status line
  CompletionQueue* done = nullptr;
  // Slot t receives worker t's thread CPU time (seconds) as its thread ends; read after the
  // join. Null: not measured.
  std::vector<double>* thread_cpu_s = nullptr;
};

// Thread contract: the constructor starts the thread; submit(), cancel() and stop() are called
// by the run thread; everything else happens on the worker's own thread, which owns its
// libcurl handles (none is ever touched by two threads). Per iteration the worker first reads
// what is ready (socket data, libcurl timers), then starts at most kStartsPerIteration new
// transfers and runs libcurl's immediate work for them (connecting), so opening thousands of
// connections cannot delay the tokens of streams already open by more than one such batch.
class TransferWorker {
 public:
  TransferWorker(const TransferContext& context, int thread);
  ~TransferWorker();  // cancels what is still in flight, stops and joins
  TransferWorker(const TransferWorker&) = delete;
  TransferWorker& operator=(const TransferWorker&) = delete;

  void submit(std::vector<Job>& jobs);  // empties `jobs`; each comes back as one TransferDone
  void cancel();  // every transfer ends as cancelled; jobs not yet sent come back unsent
  void stop();    // ends the thread once its transfers are done

 private:
  struct Flight {
    std::unique_ptr<StreamTransfer> transfer;
    RequestRecord record;
    TransferLane* lane = nullptr;
    std::uint64_t generation = 0;  // tells a stale first-byte deadline from a live one
    bool active = false;
    bool wants_reply = false;
  };
  struct Deadline {
    double at_s = 0;
    Flight* flight = nullptr;
    std::uint64_t generation = 0;
  };

  void run();
  void take_inbox();
  void start(Job job);
  Flight* acquire();
  void reap(TransferLane* lane);
  void retire(Flight* flight);
  void fail_to_start(Flight* flight, const std::string& why);
  void expire_first_byte_deadlines();
  void cancel_everything();
  void flush();
  int wait_ms() const;
  double now_s() const;

  const TransferContext& context_;
  const int thread_;
  UniqueFd epoll_fd_;
  UniqueFd wake_fd_;

  std::mutex inbox_mutex_;  // guards the three below
  std::vector<Job> inbox_;
  bool cancel_requested_ = false;
  bool stop_requested_ = false;

  // The worker thread's own state.
  CurlSlist headers_;
  std::vector<TransferLane*> run_now_;  // lanes whose run_timeouts() is due at once
  LanePool lanes_;
  std::deque<Job> pending_;  // received, not started
  std::vector<std::unique_ptr<Flight>> flights_;
  std::vector<Flight*> free_flights_;
  std::size_t active_ = 0;
  std::deque<Deadline> deadlines_;  // first-byte deadlines, in start order (one timeout)
  std::vector<TransferDone> outbox_;
  bool cancelled_ = false;
  bool stopping_ = false;
  bool underway_woken_ = false;
  std::thread thread_handle_;  // last: started once everything above exists
};

}  // namespace kvsweep::driver
