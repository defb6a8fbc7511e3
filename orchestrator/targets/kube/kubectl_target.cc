// Generic kubectl: each factor level names the kubectl argv lists that apply it and wait for it.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/targets/child_process.h"
#include "orchestrator/targets/kube/factor_levels.h"
#include "orchestrator/targets/kube/kube_kind_target.h"
#include "orchestrator/targets/kube/kube_targets.h"

namespace kvsweep::orchestrator::kube {
namespace {

// One factor level's action, with "factor=level" for messages.
struct LabeledAction {
  std::string label;
  const LevelAction* action;
};

void check_argvs(const Argvs& argvs, const std::string& where, const std::string& binary) {
  for (std::size_t i = 0; i < argvs.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (argvs[i].empty()) throw TargetError(at + ": an empty command");
    // The binary and the connection flags are the target's; a repeated "kubectl" would be
    // taken for a kubectl subcommand and fail only at the first apply.
    if (argvs[i].front() == "kubectl" || argvs[i].front() == binary) {
      throw TargetError(at + ": write the arguments without \"" + argvs[i].front() +
                        "\"; the target adds the binary, --kubeconfig, --context, --namespace");
    }
  }
}

// Without pods to discover, a replica's base URL is its /metrics URL without the path.
std::vector<std::string> replicas_from_metrics(const MetricsSpec& metrics) {
  std::vector<std::string> urls;
  for (const auto& url : metrics.urls) {
    const std::string& path = metrics.path;
    const bool has_path = !path.empty() && url.size() > path.size() &&
                          url.compare(url.size() - path.size(), path.size(), path) == 0;
    if (has_path) urls.push_back(url.substr(0, url.size() - path.size()));
  }
  return urls;
}

// The kubectl kind's own steps (kube_kind_target.h runs them).
class KubectlSteps {
 public:
  KubectlSteps(KubeSession& kube, const ScenarioSpec& spec) : kube_(kube) {
    for (const KnobLevels& factor : target_factors(spec)) {
      const auto entry = kube_.target().levels.find(factor.name);
      std::vector<std::string> known;
      if (entry != kube_.target().levels.end()) {
        for (const auto& [level, action] : entry->second) known.push_back(level);
      }
      for (const auto& level : factor.levels) {
        const std::string where = "target.levels." + factor.name + "." + level;
        if (std::find(known.begin(), known.end(), level) == known.end()) {
          throw TargetError("factor " + factor.name + ": level \"" + level + "\" has no " +
                            "entry in target.levels." + factor.name +
                            " (it has: " + (known.empty() ? "none" : join(known)) + ")");
        }
        const LevelAction& action = entry->second.at(level);
        check_argvs(action.apply, where + ".apply", kube_.target().kubectl);
        check_argvs(action.wait, where + ".wait", kube_.target().kubectl);
      }
      factors_.push_back(factor.name);
    }
    if (kube_.target().pod_selector.empty())
      kube_.set_replica_urls(replicas_from_metrics(kube_.target().metrics));
  }

  std::string describe() const {
    std::string text = "kubectl target in namespace " + kube_.target().namespace_name;
    if (!kube_.target().pod_selector.empty()) {
      text += " (pods -l " + kube_.target().pod_selector;
      if (kube_.target().replicas > 0)
        text += ", " + std::to_string(kube_.target().replicas) + " replicas";
      text += ")";
    }
    return text;
  }

  GatePlan planned_gates(const Treatment& next) const {
    return {planned_resource_gate(next), pods_selector(), pod_change(next), {}};
  }

  void start() {}

  std::vector<std::vector<std::string>> planned_apply(const Treatment* /*previous*/,
                                                      const Treatment& t) const {
    try {
      Argvs commands;
      for (const auto& [label, action] : actions_of(t)) {
        for (const auto& args : action->apply) commands.push_back(kube_.kubectl_argv(args));
      }
      return commands;
    } catch (const TargetError& e) {
      return {{"<cannot apply: " + std::string(e.what()) + ">"}};
    }
  }

  std::vector<std::string> planned_resource_gate(const Treatment& t) const {
    std::vector<std::string> lines;
    try {
      for (const auto& [label, action] : actions_of(t)) {
        for (const auto& args : action->wait) {
          lines.push_back("wait: `" + describe_argv(kube_.kubectl_argv(args)) +
                          "` exits 0 (limit " + duration_text(wait_timeout_s()) + ")");
        }
      }
    } catch (const TargetError&) {
    }
    return lines;
  }

  PodChange pod_change(const Treatment& t) const {
    try {
      // Whatever the commands change, pods may roll: the pods gate waits for them to settle.
      return actions_of(t).empty() ? PodChange::kNone : PodChange::kUnknown;
    } catch (const TargetError&) {
      return PodChange::kNone;
    }
  }

  void apply(const Treatment& t) {
    auto actions = actions_of(t);
    current_.clear();  // a failed apply leaves no wait to run for a half-applied treatment
    for (const LabeledAction& labelled : actions) {
      // Not a structured binding: clang 14 (make sanitize) cannot capture one in the lambda.
      for (const auto& args : labelled.action->apply) {
        kube_.retrying(
            [&] { kube_.kubectl().run_ok("apply", args, "applying " + labelled.label); });
      }
    }
    current_ = std::move(actions);
  }

  void open_gates() {
    for (const auto& [label, action] : current_) {
      for (const auto& args : action->wait) {
        try {
          kube_.run_ok_with_timeout("gate wait", args, "waiting for " + label, wait_timeout_s());
        } catch (const TargetError& e) {
          throw TargetError("readiness gate wait: " + std::string(e.what()));
        }
      }
    }
    kube_.wait_pods(pods_selector());
    kube_.wait_serving();
    kube_.discover_replicas(pods_selector());
  }

  std::string pods_selector() const { return kube_.target().pod_selector; }

 private:
  double wait_timeout_s() const {
    return std::max(kube_.target().command_timeout_s, kube_.target().readiness.resource_s);
  }

  // The actions of a treatment's levels, in the scenario's factor order. Throws TargetError for
  // a factor or level the target lacks.
  std::vector<LabeledAction> actions_of(const Treatment& t) const {
    for (const auto& [factor, level] : t.levels) {
      const bool known = std::find(factors_.begin(), factors_.end(), factor) != factors_.end();
      if (!known) {
        throw TargetError("factor " + factor + ": not a factor of this scenario's kubectl target");
      }
    }
    std::vector<LabeledAction> actions;
    for (const auto& factor : factors_) {
      const std::string* level = t.find(factor);
      if (level == nullptr) continue;
      const auto& levels = kube_.target().levels.at(factor);
      const auto action = levels.find(*level);
      if (action == levels.end()) {
        throw TargetError("factor " + factor + ": level \"" + *level + "\" has no entry in " +
                          "target.levels." + factor);
      }
      actions.push_back({factor + "=" + *level, &action->second});
    }
    return actions;
  }

  KubeSession& kube_;
  std::vector<std::string> factors_;    // the target factors, in scenario order
  std::vector<LabeledAction> current_;  // what the last apply applied, for wait_ready
};

}  // namespace

std::unique_ptr<PlannedTarget> make_kubectl_target(const ScenarioSpec& spec, Log log) {
  return std::make_unique<KubeKindTarget<KubectlSteps>>(spec, "kubectl", std::move(log));
}

}  // namespace kvsweep::orchestrator::kube
