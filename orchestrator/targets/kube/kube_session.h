// What the kubectl-driven targets (kubeai, dynamo, llmd, kubectl) share, as one object each of
// them holds: the kubectl runner and its log, applies tried again on a transient answer, the
// resource and pods gates tied to the change just applied, the serving gates, replica
// discovery, cold caches, metrics URLs, a look at the pods after each cell, and the Indexed
// Job its sharded cells run in. KubeKindTarget (kube_kind_target.h) holds one and calls these
// steps around a kind's own; nothing here is overridden.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/scenario/treatment.h"
#include "orchestrator/targets/command_log.h"
#include "orchestrator/targets/kube/kubectl.h"
#include "orchestrator/targets/kube/pod_gate.h"
#include "orchestrator/targets/shards/shard_placement.h"
#include "orchestrator/targets/target.h"

namespace kvsweep::orchestrator::kube {

// Full argv lists, in the order they run.
using Argvs = std::vector<std::vector<std::string>>;

// What `kvsweep plan` prints for a kind's gates after an apply, in the order they open.
struct GatePlan {
  std::vector<std::string> resource;    // the resource gate's line(s)
  std::string pods_selector;            // the pods gate's pods; "" when the kind has none
  PodChange change = PodChange::kNone;  // what the apply does to them
  std::vector<std::string> after_pods;  // the kind's own gates after the pods gate
};

// Thread contract: the target's (the runner's) thread only. The steps (begin_change, cold,
// wait_*, discover_replicas, ...) run inside collect(), which returns every kubectl call they
// made, in call order; each throws TargetError.
class KubeSession final : public ShardPlacement {
 public:
  // Checks what every kubectl kind needs (target.base_url, target.namespace,
  // target.cold_method). kubectl calls and gate polls are logged at debug level on `log`.
  KubeSession(const ScenarioSpec& spec, std::string kind, Log log);
  KubeSession(const KubeSession&) = delete;
  KubeSession& operator=(const KubeSession&) = delete;

  const ScenarioSpec& spec() const { return spec_; }
  const TargetSpec& target() const { return spec_.target; }
  const std::string& kind() const { return kind_; }
  Kubectl& kubectl() { return kubectl_; }
  spdlog::logger& log() const { return *kubectl_.log(); }
  // The full argv of a kubectl call, for `kvsweep plan`.
  std::vector<std::string> kubectl_argv(const std::vector<std::string>& args) const {
    return kubectl_.argv(args);
  }

  // Runs `step` and returns the kubectl calls made since the last collect, in call order; a
  // TargetError from `step` is thrown again carrying them.
  CommandLogs collect(const std::function<void()>& step);

  // Before applying `t`, which does `change` to the pods: the load and the serving gates go to
  // its base_url from now on (an arm with its own server), and when it restarts pods, the pods
  // of `watched` are read so that the gates can tell the ones it makes.
  void begin_change(const Treatment& t, PodChange change, const std::string& watched);
  // The gates saw the change: a later pass through them (a cold restart) waits for its own.
  void change_observed();
  // target.cold_method "reset": POST /reset_prefix_cache to every discovered replica;
  // "restart": delete the pods of `pods` and run `gates` again, a change they wait for (the
  // pods of `watched` read first).
  void cold(const std::string& pods, const std::string& watched,
            const std::function<void()>& gates);

  // The applied treatment's base_url, else target.base_url; target.metrics.urls when given,
  // else every discovered replica + target.metrics.path.
  Endpoints endpoints() const;
  // The pods of `pods` read again after a cell: a "health" log when they changed during it (a
  // rollout, a pod replaced or restarted), which changes what it measured. Never throws.
  CommandLogs pods_after_cell(const std::string& pods);

  // ShardPlacement: an Indexed Job of shards in the target's namespace, through this kubectl.
  std::unique_ptr<ShardLauncher> launcher(const ShardJobSettings& job) override;
  CommandLogs take_commands() override { return kubectl_.take_logs(); }

  // `kvsweep plan`: the read of the pods of `watched` ahead of `commands` when the change
  // restarts pods (as begin_change does); and the gates' lines, the serving gates last.
  Argvs planned_with_pod_read(Argvs commands, PodChange change, const std::string& watched) const;
  std::vector<std::string> planned_gates(GatePlan plan, const Treatment& next) const;
  // The live settle's line for `kvsweep plan`; "" when readiness.live_settle is 0.
  std::string planned_live_settle() const;

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
  // the pods of `watched` (every pod of the deployment; "" none): a pod that will not become
  // Ready by itself fails the gate at once, whatever the resource says; else `not_ready(object)`
  // says why the resource is not ready yet (nullopt: ready), with what the pods are doing.
  void wait_resource(
      const std::vector<std::string>& get_args, const std::string& watched,
      const std::function<std::optional<std::string>(const nlohmann::json&)>& not_ready);
  // Gate "pods": the pods of `pods` are settled (PodsGate) for the change applied; "" skips it.
  void wait_pods(const std::string& pods);
  // Gates "models" and "completion" where the load goes (endpoints().base_url).
  void wait_serving();
  // Step "discover": the replica base URLs from the Ready pods of `pods` ("" skips it).
  void discover_replicas(const std::string& pods);
  void set_replica_urls(std::vector<std::string> urls) { replica_urls_ = std::move(urls); }

  // A change applied live just answered (it restarts nothing, and nothing observable says when
  // the serving side has read it): settle_live_change() then waits until
  // readiness.live_settle has passed since this call, logging the wait as a "settle" step.
  void mark_live_change();
  void settle_live_change();

 private:
  void absorb(std::vector<CommandLog> logs);
  // The pods of `selector`, read with retries (step "apply" before a change, for the gates).
  std::vector<PodState> read_pods(const std::string& step, const std::string& selector);
  // The pods gate's description for `kvsweep plan`, after a change `change`.
  std::string planned_pods_gate(const std::string& pods, PodChange change) const;

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
  std::vector<PodState> discovered_;  // the serving pods discovery found, for pods_after_cell
  std::optional<std::chrono::steady_clock::time_point> live_change_at_;  // mark_live_change()
};

// The kubectl settings of a target spec.
KubectlConfig kubectl_config(const TargetSpec& target);

// "30m", "10s", "0.2s": a time limit as `kvsweep plan` shows it.
std::string duration_text(double seconds);

}  // namespace kvsweep::orchestrator::kube
