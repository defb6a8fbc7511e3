// Where the model servers are and how a treatment is applied to them. The runner sees only this.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kvsweep::orchestrator {

// The levels of the factors a target applies (every factor but the load driver's), in the
// scenario's factor order: {{"strategy", "kv-aware"}}.
struct Treatment {
  std::vector<std::pair<std::string, std::string>> levels;

  // The level of `factor`, or nullptr when the treatment does not set it.
  const std::string* find(const std::string& factor) const {
    for (const auto& [name, level] : levels) {
      if (name == factor) return &level;
    }
    return nullptr;
  }
  bool operator==(const Treatment&) const = default;
};

// A target failure with its context ("readiness gate pods: pod vllm-1: CrashLoopBackOff ...").
class TargetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One external command a target ran, kept with the cell it was run for.
struct CommandLog {
  std::string step;               // "apply", "gate resource", "gate pods", "cold", "discover"
  std::vector<std::string> argv;  // the full argv, kubectl first
  int exit_code = -1;             // -1: did not exit by itself (timeout, signal, not started)
  double seconds = 0;
  std::string out;                // stdout, cut to 64 KiB
  std::string err;                // stderr, cut to 64 KiB
};

// Thread contract: called from the runner's thread only. Every method but describe() and
// planned_commands() may throw TargetError.
class Target {
 public:
  virtual ~Target() = default;
  virtual std::string describe() const = 0;  // "dynamo dgd/llama-70b in ns dynamo (4 workers)"
  virtual void start() = 0;                   // connect / bring up; before the first apply

  // What apply(t) would run, as full argv lists, in order; touches nothing. Targets that run
  // no command (sim, endpoints) return a description of the change as a one-word argv list,
  // e.g. {{"POST", "/admin/strategy", "{\"strategy\":\"prefix-hash\"}"}}.
  virtual std::vector<std::vector<std::string>> planned_commands(const Treatment& t) const = 0;

  // What apply(next) runs on top of planned_commands(next) when `previous` was applied before:
  // the sim's restart after a deploy-time change. Empty for targets whose apply does not depend
  // on what ran before (the cluster kinds redeploy, or not, on every apply alike).
  virtual std::vector<std::vector<std::string>> planned_redeploy(const Treatment& /*previous*/,
                                                                 const Treatment& /*next*/) const {
    return {};
  }

  // Applies the treatment: the whole treatment, not a diff against the previous one.
  virtual void apply(const Treatment& t) = 0;

  // The layered readiness gates after an apply, each with its own time limit: resource status,
  // Ready pod count (failing at once on ImagePullBackOff, CrashLoopBackOff, ...), /v1/models
  // lists the model, a 1-token completion answers. Throws TargetError whose message starts
  // "readiness gate <name>: " and says why.
  virtual void wait_ready() = 0;

  // Makes every replica's prefix cache cold for the next cell (target.cold_method).
  virtual void make_cold() = 0;

  virtual std::string base_url() const = 0;                   // what the load driver talks to
  virtual std::vector<std::string> metrics_urls() const = 0;  // every replica's /metrics

  // The commands run since the last call, oldest first; the log is emptied.
  virtual std::vector<CommandLog> take_logs() { return {}; }
};

}  // namespace kvsweep::orchestrator
