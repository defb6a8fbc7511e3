// Router strategies behind one interface: pick a replica from a request's key and the loads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/router/chwbl.h"

namespace kvsweep::sim {

struct EppConfig;

// What the EPP scrapes from a model server's /metrics (vllm:num_requests_waiting and the KV
// cache usage gauge): the last figures read, 0 before any.
struct ServerLoad {
  int waiting = 0;
  double kv_usage = 0;  // 0..1
};

// What a strategy may see of a request: no HTTP, only what KubeAI's balancer sees.
struct RouteQuery {
  // Text of the first message with role "user" (system prompt ignored), text parts
  // concatenated; empty when there is none. Prefix strategies cut their own key from it.
  std::string_view first_user_message;
  std::span<const int> in_flight;  // per replica, counted by the router; size = replicas
  // Per replica, 1 when it may be chosen (the router's health checks); empty: every replica
  // may be. Every strategy skips the others as if they were not there.
  std::span<const std::uint8_t> routable{};

  // The rest is filled only for strategies that read the KV view (needs_blocks()), or when the
  // approximate KV index learns from every request (route_decider.h); empty or 0 otherwise.
  std::string_view session_id{};          // the session header's value; empty when absent
  std::span<const int> overlap_blocks{};  // per replica: consecutive request blocks it holds,
                                          // counted from the first block (Dynamo's overlap)
  int prompt_tokens = 0;                  // input sequence length (isl)
  int block_size = 16;
  std::span<const std::int64_t>
      active_blocks{};  // per replica: blocks of routed, unfinished requests
  std::span<const std::int64_t>
      prefill_tokens{};  // per replica: routed prompt tokens not yet prefilled
  std::span<const std::size_t> index_sizes{};  // per replica: blocks in its KV index

  // Filled only for strategies that ask (needs_prompt_text(), needs_server_loads()).
  std::string_view prompt_text{};              // the EPP's text of the request (epp_scheduler.h)
  std::span<const ServerLoad> server_loads{};  // per replica, as last read from its /metrics
};

// Dynamo's KV router (2025 form, lib/kv-router/src/selector.rs) defaults.
struct KvAwareOptions {
  double overlap_weight = 1.0;  // overlap_score_weight
  double temperature = 0.0;     // router_temperature: 0 = argmin, > 0 = softmax sampling
};

// Every strategy's parameters; each strategy reads its own.
struct StrategyParams {
  ChwblOptions chwbl;
  KvAwareOptions kv_aware;
  std::shared_ptr<const EppConfig> epp;  // "epp": the EndpointPickerConfig it runs
};

// What one of a strategy's own prefix indexes found for its last pick (the EPP's prefix
// scorers): the request's blocks, and how many leading ones the chosen replica already held.
struct PrefixLookup {
  int matched_blocks = 0;
  int request_blocks = 0;
  int block_chars = 0;  // characters hashed a block (the EPP's hashBlockSize)
};

// Called on one thread only (the router's io thread); a strategy may keep state (round-robin
// cursor, RNG).
class RoutingStrategy {
 public:
  virtual ~RoutingStrategy() = default;
  virtual int pick(const RouteQuery& query) = 0;  // index into query.in_flight
  // Whether pick() reads the request's blocks (overlap_blocks, prompt_tokens and the loads in
  // blocks): only then is the request tokenized and hashed, which costs more than the pick.
  virtual bool needs_blocks() const { return false; }
  // Whether pick() reads the request's prompt text (RouteQuery::prompt_text).
  virtual bool needs_prompt_text() const { return false; }
  // Whether pick() reads the replicas' scraped loads (RouteQuery::server_loads).
  virtual bool needs_server_loads() const { return false; }
  // For a strategy that keeps prefix indexes of its own (epp): what each found for the last
  // pick, in the indexes' order, and the entries of the first (every replica's summed). A
  // strategy without them: empty and 0. The router publishes these as the EPP's own metrics.
  virtual std::span<const PrefixLookup> last_prefix_lookups() const { return {}; }
  virtual std::size_t prefix_index_entries() const { return 0; }
};

// "random" (what a Kubernetes Service does), "round-robin", "least-load", "prefix-hash",
// "kv-aware" (Dynamo), "session" (affinity on a session header, else least-load), "epp" (llm-d's
// endpoint picker, epp_scheduler.h; needs StrategyParams::epp).
std::vector<std::string> strategy_names();

// "unknown strategy "prefix_hash"; did you mean "prefix-hash"?; valid: ..."
std::string unknown_strategy_message(const std::string& name);

// Dynamo's cost of sending a request to each replica: overlap_weight * prefill_blocks +
// decode_blocks, with prefill_blocks = (replica's pending prefill tokens + prompt tokens not
// cached there) / block_size and decode_blocks = replica's active blocks + the blocks this
// request adds there (its blocks minus the overlap). Lower is better.
std::vector<double> kv_aware_costs(const RouteQuery& query, double overlap_weight);

// The strategies this unit defines (every name of strategy_names() but "epp"), or nullptr.
// Callers want make_strategy (strategy_factory.h), which adds the EPP.
std::unique_ptr<RoutingStrategy> make_builtin_strategy(const std::string& name, int replicas,
                                                       std::uint64_t seed,
                                                       const StrategyParams& params);

// Whether the query lets `replica` be chosen.
inline bool may_route(const RouteQuery& query, std::size_t replica) {
  return query.routable.empty() || query.routable[replica] != 0;
}

// Names the ring hashes, as KubeAI hashes pod names: "replica-0", "replica-1", ...
std::string replica_name(int index);

}  // namespace kvsweep::sim
