// What the readiness gates need to know about pods, read from `kubectl get pods -o json`.
#include "orchestrator/targets/kube/pod_status.h"

#include <set>
#include <stdexcept>

namespace kvsweep::orchestrator::kube {
namespace {

using nlohmann::json;

// A field that must be an object, or absent/null (then an empty object).
const json& object_at(const json& parent, const char* key, const std::string& where) {
  static const json kEmpty = json::object();
  const auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return kEmpty;
  if (!it->is_object()) throw std::runtime_error(where + "." + key + " is not an object");
  return *it;
}

const json& array_at(const json& parent, const char* key, const std::string& where) {
  static const json kEmpty = json::array();
  const auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return kEmpty;
  if (!it->is_array()) throw std::runtime_error(where + "." + key + " is not an array");
  return *it;
}

std::string pod_string_at(const json& parent, const char* key, const std::string& where) {
  const auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return "";
  if (!it->is_string()) throw std::runtime_error(where + "." + key + " is not a string");
  return it->get<std::string>();
}

bool is_ready(const json& status, const std::string& where) {
  for (const auto& condition : array_at(status, "conditions", where)) {
    if (!condition.is_object()) throw std::runtime_error(where + ".conditions has a non-object");
    if (pod_string_at(condition, "type", where + ".conditions[]") == "Ready") {
      return pod_string_at(condition, "status", where + ".conditions[]") == "True";
    }
  }
  return false;
}

// "container vllm: CrashLoopBackOff: back-off 5m0s ... (last terminated: OOMKilled)", or "".
std::string container_problem(const json& status, const char* label, const std::string& where) {
  const std::string name = pod_string_at(status, "name", where);
  const json& state = object_at(status, "state", where);
  const json& waiting = object_at(state, "waiting", where + ".state");
  const json& terminated = object_at(state, "terminated", where + ".state");
  std::string reason;
  std::string message;
  if (!waiting.empty() && is_terminal_waiting_reason(pod_string_at(waiting, "reason", where))) {
    reason = pod_string_at(waiting, "reason", where);
    message = pod_string_at(waiting, "message", where);
  } else if (!terminated.empty() && pod_string_at(terminated, "reason", where) == "OOMKilled") {
    reason = "OOMKilled";
    message = pod_string_at(terminated, "message", where);
  } else {
    return "";
  }
  std::string text = std::string(label) + " " + name + ": " + reason;
  if (!message.empty()) text += ": " + message;
  // A crash loop says nothing about why the container died; the previous run's end often does.
  const json& last = object_at(object_at(status, "lastState", where), "terminated", where);
  const std::string last_reason = pod_string_at(last, "reason", where + ".lastState.terminated");
  if (!last_reason.empty() && last_reason != reason) {
    text += " (last terminated: " + last_reason + ")";
  }
  return text;
}

std::string terminal_problem(const json& status, const std::string& where) {
  if (pod_string_at(status, "phase", where) == "Failed") {
    std::string text = "phase Failed";
    for (const char* key : {"reason", "message"}) {
      const std::string value = pod_string_at(status, key, where);
      if (!value.empty()) text += ": " + value;
    }
    // How each container ended (a Job's pod: OOMKilled, Error with its exit code).
    for (const auto& container : array_at(status, "containerStatuses", where)) {
      if (!container.is_object()) continue;
      const json& state = object_at(container, "state", where + ".containerStatuses[]");
      const json& terminated = object_at(state, "terminated", where + ".containerStatuses[].state");
      if (terminated.empty()) continue;
      text += "; container " + pod_string_at(container, "name", where) + ": " +
              pod_string_at(terminated, "reason", where);
      const auto code = terminated.find("exitCode");
      if (code != terminated.end() && code->is_number_integer()) {
        text += " (exit code " + std::to_string(code->get<int>()) + ")";
      }
      const std::string message = pod_string_at(terminated, "message", where);
      if (!message.empty()) text += ": " + message;
    }
    return text;
  }
  // Init containers run first: one stuck there is the reason the others never start.
  for (const auto& [key, label] : {std::pair{"initContainerStatuses", "init container"},
                                   std::pair{"containerStatuses", "container"}}) {
    for (const auto& container : array_at(status, key, where)) {
      if (!container.is_object()) throw std::runtime_error(where + "." + key + " has a non-object");
      std::string problem = container_problem(container, label, where + "." + key + "[]");
      if (!problem.empty()) return problem;
    }
  }
  return "";
}

// The labels controllers stamp on their pods to say which revision made them.
constexpr const char* kRevisionLabels[] = {"pod-template-hash", "controller-revision-hash",
                                           "pod-hash"};

// Restart counts added up, and the first waiting reason, over every container status.
void read_containers(const json& status, const std::string& where, PodState& state) {
  for (const char* key : {"initContainerStatuses", "containerStatuses"}) {
    for (const auto& container : array_at(status, key, where)) {
      if (!container.is_object()) throw std::runtime_error(where + "." + key + " has a non-object");
      const auto restarts = container.find("restartCount");
      if (restarts != container.end() && restarts->is_number_integer()) {
        state.restarts += restarts->get<int>();
      }
      const json& waiting =
          object_at(object_at(container, "state", where), "waiting", where + ".state");
      if (state.waiting_reason.empty())
        state.waiting_reason = pod_string_at(waiting, "reason", where);
    }
  }
}

PodState parse_pod(const json& pod, const std::string& where) {
  if (!pod.is_object()) throw std::runtime_error(where + " is not an object");
  const json& metadata = object_at(pod, "metadata", where);
  PodState state;
  state.name = pod_string_at(metadata, "name", where + ".metadata");
  if (state.name.empty()) throw std::runtime_error(where + " has no metadata.name");
  const std::string at = "pod " + state.name;
  state.uid = pod_string_at(metadata, "uid", at + ".metadata");
  const json& labels = object_at(metadata, "labels", at + ".metadata");
  for (const char* key : kRevisionLabels) {
    if (state.revision.empty())
      state.revision = pod_string_at(labels, key, at + ".metadata.labels");
  }
  const auto deletion = metadata.find("deletionTimestamp");
  state.terminating = deletion != metadata.end() && !deletion->is_null();

  const json& status = object_at(pod, "status", at);
  state.phase = pod_string_at(status, "phase", at + ".status");
  state.ready = is_ready(status, at + ".status");
  state.ip = pod_string_at(status, "podIP", at + ".status");
  state.terminal_problem = terminal_problem(status, at + ".status");
  read_containers(status, at + ".status", state);

  const json& spec = object_at(pod, "spec", at);
  for (const auto& container : array_at(spec, "containers", at + ".spec")) {
    if (!container.is_object()) throw std::runtime_error(at + ".spec.containers has a non-object");
    for (const auto& port : array_at(container, "ports", at + ".spec.containers[]")) {
      const auto number = port.is_object() ? port.find("containerPort") : port.end();
      if (number == port.end() || !number->is_number_integer()) {
        throw std::runtime_error(at + ": a container port has no integer containerPort");
      }
      state.ports.push_back(number->get<int>());
    }
    for (const auto& env : array_at(container, "env", at + ".spec.containers[]")) {
      if (!env.is_object()) throw std::runtime_error(at + ": an env entry is not an object");
      // valueFrom entries (secrets, field refs) have no value the pod spec can tell us.
      if (!env.contains("value")) continue;
      // The first container that sets a name wins: the serving container comes first.
      state.env.emplace(pod_string_at(env, "name", at + ".env[]"), pod_string_at(env, "value", at));
    }
  }
  return state;
}

}  // namespace

std::vector<PodState> parse_pods(const json& list) {
  if (!list.is_object()) throw std::runtime_error("pod list is not a JSON object");
  if (!list.contains("items")) return {parse_pod(list, "pod")};
  const auto& items = list["items"];
  if (items.is_null()) return {};
  if (!items.is_array()) throw std::runtime_error("pod list: items is not an array");
  std::vector<PodState> pods;
  for (std::size_t i = 0; i < items.size(); ++i) {
    pods.push_back(parse_pod(items[i], "items[" + std::to_string(i) + "]"));
  }
  return pods;
}

bool is_terminal_waiting_reason(const std::string& reason) {
  // Waiting reasons the kubelet keeps reporting until someone changes the pod or the image.
  // ContainerCreating and PodInitializing, the normal start-up reasons, are not here.
  static const std::set<std::string> kTerminal = {
      "CrashLoopBackOff", "ImagePullBackOff",           "ErrImagePull",         "ErrImageNeverPull",
      "InvalidImageName", "CreateContainerConfigError", "CreateContainerError", "RunContainerError",
  };
  return kTerminal.count(reason) > 0;
}

}  // namespace kvsweep::orchestrator::kube
