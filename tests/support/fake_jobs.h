// The Job controller and kubelet of the fake API server (tests/support/fake_apiserver.h) for
// batch/v1 Indexed Jobs, whose pods run as LOCAL PROCESSES: kvsweep's load shards, driven
// through the real kubectl (create/apply/get/delete job, logs, exec).
//
// For each Job created (POST, as kubectl create/apply do) with spec.completionMode Indexed, it
// creates a pod per index 0..completions-1, at most spec.parallelism at a time (default:
// completions), named <job>-<index>-<5 random lowercase letters>, with the template's labels
// plus job-name, batch.kubernetes.io/job-name, batch.kubernetes.io/controller-uid,
// controller-uid and batch.kubernetes.io/job-completion-index, the annotation
// batch.kubernetes.io/job-completion-index, an ownerReference to the Job (controller: true),
// and the template's spec (nodeSelector, containers with their resources) copied. Jobs that
// are not Indexed are stored and left alone.
//
// A pod's first container runs as a process: argv = command + args (the first element mapped
// through options.binaries, else looked up on PATH; no shell), cwd = a private temporary
// directory (the pod's "filesystem", removed with the controller), environment = the test
// process's + the container's env entries with a plain `value` (valueFrom is ignored) +
// JOB_COMPLETION_INDEX=<index> + HOSTNAME=<pod name>. stdout and stderr go to one file in that
// directory, served by GET pods/NAME/log (kubectl logs); kubectl exec runs its argv in the
// same directory with the same environment (exec_websocket.h). Other containers and init
// containers do not run.
//
// Pod lifecycle, as the kubelet reports it, each step a MODIFIED event: Pending (container
// waiting, ContainerCreating) for start_delay_s; Running once the process started (podIP
// 127.0.0.1, container running with startedAt, condition Ready True); when it exits: phase
// Succeeded (exit 0, terminated reason Completed) or Failed (terminated reason Error with the
// exit code; a signal N reads as exit code 128+N), Ready False. A process that cannot start
// (no such binary) fails its pod with reason StartError, exit code 128.
//
// Job status follows: startTime, active (pods not finished), ready (pods running),
// succeeded, failed, completedIndexes ("0-2,4"). A failed pod counts against
// spec.backoffLimit (default 6): while failed <= backoffLimit the index gets a new pod (after
// start_delay_s); past it the Job gets conditions FailureTarget and Failed (True, reason
// BackoffLimitExceeded) and the processes of its active pods are killed (their pods end
// Failed; they are not deleted). Every index succeeded: conditions SuccessCriteriaMet and
// Complete (True, reason CompletionsReached), completionTime.
//
// Deletion: a Job deleted by a client (DELETE, any propagationPolicy but Orphan; the server
// removes it at once) has its pods' processes sent SIGTERM, then SIGKILL kill_grace_s later,
// and its pods deleted (server.terminate: the pods' termination delay applies). With Orphan the
// pods and processes stay. A pod deleted by a client has its process killed the same way and
// is NOT replaced. All of this happens on the server's threads, without a lag.
//
// The controller is added with FakeApiServer::add_controller, so it coexists with the
// operators of fake_operators.h (set_controller), and installs the server's PodRuntime. It
// must not outlive the server. Its destructor sends SIGTERM to every process still running,
// SIGKILL after kill_grace_s, reaps them, joins its threads and removes the pod directories.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "tests/support/fake_apiserver.h"

namespace kvsweep::testing {

// A container waiting with this reason and message (ErrImagePull, ImagePullBackOff, ...).
struct PodWaiting {
  std::string reason;
  std::string message;
};

struct JobControllerOptions {
  // The first argv element of a container or an exec, mapped to the binary to run:
  // {"kvsweep", "/path/to/build/orchestrator/cli/kvsweep"}. Names not here run as given.
  std::map<std::string, std::string> binaries;
  double start_delay_s = 0.1;  // a new pod is Pending (ContainerCreating) this long
  double kill_grace_s = 1.0;   // SIGTERM, then SIGKILL this long after
  // Faults, by Job name (any namespace): its pods never start, Pending and waiting with this
  // reason and message (an image that cannot be pulled) ...
  std::map<std::string, PodWaiting> stuck_jobs;
  // ... or stay Pending (ContainerCreating) this long instead of start_delay_s.
  std::map<std::string, double> start_delays_s;
};

class JobController {
 public:
  JobController(FakeApiServer& server, JobControllerOptions options = {});
  ~JobController();
  JobController(const JobController&) = delete;
  JobController& operator=(const JobController&) = delete;

  // What the controller added to the server does with each client call; public for a test
  // that wants to call it itself (it is already called for every call). Thread-safe.
  void handle(const ApiCall& call);

  // Starts the pods of an Indexed Job that was put() on the server (put calls no controller).
  // No-op when the Job is absent, not Indexed, or already started.
  void start(const std::string& job, const std::string& namespace_name = "default");

  // Fault injection: the running (or Pending) pod of `index` is killed (SIGKILL to its process
  // group) and ends Failed with its container terminated with `reason` and `exit_code`
  // ("OOMKilled", 137), counting against backoffLimit as any failure. Returns false when the
  // index has no unfinished pod.
  bool fail_pod(const std::string& job, int index, const std::string& reason, int exit_code,
                const std::string& namespace_name = "default");

  // Fault injection for pods created from now on: as options.stuck_jobs / start_delays_s.
  void hold_pending(const std::string& job, PodWaiting waiting);
  void delay_start(const std::string& job, double seconds);

  // The newest pod of a Job's index, as the controller sees it; nullopt when it made none.
  struct PodInfo {
    std::string name;
    std::string dir;       // the pod's directory: its process's cwd, where its log file is
    pid_t pid = -1;        // its process, -1 before it started (or when it could not)
    bool running = false;  // the process started and has not exited
  };
  std::optional<PodInfo> pod(const std::string& job, int index,
                             const std::string& namespace_name = "default") const;

  struct Core;

 private:
  std::shared_ptr<Core> core_;
  int controller_id_ = 0;
};

}  // namespace kvsweep::testing
