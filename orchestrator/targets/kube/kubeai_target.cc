// KubeAI: a Model's spec.loadBalancing, merge-patched live or recreated when replication changes.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/scenario/strategy_names.h"
#include "orchestrator/targets/kube/factor_levels.h"
#include "orchestrator/targets/kube/kube_base.h"
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

class KubeAITarget : public KubeTarget {
 public:
  KubeAITarget(const ScenarioSpec& spec, Log log)
      : KubeTarget(spec, "kubeai", std::move(log)),
        recreate_(spec.factor_setting(knob_path("replication")) != nullptr) {
    require_field(target().resource, "target.resource", kind(), "the KubeAI Model's name");
    if (target().replicas <= 0) {
      throw TargetError(
          "target.replicas: must be > 0 for kind kubeai (the Model's expected "
          "ready replicas, checked against .status.replicas.ready)");
    }
    check_factor_names(spec, kind(), kubeai_factors());
    for (const KnobLevels& factor : target_factors(spec)) {
      for (const auto& level : factor.levels) load_balancing_of(factor.name, level);
    }
  }

  std::string describe() const override {
    return "kubeai model/" + target().resource + " in namespace " + target().namespace_name + " (" +
           std::to_string(target().replicas) + " replicas)";
  }

  void do_start() override {
    kubectl().get_json("start", get_args(), "target.resource: reading model/" + target().resource);
  }

  std::vector<std::vector<std::string>> planned_commands(const Treatment* /*previous*/,
                                                         const Treatment& t) const override {
    json load_balancing;
    try {
      load_balancing = load_balancing_of(t);
    } catch (const TargetError& e) {
      return {{"<cannot apply: " + std::string(e.what()) + ">"}};  // plan must not throw
    }
    if (load_balancing.empty()) return {};
    if (!recreate_) return {kubectl_argv(patch_args(load_balancing))};
    std::vector<std::string> get = get_args();
    get.insert(get.end(), {"-o", "json"});  // as Kubectl::get_json runs it
    return {
        kubectl_argv(get), kubectl_argv(delete_args()),
        kubectl_argv({"create", "-f",
                      "<manifest of model/" + target().resource +
                          " with spec.loadBalancing merged with " + load_balancing.dump() + ">"})};
  }

  void do_apply(const Treatment& t) override {
    const json load_balancing = load_balancing_of(t);
    if (load_balancing.empty()) return;
    const std::string what = "applying " + load_balancing.dump() + " to model/" + target().resource;
    if (!recreate_) {
      kubectl().run_ok("apply", patch_args(load_balancing), what);
      return;
    }
    // prefixHash.replication is immutable (a CEL rule): the Model is deleted and created again.
    const json current = kubectl().get_json("apply", get_args(), what);
    const json manifest = recreated_model(current, load_balancing);
    const TempFile file("kvsweep-model-", ".json", manifest.dump(2));
    kubectl().run_ok("apply", delete_args(), what);
    try {
      kubectl().run_ok("apply", {"create", "-f", file.path()}, what);
    } catch (const TargetError& e) {
      // The Model is gone now: say so, with what it takes to bring it back by hand.
      throw TargetError(std::string(e.what()) + "; model/" + target().resource +
                        " was deleted and not created again; its manifest: " + manifest.dump());
    }
  }

  void do_wait_ready() override {
    const ReadinessSpec& r = target().readiness;
    const auto replicas_ready = [&]() -> std::optional<std::string> {
      std::string failure;
      const auto model = poll_json("gate resource", get_args(), failure);
      if (!model) return failure;
      return ready_replicas_reason(*model);
    };
    wait_for_gate("resource", r.resource_s, r.poll_s, replicas_ready, log());
    wait_pods(pod_selector());
    wait_serving();
    discover_replicas(pod_selector());
  }

 private:
  std::string restart_selector() const override { return pod_selector(); }

  std::string pod_selector() const {
    return target().pod_selector.empty() ? "model=" + target().resource : target().pod_selector;
  }

  std::vector<std::string> patch_args(const json& load_balancing) const {
    const json patch = {{"spec", {{"loadBalancing", load_balancing}}}};
    return {"patch", "model", target().resource, "--type=merge", "-p", patch.dump()};
  }
  std::vector<std::string> get_args() const { return {"get", "model", target().resource}; }
  std::vector<std::string> delete_args() const {
    return {"delete", "model", target().resource, "--wait=true"};
  }

  std::optional<std::string> ready_replicas_reason(const json& model) const {
    json ready;
    const auto status = model.find("status");
    if (status != model.end() && status->is_object()) {
      const auto replicas = status->find("replicas");
      if (replicas != status->end() && replicas->is_object()) {
        ready = replicas->value("ready", json());
      }
    }
    const long long want = target().replicas;
    if (ready.is_number_integer() && ready.get<long long>() == want) return std::nullopt;
    const std::string have =
        ready.is_number_integer() ? std::to_string(ready.get<long long>()) : "not set";
    return "model/" + target().resource + ": status.replicas.ready is " + have + ", want " +
           std::to_string(want);
  }

  bool recreate_;
};

}  // namespace

std::unique_ptr<PlannedTarget> make_kubeai_target(const ScenarioSpec& spec, Log log) {
  return std::make_unique<KubeAITarget>(spec, std::move(log));
}

}  // namespace kvsweep::orchestrator::kube
