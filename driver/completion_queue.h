// CompletionQueue: finished transfers handed from the transfer threads to the run thread.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "driver/request_record.h"

namespace kvsweep::driver {

// A job back from a worker: its record, filled in.
struct TransferDone {
  RequestRecord record;  // record.index is the job's index
  std::string reply;     // the generated text when the job wanted it (Job::wants_reply)
  int thread = 0;        // the worker that carried it
  bool sent = true;      // false: the run stopped before the job was handed to libcurl
};

// Where the workers put finished transfers for the run thread: a lock, and an eventfd that
// becomes readable when the queue turns non-empty (or on wake()), for the run thread's epoll.
class CompletionQueue {
 public:
  CompletionQueue();  // throws std::runtime_error when the eventfd cannot be made
  ~CompletionQueue();
  CompletionQueue(const CompletionQueue&) = delete;
  CompletionQueue& operator=(const CompletionQueue&) = delete;

  int fd() const { return fd_.get(); }
  void push(std::vector<TransferDone>& batch);  // any thread; empties `batch`
  void wake();                                  // any thread: makes fd() readable
  std::vector<TransferDone> take();             // run thread: everything queued, in order

 private:
  UniqueFd fd_;
  std::mutex mutex_;
  std::vector<TransferDone> queue_;
};

}  // namespace kvsweep::driver
