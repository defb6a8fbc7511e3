// A Kubernetes kind as the runner and `kvsweep plan` see it, made from the kind's own steps and
// the KubeSession they share: the order every kind follows (read the pods before a change that
// restarts them, open the gates, a cold restart through the same gates, the look at the pods
// after a cell) is written once here, and a kind writes only what is its own.
#pragma once

#include <concepts>
#include <string>
#include <utility>

#include "common/log.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/targets/kube/kube_session.h"
#include "orchestrator/targets/planned_target.h"

namespace kvsweep::orchestrator::kube {

// What a kind's steps give. Each is a plain class made from the session it shares and the
// scenario; it checks the scenario in its constructor (TargetError) and runs no command there.
// Optional: watched_selector() (the pods the resource gate reads; else pods_selector()),
// after_cold() (what else a cold cell restarts) and add_endpoints(Endpoints&) (more metrics).
template <typename S>
concept KubeKindSteps = std::constructible_from<S, KubeSession&, const ScenarioSpec&> &&
    requires(S& steps, const S& fixed, const Treatment& t) {
  { fixed.describe() } -> std::convertible_to<std::string>;
  steps.start();       // start(): the kind's reads
  steps.apply(t);      // what applying `t` runs
  steps.open_gates();  // the gates after an apply, in order
  { fixed.pods_selector() } -> std::convertible_to<std::string>;
  { fixed.pod_change(t) } -> std::same_as<PodChange>;
  { fixed.planned_apply(&t, t) } -> std::same_as<Argvs>;
  { fixed.planned_gates(t) } -> std::same_as<GatePlan>;
};

template <KubeKindSteps Steps>
class KubeKindTarget final : public PlannedTarget {
 public:
  KubeKindTarget(const ScenarioSpec& spec, std::string kind, Log log)
      : kube_(spec, std::move(kind), std::move(log)), steps_(kube_, spec) {}

  std::string describe() const override { return steps_.describe(); }

  CommandLogs start() override {
    return kube_.collect([&] { steps_.start(); });
  }
  CommandLogs apply(const Treatment& t) override {
    return kube_.collect([&] {
      kube_.begin_change(t, steps_.pod_change(t), watched_selector());
      steps_.apply(t);
    });
  }
  CommandLogs wait_ready() override {
    return kube_.collect([&] {
      steps_.open_gates();
      kube_.change_observed();
    });
  }
  CommandLogs make_cold() override {
    return kube_.collect([&] {
      kube_.cold(steps_.pods_selector(), watched_selector(), [&] { steps_.open_gates(); });
      if constexpr (requires { steps_.after_cold(); }) steps_.after_cold();
    });
  }
  Endpoints endpoints() const override {
    Endpoints endpoints = kube_.endpoints();
    if constexpr (requires { steps_.add_endpoints(endpoints); }) steps_.add_endpoints(endpoints);
    return endpoints;
  }
  CommandLogs cell_finished() override { return kube_.pods_after_cell(steps_.pods_selector()); }
  ShardPlacement* shard_placement() override { return &kube_; }

  Argvs planned_commands(const Treatment* previous, const Treatment& next) const override {
    return kube_.planned_with_pod_read(steps_.planned_apply(previous, next),
                                       steps_.pod_change(next), watched_selector());
  }
  std::vector<std::string> planned_gates(const Treatment* /*previous*/,
                                         const Treatment& next) const override {
    return kube_.planned_gates(steps_.planned_gates(next), next);
  }

 private:
  std::string watched_selector() const {
    if constexpr (requires { steps_.watched_selector(); }) {
      return steps_.watched_selector();
    } else {
      return steps_.pods_selector();
    }
  }

  KubeSession kube_;  // before steps_, which holds it
  Steps steps_;
};

}  // namespace kvsweep::orchestrator::kube
