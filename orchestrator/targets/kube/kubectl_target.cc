// Generic kubectl: each factor level names the kubectl argv lists that apply it and wait for it.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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

  std::vector<std::vector<std::string>> planned_commands(const Treatment* /*previous*/,
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

  void do_apply(const Treatment& t) override {
    auto actions = actions_of(t);
    current_.clear();  // a failed apply leaves no wait to run for a half-applied treatment
    for (const auto& [label, action] : actions) {
      for (const auto& args : action->apply) kubectl().run_ok("apply", args, "applying " + label);
    }
    current_ = std::move(actions);
  }

  void do_wait_ready() override {
    const double timeout_s = std::max(target().command_timeout_s, target().readiness.resource_s);
    for (const auto& [label, action] : current_) {
      for (const auto& args : action->wait) {
        try {
          run_ok_with_timeout("gate wait", args, "waiting for " + label, timeout_s);
        } catch (const TargetError& e) {
          throw TargetError("readiness gate wait: " + std::string(e.what()));
        }
      }
    }
    if (!target().pod_selector.empty()) wait_pods(target().pod_selector);
    wait_serving();
    if (!target().pod_selector.empty()) discover_replicas(target().pod_selector);
  }

 private:
  std::string restart_selector() const override { return target().pod_selector; }

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
