// What the readiness gates need to know about pods, read from `kubectl get pods -o json`.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kvsweep::orchestrator::kube {

struct PodState {
  std::string name;
  std::string uid;  // metadata.uid: a pod created anew under an old name is another pod
  // The revision its controller stamped on it (label pod-template-hash of a Deployment,
  // controller-revision-hash of a StatefulSet, pod-hash of KubeAI), "" when none.
  std::string revision;
  std::string phase;         // status.phase: Pending | Running | Succeeded | Failed | Unknown
  bool ready = false;        // condition Ready = True
  bool terminating = false;  // metadata.deletionTimestamp set
  std::string ip;            // status.podIP, "" before it has one
  int restarts = 0;          // every container's restartCount, added up
  // Why the first container not running waits ("ContainerCreating", "PodInitializing"), "".
  std::string waiting_reason;
  std::vector<int> ports;  // every container's containerPorts, in order
  // Why the pod will not become ready without a human, "" if nothing: a container waiting in
  // ImagePullBackOff, ErrImagePull, CrashLoopBackOff, CreateContainerConfigError,
  // InvalidImageName, ... or terminated with OOMKilled; phase Failed. Written as
  // "container vllm: CrashLoopBackOff: back-off 5m0s restarting failed container".
  std::string terminal_problem;
  // Environment variables given as plain values in the pod spec, every container merged.
  std::map<std::string, std::string> env;
};

// Parses a PodList (or a single Pod). Throws std::runtime_error naming what is malformed.
std::vector<PodState> parse_pods(const nlohmann::json& list);

// True for waiting reasons that never clear by themselves.
bool is_terminal_waiting_reason(const std::string& reason);

}  // namespace kvsweep::orchestrator::kube
