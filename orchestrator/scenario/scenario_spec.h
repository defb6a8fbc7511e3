// A scenario as the user wrote it: the experiment matrix, the target, the load, the report.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/search_spec.h"
#include "common/source_mark.h"
#include "common/validity_rules.h"
#include "driver/datasets/dataset_options.h"
#include "driver/load_options.h"

namespace YAML {
class Node;
}

namespace kvsweep::sim {
struct EppConfig;
}

namespace kvsweep::orchestrator {

// When a factor's level may change. Deploy-time factors change the serving stack (a redeploy,
// a restart, another Model): the planner puts them outermost so they change as few times as
// possible. Run-time factors are cheap to change (a live patch, a load-driver setting) and
// may change every cell.
enum class FactorPhase { kDeploy, kRun };

// One value a factor level gives a scenario field, by the field's path. Paths:
//   concurrency                 the factor every scenario has (users, or the in-flight cap)
//   seed                        the scenario's seed (dataset, arrival schedule)
//   load.<key>, load.dataset.<key>, load.warmup.requests   any key of the load section
//   target.<knob>               a knob the target kind applies (strategy, prefix_caching, ...)
//   target.base_url             where an arm's load goes (an arm that bypasses the router)
//   target.sim.<knob>           what --target sim applies in place of the arm's own knobs
// The loader checks every value by reading it with the field's own reader, so a setting holds
// exactly what the field would accept; `value` is the scalar as written.
struct Setting {
  std::string path;
  std::string value;
  SourceMark mark;  // where the value was written (the level, or its entry in an arm)
};

// One level of a factor: what the plan and the reports call it, and what it sets.
struct FactorLevel {
  std::string label;              // the value as written, or a named arm's name
  std::vector<Setting> settings;  // in the order written; a value factor's first is its path
  SourceMark mark;
};

struct FactorSpec {
  std::string name;  // as written: "concurrency", "strategy", "load.request_rate", "arm"
  // The field the levels' labels set ("load.request_rate", "target.strategy"); "" for a factor
  // of named arms, whose labels are names and whose levels set only their mappings.
  std::string path;
  std::vector<FactorLevel> levels;  // in order, at least one
  FactorPhase phase = FactorPhase::kRun;
  SourceMark mark;

  bool named_arms() const { return path.empty(); }
  std::vector<std::string> labels() const {
    std::vector<std::string> out;
    for (const auto& level : levels) out.push_back(level.label);
    return out;
  }
  // Whether some level sets `field_path`.
  bool sets(const std::string& field_path) const {
    for (const auto& level : levels) {
      for (const auto& setting : level.settings) {
        if (setting.path == field_path) return true;
      }
    }
    return false;
  }
};

// A factor whose every level sets one field to its label: what `name: [a, b]` reads as. For
// scenarios built in code (tests, tools) rather than read from a file.
inline FactorSpec value_factor(const std::string& name, const std::string& path,
                               const std::vector<std::string>& values,
                               FactorPhase phase = FactorPhase::kRun) {
  FactorSpec factor;
  factor.name = name;
  factor.path = path;
  factor.phase = phase;
  for (const auto& value : values) factor.levels.push_back({value, {{path, value, {}}}, {}});
  return factor;
}

// The path of a target knob: "strategy" is set through "target.strategy".
inline std::string knob_path(const std::string& knob) { return "target." + knob; }

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
  // After a change applied live, which restarts nothing and which nothing observable says has
  // taken hold (a KubeAI loadBalancing patch: KubeAI's proxy reads the Model through its
  // informer some time after the PATCH answers; a 0.5 s lag was seen): how long after the
  // change answered the first cell's load may begin. The gates' own time counts towards it.
  // 0 = no wait.
  double live_settle_s = 2;
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
  // At most this many conversations of the dataset (or its stand-in): a rehearsal of a few
  // hundred requests over thousands of conversations sends only first turns in open loop
  // (turn-major order), and so shows nothing of what a prefix cache finds in later turns.
  int conversations = 0;
};

// The router's health checks of its replicas (kinds sim and replicas): probes of /health and
// refused connects take a replica out of routing, a probe answered puts it back.
struct HealthSpec {
  double interval_s = 1;  // between probes of each replica; 0 = no health checks
  int failures = 3;       // consecutive failed probes or connects that take a replica out
};

