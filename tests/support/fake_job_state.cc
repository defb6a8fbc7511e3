// The fake Job controller's Jobs and pods as Kubernetes objects: see fake_job_state.h.
#include "tests/support/fake_job_state.h"

#include <ctime>

namespace kvsweep::testing {

using json = nlohmann::json;

std::string now_rfc3339() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// "0-2,4,6-7" from a set of indexes, as status.completedIndexes reads.
std::string index_ranges(const std::set<int>& indexes) {
  std::string out;
  for (auto it = indexes.begin(); it != indexes.end();) {
    const int first = *it;
    int last = first;
    while (++it != indexes.end() && *it == last + 1) last = *it;
    if (!out.empty()) out += ",";
    out += std::to_string(first);
    if (last != first) out += "-" + std::to_string(last);
  }
  return out;
}

json fake_pod_status(const FakePodState& p) {
  using Phase = FakePodPhase;
  json state;
  const bool running = p.phase == Phase::kRunning;
  if (p.phase == Phase::kPending) {
    state = {{"waiting", {{"reason", p.waiting_reason}}}};
    if (!p.waiting_message.empty()) state["waiting"]["message"] = p.waiting_message;
  } else if (running) {
    state = {{"running", {{"startedAt", p.started_at}}}};
  } else {
    state = {{"terminated",
              {{"reason", p.end_reason},
               {"exitCode", p.exit_code},
               {"startedAt", p.started_at},
               {"finishedAt", p.finished_at}}}};
  }
  static const char* kPhases[] = {"Pending", "Running", "Succeeded", "Failed"};
  json status = {{"phase", kPhases[static_cast<int>(p.phase)]},
                 {"hostIP", "127.0.0.1"},
                 {"conditions",
                  {{{"type", "Ready"}, {"status", running ? "True" : "False"}},
                   {{"type", "ContainersReady"}, {"status", running ? "True" : "False"}},
                   {{"type", "PodScheduled"}, {"status", "True"}}}},
                 {"containerStatuses",
                  {{{"name", p.container},
                    {"image", "fake"},
                    {"ready", running},
                    {"started", running},
                    {"restartCount", 0},
                    {"state", state}}}}};
  if (p.phase != Phase::kPending) {
    status["podIP"] = "127.0.0.1";
    status["podIPs"] = {{{"ip", "127.0.0.1"}}};
    status["startTime"] = p.started_at;
  }
  return status;
}

json fake_job_status(const FakeJobState& j, int active, int ready) {
  json status = {{"startTime", j.start_time},
                 {"active", active},
                 {"ready", ready},
                 {"succeeded", static_cast<int>(j.succeeded.size())},
                 {"failed", j.failed},
                 {"terminating", 0}};
  if (!j.succeeded.empty()) status["completedIndexes"] = index_ranges(j.succeeded);
  if (j.condition == "Complete") {
    status["completionTime"] = j.completion_time;
    status["conditions"] = {{{"type", "SuccessCriteriaMet"},
                             {"status", "True"},
                             {"reason", "CompletionsReached"},
                             {"message", "Reached expected number of succeeded pods"},
                             {"lastTransitionTime", j.completion_time}},
                            {{"type", "Complete"},
                             {"status", "True"},
                             {"reason", "CompletionsReached"},
                             {"message", "Reached expected number of succeeded pods"},
                             {"lastTransitionTime", j.completion_time}}};
  } else if (j.condition == "Failed") {
    status["conditions"] = {{{"type", "FailureTarget"},
                             {"status", "True"},
                             {"reason", "BackoffLimitExceeded"},
                             {"message", "Job has reached the specified backoff limit"},
                             {"lastTransitionTime", j.completion_time}},
                            {{"type", "Failed"},
                             {"status", "True"},
                             {"reason", "BackoffLimitExceeded"},
                             {"message", "Job has reached the specified backoff limit"},
                             {"lastTransitionTime", j.completion_time}}};
  }
  return status;
}

json fake_pod_manifest(const FakePodState& pod, const FakeJobState& job,
                       const json& template_metadata, const json& template_spec) {
  const std::string idx = std::to_string(pod.index);
  json labels = template_metadata.value("labels", json::object());
  labels["job-name"] = job.name;
  labels["batch.kubernetes.io/job-name"] = job.name;
  labels["controller-uid"] = job.uid;
  labels["batch.kubernetes.io/controller-uid"] = job.uid;
  labels["batch.kubernetes.io/job-completion-index"] = idx;
  json annotations = template_metadata.value("annotations", json::object());
  annotations["batch.kubernetes.io/job-completion-index"] = idx;
  json object = {{"apiVersion", "v1"},
                 {"kind", "Pod"},
                 {"metadata",
                  {{"name", pod.name},
                   {"namespace", pod.ns},
                   {"labels", labels},
                   {"annotations", annotations},
                   {"ownerReferences",
                    {{{"apiVersion", "batch/v1"},
                      {"kind", "Job"},
                      {"name", job.name},
                      {"uid", job.uid},
                      {"controller", true},
                      {"blockOwnerDeletion", true}}}}}},
                 {"spec", template_spec}};
  object["spec"]["nodeName"] = "fake-node";
  object["spec"]["hostname"] = pod.name;
  object["status"] = fake_pod_status(pod);
  return object;
}

}  // namespace kvsweep::testing
