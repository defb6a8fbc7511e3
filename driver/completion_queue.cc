// CompletionQueue: finished transfers handed from the transfer threads to the run thread.
#include "driver/completion_queue.h"

#include <unistd.h>

#include "driver/event_fd.h"

namespace kvsweep::driver {

CompletionQueue::CompletionQueue() : fd_(make_eventfd("completion queue")) {}

CompletionQueue::~CompletionQueue() = default;

void CompletionQueue::push(std::vector<TransferDone>& batch) {
  bool was_empty = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    was_empty = queue_.empty();
    if (was_empty) {
      queue_.swap(batch);
    } else {
      for (TransferDone& done : batch) queue_.push_back(std::move(done));
    }
  }
  batch.clear();
  // Only the first item wakes the run thread: it takes everything queued by then.
  if (was_empty) signal_eventfd(fd_.get());
}

void CompletionQueue::wake() { signal_eventfd(fd_.get()); }

std::vector<TransferDone> CompletionQueue::take() {
  drain_eventfd(fd_.get());
  std::vector<TransferDone> taken;
  std::lock_guard<std::mutex> lock(mutex_);
  taken.swap(queue_);
  return taken;
}

}  // namespace kvsweep::driver
