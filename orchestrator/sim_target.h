// The embedded target: a simulated fleet started in this process on loopback.
#pragma once

#include <memory>
#include <string>

#include "orchestrator/scenario_spec.h"
#include "orchestrator/target.h"
#include "sim/fleet.h"

namespace kvsweep::orchestrator {

class SimTarget : public Target {
 public:
  SimTarget(const TargetSpec& target, const std::string& model, std::uint64_t seed);
  ~SimTarget() override;

  std::string describe() const override;
  void start() override;
  // Switches the router's strategy through its admin API, as kubectl patch would.
  void apply(const Treatment& treatment) override;
  void wait_ready(std::chrono::steady_clock::time_point deadline) override;
  void reset_prefix_cache() override;
  std::string base_url() const override;
  std::vector<std::string> metrics_urls() const override;

 private:
  TargetSpec spec_;
  std::string model_;
  sim::Fleet fleet_;
};

}  // namespace kvsweep::orchestrator