struct TargetSpec {
  std::string kind = "sim";  // sim | replicas | kubeai | dynamo | kubectl | endpoints | llmd
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

  // llmd: the InferencePool (its selector finds the model servers) and its endpoint picker:
  // the Deployment, and the ConfigMap key it reads its EndpointPickerConfig from. "" = the
  // Inference Extension chart's names: <pool>-epp for both, key default-plugins.yaml.
  std::string pool;
  std::string epp_deployment;
  std::string epp_configmap;
  std::string epp_config_key = "default-plugins.yaml";
  int epp_metrics_port = 9090;  // the EPP's own /metrics (its --metrics-port)

  // cold cache policy: "reset" POSTs /reset_prefix_cache to every replica; "restart" deletes
  // the pods and waits for readiness again.
  std::string cold_method = "reset";

  // kubectl / endpoints: factor name -> level -> action.
  std::map<std::string, std::map<std::string, LevelAction>> levels;

  ReadinessSpec readiness;
  MetricsSpec metrics;
  CostSpec cost;  // target.cost: what the fleet costs, for cost per million tokens
};

// The cache state a cell starts from: cold (the target's cold_method), warm (a pre-pass of the
// measured workload first, as seed 001 ran everything twice) or as-is (nothing).
enum class CachePolicy { kCold, kWarm, kAsIs };

// "cold", "warm", "as-is": how scenarios write it and reports show it.
inline const char* cache_policy_name(CachePolicy policy) {
  switch (policy) {
    case CachePolicy::kCold:
      return "cold";
    case CachePolicy::kWarm:
      return "warm";
    case CachePolicy::kAsIs:
      return "as-is";
  }
  return "cold";
}

struct LoadSpec {
  // Which workload and its parameters; file paths are resolved against the scenario's folder.
  driver::DatasetOptions dataset = default_dataset();
  // `dataset.stand_in`: a generated dataset with the real file's statistics, for a file that
  // cannot be shipped. Used in place of `dataset` when its file is absent and the sweep runs on
  // the simulated fleet (--target sim, --target predict, kind sim); a real target still needs
  // the file (sweep/cell_runner.h load_workloads).
  std::optional<driver::DatasetOptions> stand_in;
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
  // Multi-turn order in open loop (driver/load_options.h): independent, the default (every
  // turn prebuilt from the dataset and sent on the arrival schedule, as seed 002's client did)
  // or sequential (a conversation's next turn only after its previous one finished and
  // think_time_s passed, as a chat user or seed 001's k6 threads). A closed loop is sequential.
  driver::LoadOptions::Turns turns = driver::LoadOptions::Turns::kIndependent;
  double think_time_s = 0;
  int threads = 0;  // the driver's event-loop threads; 0 = one per core
  // One connection per request, closed after it (vLLM's client of the seeds' time opened one
  // per request): a Kubernetes Service then picks a pod per request, as kube-proxy does per
  // connection. Off: connections are kept alive and reused.
  bool new_connection_per_request = false;
  std::int64_t num_requests = 0;  // measured requests per cell; 0 = bounded by duration only
  double duration_s = 0;          // measured phase per cell; 0 = bounded by num_requests only
  std::int64_t warmup_requests = 0;
  double timeout_s = 300;  // per request
  // The most bytes one SSE event (or a non-streamed body) may hold; past it the request fails
  // as "event too large" (driver::LoadOptions::max_event_bytes).
  std::int64_t max_event_bytes = static_cast<std::int64_t>(driver::kDefaultMaxSseEventBytes);
  CachePolicy cache = CachePolicy::kCold;
  // cache warm: how many unmeasured passes of the measured workload come first (seed 001 ran
  // everything twice before measuring); only read with cache: warm.
  int warm_passes = 1;
  // Open loop: end a cell early, as done, once its TTFT rises through it by the over-capacity
  // rule (driver::LoadOptions::stop_when_over_capacity). Off by default: the cell then runs
  // its whole length and its verdict says it was over capacity.
  bool stop_when_over_capacity = false;
  // The measured phase split into this many shards (processes) that together send exactly
  // the schedule one process would (docs/driver.md, "Shards"); 1: one process.
  int shards = 1;
  // Where the shards run (load.shard_job): local processes, or a Kubernetes Indexed Job.
  struct ShardJob {
    std::string runner;  // "local" or "job"; "" = a Job on a Kubernetes target, else local
    std::string image = "kvsweep:latest";  // the kvsweep image the pods run (deploy/Dockerfile)
    std::string cpu;                       // each pod's requests = limits ("2"); "" none
    std::string memory;                    // ("2Gi")
    std::map<std::string, std::string> node_selector;
    std::string env_secret;  // a Secret whose keys become the pods' env (the API key)
  } shard_job;
  ValidityRules validity;  // load.validity: the thresholds of each cell's verdict

