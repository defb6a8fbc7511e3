// A Kubernetes API server small enough for tests, on loopback, that the real kubectl binary
// can drive: discovery, get/list/watch, merge and JSON patch, create, delete. It knows pods,
// apps/v1 deployments, KubeAI Models and Dynamo DynamoGraphDeployments, keeps every object in
// memory and logs every request, so a test can assert on the resulting objects and on the
// order of calls. A test-provided controller plays the operators (pods becoming Ready, ...).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

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
//   (DynamoGraphDeployment, short name dgd); v1 services and batch/v1 cronjobs (deploy/'s
//   manifests). A mutating request with dryRun=All (kubectl apply --dry-run=server) is
//   answered without storing anything.
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

  // Called after every successful mutating request from a client (PATCH, POST, PUT, DELETE),
  // on a server thread, with no lock held: it may call put/get/list/remove. Replaces any
  // previous controller.
  using Controller = std::function<void(FakeApiServer& server, const ApiCall& call)>;
  void set_controller(Controller controller);

  // Every request so far, in arrival order. Thread-safe.
  std::vector<ApiCall> calls() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A Pod object for put(): labels, Running, Ready or not, podIP, one container named "server"
// with containerPort `port`, plain env values. With `waiting_reason` (e.g. "CrashLoopBackOff")
// the container is waiting with that reason and `waiting_message`, and the pod is not Ready.
nlohmann::json make_pod(const std::string& name, const std::string& namespace_name,
                        const nlohmann::json& labels, bool ready, const std::string& pod_ip,
                        int port, const nlohmann::json& env = nlohmann::json::object(),
                        const std::string& waiting_reason = "",
                        const std::string& waiting_message = "");

}  // namespace kvsweep::testing
