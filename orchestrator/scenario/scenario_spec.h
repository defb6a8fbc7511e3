// A scenario as the user wrote it: the experiment matrix, the target, the load, the report.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/source_mark.h"
#include "driver/datasets/dataset_options.h"

namespace kvsweep::orchestrator {

// When a factor's level may change. Deploy-time factors change the serving stack (a redeploy,
// a restart, another Model): the planner puts them outermost so they change as few times as
// possible. Run-time factors are cheap to change (a live patch, a load-driver setting) and
// may change every cell.
enum class FactorPhase { kDeploy, kRun };

// Factors the load driver applies itself; every other factor is applied to the target.
// "cache" is the per-cell cache policy: cold | warm | as-is.
inline bool is_load_factor(const std::string& name) {
  return name == "concurrency" || name == "request_rate" || name == "max_tokens" || name == "cache";
}

struct FactorSpec {
  std::string name;                 // "strategy", "concurrency", "prefix_caching", ...
  std::vector<std::string> levels;  // as written (scalars), in order
  FactorPhase phase = FactorPhase::kRun;
  SourceMark mark;
};

// Per-gate time limits of the layered readiness check after every apply, and how a failed
// apply or gate is treated.
struct ReadinessSpec {
  double resource_s = 1800;   // the custom resource's status (Model ready replicas, DGD Ready)
  double pods_s = 1800;       // Ready pod count = expected; terminal pod states fail at once
  double models_s = 600;      // GET /v1/models lists the model
  double completion_s = 120;  // a 1-token completion answers 200
  double poll_s = 2;          // between polls of kubectl and HTTP gates
  // How long the pods must stay settled (one revision, all Ready, none Pending or
  // Terminating, the expected count) after a change that may roll them before the pods gate
  // opens: an operator acts some time after the change, and nothing else says it has. 0 = no
  // wait. A change known not to roll pods (KubeAI's loadBalancing) does not wait for it.
  double settle_s = 10;
  // How many more times a failed apply and its gates are tried before the cell fails, and
  // with it the rest of its arm.
  int retries = 0;
};

struct MetricsSpec {
  std::vector<std::string> urls;  // explicit /metrics URLs; when empty, found from the pods
  int port = 0;                   // pod port for discovery; 0 = the pod's first containerPort
  std::string path = "/metrics";
  double interval_s = 5;  // scrape period during the measured phase; 0 = before/after only
};

// What one level of a factor does on the `kubectl` and `endpoints` targets.
struct LevelAction {
  std::vector<std::vector<std::string>> apply;  // kubectl argv lists (without "kubectl")
  std::vector<std::vector<std::string>> wait;   // kubectl argv lists run after apply, in order
  std::string base_url;                         // endpoints: where the load goes at this level
  std::vector<std::string> metrics_urls;        // endpoints: that level's /metrics
  SourceMark mark;
};

// The embedded fleet, as the target or standing in for a cluster (`--target sim`).
struct SimSpec {
  int replicas = 4;
  std::string profile = "demo";  // sim timing profile (sim/profile.h)
  // A rehearsal is for the flow, not the figures: with --target sim, each cell's measured
  // phase is cut to these (0 = as the load section says), so a sweep written for 5-minute
  // cells on a cluster finishes on a laptop in minutes.
  double duration_s = 0;
  std::int64_t num_requests = 0;
  int max_tokens = 0;
};

// The router's health checks of its replicas (kinds sim and replicas): probes of /health and
// refused connects take a replica out of routing, a probe answered puts it back.
struct HealthSpec {
  double interval_s = 1;  // between probes of each replica; 0 = no health checks
  int failures = 3;       // consecutive failed probes or connects that take a replica out
};

struct TargetSpec {
  std::string kind = "sim";  // sim | replicas | kubeai | dynamo | kubectl | endpoints
  SimSpec sim;               // kind sim: the fleet; other kinds: the stand-in for --target sim
  HealthSpec health;         // sim, replicas

