// Where the model servers are and how a treatment is applied to them. The runner sees only this.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvsweep::orchestrator {

struct Treatment {
  std::string strategy;
};

// A target failure with its context ("applying strategy=prefix-hash: HTTP 400: ...").
class TargetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thread contract: called from the runner's thread only. Methods throw TargetError.
class Target {
 public:
  virtual ~Target() = default;
  virtual std::string describe() const = 0;        // "sim x4 (demo)"
  virtual void start() = 0;                         // bring the target up
  virtual void apply(const Treatment& treatment) = 0;
  // Returns once the target serves the model; throws naming the gate that failed.
  virtual void wait_ready(std::chrono::steady_clock::time_point deadline) = 0;
  virtual void reset_prefix_cache() = 0;            // cold cache for the next cell
  virtual std::string base_url() const = 0;         // what the load driver talks to
  virtual std::vector<std::string> metrics_urls() const = 0;  // each replica's /metrics
};

}  // namespace kvsweep::orchestrator