  static driver::DatasetOptions default_dataset() {
    driver::DatasetOptions d;
    d.kind = "synthetic-multiturn";
    return d;
  }
};

// An EndpointPickerConfig (llm-d's endpoint picker) named once in the scenario, under `epp:` or
// by a strategy level `{epp: FILE}`, and used by its name as a strategy level: the name is the
// level everywhere (plan, store, reports), the config is what the target applies for it.
struct EppConfigSpec {
  std::string name;
  std::string file;  // the file it was read from, as resolved; "" when written inline
  std::shared_ptr<const sim::EppConfig> config;
  SourceMark mark;
};

struct ScenarioSpec {
  std::string path;  // as given on the command line, used in messages
  std::string text;  // the file as read
  // The file's one YAML document as the loader parsed it: the cell settings read a cell's
  // levels over it (cell_settings.h), so the file is parsed once. Never changed (a reader
  // copies it before putting a level in); null for a spec built in code.
  std::shared_ptr<const YAML::Node> document;
  std::string name;
  std::string description;
  TargetSpec target;
  std::string model = "sim-model";
  std::uint64_t seed = 1;
  std::vector<FactorSpec> factors;  // as written; "concurrency" is always there
  // (a search's factor, concurrency or load.request_rate, is added by the loader: one level, low)
  int repeats = 1;
  LoadSpec load;
  std::string baseline;  // report.baseline: an arm label; defaults to the first arm
  SloSpec slo;           // slo: what a good cell is, for the capacity search and the reports
  SearchSpec search;     // search: each arm's capacity under the SLO, probe by probe
  // epp: and {epp: FILE} levels: llm-d endpoint picker configurations by name.
  std::map<std::string, EppConfigSpec> epp_configs;
  std::map<std::string, SourceMark> marks;  // dotted field path -> where it was written

  // The EPP configuration a strategy level names, or nullptr.
  const EppConfigSpec* epp_config(const std::string& level) const {
    const auto found = epp_configs.find(level);
    return found == epp_configs.end() ? nullptr : &found->second;
  }

  const FactorSpec* factor(const std::string& name) const {
    for (const auto& f : factors) {
      if (f.name == name) return &f;
    }
    return nullptr;
  }

  // The factor some level of which sets `path` ("target.strategy"), or nullptr. The loader
  // refuses two factors setting one path, so there is at most one.
  const FactorSpec* factor_setting(const std::string& path) const {
    for (const auto& f : factors) {
      if (f.sets(path)) return &f;
    }
    return nullptr;
  }

  // The target knobs the factors set (target.<knob>, directly or in named arms), in the order
  // first written; not target.base_url nor the stand-in's target.sim.<knob>.
  std::vector<std::string> knobs() const {
    std::vector<std::string> out;
    for (const auto& f : factors) {
      for (const auto& level : f.levels) {
        for (const auto& s : level.settings) {
          const std::string knob = s.path.rfind("target.", 0) == 0 ? s.path.substr(7) : "";
          if (knob.empty() || knob == "base_url" || knob.find('.') != std::string::npos) continue;
          bool seen = false;
          for (const auto& k : out) seen = seen || k == knob;
          if (!seen) out.push_back(knob);
        }
      }
    }
    return out;
  }

  // Every value the factors give target knob `knob`, in order written, each once.
  std::vector<std::string> knob_levels(const std::string& knob) const {
    std::vector<std::string> out;
    for (const auto& f : factors) {
      for (const auto& level : f.levels) {
        for (const auto& s : level.settings) {
          if (s.path != knob_path(knob)) continue;
          bool seen = false;
          for (const auto& v : out) seen = seen || v == s.value;
          if (!seen) out.push_back(s.value);
        }
      }
    }
    return out;
  }
};

}  // namespace kvsweep::orchestrator
