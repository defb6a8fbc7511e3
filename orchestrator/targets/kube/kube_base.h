// What the three kubectl-driven targets (kubeai, dynamo, kubectl) share: the kubectl runner and
// its log, the pods gate, the serving gates, replica discovery, cold caches, metrics URLs.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/targets/kube/kubectl.h"
#include "orchestrator/targets/planned_target.h"

namespace kvsweep::orchestrator::kube {

// Each public call returns every kubectl call it made; the kinds implement the do_ steps.
class KubeTarget : public PlannedTarget {
 public:
  CommandLogs start() final;
  CommandLogs apply(const Treatment& t) final;
  CommandLogs wait_ready() final;
  // "reset": POST /reset_prefix_cache to every replica; "restart": delete the pods the target
  // restarts (restart_selector()) and wait for readiness again.
  CommandLogs make_cold() final;
  // The applied treatment's base_url, else target.base_url; target.metrics.urls when given,
  // else every discovered replica + target.metrics.path.
  Endpoints endpoints() const override;

 protected:
  // Checks what every kubectl kind needs (target.base_url, target.cold_method). kubectl calls
  // and gate polls are logged at debug level on `log`.
  KubeTarget(const ScenarioSpec& spec, std::string kind, Log log);

  const ScenarioSpec& spec() const { return spec_; }
  const TargetSpec& target() const { return spec_.target; }
  const std::string& kind() const { return kind_; }
  Kubectl& kubectl() { return kubectl_; }
  spdlog::logger& log() const { return *kubectl_.log(); }
  // The full argv of a kubectl call, for planned_commands().
  std::vector<std::string> kubectl_argv(const std::vector<std::string>& args) const {
    return kubectl_.argv(args);
  }

  // `kubectl get ... -o json` for a gate's poll: nullopt with `failure` set when the call
  // fails, since a gate keeps polling through an API server hiccup until its own timeout.
  std::optional<nlohmann::json> poll_json(const std::string& step,
                                          const std::vector<std::string>& args,
                                          std::string& failure);

  // run_ok under a timeout other than target.command_timeout_s (a user's `kubectl wait`).
  std::string run_ok_with_timeout(const std::string& step, const std::vector<std::string>& args,
                                  const std::string& what, double timeout_s);

  // Gate "pods": exactly target.replicas Ready pods match `selector` (at least 1 when 0).
  void wait_pods(const std::string& selector);
  // Gates "models" and "completion" where the load goes (endpoints().base_url).
  void wait_serving();
  // Step "discover": the replica base URLs from the Ready pods matching `selector`.
  void discover_replicas(const std::string& selector);
  void set_replica_urls(std::vector<std::string> urls) { replica_urls_ = std::move(urls); }

  // The pods a "restart" cold deletes; "" when the target has none to delete.
  virtual std::string restart_selector() const = 0;
  // What start(), apply() and wait_ready() do; each throws TargetError.
  virtual void do_start() = 0;
  virtual void do_apply(const Treatment& t) = 0;
  virtual void do_wait_ready() = 0;

 private:
  void absorb(std::vector<CommandLog> logs);
  // Runs `step` and returns the kubectl calls made since the last public call, in call
  // order; a TargetError from `step` is thrown again carrying them.
  CommandLogs collecting(const std::function<void()>& step);

  ScenarioSpec spec_;
  std::string kind_;
  Kubectl kubectl_;
  std::vector<CommandLog> logs_;  // calls of short-lived Kubectl runners, kept in call order
  std::vector<std::string> replica_urls_;
  std::string base_url_;  // where the load goes: the applied treatment's, else the target's
};

// The kubectl settings of a target spec.
KubectlConfig kubectl_config(const TargetSpec& target);

}  // namespace kvsweep::orchestrator::kube
