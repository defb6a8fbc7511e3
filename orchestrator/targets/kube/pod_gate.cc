// The decisions of the pods gate and of replica discovery, on parsed pods (no kubectl here).
#include "orchestrator/targets/kube/pod_gate.h"

#include <algorithm>
#include <stdexcept>

#include "common/join.h"
#include "orchestrator/targets/planned_target.h"

namespace kvsweep::orchestrator::kube {
namespace {

// A reason lists this many waiting pods; with hundreds of replicas the rest is "...".
constexpr std::size_t kListedPods = 5;

std::string why_not_serving(const PodState& pod) {
  if (pod.terminating) return "terminating";
  if (pod.phase.empty()) return "no phase yet";
  if (pod.phase == "Running") return "Running, not Ready";
  return pod.phase;
}

}  // namespace

std::vector<PodState> parse_pods_or_fail(const nlohmann::json& list, const std::string& what) {
  try {
    return parse_pods(list);
  } catch (const std::runtime_error& e) {
    throw TargetError(what + ": malformed pod list: " + e.what());
  }
}

void fail_on_stuck_pod(const std::vector<PodState>& pods) {
  for (const auto& pod : pods) {
    // A pod on its way out (the previous arm's, a restart's) may have crashed; its successor
    // is what counts.
    if (!pod.terminating && !pod.terminal_problem.empty()) {
      throw TargetError("pod " + pod.name + ": " + pod.terminal_problem);
    }
  }
}

std::vector<PodState> serving_pods(const std::vector<PodState>& pods) {
  std::vector<PodState> out;
  for (const auto& pod : pods) {
    if (pod.ready && !pod.terminating) out.push_back(pod);
  }
  std::sort(out.begin(), out.end(),
            [](const PodState& a, const PodState& b) { return a.name < b.name; });
  return out;
}

std::optional<std::string> pods_gate_reason(const std::vector<PodState>& pods, int expected) {
  fail_on_stuck_pod(pods);
  const std::size_t serving = serving_pods(pods).size();
  if (expected > 0 && serving == static_cast<std::size_t>(expected)) return std::nullopt;
  if (expected <= 0 && serving > 0) return std::nullopt;

  std::string reason;
  if (expected <= 0) {
    reason = "no pod Ready (want at least 1)";
  } else if (serving > static_cast<std::size_t>(expected)) {
    // More than expected: a rollout still has old pods up; the arms must run on equal counts.
    reason = std::to_string(serving) + " pods Ready, want " + std::to_string(expected);
  } else {
    reason = std::to_string(serving) + " of " + std::to_string(expected) + " pods Ready";
  }
  if (pods.empty()) return reason + " (no pod matches the selector)";
  std::vector<std::string> waiting;
  for (const auto& pod : pods) {
    if (pod.ready && !pod.terminating) continue;
    if (waiting.size() == kListedPods) {
      waiting.push_back("...");
      break;
    }
    waiting.push_back(pod.name + ": " + why_not_serving(pod));
  }
  if (waiting.empty()) return reason;
  return reason + " (" + join(waiting) + ")";
}

std::vector<std::string> replica_base_urls(const std::vector<PodState>& pods, int port) {
  std::vector<std::string> urls;
  for (const auto& pod : serving_pods(pods)) {
    const int pod_port = port > 0 ? port : (pod.ports.empty() ? 0 : pod.ports.front());
    if (pod_port == 0) {
      throw TargetError("pod " + pod.name +
                        " declares no containerPort; set target.metrics.port to the port that "
                        "serves /metrics");
    }
    if (pod.ip.empty()) throw TargetError("pod " + pod.name + " is Ready but has no podIP");
    // An IPv6 podIP needs brackets in a URL.
    const std::string host = pod.ip.find(':') == std::string::npos ? pod.ip : "[" + pod.ip + "]";
    urls.push_back("http://" + host + ":" + std::to_string(pod_port));
  }
  return urls;
}

}  // namespace kvsweep::orchestrator::kube
