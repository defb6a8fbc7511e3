// The decisions of the pods gate and of replica discovery, on parsed pods (no kubectl here).
#include "orchestrator/targets/kube/pod_gate.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "common/duration.h"
#include "common/join.h"
#include "orchestrator/targets/planned_target.h"

namespace kvsweep::orchestrator::kube {
namespace {

// A reason lists this many pods; with hundreds of replicas the rest is "...".
constexpr std::size_t kListedPods = 5;

// "Ready", "Terminating", "Pending (ContainerCreating)", "Running, not Ready", or the problem
// that keeps it from ever being Ready.
std::string state_text(const PodState& pod) {
  if (pod.terminating) return "Terminating";
  if (!pod.terminal_problem.empty()) return pod.terminal_problem;
  if (pod.ready) return "Ready";
  std::string text = pod.phase.empty() ? "no phase yet" : pod.phase;
  if (pod.phase == "Running") text += ", not Ready";
  if (!pod.waiting_reason.empty()) text += " (" + pod.waiting_reason + ")";
  return text;
}

std::vector<PodState> by_name(std::vector<PodState> pods) {
  std::sort(pods.begin(), pods.end(),
            [](const PodState& a, const PodState& b) { return a.name < b.name; });
  return pods;
}

// At most kListedPods entries, then "...".
std::string listed(const std::vector<std::string>& entries) {
  std::vector<std::string> shown(
      entries.begin(),
      entries.begin() + static_cast<std::ptrdiff_t>(std::min(entries.size(), kListedPods)));
  if (entries.size() > kListedPods) shown.push_back("...");
  return join(shown);
}

// The revisions of the pods not being deleted, with how many pods each has.
std::map<std::string, int> live_revisions(const std::vector<PodState>& pods) {
  std::map<std::string, int> revisions;
  for (const auto& pod : pods) {
    if (!pod.terminating && !pod.revision.empty()) ++revisions[pod.revision];
  }
  return revisions;
}

std::string revisions_text(const std::map<std::string, int>& revisions) {
  std::vector<std::string> parts;
  for (const auto& [revision, count] : revisions) {
    parts.push_back(revision + " (" + std::to_string(count) + (count == 1 ? " pod)" : " pods)"));
  }
  return "pods of " + std::to_string(revisions.size()) + " revisions: " + join(parts);
}

}  // namespace

std::vector<PodState> parse_pods_or_fail(const nlohmann::json& list, const std::string& what) {
  try {
    return parse_pods(list);
  } catch (const std::runtime_error& e) {
    throw TargetError(what + ": malformed pod list: " + e.what());
  }
}

void fail_on_stuck_pod(const std::vector<PodState>& pods, const PodUids& exempt) {
  for (const auto& pod : by_name(pods)) {
    // A pod on its way out (the previous arm's, a restart's) may have crashed; its successor
    // is what counts.
    if (pod.terminating || pod.terminal_problem.empty()) continue;
    if (!pod.uid.empty() && exempt.count(pod.uid) > 0) continue;
    throw TargetError("pod " + pod.name + ": " + pod.terminal_problem);
  }
}

std::vector<PodState> serving_pods(const std::vector<PodState>& pods) {
  std::vector<PodState> out;
  for (const auto& pod : pods) {
    if (pod.ready && !pod.terminating) out.push_back(pod);
  }
  return by_name(out);
}

std::string describe_pods(const std::vector<PodState>& pods) {
  if (pods.empty()) return "no pod";
  std::vector<std::string> entries;
  for (const auto& pod : by_name(pods)) entries.push_back(pod.name + ": " + state_text(pod));
  return listed(entries);
}

bool rollout_under_way(const std::vector<PodState>& pods) {
  for (const auto& pod : pods) {
    if (pod.terminating) return true;
    if (!pod.ready && pod.terminal_problem.empty()) return true;  // starting
  }
  return live_revisions(pods).size() > 1;
}

std::string pods_changed(const std::vector<PodState>& before, const std::vector<PodState>& now) {
  const auto key = [](const PodState& pod) { return pod.uid.empty() ? pod.name : pod.uid; };
  std::map<std::string, const PodState*> current;
  for (const auto& pod : now) current[key(pod)] = &pod;
  std::vector<std::string> changes;
  for (const auto& old : by_name(before)) {
    const auto it = current.find(key(old));
    if (it == current.end()) {
      changes.push_back(old.name + ": gone");
      continue;
    }
    const PodState& pod = *it->second;
    if (pod.terminating || !pod.ready) {
      changes.push_back(pod.name + ": " + state_text(pod));
    } else if (pod.restarts > old.restarts) {
      changes.push_back(pod.name + ": restarted (restarts " + std::to_string(old.restarts) +
                        " -> " + std::to_string(pod.restarts) + ")");
    }
    current.erase(it);
  }
  for (const auto& pod : by_name(now)) {
    if (current.count(key(pod)) > 0) changes.push_back(pod.name + ": new, " + state_text(pod));
  }
  if (changes.empty()) return "";
  return std::string("pods changed during the cell: ") +
         (rollout_under_way(now) ? "a rollout is in progress: " : "") + listed(changes);
}

std::string what_pods_do(const std::vector<PodState>& pods) {
  return (rollout_under_way(pods) ? "a rollout is in progress: " : "pods: ") + describe_pods(pods);
}

PodsGate::PodsGate(int expected, PodChange change, PodUids before, double settle_s)
    : expected_(expected), change_(change), before_(std::move(before)), settle_s_(settle_s) {}

std::optional<std::string> PodsGate::unsettled_reason(const std::vector<PodState>& pods) const {
  const bool replaces = change_ == PodChange::kReplaces;
  std::size_t counted = 0;
  std::vector<std::string> waiting;
  for (const auto& pod : by_name(pods)) {
    const bool old = replaces && !pod.uid.empty() && before_.count(pod.uid) > 0;
    if (pod.ready && !pod.terminating && !old) {
      ++counted;
      continue;
    }
    waiting.push_back(pod.name + ": " + state_text(pod) + (old ? ", from before the change" : ""));
  }
  const auto revisions = live_revisions(pods);
  const bool count_ok =
      expected_ > 0 ? counted == static_cast<std::size_t>(expected_) : counted > 0;
  if (count_ok && waiting.empty() && revisions.size() <= 1) return std::nullopt;

  std::string reason;
  if (expected_ <= 0) {
    reason =
        counted == 0 ? "no pod Ready (want at least 1)" : std::to_string(counted) + " pods Ready";
  } else if (counted > static_cast<std::size_t>(expected_)) {
    // More than expected: a rollout still has old pods up; the arms must run on equal counts.
    reason = std::to_string(counted) + " pods Ready, want " + std::to_string(expected_);
  } else {
    reason = std::to_string(counted) + " of " + std::to_string(expected_) + " pods Ready";
  }
  if (pods.empty()) return reason + " (no pod matches the selector)";
  if (!waiting.empty()) reason += " (" + listed(waiting) + ")";
  if (revisions.size() > 1) reason += "; " + revisions_text(revisions);
  return reason;
}

std::optional<std::string> PodsGate::check(const std::vector<PodState>& pods, double now_s) {
  // Before a change that restarts nothing, every pod is one the cells will use.
  fail_on_stuck_pod(pods, change_ == PodChange::kNone ? PodUids{} : before_);
  if (auto reason = unsettled_reason(pods)) {
    seen_moving_ = true;
    settled_since_s_.reset();
    return reason;
  }
  if (change_ == PodChange::kNone && !seen_moving_) return std::nullopt;
  if (settle_s_ <= 0) return std::nullopt;
  // The same pods all along: one replaced between two polls restarts the count.
  PodUids serving;
  for (const auto& pod : serving_pods(pods)) serving.insert(pod.uid.empty() ? pod.name : pod.uid);
  if (!settled_since_s_ || serving != settled_uids_) {
    settled_since_s_ = now_s;
    settled_uids_ = serving;
  }
  const double held = now_s - *settled_since_s_;
  if (held >= settle_s_) return std::nullopt;
  return "settling: " + std::to_string(serving.size()) + " pods Ready and unchanged for " +
         format_duration_s(held) + " of " + format_duration_s(settle_s_) +
         " (target.readiness.settle; an operator may act late)";
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
