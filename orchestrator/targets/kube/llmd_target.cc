// llm-d: an InferencePool's endpoint picker configured per arm through the ConfigMap it reads.
//
// Names and layout follow the Gateway API Inference Extension v1.0.0's inferencepool chart
// (config/charts/inferencepool: the EPP Deployment and its ConfigMap both <pool>-epp, the
// config under key default-plugins.yaml, mounted and read with --config-file at start) and its
// InferencePool API (inference.networking.k8s.io/v1, spec.selector.matchLabels).
#include <xxhash.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/scenario/epp_settings.h"
#include "orchestrator/targets/kube/factor_levels.h"
#include "orchestrator/targets/kube/kube_kind_target.h"
#include "orchestrator/targets/kube/kube_targets.h"
#include "orchestrator/targets/kube/pod_gate.h"
#include "orchestrator/targets/kube/pod_status.h"
#include "orchestrator/targets/readiness.h"
#include "orchestrator/targets/target_kinds.h"
#include "sim/router/epp_config.h"

namespace kvsweep::orchestrator::kube {
namespace {

using nlohmann::json;

constexpr const char* kPoolResource = "inferencepools.inference.networking.k8s.io";
// The pod template annotation whose change rolls the EPP: the configuration's name and a hash
// of its text, so an unchanged configuration rolls nothing, and a cold cell's restart counter.
constexpr const char* kConfigAnnotation = "kvsweep.io/epp-config";
constexpr const char* kRestartAnnotation = "kvsweep.io/epp-restart";

// "k=v,k2=v2" from a matchLabels object; "" when there is none.
std::string selector_of(const json& match_labels) {
  std::string out;
  if (!match_labels.is_object()) return out;
  for (const auto& [key, value] : match_labels.items()) {
    if (!value.is_string()) continue;
    out += (out.empty() ? "" : ",") + key + "=" + value.get<std::string>();
  }
  return out;
}

std::string short_hash(const std::string& text) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx",
                static_cast<unsigned long long>(XXH64(text.data(), text.size(), 0)));
  return std::string(buffer, 8);
}

// The llmd kind's own steps (kube_kind_target.h runs them).
class LlmdSteps {
 public:
  LlmdSteps(KubeSession& kube, const ScenarioSpec& spec) : kube_(kube) {
    require_field(kube_.target().pool, "target.pool", kube_.kind(), "the InferencePool's name");
    check_factor_names(spec, kube_.kind(), target_kind("llmd").factors);
    for (const auto& level : spec.knob_levels("strategy")) config_of(Treatment{}, level);
  }

  std::string describe() const {
    return "llmd inferencepool/" + kube_.target().pool + " (endpoint picker deployment/" + epp() +
           ", " + std::to_string(kube_.target().replicas) + " model servers) in namespace " +
           kube_.target().namespace_name;
  }

  GatePlan planned_gates(const Treatment& next) const {
    return {planned_resource_gate(next), pods_selector(), pod_change(next),
            planned_gates_after_pods(next)};
  }
  // The EPP's own /metrics beside the model servers'.
  void add_endpoints(Endpoints& endpoints) const {
    if (kube_.target().metrics.urls.empty()) {
      for (const auto& url : epp_metrics_urls_) endpoints.metrics_urls.push_back(url);
    }
  }

  void start() {
    const std::string what = "target.pool: reading inferencepool/" + kube_.target().pool;
    json pool;
    kube_.retrying([&] {
      pool = kube_.kubectl().get_json("start", {"get", kPoolResource, kube_.target().pool}, what);
    });
    pool_selector_ = selector_of(pool.value("spec", json::object())
                                     .value("selector", json::object())
                                     .value("matchLabels", json::object()));
    if (pool_selector_.empty() && kube_.target().pod_selector.empty()) {
      throw TargetError(what +
                        ": it has no spec.selector.matchLabels to find its model servers "
                        "by (set target.pod_selector)");
    }
    json deployment;
    kube_.retrying([&] {
      deployment = kube_.kubectl().get_json("start", {"get", "deployment", epp()},
                                            "target.epp_deployment: reading deployment/" + epp());
    });
    epp_selector_ = selector_of(deployment.value("spec", json::object())
                                    .value("selector", json::object())
                                    .value("matchLabels", json::object()));
    epp_replicas_ = deployment.value("spec", json::object()).value("replicas", 1);
    kube_.retrying([&] {
      kube_.kubectl().get_json("start", {"get", "configmap", configmap()},
                               "target.epp_configmap: reading configmap/" + configmap() +
                                   " (the EndpointPickerConfig the EPP reads)");
    });
  }

  std::vector<std::vector<std::string>> planned_apply(const Treatment* /*previous*/,
                                                      const Treatment& t) const {
    const std::string* level = t.find("strategy");
    if (level == nullptr) return {};
    std::shared_ptr<const EppConfigSpec> config;
    try {
      config = config_of(t, *level);
    } catch (const TargetError& e) {
      return {{"<cannot apply: " + std::string(e.what()) + ">"}};  // plan must not throw
    }
    return {kube_.kubectl_argv({"get", "pods", "-l", epp_selector_or_placeholder(), "-o", "json"}),
            kube_.kubectl_argv(configmap_patch(*config)),
            kube_.kubectl_argv(rollout_patch({{kConfigAnnotation, annotation_of(*config)}}))};
  }

