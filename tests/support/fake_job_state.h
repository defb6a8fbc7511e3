// The state the fake Job controller (fake_jobs.h) keeps of its Jobs and pods, and how it
// renders them as Kubernetes objects: a pod's manifest and status, a Job's status.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace kvsweep::testing {

enum class FakePodPhase { kPending, kRunning, kSucceeded, kFailed };

// One pod of a Job and its process.
struct FakePodState {
  std::string ns, job, job_uid, name, container, dir;
  int index = 0;
  uint64_t sequence = 0;  // creation order
  FakePodPhase phase = FakePodPhase::kPending;
  std::string waiting_reason = "ContainerCreating";  // while Pending
  std::string waiting_message;
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  pid_t pid = -1;
  bool exited = false;    // reaped
  bool deleting = false;  // deleted (its Job or itself): no more status
  std::string started_at, finished_at;
  std::string fault_reason;  // fail_pod's
  int fault_exit_code = 0;
  std::string end_reason;  // Completed, Error, OOMKilled, StartError, ...
  int exit_code = 0;
};

// One Indexed Job the controller runs.
struct FakeJobState {
  std::string ns, name, uid;
  nlohmann::json spec;
  int completions = 1, parallelism = 1, backoff_limit = 6;
  int next_index = 0;  // indices below it have had a pod
  int failed = 0;
  std::set<int> succeeded;
  std::string start_time, completion_time;
  std::string condition;  // "", "Complete", "Failed"
};

std::string now_rfc3339();

// "0-2,4,6-7" from a set of indexes, as status.completedIndexes reads.
std::string index_ranges(const std::set<int>& indexes);

// The pod's .status: phase, conditions (Ready, ContainersReady, PodScheduled), podIP once
// started, its one container's state (waiting / running / terminated).
nlohmann::json fake_pod_status(const FakePodState& pod);

// The Job's .status: `active` and `ready` counted by the caller from its pods.
nlohmann::json fake_job_status(const FakeJobState& job, int active, int ready);

// The pod object as first put: the template's labels and annotations plus the Job's, an
// ownerReference to the Job, the template's spec (nodeName fake-node), a Pending status.
nlohmann::json fake_pod_manifest(const FakePodState& pod, const FakeJobState& job,
                                 const nlohmann::json& template_metadata,
                                 const nlohmann::json& template_spec);

}  // namespace kvsweep::testing
