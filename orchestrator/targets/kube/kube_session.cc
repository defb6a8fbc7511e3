// What the kubectl-driven targets share.
#include "orchestrator/targets/kube/kube_session.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>
#include <utility>

#include "common/duration.h"
#include "orchestrator/targets/kube/api_retry.h"
#include "orchestrator/targets/kube/factor_levels.h"
#include "orchestrator/targets/kube/job_shard_launcher.h"
#include "orchestrator/targets/kube/pod_status.h"
#include "orchestrator/targets/readiness.h"

namespace kvsweep::orchestrator::kube {
namespace {

PodUids uids_of(const std::vector<PodState>& pods) {
  PodUids uids;
  for (const auto& pod : pods) {
    if (!pod.uid.empty()) uids.insert(pod.uid);
  }
  return uids;
}

}  // namespace

std::string duration_text(double s) {
  char buffer[32];
  if (s >= 60 && std::fmod(s, 60) == 0) {
    std::snprintf(buffer, sizeof buffer, "%gm", s / 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%gs", s);
  }
  return buffer;
}

KubectlConfig kubectl_config(const TargetSpec& target) {
  KubectlConfig config;
  config.binary = target.kubectl;
  config.kubeconfig = target.kubeconfig;
  config.context = target.context;
  config.namespace_name = target.namespace_name;
  config.timeout_s = target.command_timeout_s;
  return config;
}

KubeSession::KubeSession(const ScenarioSpec& spec, std::string kind, Log log)
    : spec_(spec),
      kind_(std::move(kind)),
      kubectl_(kubectl_config(spec.target), std::move(log)),
      base_url_(spec.target.base_url) {
  require_field(spec.target.base_url, "target.base_url", kind_,
                "where the load goes, e.g. the gateway's http://host:port");
  require_field(spec.target.namespace_name, "target.namespace", kind_, "the resources' namespace");
  check_cold_method(spec, kind_, {"reset", "restart"});
}

Endpoints KubeSession::endpoints() const {
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

void KubeSession::begin_change(const Treatment& t, PodChange change, const std::string& watched) {
  // An arm with its own server (a plain Service beside the router): the load and the serving
  // gates go there from now on.
  base_url_ = t.base_url.empty() ? spec_.target.base_url : t.base_url;
  // Before the change: which pods are there, so that the gates can tell the ones it makes.
  change_ = change;
  before_.clear();
  if (change_ != PodChange::kNone && !watched.empty()) {
    before_ = uids_of(read_pods("apply", watched));
  }
}

void KubeSession::change_observed() {
  change_ = PodChange::kNone;
  before_.clear();
}

void KubeSession::cold(const std::string& pods, const std::string& watched,
                       const std::function<void()>& gates) {
  if (spec_.target.cold_method == "restart") {
    if (pods.empty()) {
      throw TargetError("cold: cold_method restart needs target.pod_selector: the pods to delete");
    }
    change_ = PodChange::kReplaces;
    before_ = uids_of(read_pods("cold", watched));
    retrying([&] {
      kubectl_.run_ok("cold", {"delete", "pods", "-l", pods, "--wait=false"},
                      "cold: restarting the pods");
    });
    gates();
    change_observed();
    return;
  }
  if (replica_urls_.empty()) {
    throw TargetError(
        "cold: no replica URL is known to POST /reset_prefix_cache to (set "
        "target.pod_selector, or target.metrics.urls, or use cold_method restart)");
  }
  reset_prefix_caches(replica_urls_, spec_.target.command_timeout_s, log());
}

std::unique_ptr<ShardLauncher> KubeSession::launcher(const ShardJobSettings& job) {
  return std::make_unique<JobShardLauncher>(kubectl_, job);
}

CommandLogs KubeSession::pods_after_cell(const std::string& selector) {
  if (selector.empty() || discovered_.empty()) return {};
  std::string changed;
  try {
    const std::string what = "reading pods -l " + selector + " after the cell";
    changed = pods_changed(
        discovered_,
        parse_pods_or_fail(kubectl_.get_json("after cell", {"get", "pods", "-l", selector}, what),
                           what));
  } catch (const TargetError&) {
    // The failed call is in the log with its output; nothing more is known.
  }
  absorb(kubectl_.take_logs());
  CommandLogs logs = std::exchange(logs_, {});
  if (!changed.empty()) {
    CommandLog health;
    health.step = "health";
    health.argv = {"pods -l " + selector};
    health.exit_code = 0;
    health.out = changed + "\n";
    logs.push_back(std::move(health));
  }
  return logs;
}

Argvs KubeSession::planned_with_pod_read(Argvs commands, PodChange change,
                                         const std::string& watched) const {
  const bool cannot = commands.size() == 1 && commands[0].size() == 1 &&
                      commands[0][0].rfind("<cannot apply", 0) == 0;
  if (!cannot && !commands.empty() && change != PodChange::kNone && !watched.empty()) {
    commands.insert(commands.begin(), kubectl_argv({"get", "pods", "-l", watched, "-o", "json"}));
  }
  return commands;
}

std::vector<std::string> KubeSession::planned_gates(GatePlan plan, const Treatment& next) const {
  const ReadinessSpec& r = spec_.target.readiness;
  std::vector<std::string> lines = std::move(plan.resource);
  if (!plan.pods_selector.empty()) {
    lines.push_back(planned_pods_gate(plan.pods_selector, plan.change));
  }
  for (auto& line : plan.after_pods) lines.push_back(std::move(line));
  // An arm with its own server (target.base_url in a level) is served there.
  const std::string& serving = next.base_url.empty() ? spec_.target.base_url : next.base_url;
  lines.push_back("models: GET " + serving + "/v1/models lists " + spec_.model + " (limit " +
                  duration_text(r.models_s) + "); completion: a 1-token chat " +
                  "completion answers 200 (limit " + duration_text(r.completion_s) + ")");
  return lines;
}

std::string KubeSession::planned_pods_gate(const std::string& pods, PodChange change) const {
  const ReadinessSpec& r = spec_.target.readiness;
  const int replicas = spec_.target.replicas;
  std::string line = "pods: " + (replicas > 0 ? std::to_string(replicas) : "at least 1") +
                     " pods -l " + pods + " Ready, of one revision, none Pending or Terminating";
  const std::string settle =
      r.settle_s > 0 ? "then unchanged for " + duration_text(r.settle_s) + " (readiness.settle)"
                     : "no settle period (readiness.settle: 0)";
  switch (change) {
    case PodChange::kNone:
      line += "; nothing restarts, so it opens at the first look that finds them so";
      break;
    case PodChange::kReplaces:
      line += ", every one created after the apply; " + settle;
      break;
    case PodChange::kUnknown:
      line += "; " + settle + ", as an operator may act late";
      break;
  }
  return line + " (limit " + duration_text(r.pods_s) + ")";
}

void KubeSession::mark_live_change() { live_change_at_ = std::chrono::steady_clock::now(); }

void KubeSession::settle_live_change() {
  if (!live_change_at_) return;
  const auto changed_at = *std::exchange(live_change_at_, std::nullopt);
  const double settle_s = spec_.target.readiness.live_settle_s;
  if (settle_s <= 0) return;
  const auto until = changed_at + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double>(settle_s));
  const auto start = std::chrono::steady_clock::now();
  if (start < until) {
    log().debug("live change: settling until {} after it answered (readiness.live_settle)",
                format_duration_s(settle_s));
    std::this_thread::sleep_until(until);
  }
  // Kept with the cell's commands, so a stored run says how long its load waited.
  CommandLog settled;
  settled.step = "settle";
  settled.argv = {"readiness.live_settle " + format_duration_s(settle_s) +
                  " after the live change"};
  settled.exit_code = 0;
  settled.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  logs_.push_back(std::move(settled));
}

std::string KubeSession::planned_live_settle() const {
  const double settle_s = spec_.target.readiness.live_settle_s;
  if (settle_s <= 0) return "";
  return "settle: " + duration_text(settle_s) +
         " after the patch answered, the gates' time included (readiness.live_settle): the "
         "change restarts nothing, and the serving side reads it some time after";
}

CommandLogs KubeSession::collect(const std::function<void()>& step) {
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

void KubeSession::absorb(std::vector<CommandLog> logs) {
  for (auto& log : logs) logs_.push_back(std::move(log));
}

std::optional<nlohmann::json> KubeSession::poll_json(const std::string& step,
                                                     const std::vector<std::string>& args,
                                                     std::string& failure) {
  try {
    return kubectl_.get_json(step, args, "kubectl failed");
  } catch (const TargetError& e) {
    failure = e.what();
    return std::nullopt;
  }
}

std::string KubeSession::run_ok_with_timeout(const std::string& step,
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

void KubeSession::retrying(const std::function<void()>& attempt) {
  const ReadinessSpec& r = spec_.target.readiness;
  retry_transient({r.resource_s, r.poll_s}, attempt, log());
}

std::vector<PodState> KubeSession::read_pods(const std::string& step, const std::string& selector) {
  const std::string what = "reading pods -l " + selector;
  std::vector<PodState> pods;
  retrying([&] {
    pods = parse_pods_or_fail(kubectl_.get_json(step, {"get", "pods", "-l", selector}, what), what);
  });
  return pods;
}

void KubeSession::wait_resource(
    const std::vector<std::string>& get_args, const std::string& selector,
    const std::function<std::optional<std::string>(const nlohmann::json&)>& not_ready) {
  const ReadinessSpec& r = spec_.target.readiness;
  const auto check = [&]() -> std::optional<std::string> {
    // The pods first: one stuck is the answer, whatever the resource's status says.
    std::optional<std::vector<PodState>> pods;
    std::string failure;
    if (!selector.empty()) {
      if (const auto list = poll_json("gate resource", {"get", "pods", "-l", selector}, failure)) {
        pods = parse_pods_or_fail(*list, "pods -l " + selector);
        fail_on_stuck_pod(*pods, change_ == PodChange::kNone ? PodUids{} : before_);
      }
    }
    const auto object = poll_json("gate resource", get_args, failure);
    if (!object) return failure;
    auto reason = not_ready(*object);
    if (reason && pods) *reason += "; pods: " + describe_pods(*pods);
    return reason;
  };
  wait_for_gate("resource", r.resource_s, r.poll_s, check, log());
}

void KubeSession::wait_pods(const std::string& selector) {
  if (selector.empty()) return;
  const ReadinessSpec& r = spec_.target.readiness;
  PodsGate gate(spec_.target.replicas, change_, before_, r.settle_s);
  const auto start = std::chrono::steady_clock::now();
  const auto check = [&]() -> std::optional<std::string> {
    std::string failure;
    const auto list = poll_json("gate pods", {"get", "pods", "-l", selector}, failure);
    if (!list) return failure;
    const double now_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return gate.check(parse_pods_or_fail(*list, "pods -l " + selector), now_s);
  };
  wait_for_gate("pods", r.pods_s, r.poll_s, check, log());
}

void KubeSession::wait_serving() {
  const ReadinessSpec& r = spec_.target.readiness;
  wait_model_listed(base_url_, spec_.model, r.models_s, r.poll_s, log());
  wait_completion(base_url_, spec_.model, r.completion_s, r.poll_s, log());
}

void KubeSession::discover_replicas(const std::string& selector) {
  if (selector.empty()) return;
  const std::string what = "discovering replicas (pods -l " + selector + ")";
  std::vector<PodState> pods;
  retrying([&] {
    pods = parse_pods_or_fail(kubectl_.get_json("discover", {"get", "pods", "-l", selector}, what),
                              what);
  });
  std::vector<std::string> urls;
  try {
    urls = replica_base_urls(pods, spec_.target.metrics.port);
  } catch (const TargetError& e) {
    // Only /metrics discovery and a "reset" cold need the URLs; without them a missing port
    // is not this scenario's problem.
    const bool needed = spec_.target.metrics.urls.empty() || spec_.target.cold_method == "reset";
    if (needed) throw TargetError(what + ": " + e.what() + "; " + what_pods_do(pods));
  }
  if (urls.empty() && spec_.target.metrics.urls.empty()) {
    throw TargetError(what + ": no Ready pod left to scrape /metrics from; " + what_pods_do(pods));
  }
  replica_urls_ = std::move(urls);
  discovered_ = serving_pods(pods);
}

}  // namespace kvsweep::orchestrator::kube
