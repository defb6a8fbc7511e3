// Generic kubectl: each factor level names the kubectl argv lists that apply it and wait for it.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/targets/child_process.h"
#include "orchestrator/targets/kube/factor_levels.h"
#include "orchestrator/targets/kube/kube_base.h"
#include "orchestrator/targets/kube/kube_targets.h"

namespace kvsweep::orchestrator::kube {
namespace {

using Argvs = std::vector<std::vector<std::string>>;

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

class KubectlTarget : public KubeTarget {
 public:
  KubectlTarget(const ScenarioSpec& spec, Log log) : KubeTarget(spec, "kubectl", std::move(log)) {
    for (const KnobLevels& factor : target_factors(spec)) {
      const auto entry = target().levels.find(factor.name);
      std::vector<std::string> known;
      if (entry != target().levels.end()) {
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
        check_argvs(action.apply, where + ".apply", target().kubectl);
        check_argvs(action.wait, where + ".wait", target().kubectl);
      }
      factors_.push_back(factor.name);
    }
    if (target().pod_selector.empty()) set_replica_urls(replicas_from_metrics(target().metrics));
  }

  std::string describe() const override {
    std::string text = "kubectl target in namespace " + target().namespace_name;
    if (!target().pod_selector.empty()) {
      text += " (pods -l " + target().pod_selector;
      if (target().replicas > 0) text += ", " + std::to_string(target().replicas) + " replicas";
      text += ")";
    }
    return text;
  }

  void do_start() override {}

  std::vector<std::vector<std::string>> planned_apply(const Treatment* /*previous*/,
                                                      const Treatment& t) const override {
    try {
      Argvs commands;
      for (const auto& [label, action] : actions_of(t)) {
        for (const auto& args : action->apply) commands.push_back(kubectl_argv(args));
      }
      return commands;
    } catch (const TargetError& e) {
      return {{"<cannot apply: " + std::string(e.what()) + ">"}};
    }
  }

  std::vector<std::string> planned_resource_gate(const Treatment& t) const override {
    std::vector<std::string> lines;
    try {
      for (const auto& [label, action] : actions_of(t)) {
        for (const auto& args : action->wait) {
          lines.push_back("wait: `" + describe_argv(kubectl_argv(args)) + "` exits 0 (limit " +
                          duration_text(wait_timeout_s()) + ")");
        }
      }
    } catch (const TargetError&) {
    }
    return lines;
  }

  PodChange pod_change(const Treatment& t) const override {
    try {
      // Whatever the commands change, pods may roll: the pods gate waits for them to settle.
      return actions_of(t).empty() ? PodChange::kNone : PodChange::kUnknown;
    } catch (const TargetError&) {
      return PodChange::kNone;
    }
  }

  void do_apply(const Treatment& t) override {
    auto actions = actions_of(t);
    current_.clear();  // a failed apply leaves no wait to run for a half-applied treatment
    for (const LabeledAction& labelled : actions) {
      // Not a structured binding: clang 14 (make sanitize) cannot capture one in the lambda.
      for (const auto& args : labelled.action->apply) {
        retrying([&] { kubectl().run_ok("apply", args, "applying " + labelled.label); });
      }
    }
    current_ = std::move(actions);
  }

  void do_wait_ready() override {
    for (const auto& [label, action] : current_) {
      for (const auto& args : action->wait) {
        try {
          run_ok_with_timeout("gate wait", args, "waiting for " + label, wait_timeout_s());
        } catch (const TargetError& e) {
          throw TargetError("readiness gate wait: " + std::string(e.what()));
        }
      }
    }
    wait_pods();
    wait_serving();
    discover_replicas();
  }

 private:
  std::string pods_selector() const override { return target().pod_selector; }

  double wait_timeout_s() const {
    return std::max(target().command_timeout_s, target().readiness.resource_s);
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
      const auto& levels = target().levels.at(factor);
      const auto action = levels.find(*level);
      if (action == levels.end()) {
        throw TargetError("factor " + factor + ": level \"" + *level + "\" has no entry in " +
                          "target.levels." + factor);
      }
      actions.push_back({factor + "=" + *level, &action->second});
    }
    return actions;
  }

  std::vector<std::string> factors_;    // the target factors, in scenario order
  std::vector<LabeledAction> current_;  // what the last apply applied, for wait_ready
};

}  // namespace

std::unique_ptr<PlannedTarget> make_kubectl_target(const ScenarioSpec& spec, Log log) {
  return std::make_unique<KubectlTarget>(spec, std::move(log));
}

}  // namespace kvsweep::orchestrator::kube
