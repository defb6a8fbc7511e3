// What a target ran and why it failed: the commands kept with each cell (kubectl calls, admin
// requests, gate polls) and the error that carries them.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kvsweep::orchestrator {

// One external command a target ran (a kubectl call, an admin request, a gate poll), kept
// with the cell it was run for.
struct CommandLog {
  std::string step;               // "apply", "gate resource", "gate pods", "cold", "discover"
  std::vector<std::string> argv;  // the full argv, kubectl first
  int exit_code = -1;             // -1: did not exit by itself (timeout, signal, not started)
  double seconds = 0;
  std::string out;  // stdout, cut to 64 KiB
  std::string err;  // stderr, cut to 64 KiB
};

using CommandLogs = std::vector<CommandLog>;

// A target failure with its context ("readiness gate pods: pod vllm-1: CrashLoopBackOff ...")
// and the commands the failing call ran before it gave up, so they are kept with the cell.
class TargetError : public std::runtime_error {
 public:
  explicit TargetError(const std::string& message, CommandLogs commands = {})
      : std::runtime_error(message), commands_(std::move(commands)) {}
  const CommandLogs& commands() const { return commands_; }

 private:
  CommandLogs commands_;
};

// Runs `body`, which appends every command it runs to the list it is given, and returns that
// list; a TargetError from `body` is thrown again with the list ahead of its own commands.
template <typename Body>
CommandLogs collect_commands(Body&& body) {
  CommandLogs commands;
  try {
    body(commands);
  } catch (const TargetError& e) {
    commands.insert(commands.end(), e.commands().begin(), e.commands().end());
    throw TargetError(e.what(), std::move(commands));
  }
  return commands;
}

}  // namespace kvsweep::orchestrator
