// A coordinator's lifeline to the processes it starts: a pipe whose write end only the
// coordinator holds. However the coordinator ends, kill -9 included, the kernel closes that end
// and every process holding the read end reads end-of-file: a local shard then ends
// (driver::end_when_coordinator_goes), a Job's watcher deletes the Job (`kvsweep shard watch`).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace kvsweep::orchestrator {

// The descriptor a started process finds the lifeline's read end on (`--coordinator-fd 3`).
inline constexpr int kCoordinatorFd = 3;

class Lifeline {
 public:
  Lifeline();  // throws std::runtime_error when no pipe can be made
  ~Lifeline();
  Lifeline(const Lifeline&) = delete;
  Lifeline& operator=(const Lifeline&) = delete;

  // Starts `argv` (argv[0] a path, no PATH lookup, no shell) in a process group of its own (a
  // Ctrl-C at the terminal reaches the coordinator alone), stdin /dev/null, stdout and stderr
  // to `log` (created; "/dev/null" for none), the read end at kCoordinatorFd. Throws
  // std::runtime_error when it cannot be started.
  pid_t spawn(const std::vector<std::string>& argv, const std::string& log);

  // Says "the coordinator ended well" (one byte: a watcher then does nothing) and closes the
  // write end. Idempotent.
  void finish();
  // Closes the write end without a word, as a killed coordinator's kernel does. Idempotent.
  void cut();

 private:
  UniqueFd write_end_;
  UniqueFd read_end_;  // close-on-exec, above kCoordinatorFd: dup2 onto it always makes a new one
};

}  // namespace kvsweep::orchestrator
