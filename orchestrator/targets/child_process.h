// Runs a program as an argv (never through a shell), with a timeout, capturing its output.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kvsweep::orchestrator {

struct ProcessResult {
  int exit_code = -1;      // the program's exit status; -1 when it did not exit by itself
  int signal = 0;          // the signal that ended it, 0 if none
  bool timed_out = false;  // killed because the deadline passed
  bool started = true;     // false when the program could not be executed at all
  std::string out;         // everything it wrote on stdout
  std::string err;         // everything it wrote on stderr (or why it could not start)
  bool ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
};

// argv[0] is looked up on PATH. The child gets its own process group; when the timeout passes
// the whole group gets SIGTERM, then SIGKILL a second later, and is reaped before returning:
// nothing outlives the call. `env` entries are set on top of the inherited environment.
ProcessResult run_process(const std::vector<std::string>& argv, double timeout_s,
                          const std::map<std::string, std::string>& env = {});

// How the argv reads in logs and `kvsweep plan`: words quoted only where a shell would need it.
std::string describe_argv(const std::vector<std::string>& argv);

}  // namespace kvsweep::orchestrator
