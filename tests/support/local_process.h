// A local process standing in for a container's: started from an argv (never a shell string)
// in a directory of its own, in a process group of its own, with an environment given whole.
// Used by the fake Job controller (tests/support/fake_jobs.h) for a pod's container and by the
// fake API server's `kubectl exec` (tests/support/exec_websocket.h).
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace kvsweep::testing {

// Everything a process is started with.
struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] looked up on the test process's PATH unless a path
  std::string cwd;
  std::map<std::string, std::string> env;  // the whole environment
  // Where stdout and stderr go: both to `output_path` (created, truncated) when it is not
  // empty, else to the pipe ends given (-1: /dev/null). stdin is always /dev/null.
  std::string output_path;
  int stdout_fd = -1;
  int stderr_fd = -1;
};

// The test process's environment with `extra` set on top.
std::map<std::string, std::string> environment_with(
    const std::map<std::string, std::string>& extra);

// argv with its first element replaced by binaries[argv[0]] when the map names it.
std::vector<std::string> map_binary(std::vector<std::string> argv,
                                    const std::map<std::string, std::string>& binaries);

// Starts the process (its own process group, pgid = pid). Returns its pid, or -1 with `error`
// set ("No such file or directory: foo") when it could not be started.
pid_t spawn_process(const ProcessSpec& spec, std::string& error);

// Sends `signal` to the process's group (the process and whatever it started).
void signal_group(pid_t pid, int signal);

// Blocks until the process has exited, without reaping it (its pid stays reserved, so a signal
// sent meanwhile cannot reach another process). Returns false on error (not our child).
bool wait_exited(pid_t pid);
// Whether it has exited, without blocking or reaping.
bool has_exited(pid_t pid);

// Reaps an exited process. Returns its exit code, or 128 + signal when a signal ended it (as a
// container runtime reports it: SIGKILL is 137).
int reap(pid_t pid);

}  // namespace kvsweep::testing