  std::vector<std::string> planned_resource_gate(const Treatment& /*t*/) const {
    return {"resource: inferencepool/" + kube_.target().pool + " exists; its model servers -l " +
            selector_or_placeholder() +
            " read at every poll, one that cannot start fails it (limit " +
            duration_text(kube_.target().readiness.resource_s) + ")"};
  }

  std::vector<std::string> planned_gates_after_pods(const Treatment& t) const {
    if (t.find("strategy") == nullptr) return {};
    return {"epp-rollout: deployment/" + epp() +
            " status.observedGeneration = metadata.generation; every EPP pod -l " +
            epp_selector_or_placeholder() +
            " created after the patch, Ready, none from before left, the same pods for " +
            duration_text(kube_.target().readiness.settle_s) +
            "; a pod that cannot start fails it with its last log lines (limit " +
            duration_text(kube_.target().readiness.pods_s) + ")"};
  }

  PodChange pod_change(const Treatment& /*t*/) const {
    return PodChange::kNone;  // the model servers are never touched; the EPP's roll is gated apart
  }

  void apply(const Treatment& t) {
    const std::string* level = t.find("strategy");
    if (level == nullptr) return;
    const std::shared_ptr<const EppConfigSpec> held = config_of(t, *level);
    const EppConfigSpec& config = *held;
    const std::string what = "applying EPP configuration " + config.name + " to configmap/" +
                             configmap() + " and rolling deployment/" + epp();
    // The last rollout never finished (its new pods never became Ready, so the old ones still
    // run): writing their template back would complete at once with pods from before this
    // apply, which the gate rightly refuses. A new restart annotation in the same patch makes
    // the template new, so the configuration is read by pods started after the ConfigMap.
    std::vector<std::pair<const char*, std::string>> annotations = {
        {kConfigAnnotation, annotation_of(config)}};
    if (rolled_) annotations.emplace_back(kRestartAnnotation, std::to_string(++restarts_));
    epp_before_ = epp_pod_uids("apply");
    kube_.retrying([&] { kube_.kubectl().run_ok("apply", configmap_patch(config), what); });
    kube_.retrying([&] { kube_.kubectl().run_ok("apply", rollout_patch(annotations), what); });
    rolled_ = true;
  }

  void open_gates() {
    // The pool, its model servers untouched (any stuck one fails the gate), then the EPP.
    kube_.wait_resource({"get", kPoolResource, kube_.target().pool}, pods_selector(),
                        [](const json&) -> std::optional<std::string> { return std::nullopt; });
    kube_.wait_pods(pods_selector());
    if (rolled_) wait_epp_rollout();
    rolled_ = false;
    kube_.wait_serving();
    kube_.discover_replicas(pods_selector());
    discover_epp();
  }

  // A cold cell: the model servers' caches reset (the session), then the EPP restarted,
  // since its prefix index would otherwise still steer requests by the previous cell.
  void after_cold() {
    epp_before_ = epp_pod_uids("cold");
    ++restarts_;
    kube_.retrying([&] {
      kube_.kubectl().run_ok("cold",
                             rollout_patch({{kRestartAnnotation, std::to_string(restarts_)}}),
                             "cold: restarting deployment/" + epp());
    });
    wait_epp_rollout();
    discover_epp();
  }

  std::string pods_selector() const {
    return kube_.target().pod_selector.empty() ? pool_selector_ : kube_.target().pod_selector;
  }

 private:
  std::string epp() const {
    return kube_.target().epp_deployment.empty() ? kube_.target().pool + "-epp"
                                                 : kube_.target().epp_deployment;
  }
  std::string configmap() const {
    return kube_.target().epp_configmap.empty() ? kube_.target().pool + "-epp"
                                                : kube_.target().epp_configmap;
  }

  std::string selector_or_placeholder() const {
    const std::string s = pods_selector();
    return s.empty() ? "<inferencepool/" + kube_.target().pool + " spec.selector>" : s;
  }
  std::string epp_selector_or_placeholder() const {
    return epp_selector_.empty() ? "<deployment/" + epp() + " spec.selector>" : epp_selector_;
  }

  // The strategy level's EPP configuration with the treatment's settings put in; throws
  // TargetError when the level names none.
  std::shared_ptr<const EppConfigSpec> config_of(const Treatment& t,
                                                 const std::string& level) const {
    try {
      if (auto config = epp_config_for(kube_.spec(), t, level)) return config;
    } catch (const std::invalid_argument& e) {
      throw TargetError("EPP configuration " + level + ": " + e.what());
    }
    std::string names;
    for (const auto& [name, config] : kube_.spec().epp_configs)
      names += (names.empty() ? "" : ", ") + name;
    throw TargetError("factor strategy: level \"" + level +
                      "\" is no EPP configuration of this scenario; kind llmd applies the "
                      "configurations named under epp: (" +
                      (names.empty() ? "none is" : names + " are") + ")");
  }

