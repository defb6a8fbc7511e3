// KubeAI: a Model's spec.loadBalancing, merge-patched live or recreated when replication changes.
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/scenario/strategy_names.h"
#include "orchestrator/targets/kube/factor_levels.h"
#include "orchestrator/targets/kube/kube_kind_target.h"
#include "orchestrator/targets/kube/kube_targets.h"
#include "orchestrator/targets/kube/temp_file.h"
#include "orchestrator/targets/readiness.h"
#include "orchestrator/targets/target_kinds.h"

namespace kvsweep::orchestrator::kube {
namespace {

using nlohmann::json;

const std::vector<std::string>& kubeai_factors() { return target_kind("kubeai").factors; }

json integer_value(const std::string& factor, const std::string& level, long long min,
                   const std::string& field, const std::string& why) {
  const auto value = integer_level(level, min);
  if (!value) {
    throw TargetError("factor " + factor + ": level \"" + level + "\": " + field +
                      " must be a whole number >= " + std::to_string(min) + " (" + why + ")");
  }
  return {{"prefixHash", {{field, *value}}}};
}

// What one level sets inside spec.loadBalancing, as a merge patch of it. Throws TargetError
// naming the factor, the level and what is accepted.
json load_balancing_of(const std::string& factor, const std::string& level) {
  if (factor == "strategy") {
    const auto canonical = canonical_strategy(level);
    const auto strategy = canonical ? kubeai_strategy(*canonical) : std::nullopt;
    if (!strategy) {
      const std::string name = canonical ? *canonical : level;
      throw TargetError("factor strategy: level \"" + level + "\": KubeAI has no " + name +
                        " strategy; it has LeastLoad (least-load) and PrefixHash (prefix-hash)");
    }
    return {{"strategy", *strategy}};
  }
  if (factor == "mean_load_factor") {
    return integer_value(factor, level, 100, "meanLoadFactor", "a percentage of the mean load");
  }
  if (factor == "prefix_char_length") {
    return integer_value(factor, level, 1, "prefixCharLength", "characters of prompt hashed");
  }
  if (factor == "replication") {
    return integer_value(factor, level, 1, "replication", "virtual nodes per replica");
  }
  throw TargetError("factor " + factor + ": kind kubeai cannot apply it; it applies " +
                    join(kubeai_factors()));
}

// The merge patch of spec.loadBalancing for a whole treatment; empty when it sets nothing.
json load_balancing_of(const Treatment& t) {
  json patch = json::object();
  for (const auto& [factor, level] : t.levels) patch.merge_patch(load_balancing_of(factor, level));
  return patch;
}

// The Model to create again: its current object without status and without the metadata the
// API server owns (uid, resourceVersion, ...), with the treatment's loadBalancing merged in.
json recreated_model(const json& current, const json& load_balancing) {
  json manifest = json::object();
  for (const char* key : {"apiVersion", "kind"}) {
    if (current.contains(key)) manifest[key] = current[key];
  }
  json metadata = json::object();
  const json empty = json::object();
  const json& old_metadata = current.contains("metadata") ? current["metadata"] : empty;
  for (const char* key : {"name", "namespace", "labels", "annotations"}) {
    if (old_metadata.contains(key)) metadata[key] = old_metadata[key];
  }
  manifest["metadata"] = metadata;
  manifest["spec"] = current.contains("spec") ? current["spec"] : empty;
  manifest["spec"]["loadBalancing"].merge_patch(load_balancing);
  return manifest;
}

// Whether every key `part` sets has that value in `whole` (a merge patch already applied).
bool shows(const json& whole, const json& part) {
  if (!part.is_object()) return whole == part;
  if (!whole.is_object()) return false;
  for (const auto& [key, value] : part.items()) {
    const auto it = whole.find(key);
    if (it == whole.end() || !shows(*it, value)) return false;
  }
  return true;
}

// The kubeai kind's own steps (kube_kind_target.h runs them).
class KubeAISteps {
 public:
  KubeAISteps(KubeSession& kube, const ScenarioSpec& spec)
      : kube_(kube), recreate_(spec.factor_setting(knob_path("replication")) != nullptr) {
    require_field(kube_.target().resource, "target.resource", kube_.kind(),
                  "the KubeAI Model's name");
    if (kube_.target().replicas <= 0) {
      throw TargetError(
          "target.replicas: must be > 0 for kind kubeai (the Model's expected "
          "ready replicas, checked against .status.replicas.ready)");
    }
    check_factor_names(spec, kube_.kind(), kubeai_factors());
    for (const KnobLevels& factor : target_factors(spec)) {
      for (const auto& level : factor.levels) load_balancing_of(factor.name, level);
    }
  }

