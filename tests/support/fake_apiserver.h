// A Kubernetes API server small enough for tests, on loopback, that the real kubectl binary
// can drive: discovery, get/list/watch, merge and JSON patch, create, delete. It knows pods,
// apps/v1 deployments, KubeAI Models and Dynamo DynamoGraphDeployments, keeps every object in
// memory and logs every request, so a test can assert on the resulting objects and on the
// order of calls. A test-provided controller plays the operators (pods becoming Ready, ...),
// acting later on the server's timer thread as real controllers do (tests/support/
// fake_operators.h has KubeAI's, Dynamo's and a Deployment's); graceful deletion leaves pods
// Terminating for a while; injected faults answer 409, 5xx or slowly, as a busy server does.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/exec_websocket.h"

namespace kvsweep::testing {

// One request as the server saw it.
struct ApiCall {
  std::string method;  // GET, PATCH, POST, DELETE, PUT
  std::string path;    // "/apis/kubeai.org/v1/namespaces/default/models/m1"
  std::string query;   // raw query string, "" if none ("watch=true&fieldSelector=...")
  std::string
      content_type;  // PATCH: "application/merge-patch+json" | "application/json-patch+json" | ...
  std::string body;
  // Filled for object requests; "" for discovery and other paths.
  std::string resource;  // plural: "pods", "deployments", "models", "dynamographdeployments"
  std::string namespace_name;
  std::string name;  // "" for list/create
};

// Resources served (all namespaced):
//   v1 pods (kind Pod); apps/v1 deployments (Deployment);
//   kubeai.org/v1 models (Model); nvidia.com/v1alpha1 dynamographdeployments
//   (DynamoGraphDeployment, short name dgd); inference.networking.k8s.io/v1 inferencepools
//   (InferencePool) and v1 configmaps (llm-d); v1 services and batch/v1 cronjobs (deploy/'s
//   manifests); batch/v1 jobs (Job; tests/support/fake_jobs.h runs Indexed Jobs' pods as local
//   processes). A mutating request with dryRun=All (kubectl apply --dry-run=server) is
//   answered without storing anything. A DELETE's propagationPolicy (kubectl's --cascade) is
//   recorded in the call's body; the object goes at once whatever it says (no foreground
//   wait): what becomes of its dependents is a controller's business.
// Subresources of pods, answered through a PodRuntime (set_pod_runtime): GET pods/NAME/log
//   (kubectl logs) and pods/NAME/exec (kubectl exec, over a WebSocket: exec_websocket.h).
//   The public port is a FrontDoor (front_door.h) relaying every other request to the HTTP
//   server on an internal port.
class FakeApiServer {
 public:
  // Binds 127.0.0.1 on an ephemeral port and serves on its own threads until destroyed.
  FakeApiServer();
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  std::string url() const;  // "http://127.0.0.1:PORT"

  // Writes a kubeconfig (plain http, no auth, current context's namespace `namespace_name`)
  // to `path`.
  void write_kubeconfig(const std::string& path,
                        const std::string& namespace_name = "default") const;

  // Creates or replaces an object (namespace from metadata.namespace, "default" if absent).
  // Sets metadata.resourceVersion, uid, creationTimestamp; notifies watchers (ADDED/MODIFIED).
  // Does not call the controller. Thread-safe.
  void put(const std::string& resource, nlohmann::json object);
  std::optional<nlohmann::json> get(const std::string& resource, const std::string& namespace_name,
                                    const std::string& name) const;
  std::vector<nlohmann::json> list(const std::string& resource,
                                   const std::string& namespace_name) const;
  // Removes the object and notifies watchers (DELETED). No-op when absent.
  void remove(const std::string& resource, const std::string& namespace_name,
              const std::string& name);
  // Deletes the object as a DELETE request does: Terminating for the resource's termination
  // delay, then removed (at once without one). No-op when absent. Does not call the controller.
  void terminate(const std::string& resource, const std::string& namespace_name,
                 const std::string& name);
  // Changes a stored object in place, atomically (an operator writing status while a client
  // patches the spec loses neither); a change of spec bumps the generation. Returns false,
  // changing nothing, when the object is absent. `change` must not call the server.
  bool modify(const std::string& resource, const std::string& namespace_name,
              const std::string& name, const std::function<void(nlohmann::json&)>& change);