  // replicas: plain OpenAI-compatible servers behind kvsweep's own router, which the target
  // runs on loopback. Replica i (header x-kvsweep-replica: i) is upstreams[i].
  std::vector<std::string> upstreams;
  double kv_ttl_s = 120;  // kv-aware without KV events: how long a routed prefix counts as cached

  // Every kubectl-driven kind (kubeai, dynamo, kubectl).
  std::string kubectl = "kubectl";  // the binary, looked up on PATH
  std::string kubeconfig;           // "" = kubectl's default (KUBECONFIG, ~/.kube/config)
  std::string context;              // "" = the kubeconfig's current context
  std::string namespace_name = "default";
  double command_timeout_s = 120;  // per kubectl call
  std::string resource;            // kubeai: the Model's name; dynamo: the DGD's name
  int replicas = 0;                // expected Ready replicas/workers; 0 = not checked (kubectl)
  std::string pod_selector;        // pods counted by the pods gate; "" = the kind's default
  std::string base_url;            // where the load driver sends requests (all kinds but sim)

  // dynamo
  std::string frontend_service = "Frontend";  // spec.services key that carries DYN_ROUTER_MODE
  std::string frontend_selector;              // frontend pods; "" = the kind's default
  bool restart_workers = true;  // delete worker pods on every apply: each arm starts cold

  // cold cache policy: "reset" POSTs /reset_prefix_cache to every replica; "restart" deletes
  // the pods and waits for readiness again.
  std::string cold_method = "reset";

  // kubectl / endpoints: factor name -> level -> action.
  std::map<std::string, std::map<std::string, LevelAction>> levels;

  ReadinessSpec readiness;
  MetricsSpec metrics;
};

struct LoadSpec {
  // Which workload and its parameters; file paths are resolved against the scenario's folder.
  driver::DatasetOptions dataset = default_dataset();
  std::string endpoint = "chat";  // "chat" | "completions"
  bool stream = true;
  int max_tokens = 64;     // unless the dataset sets a turn's own
  int max_tokens_cap = 0;  // set by a rehearsal (target.sim.max_tokens), never by the file
  bool ignore_eos = true;
  std::optional<double> temperature;
  // Shape: closed loop (each concurrency level is that many users) unless request_rate > 0;
  // open loop then sends at request_rate with the concurrency level as in-flight cap, as seed
  // 002 varied --max-concurrency at a fixed --request-rate.
  double request_rate = 0;
  double burstiness = 1.0;
  std::int64_t num_requests = 0;  // measured requests per cell; 0 = bounded by duration only
  double duration_s = 0;          // measured phase per cell; 0 = bounded by num_requests only
  std::int64_t warmup_requests = 0;
  double timeout_s = 300;  // per request
  // Cache state each cell starts from: "cold" (the target's cold_method), "warm" (a pre-pass
  // of the measured workload first, as seed 001 ran everything twice) or "as-is".
  std::string cache = "cold";

  static driver::DatasetOptions default_dataset() {
    driver::DatasetOptions d;
    d.kind = "synthetic-multiturn";
    return d;
  }
};

struct ScenarioSpec {
  std::string path;  // as given on the command line, used in messages
  std::string text;  // the file as read
  std::string name;
  std::string description;
  TargetSpec target;
  std::string model = "sim-model";
  std::uint64_t seed = 1;
  std::vector<FactorSpec> factors;  // as written; "concurrency" is always there
  int repeats = 1;
  LoadSpec load;
  std::string baseline;  // report.baseline: an arm label; defaults to the first arm
  std::map<std::string, SourceMark> marks;  // dotted field path -> where it was written

  const FactorSpec* factor(const std::string& name) const {
    for (const auto& f : factors) {
      if (f.name == name) return &f;
    }
    return nullptr;
  }
};

}  // namespace kvsweep::orchestrator