  std::string describe() const {
    return "kubeai model/" + kube_.target().resource + " in namespace " +
           kube_.target().namespace_name + " (" + std::to_string(kube_.target().replicas) +
           " replicas)";
  }

  GatePlan planned_gates(const Treatment& next) const {
    return {planned_resource_gate(next), pods_selector(), pod_change(next),
            planned_gates_after_pods(next)};
  }

  void start() {
    kube_.retrying([&] {
      kube_.kubectl().get_json("start", get_args(),
                               "target.resource: reading model/" + kube_.target().resource);
    });
  }

  std::vector<std::vector<std::string>> planned_apply(const Treatment* /*previous*/,
                                                      const Treatment& t) const {
    json load_balancing;
    try {
      load_balancing = load_balancing_of(t);
    } catch (const TargetError& e) {
      return {{"<cannot apply: " + std::string(e.what()) + ">"}};  // plan must not throw
    }
    if (load_balancing.empty()) return {};
    if (!recreate_) return {kube_.kubectl_argv(patch_args(load_balancing))};
    std::vector<std::string> get = get_args();
    get.insert(get.end(), {"-o", "json"});  // as Kubectl::get_json runs it
    return {kube_.kubectl_argv(get), kube_.kubectl_argv(delete_args()),
            kube_.kubectl_argv({"create", "-f",
                                "<manifest of model/" + kube_.target().resource +
                                    " with spec.loadBalancing merged with " +
                                    load_balancing.dump() + ">"})};
  }

  std::vector<std::string> planned_resource_gate(const Treatment& t) const {
    json load_balancing = json::object();
    try {
      load_balancing = load_balancing_of(t);
    } catch (const TargetError&) {
    }
    std::string line = "resource: model/" + kube_.target().resource;
    if (!load_balancing.empty()) line += " shows spec.loadBalancing " + load_balancing.dump() + ",";
    return {line + " .status.replicas.ready = " + std::to_string(kube_.target().replicas) +
            "; its pods read at every poll, one that cannot start fails it at once (limit " +
            duration_text(kube_.target().readiness.resource_s) + ")"};
  }

  PodChange pod_change(const Treatment& t) const {
    try {
      // A Model created anew gets new pods; a loadBalancing patch restarts none (KubeAI's
      // pod hash leaves spec.loadBalancing out).
      if (load_balancing_of(t).empty()) return PodChange::kNone;
    } catch (const TargetError&) {
      return PodChange::kNone;  // apply() says why
    }
    return recreate_ ? PodChange::kReplaces : PodChange::kNone;
  }

  void apply(const Treatment& t) {
    const json load_balancing = load_balancing_of(t);
    if (load_balancing.empty()) return;
    applied_ = load_balancing;
    const std::string what =
        "applying " + load_balancing.dump() + " to model/" + kube_.target().resource;
    if (!recreate_) {
      kube_.retrying([&] { kube_.kubectl().run_ok("apply", patch_args(load_balancing), what); });
      kube_.mark_live_change();  // KubeAI's proxy reads it through its informer, some time after
      return;
    }
    // prefixHash.replication is immutable (a CEL rule): the Model is deleted and created again.
    json current;
    kube_.retrying([&] { current = kube_.kubectl().get_json("apply", get_args(), what); });
    const json manifest = recreated_model(current, load_balancing);
    const TempFile file("kvsweep-model-", ".json", manifest.dump(2));
    // An attempt that timed out may have done its work: then the next one finds it done.
    once_done(ApiAnswer::kNotFound, [&] { kube_.kubectl().run_ok("apply", delete_args(), what); });
    try {
      once_done(ApiAnswer::kAlreadyExists, [&] {
        kube_.kubectl().run_ok("apply", {"create", "-f", file.path()}, what);
      });
    } catch (const TargetError& e) {
      // The Model is gone now: say so, with what it takes to bring it back by hand.
      throw TargetError(std::string(e.what()) + "; model/" + kube_.target().resource +
                        " was deleted and not created again; its manifest: " + manifest.dump());
    }
  }

