// Dynamo: DYN_ROUTER_MODE on a DynamoGraphDeployment's frontend service, workers restarted cold.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/scenario/strategy_names.h"
#include "orchestrator/targets/kube/factor_levels.h"
#include "orchestrator/targets/kube/kube_kind_target.h"
#include "orchestrator/targets/kube/kube_targets.h"
#include "orchestrator/targets/kube/pod_gate.h"
#include "orchestrator/targets/kube/pod_status.h"
#include "orchestrator/targets/readiness.h"
#include "orchestrator/targets/target_kinds.h"

namespace kvsweep::orchestrator::kube {
namespace {

using nlohmann::json;

constexpr const char* kResource = "dynamographdeployment";
constexpr const char* kModeEnv = "DYN_ROUTER_MODE";

std::string mode_of_level(const std::string& level) {
  const auto mode = dynamo_router_mode(level);
  if (!mode) {
    throw TargetError("factor strategy: level \"" + level +
                      "\": Dynamo has no such router mode; it accepts kv (kv-aware), "
                      "round-robin, random, least-loaded (least-load), power-of-two, "
                      "device-aware-weighted, direct");
  }
  return *mode;
}

// The router mode a treatment asks for; nullopt when it sets no strategy.
std::optional<std::string> mode_of(const Treatment& t) {
  for (const auto& [factor, level] : t.levels) {
    if (factor != "strategy") {
      throw TargetError("factor " + factor + ": kind dynamo cannot apply it; it applies strategy");
    }
    return mode_of_level(level);
  }
  return std::nullopt;
}

const json* find_key(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// `envs` with DYN_ROUTER_MODE set to `mode`: the first entry replaced in place (a valueFrom
// there too), later duplicates dropped, appended when absent; every other entry kept in order.
json with_router_mode(const json& envs, const std::string& mode) {
  json out = json::array();
  bool set = false;
  for (const auto& env : envs) {
    const json* name = find_key(env, "name");
    if (name == nullptr || *name != kModeEnv) {
      out.push_back(env);
    } else if (!set) {
      out.push_back({{"name", kModeEnv}, {"value", mode}});
      set = true;
    }
  }
  if (!set) out.push_back({{"name", kModeEnv}, {"value", mode}});
  return out;
}

std::optional<long long> integer_at(const json& object, const char* key) {
  const json* value = find_key(object, key);
  if (value == nullptr || !value->is_number_integer()) return std::nullopt;
  return value->get<long long>();
}

std::string string_at(const json& object, const char* key) {
  const json* value = find_key(object, key);
  return value != nullptr && value->is_string() ? value->get<std::string>() : "";
}

// The dynamo kind's own steps (kube_kind_target.h runs them).
class DynamoSteps {
 public:
  DynamoSteps(KubeSession& kube, const ScenarioSpec& spec) : kube_(kube) {
    require_field(kube_.target().resource, "target.resource", kube_.kind(),
                  "the DynamoGraphDeployment's name");
    require_field(kube_.target().frontend_service, "target.frontend_service", kube_.kind(),
                  "the spec.services key of the frontend");
    check_factor_names(spec, kube_.kind(), target_kind("dynamo").factors);
    for (const auto& level : spec.knob_levels("strategy")) mode_of_level(level);
  }

  std::string describe() const {
    return "dynamo dgd/" + kube_.target().resource + " in namespace " +
           kube_.target().namespace_name + " (" + std::to_string(kube_.target().replicas) +
           " workers)";
  }

  GatePlan planned_gates(const Treatment& next) const {
    return {planned_resource_gate(next), pods_selector(), pod_change(next),
            planned_gates_after_pods(next)};
  }

  void start() {
    json dgd;
    kube_.retrying([&] {
      dgd = kube_.kubectl().get_json("start", {"get", kResource, kube_.target().resource},
                                     "target.resource: reading dgd/" + kube_.target().resource);
    });
    frontend_of(dgd);  // fails now, not at the first apply, when the service is misnamed
  }

  std::vector<std::vector<std::string>> planned_apply(const Treatment* /*previous*/,
                                                      const Treatment& t) const {
    std::optional<std::string> mode;
    try {
      mode = mode_of(t);
    } catch (const TargetError& e) {
      return {{"<cannot apply: " + std::string(e.what()) + ">"}};  // plan must not throw
    }
    if (!mode) return {};
    const std::string envs =
        "<envs of dgd/" + kube_.target().resource + " with " + kModeEnv + "=" + *mode + ">";
    std::vector<std::vector<std::string>> commands = {
        kube_.kubectl_argv({"get", kResource, kube_.target().resource, "-o", "json"}),
        kube_.kubectl_argv(patch_args(envs))};
    if (kube_.target().restart_workers) commands.push_back(kube_.kubectl_argv(restart_args()));
    return commands;
  }

  std::vector<std::string> planned_resource_gate(const Treatment& /*t*/) const {
    return {"resource: dgd/" + kube_.target().resource +
            " status.observedGeneration = metadata.generation and condition Ready True for it; "
            "the pods -l " +
            watched_selector() +
            " read at every poll, one that cannot start fails it at once (limit " +
            duration_text(kube_.target().readiness.resource_s) + ")"};
  }

  std::vector<std::string> planned_gates_after_pods(const Treatment& t) const {
    std::optional<std::string> mode;
    try {
      mode = mode_of(t);
    } catch (const TargetError&) {
    }
    if (!mode && !mode_) return {};
    return {"router-mode: every Ready frontend pod -l " + frontend_selector() + " has " + kModeEnv +
            "=" + (mode ? *mode : *mode_) + " (limit " +
            duration_text(kube_.target().readiness.pods_s) + ")"};
  }

  PodChange pod_change(const Treatment& t) const {
    try {
      if (mode_of(t) && kube_.target().restart_workers) return PodChange::kReplaces;
    } catch (const TargetError&) {
    }
    return PodChange::kNone;  // the frontend rolls, which the router-mode gate sees
  }

  void apply(const Treatment& t) {
    const auto mode = mode_of(t);
    if (!mode) return;
    const std::string what =
        "setting " + std::string(kModeEnv) + "=" + *mode + " on dgd/" + kube_.target().resource;
    // A 409 means the object changed since it was read: the retry reads it again.
    kube_.retrying([&] {
      const json dgd =
          kube_.kubectl().get_json("apply", {"get", kResource, kube_.target().resource}, what);
      const json* envs = find_key(frontend_of(dgd), "envs");
      const json current = envs != nullptr && envs->is_array() ? *envs : json::array();
      // A merge patch replaces a list whole, so the patch carries every env, not just ours.
      kube_.kubectl().run_ok("apply", patch_args(with_router_mode(current, *mode)), what);
    });
    if (kube_.target().restart_workers) {
      kube_.retrying([&] { kube_.kubectl().run_ok("apply", restart_args(), what); });
    }
    mode_ = *mode;
  }

  void open_gates() {
    const ReadinessSpec& r = kube_.target().readiness;
    kube_.wait_resource({"get", kResource, kube_.target().resource}, watched_selector(),
                        [&](const json& dgd) { return not_ready_reason(dgd); });
    kube_.wait_pods(pods_selector());
    if (mode_) {
      const auto mode_rolled_out = [&]() -> std::optional<std::string> {
        std::string failure;
        const auto pods = kube_.poll_json("gate router-mode",
                                          {"get", "pods", "-l", frontend_selector()}, failure);
        if (!pods) return failure;
        return router_mode_reason(*pods);
      };
      wait_for_gate("router-mode", r.pods_s, r.poll_s, mode_rolled_out, kube_.log());
    }
    kube_.wait_serving();
    kube_.discover_replicas(pods_selector());
  }

  std::string pods_selector() const { return worker_selector(); }
  // Every pod of the deployment (frontend, workers, ...) when the selectors are the defaults:
  // one that cannot start fails the resource gate whichever component it is.
  std::string watched_selector() const {
    if (!kube_.target().pod_selector.empty() || !kube_.target().frontend_selector.empty()) {
      return worker_selector();
    }
    return "nvidia.com/dynamo-graph-deployment-name=" + kube_.target().resource;
  }

 private:
  std::string selector_for(const std::string& component) const {
    return "nvidia.com/dynamo-graph-deployment-name=" + kube_.target().resource +
           ",nvidia.com/dynamo-component-type=" + component;
  }
  std::string worker_selector() const {
    return kube_.target().pod_selector.empty() ? selector_for("worker")
                                               : kube_.target().pod_selector;
  }
  std::string frontend_selector() const {
    return kube_.target().frontend_selector.empty() ? selector_for("frontend")
                                                    : kube_.target().frontend_selector;
  }

  std::vector<std::string> patch_args(const json& envs) const {
    const json patch = {
        {"spec", {{"services", {{kube_.target().frontend_service, {{"envs", envs}}}}}}}};
    return {"patch", kResource, kube_.target().resource, "--type=merge", "-p", patch.dump()};
  }
  std::vector<std::string> restart_args() const {
    return {"delete", "pods", "-l", worker_selector(), "--wait=false"};
  }

  // spec.services.<frontend_service>; throws TargetError listing the services there are.
  const json& frontend_of(const json& dgd) const {
    const json* spec = find_key(dgd, "spec");
    const json* services = spec != nullptr ? find_key(*spec, "services") : nullptr;
    const json* frontend = services != nullptr
                               ? find_key(*services, kube_.target().frontend_service.c_str())
                               : nullptr;
    if (frontend != nullptr && frontend->is_object()) return *frontend;
    std::vector<std::string> names;
    if (services != nullptr && services->is_object()) {
      for (const auto& [name, value] : services->items()) names.push_back(name);
    }
    throw TargetError("target.frontend_service: dgd/" + kube_.target().resource +
                      " has no spec.services." + kube_.target().frontend_service +
                      "; its services: " + (names.empty() ? "none" : join(names)));
  }

  // Ready=True, and from the current generation: a Ready left over from before the patch
  // must not open the gate.
  std::optional<std::string> not_ready_reason(const json& dgd) const {
    const std::string name = "dgd/" + kube_.target().resource;
    const json empty = json::object();
    const json* metadata = find_key(dgd, "metadata");
    const auto generation = integer_at(metadata != nullptr ? *metadata : empty, "generation");
    const json* status = find_key(dgd, "status");
    if (status == nullptr || !status->is_object()) return name + ": no status yet";
    const auto observed = integer_at(*status, "observedGeneration");
    if (generation && observed && *observed < *generation) {
      return name + ": status.observedGeneration " + std::to_string(*observed) +
             " < metadata.generation " + std::to_string(*generation) +
             " (the operator has not acted on the change yet)";
    }
    const json* conditions = find_key(*status, "conditions");
    if (conditions == nullptr || !conditions->is_array()) return name + ": no conditions yet";
    for (const auto& condition : *conditions) {
      if (string_at(condition, "type") != "Ready") continue;
      const auto condition_observed = integer_at(condition, "observedGeneration");
      if (generation && condition_observed && *condition_observed < *generation) {
        return name + ": condition Ready is from generation " +
               std::to_string(*condition_observed) + ", the object is at " +
               std::to_string(*generation);
      }
      if (string_at(condition, "status") == "True") return std::nullopt;
      std::string reason = name + ": condition Ready is " + string_at(condition, "status");
      for (const char* key : {"reason", "message"}) {
        if (!string_at(condition, key).empty()) reason += ": " + string_at(condition, key);
      }
      return reason;
    }
    return name + ": no Ready condition yet";
  }

  std::optional<std::string> router_mode_reason(const json& list) const {
    const auto pods = parse_pods_or_fail(list, "pods -l " + frontend_selector());
    fail_on_stuck_pod(pods);
    const auto serving = serving_pods(pods);
    if (serving.empty()) return "no Ready frontend pod matches -l " + frontend_selector();
    for (const auto& pod : serving) {
      const auto env = pod.env.find(kModeEnv);
      if (env == pod.env.end()) {
        return "frontend pod " + pod.name + " has no " + kModeEnv + ", want " + *mode_;
      }
      if (env->second != *mode_) {
        return "frontend pod " + pod.name + " has " + kModeEnv + "=" + env->second + ", want " +
               *mode_;
      }
    }
    return std::nullopt;
  }

  KubeSession& kube_;
  std::optional<std::string> mode_;  // the router mode of the last apply
};

}  // namespace

std::unique_ptr<PlannedTarget> make_dynamo_target(const ScenarioSpec& spec, Log log) {
  return std::make_unique<KubeKindTarget<DynamoSteps>>(spec, "dynamo", std::move(log));
}

}  // namespace kvsweep::orchestrator::kube
