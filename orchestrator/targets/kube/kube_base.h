// What the three kubectl-driven targets (kubeai, dynamo, kubectl) share: the kubectl runner and
// its log, applies tried again on a transient answer, the resource and pods gates tied to the
// change just applied, the serving gates, replica discovery, cold caches, metrics URLs, and a
// look at the pods after each cell.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/targets/kube/kubectl.h"
#include "orchestrator/targets/kube/pod_gate.h"
#include "orchestrator/targets/planned_target.h"

namespace kvsweep::orchestrator::kube {

// Each public call returns every kubectl call it made; the kinds implement the do_ steps.
class KubeTarget : public PlannedTarget {
 public:
  CommandLogs start() final;
  // Reads the pods first when the treatment may restart them (so the gates can tell the pods
  // made after it), then the kind's do_apply.
  CommandLogs apply(const Treatment& t) final;
  CommandLogs wait_ready() final;
  // "reset": POST /reset_prefix_cache to every replica; "restart": delete the pods the target
  // restarts (pods_selector()) and wait for readiness again.
  CommandLogs make_cold() final;
  // The applied treatment's base_url, else target.base_url; target.metrics.urls when given,
  // else every discovered replica + target.metrics.path.
  Endpoints endpoints() const override;
  // The pods behind the replicas read again: a "health" log when they changed during the
  // cell (a rollout, a pod replaced or restarted), which changes what it measured.
  CommandLogs cell_finished() override;
  // An Indexed Job of shards in the target's namespace, through its kubectl.
  std::unique_ptr<ShardLauncher> shard_launcher(const ShardJobSettings& job) override;
  CommandLogs take_shard_commands() override { return kubectl_.take_logs(); }

  // The read of the pods (when the treatment may restart them), then planned_apply().
  std::vector<std::vector<std::string>> planned_commands(const Treatment* previous,
                                                         const Treatment& next) const final;
  std::vector<std::string> planned_gates(const Treatment* previous,
                                         const Treatment& next) const final;

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

  // Runs `attempt` (kubectl calls of an apply) again while the server's answer is a 409
  // Conflict or transient (5xx, 429, a timeout), pausing readiness.poll and doubling, within
  // readiness.resource of the first attempt. An attempt that reads before it writes reads again.
  void retrying(const std::function<void()>& attempt);

  // Gate "resource": polls `get_args` (`kubectl get <resource> -o json`) and, in the same poll,
  // the pods of watched_selector(): a pod that will not become Ready by itself fails the gate at
  // once, whatever the resource says; else `not_ready(object)` says why the resource is not
  // ready yet (nullopt: ready, and the change is observed), with what the pods are doing.
  void wait_resource(
      const std::vector<std::string>& get_args,
      const std::function<std::optional<std::string>(const nlohmann::json&)>& not_ready);
  // Gate "pods": the pods of pods_selector() are settled (PodsGate) for the change applied.
  void wait_pods();
  // Gates "models" and "completion" where the load goes (endpoints().base_url).
  void wait_serving();
  // Step "discover": the replica base URLs from the Ready pods of pods_selector().
  void discover_replicas();
  void set_replica_urls(std::vector<std::string> urls) { replica_urls_ = std::move(urls); }

  // After a cold cell's caches were emptied (either method): what else the kind restarts so
  // that nothing routes on a warm memory (llm-d's EPP and its prefix index).
  virtual void after_cold() {}

  // The pods the pods gate counts, discovery reads and a "restart" cold deletes; "" when the
  // target has none.
  virtual std::string pods_selector() const = 0;
  // The pods the resource gate reads at every poll (every pod of the deployment); by default
  // pods_selector().
  virtual std::string watched_selector() const { return pods_selector(); }
  // What applying `t` does to the pods of pods_selector(), known before applying it.
  virtual PodChange pod_change(const Treatment& t) const = 0;
  // What do_apply(t) runs, for `kvsweep plan`; and, one line per gate, what do_wait_ready
  // waits for after it.
  virtual std::vector<std::vector<std::string>> planned_apply(const Treatment* previous,
                                                              const Treatment& t) const = 0;
  virtual std::vector<std::string> planned_resource_gate(const Treatment& t) const = 0;
  virtual std::vector<std::string> planned_gates_after_pods(const Treatment& /*t*/) const {
    return {};
  }
  // What start(), apply() and wait_ready() do; each throws TargetError.
  virtual void do_start() = 0;
  virtual void do_apply(const Treatment& t) = 0;
  virtual void do_wait_ready() = 0;

  // The pods gate's description for `kvsweep plan`, after a change `change`.
  std::string planned_pods_gate(PodChange change) const;

  // A change applied live just answered (it restarts nothing, and nothing observable says when
  // the serving side has read it): settle_live_change() then waits until
  // readiness.live_settle has passed since this call, logging the wait as a "settle" step.
  void mark_live_change();
  void settle_live_change();
  // The settle's line for `kvsweep plan`; "" when readiness.live_settle is 0.
  std::string planned_live_settle() const;

 private:
  void absorb(std::vector<CommandLog> logs);
  // Runs `step` and returns the kubectl calls made since the last public call, in call
  // order; a TargetError from `step` is thrown again carrying them.
  CommandLogs collecting(const std::function<void()>& step);
  // The pods of `selector`, read with retries (step "apply" before a change, for the gates).
  std::vector<PodState> read_pods(const std::string& step, const std::string& selector);

  ScenarioSpec spec_;
  std::string kind_;
  Kubectl kubectl_;
  std::vector<CommandLog> logs_;  // calls of short-lived Kubectl runners, kept in call order
  std::vector<std::string> replica_urls_;
  std::string base_url_;  // where the load goes: the applied treatment's, else the target's
  // The change the gates wait for: what the last apply (or a cold restart) does to the pods,
  // and the uids of the pods there before it.
  PodChange change_ = PodChange::kNone;
  PodUids before_;
  std::vector<PodState> discovered_;  // the serving pods discovery found, for cell_finished
  std::optional<std::chrono::steady_clock::time_point> live_change_at_;  // mark_live_change()
};

// The kubectl settings of a target spec.
KubectlConfig kubectl_config(const TargetSpec& target);

// "30m", "10s", "0.2s": a time limit as `kvsweep plan` shows it.
std::string duration_text(double seconds);

}  // namespace kvsweep::orchestrator::kube