  void open_gates() {
    kube_.wait_resource(get_args(), pods_selector(),
                        [&](const json& model) { return not_ready_reason(model); });
    kube_.wait_pods(pods_selector());
    kube_.settle_live_change();
    kube_.wait_serving();
    kube_.discover_replicas(pods_selector());
  }

  std::vector<std::string> planned_gates_after_pods(const Treatment& t) const {
    json load_balancing;
    try {
      load_balancing = load_balancing_of(t);
    } catch (const TargetError&) {
      return {};  // planned_apply says why
    }
    if (recreate_ || load_balancing.empty()) return {};
    std::string settle = kube_.planned_live_settle();
    if (settle.empty()) return {};
    return {settle};
  }

  std::string pods_selector() const {
    return kube_.target().pod_selector.empty() ? "model=" + kube_.target().resource
                                               : kube_.target().pod_selector;
  }

 private:
  // KubeSession::retrying(), where an attempt after the first that finds `done` (the delete's
  // NotFound, the create's AlreadyExists) means an earlier one did the work but its answer was
  // lost.
  void once_done(ApiAnswer done, const std::function<void()>& call) {
    int tries = 0;
    kube_.retrying([&] {
      try {
        ++tries;
        call();
      } catch (const KubectlError& e) {
        if (tries > 1 && e.answer() == done) return;
        throw;
      }
    });
  }

  std::vector<std::string> patch_args(const json& load_balancing) const {
    const json patch = {{"spec", {{"loadBalancing", load_balancing}}}};
    return {"patch", "model", kube_.target().resource, "--type=merge", "-p", patch.dump()};
  }
  std::vector<std::string> get_args() const { return {"get", "model", kube_.target().resource}; }
  std::vector<std::string> delete_args() const {
    return {"delete", "model", kube_.target().resource, "--wait=true"};
  }

  // The Model shows what was applied (nothing else changed it back), and reports every
  // replica ready. KubeAI has no observedGeneration: the pods gate tells a rollout.
  std::optional<std::string> not_ready_reason(const json& model) const {
    const std::string name = "model/" + kube_.target().resource;
    const json empty = json::object();
    const auto spec = model.find("spec");
    const json& load_balancing =
        spec != model.end() && spec->is_object() ? spec->value("loadBalancing", empty) : empty;
    if (!applied_.empty() && !shows(load_balancing, applied_)) {
      return name + ": spec.loadBalancing is " + load_balancing.dump() +
             ", not what was applied (" + applied_.dump() + "): something changed it since";
    }
    json ready;
    const auto status = model.find("status");
    if (status != model.end() && status->is_object()) {
      const auto replicas = status->find("replicas");
      if (replicas != status->end() && replicas->is_object()) {
        ready = replicas->value("ready", json());
      }
    }
    const long long want = kube_.target().replicas;
    if (ready.is_number_integer() && ready.get<long long>() == want) return std::nullopt;
    const std::string have =
        ready.is_number_integer() ? std::to_string(ready.get<long long>()) : "not set";
    return name + ": status.replicas.ready is " + have + ", want " + std::to_string(want);
  }

  KubeSession& kube_;
  bool recreate_;
  json applied_ = json::object();  // the loadBalancing of the last apply
};

}  // namespace

std::unique_ptr<PlannedTarget> make_kubeai_target(const ScenarioSpec& spec, Log log) {
  return std::make_unique<KubeKindTarget<KubeAISteps>>(spec, "kubeai", std::move(log));
}

}  // namespace kvsweep::orchestrator::kube
