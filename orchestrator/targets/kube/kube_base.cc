// What the three kubectl-driven targets share.
#include "orchestrator/targets/kube/kube_base.h"

#include <utility>

#include "orchestrator/targets/kube/factor_levels.h"
#include "orchestrator/targets/kube/pod_gate.h"
#include "orchestrator/targets/kube/pod_status.h"
#include "orchestrator/targets/readiness.h"

namespace kvsweep::orchestrator::kube {
KubectlConfig kubectl_config(const TargetSpec& target) {
  KubectlConfig config;
  config.binary = target.kubectl;
  config.kubeconfig = target.kubeconfig;
  config.context = target.context;
  config.namespace_name = target.namespace_name;
  config.timeout_s = target.command_timeout_s;
  return config;
}

KubeTarget::KubeTarget(const ScenarioSpec& spec, std::string kind, Log log)
    : spec_(spec),
      kind_(std::move(kind)),
      kubectl_(kubectl_config(spec.target), std::move(log)),
      base_url_(spec.target.base_url) {
  require_field(spec.target.base_url, "target.base_url", kind_,
                "where the load goes, e.g. the gateway's http://host:port");
  require_field(spec.target.namespace_name, "target.namespace", kind_, "the resources' namespace");
  check_cold_method(spec, kind_, {"reset", "restart"});
}

Endpoints KubeTarget::endpoints() const {
  Endpoints endpoints;
  endpoints.base_url = base_url_;
  endpoints.metrics_urls = spec_.target.metrics.urls;
  if (endpoints.metrics_urls.empty()) {
    for (const auto& replica : replica_urls_) {
      endpoints.metrics_urls.push_back(replica + spec_.target.metrics.path);
    }
  }
  return endpoints;
}

CommandLogs KubeTarget::start() {
  return collecting([this] { do_start(); });
}

CommandLogs KubeTarget::apply(const Treatment& t) {
  // An arm with its own server (a plain Service beside the router): the load and the serving
  // gates go there from now on.
  base_url_ = t.base_url.empty() ? spec_.target.base_url : t.base_url;
  return collecting([this, &t] { do_apply(t); });
}

CommandLogs KubeTarget::wait_ready() {
  return collecting([this] { do_wait_ready(); });
}

CommandLogs KubeTarget::make_cold() {
  return collecting([this] {
    if (spec_.target.cold_method == "restart") {
      const std::string selector = restart_selector();
      if (selector.empty()) {
        throw TargetError(
            "cold: cold_method restart needs target.pod_selector: the pods to delete");
      }
      kubectl_.run_ok("cold", {"delete", "pods", "-l", selector, "--wait=false"},
                      "cold: restarting the pods");
      do_wait_ready();
      return;
    }
    if (replica_urls_.empty()) {
      throw TargetError(
          "cold: no replica URL is known to POST /reset_prefix_cache to (set "
          "target.pod_selector, or target.metrics.urls, or use cold_method restart)");
    }
    reset_prefix_caches(replica_urls_, spec_.target.command_timeout_s, log());
  });
}

CommandLogs KubeTarget::collecting(const std::function<void()>& step) {
  try {
    step();
  } catch (const TargetError& e) {
    absorb(kubectl_.take_logs());
    CommandLogs commands = std::exchange(logs_, {});
    commands.insert(commands.end(), e.commands().begin(), e.commands().end());
    throw TargetError(e.what(), std::move(commands));
  }
  absorb(kubectl_.take_logs());
  return std::exchange(logs_, {});
}

void KubeTarget::absorb(std::vector<CommandLog> logs) {
  for (auto& log : logs) logs_.push_back(std::move(log));
}

std::optional<nlohmann::json> KubeTarget::poll_json(const std::string& step,
                                                    const std::vector<std::string>& args,
                                                    std::string& failure) {
  try {
    return kubectl_.get_json(step, args, "kubectl failed");
  } catch (const TargetError& e) {
    failure = e.what();
    return std::nullopt;
  }
}

std::string KubeTarget::run_ok_with_timeout(const std::string& step,
                                            const std::vector<std::string>& args,
                                            const std::string& what, double timeout_s) {
  // The main runner's calls go first so the cell's log stays in call order.
  absorb(kubectl_.take_logs());
  KubectlConfig config = kubectl_.config();
  config.timeout_s = timeout_s;
  Kubectl once(config, kubectl_.log());
  try {
    std::string out = once.run_ok(step, args, what);
    absorb(once.take_logs());
    return out;
  } catch (...) {
    absorb(once.take_logs());
    throw;
  }
}

void KubeTarget::wait_pods(const std::string& selector) {
  const ReadinessSpec& r = spec_.target.readiness;
  const auto check = [&]() -> std::optional<std::string> {
    std::string failure;
    const auto list = poll_json("gate pods", {"get", "pods", "-l", selector}, failure);
    if (!list) return failure;
    return pods_gate_reason(parse_pods_or_fail(*list, "pods -l " + selector),
                            spec_.target.replicas);
  };
  wait_for_gate("pods", r.pods_s, r.poll_s, check, log());
}

void KubeTarget::wait_serving() {
  const ReadinessSpec& r = spec_.target.readiness;
  wait_model_listed(base_url_, spec_.model, r.models_s, r.poll_s, log());
  wait_completion(base_url_, spec_.model, r.completion_s, r.poll_s, log());
}

void KubeTarget::discover_replicas(const std::string& selector) {
  const std::string what = "discovering replicas (pods -l " + selector + ")";
  const auto pods = parse_pods_or_fail(
      kubectl_.get_json("discover", {"get", "pods", "-l", selector}, what), what);
  std::vector<std::string> urls;
  try {
    urls = replica_base_urls(pods, spec_.target.metrics.port);
  } catch (const TargetError& e) {
    // Only /metrics discovery and a "reset" cold need the URLs; without them a missing port
    // is not this scenario's problem.
    const bool needed = spec_.target.metrics.urls.empty() || spec_.target.cold_method == "reset";
    if (needed) throw TargetError(what + ": " + e.what());
  }
  if (urls.empty() && spec_.target.metrics.urls.empty()) {
    throw TargetError(what + ": no Ready pod left to scrape /metrics from");
  }
  replica_urls_ = std::move(urls);
}

}  // namespace kvsweep::orchestrator::kube
