// Where the model servers are and how a treatment is applied to them: the seam the runner
// sees, after mlcommons loadgen's SystemUnderTest. The runner never learns kubectl exists.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/scenario/treatment.h"
#include "orchestrator/targets/shards/shard_launcher.h"

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

// Where the load goes and where the servers' metrics are.
struct Endpoints {
  std::string base_url;                   // what the load driver talks to (no trailing /v1)
  std::vector<std::string> metrics_urls;  // every replica's /metrics
};

// Thread contract: one thread (the runner's) calls every method, never two at once, in this
// order: start() once; then, per deployment, apply() and wait_ready(); per cell, make_cold()
// when the cell starts cold, endpoints() and, once its load is done, cell_finished(). Each
// call blocks until done (a readiness gate waits up to its own time limit) and returns the
// commands it ran, oldest first; on failure it throws TargetError carrying them.
class Target {
 public:
  virtual ~Target() = default;

  virtual std::string describe() const = 0;  // "dynamo dgd/llama-70b in ns dynamo (4 workers)"

  // Connects or brings the servers up; touches no deployment.
  virtual CommandLogs start() = 0;

  // Applies the whole treatment, not a diff against the previous one.
  virtual CommandLogs apply(const Treatment& t) = 0;

  // The layered readiness gates after an apply, each with its own time limit: resource status,
  // Ready pod count (failing at once on ImagePullBackOff, CrashLoopBackOff, ...), /v1/models
  // lists the model, a 1-token completion answers. Throws TargetError whose message starts
  // "readiness gate <name>: " and says why.
  virtual CommandLogs wait_ready() = 0;

  // Makes every replica's prefix cache cold for the next cell (target.cold_method).
  virtual CommandLogs make_cold() = 0;

  // Where the load goes now; never throws.
  virtual Endpoints endpoints() const = 0;

  // What the target saw during the cell that changes what it measured: kvsweep's router
  // taking a replica out of routing or putting it back (one "health" log, one line per
  // event). Never throws: a failed query is itself a log. Most kinds see nothing.
  virtual CommandLogs cell_finished() { return {}; }

  // Where a sharded cell's shards run (load.shards; docs/driver.md, "Load shards"): nullptr,
  // the default, runs them as local processes; a Kubernetes target makes them an Indexed Job
  // in its namespace, with its kubectl (its calls join the cell's commands).
  virtual std::unique_ptr<ShardLauncher> shard_launcher(const ShardJobSettings& /*job*/) {
    return nullptr;
  }
  // The commands the shards' launcher ran for the cell so far, oldest first.
  virtual CommandLogs take_shard_commands() { return {}; }
};

}  // namespace kvsweep::orchestrator