  std::string annotation_of(const EppConfigSpec& config) const {
    return config.name + "-" + short_hash(config.config->text);
  }

  std::vector<std::string> configmap_patch(const EppConfigSpec& config) const {
    const json patch = {{"data", {{kube_.target().epp_config_key, config.config->text}}}};
    return {"patch", "configmap", configmap(), "--type=merge", "-p", patch.dump()};
  }

  // A change of the pod template's annotations rolls the Deployment, as `kubectl rollout
  // restart` does with its own annotation; ours names what was applied.
  std::vector<std::string> rollout_patch(
      const std::vector<std::pair<const char*, std::string>>& annotations) const {
    json values = json::object();
    for (const auto& [name, value] : annotations) values[name] = value;
    const json patch = {{"spec", {{"template", {{"metadata", {{"annotations", values}}}}}}}};
    return {"patch", "deployment", epp(), "--type=merge", "-p", patch.dump()};
  }

  PodUids epp_pod_uids(const std::string& step) {
    PodUids uids;
    if (epp_selector_.empty()) return uids;
    const std::string what = "reading the EPP pods -l " + epp_selector_;
    kube_.retrying([&] {
      for (const auto& pod : parse_pods_or_fail(
               kube_.kubectl().get_json(step, {"get", "pods", "-l", epp_selector_}, what), what)) {
        if (!pod.uid.empty()) uids.insert(pod.uid);
      }
    });
    return uids;
  }

  // The Deployment has seen the patch, and its pods are all new, Ready and settled. A new pod
  // that will not start (the EPP refusing its configuration crash-loops) fails the gate at once
  // with the EPP's own last words, read with `kubectl logs --previous`.
  void wait_epp_rollout() {
    const ReadinessSpec& r = kube_.target().readiness;
    PodsGate gate(epp_replicas_, PodChange::kReplaces, epp_before_, r.settle_s);
    const auto start = std::chrono::steady_clock::now();
    const auto check = [&]() -> std::optional<std::string> {
      std::string failure;
      const auto deployment =
          kube_.poll_json("gate epp-rollout", {"get", "deployment", epp()}, failure);
      if (!deployment) return failure;
      const long long generation =
          deployment->value("metadata", json::object()).value("generation", 0LL);
      const long long observed =
          deployment->value("status", json::object()).value("observedGeneration", 0LL);
      if (observed < generation) {
        return "deployment/" + epp() + ": status.observedGeneration " + std::to_string(observed) +
               " < metadata.generation " + std::to_string(generation) +
               " (the controller has not acted on the change yet)";
      }
      const auto list =
          kube_.poll_json("gate epp-rollout", {"get", "pods", "-l", epp_selector_}, failure);
      if (!list) return failure;
      const auto pods = parse_pods_or_fail(*list, "EPP pods -l " + epp_selector_);
      for (const auto& pod : pods) {
        if (pod.terminal_problem.empty() || pod.terminating || epp_before_.count(pod.uid)) continue;
        throw TargetError("the endpoint picker did not start with the configuration: pod " +
                          pod.name + ": " + pod.terminal_problem + last_words(pod.name));
      }
      const double now_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return gate.check(pods, now_s);
    };
    wait_for_gate("epp-rollout", r.pods_s, r.poll_s, check, kube_.log());
  }

  // "; its log: <the last lines>" of the pod's previous container, or "" when unreadable.
  std::string last_words(const std::string& pod) {
    const ProcessResult result =
        kube_.kubectl().run("gate epp-rollout", {"logs", pod, "--previous", "--tail=5"});
    std::string text = result.exit_code == 0 ? result.out : "";
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text.empty() ? "" : "; its log: " + text;
  }

  // The EPP pods' own /metrics (its scheduling figures), scraped with the model servers'.
  void discover_epp() {
    epp_metrics_urls_.clear();
    if (epp_selector_.empty()) return;
    const std::string what = "discovering the EPP pods -l " + epp_selector_;
    std::vector<PodState> pods;
    kube_.retrying([&] {
      pods = parse_pods_or_fail(
          kube_.kubectl().get_json("discover", {"get", "pods", "-l", epp_selector_}, what), what);
    });
    for (const auto& url : replica_base_urls(serving_pods(pods), kube_.target().epp_metrics_port)) {
      epp_metrics_urls_.push_back(url + "/metrics");
    }
  }

  KubeSession& kube_;
  std::string pool_selector_;
  std::string epp_selector_;
  int epp_replicas_ = 1;
  PodUids epp_before_;
  bool rolled_ = false;
  int restarts_ = 0;
  std::vector<std::string> epp_metrics_urls_;
};

}  // namespace

std::unique_ptr<PlannedTarget> make_llmd_target(const ScenarioSpec& spec, Log log) {
  return std::make_unique<KubeKindTarget<LlmdSteps>>(spec, "llmd", std::move(log));
}

}  // namespace kvsweep::orchestrator::kube