  // Called after every successful mutating request from a client (PATCH, POST, PUT, DELETE),
  // on a server thread, with no lock held: it may call put/get/list/remove. Replaces any
  // previous controller.
  using Controller = std::function<void(FakeApiServer& server, const ApiCall& call)>;
  void set_controller(Controller controller);
  // More controllers, called as the one of set_controller is (after it, in the order added),
  // for controllers that must coexist with it (the Job controller of fake_jobs.h beside an
  // operator). Returns an id for remove_controller. A call in flight on another thread may
  // still be running a removed controller: hold state through a weak_ptr. Thread-safe.
  int add_controller(Controller controller);
  void remove_controller(int id);

  // What runs pods' containers (tests/support/fake_jobs.h installs one), for the pod
  // subresources: `logs` answers GET pods/NAME/log?container=C (kubectl logs; the whole log,
  // `follow` is not streamed) with the text, or nullopt when the pod runs nothing of its own
  // (then 400 BadRequest "container "C" in pod "NAME" is waiting to start: ..." as the real
  // server answers for a pod not started). `exec` resolves kubectl exec requests
  // (exec_websocket.h). With no runtime set, both answer as for a pod not started. One runtime
  // per server; set_pod_runtime({}) clears it. Thread-safe.
  struct PodRuntime {
    std::function<std::optional<std::string>(const std::string& namespace_name,
                                             const std::string& pod, const std::string& container)>
        logs;
    ExecResolver exec;
  };
  void set_pod_runtime(PodRuntime runtime);

  // Every request so far, in arrival order. Thread-safe.
  std::vector<ApiCall> calls() const;

  // Runs `action` on the server's one timer thread `delay_s` seconds from now (actions due at
  // the same time run in the order given), with no lock held: it may call put/get/list/remove
  // and after. Actions still pending when the server is destroyed never run. Thread-safe.
  void after(double delay_s, std::function<void()> action);

  // Graceful deletion of `resource` (a kubelet's grace period): a DELETE sets the object's
  // metadata.deletionTimestamp (a MODIFIED event: the pod is Terminating) and the object is
  // removed `seconds` later. 0, the default, removes it at once. Thread-safe.
  void set_termination_delay(const std::string& resource, double seconds);

  // A transient failure: the next `times` requests matching it wait `delay_s`, then get `code`
  // with a Status as the real server words it (409 Conflict, 500 InternalError, 503
  // ServiceUnavailable, 504 Timeout, 429 TooManyRequests, 422 Invalid) instead of being served;
  // with code 0 they are served normally after the delay (a slow answer, for a client's timeout).
  struct Fault {
    Fault(std::string method_, std::string resource_, std::string name_, int code_, int times_ = 1,
          double delay_s_ = 0)
        : method(std::move(method_)),
          resource(std::move(resource_)),
          name(std::move(name_)),
          code(code_),
          times(times_),
          delay_s(delay_s_) {}
    std::string method;    // "PATCH", "GET", ...; "" = any
    std::string resource;  // plural, "models"; "" = any object request
    std::string name;      // "" = any (lists and watches have none)
    int code = 500;
    int times = 1;
    double delay_s = 0;
    // Runs before the answer, with no lock held: another writer's change that a 409 reports.
    std::function<void(FakeApiServer&)> meanwhile;
  };
  void inject_fault(Fault fault);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A Pod object for put(): labels, Running, Ready or not, podIP, one container named "server"
// with containerPort `port`, plain env values. With `waiting_reason` (e.g. "CrashLoopBackOff")
// the container is waiting with that reason and `waiting_message`, and the pod is not Ready;
// "ContainerCreating" makes a Pending pod without a podIP, as a new pod is before it starts.
nlohmann::json make_pod(const std::string& name, const std::string& namespace_name,
                        const nlohmann::json& labels, bool ready, const std::string& pod_ip,
                        int port, const nlohmann::json& env = nlohmann::json::object(),
                        const std::string& waiting_reason = "",
                        const std::string& waiting_message = "");

}  // namespace kvsweep::testing
