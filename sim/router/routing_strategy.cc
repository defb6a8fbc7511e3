// Router strategies behind one interface: pick a replica from a request's key and the loads.
#include "sim/router/routing_strategy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <unordered_map>

#include "common/join.h"
#include "common/spellcheck.h"

namespace kvsweep::sim {
namespace {

class RandomStrategy final : public RoutingStrategy {
 public:
  explicit RandomStrategy(std::uint64_t seed) : rng_(seed) {}
  int pick(const RouteQuery& query) override {
    if (query.routable.empty()) {
      std::uniform_int_distribution<int> any(0, static_cast<int>(query.in_flight.size()) - 1);
      return any(rng_);
    }
    std::vector<int> candidates;
    for (std::size_t r = 0; r < query.in_flight.size(); ++r) {
      if (may_route(query, r)) candidates.push_back(static_cast<int>(r));
    }
    std::uniform_int_distribution<std::size_t> any(0, candidates.size() - 1);
    return candidates[any(rng_)];
  }

 private:
  std::mt19937_64 rng_;
};

class RoundRobinStrategy final : public RoutingStrategy {
 public:
  int pick(const RouteQuery& query) override {
    // Replicas taken out are skipped; the turn goes to the next one in line.
    for (std::size_t tries = 0; tries < query.in_flight.size(); ++tries) {
      const auto chosen = static_cast<std::size_t>(next_++ % query.in_flight.size());
      if (may_route(query, chosen)) return static_cast<int>(chosen);
    }
    return static_cast<int>(next_ % query.in_flight.size());
  }

 private:
  std::uint64_t next_ = 0;
};

int least_loaded(const RouteQuery& query) {
  int best = -1;
  for (std::size_t r = 0; r < query.in_flight.size(); ++r) {
    if (!may_route(query, r)) continue;
    if (best < 0 || query.in_flight[r] < query.in_flight[static_cast<std::size_t>(best)]) {
      best = static_cast<int>(r);
    }
  }
  return std::max(best, 0);
}

// KubeAI breaks ties by Go map order (unspecified); the lowest index keeps runs repeatable.
class LeastLoadStrategy final : public RoutingStrategy {
 public:
  int pick(const RouteQuery& query) override { return least_loaded(query); }
};

// Dynamo KV routing, 2025 form: lowest cost wins at temperature 0 (ties: the replica with the
// smaller index, as Dynamo prefers the smaller radix tree, then a seeded random pick); above 0,
// softmax sampling with p_i ~ exp(-((c_i - min) / (max - min)) / T).
class KvAwareStrategy final : public RoutingStrategy {
 public:
  KvAwareStrategy(KvAwareOptions options, std::uint64_t seed) : options_(options), rng_(seed) {}
  bool needs_blocks() const override { return true; }
  int pick(const RouteQuery& query) override {
    std::vector<double> costs = kv_aware_costs(query, options_.overlap_weight);
    // A replica taken out costs infinitely much: never the lowest, weight 0 when sampling.
    double lo = std::numeric_limits<double>::infinity();
    double hi = -lo;
    for (std::size_t r = 0; r < costs.size(); ++r) {
      if (!may_route(query, r)) {
        costs[r] = std::numeric_limits<double>::infinity();
        continue;
      }
      lo = std::min(lo, costs[r]);
      hi = std::max(hi, costs[r]);
    }
    if (options_.temperature > 0 && hi > lo) {
      std::vector<double> weights;
      for (double c : costs) {
        weights.push_back(std::isinf(c) ? 0.0
                                        : std::exp(-((c - lo) / (hi - lo)) / options_.temperature));
      }
      return std::discrete_distribution<int>(weights.begin(), weights.end())(rng_);
    }
    std::vector<int> best;
    std::size_t best_size = std::numeric_limits<std::size_t>::max();
    for (std::size_t r = 0; r < costs.size(); ++r) {
      if (costs[r] > lo) continue;
      const std::size_t size = query.index_sizes.empty() ? 0 : query.index_sizes[r];
      if (size < best_size) {
        best.clear();
        best_size = size;
      }
      if (size == best_size) best.push_back(static_cast<int>(r));
    }
    if (best.size() == 1) return best.front();
    return best[std::uniform_int_distribution<std::size_t>(0, best.size() - 1)(rng_)];
  }

 private:
  KvAwareOptions options_;
  std::mt19937_64 rng_;
};

// Session affinity: the first request of a session goes to the least-loaded replica and every
// later one with the same session id follows it (a sticky map, cleared when the strategy is
// rebuilt). Requests without a session id are routed least-load.
class SessionStrategy final : public RoutingStrategy {
 public:
  int pick(const RouteQuery& query) override {
    if (query.session_id.empty()) return least_loaded(query);
    const std::string key(query.session_id);
    const auto found = sticky_.find(key);
    if (found != sticky_.end() && may_route(query, static_cast<std::size_t>(found->second))) {
      return found->second;
    }
    // A new session, or one whose replica was taken out: it moves for good.
    const int chosen = least_loaded(query);
    sticky_[key] = chosen;
    return chosen;
  }

 private:
  std::unordered_map<std::string, int> sticky_;
};

class PrefixHashStrategy final : public RoutingStrategy {
 public:
  PrefixHashStrategy(int replicas, ChwblOptions options) : ring_(names(replicas), options) {}
  int pick(const RouteQuery& query) override {
    return ring_.pick(first_runes(query.first_user_message, ring_.options().prefix_chars),
                      query.in_flight, query.routable);
  }

 private:
  static std::vector<std::string> names(int replicas) {
    std::vector<std::string> out;
    for (int i = 0; i < replicas; ++i) out.push_back(replica_name(i));
    return out;
  }
  ChwblRing ring_;
};

}  // namespace

std::vector<std::string> strategy_names() {
  return {"random", "round-robin", "least-load", "prefix-hash", "kv-aware", "session", "epp"};
}

std::string unknown_strategy_message(const std::string& name) {
  std::string message = "unknown strategy \"" + name + "\"";
  if (auto near = closest_word(name, strategy_names())) {
    message += "; did you mean \"" + *near + "\"?";
  }
  return message + "; valid: " + join(strategy_names());
}

std::vector<double> kv_aware_costs(const RouteQuery& query, double overlap_weight) {
  const std::size_t n = query.in_flight.size();
  const int block_size = std::max(query.block_size, 1);
  const int request_blocks = (query.prompt_tokens + block_size - 1) / block_size;
  std::vector<double> costs(n);
  for (std::size_t r = 0; r < n; ++r) {
    const int overlap = query.overlap_blocks.empty() ? 0 : query.overlap_blocks[r];
    const std::int64_t pending = query.prefill_tokens.empty() ? 0 : query.prefill_tokens[r];
    const std::int64_t active = query.active_blocks.empty() ? 0 : query.active_blocks[r];
    const std::int64_t new_prefill =
        std::max<std::int64_t>(0, query.prompt_tokens - std::int64_t{overlap} * block_size);
    const double prefill_blocks = static_cast<double>(pending + new_prefill) / block_size;
    const double decode_blocks =
        static_cast<double>(active + std::max(0, request_blocks - overlap));
    costs[r] = overlap_weight * prefill_blocks + decode_blocks;
  }
  return costs;
}

std::string replica_name(int index) { return "replica-" + std::to_string(index); }

std::unique_ptr<RoutingStrategy> make_builtin_strategy(const std::string& name, int replicas,
                                                       std::uint64_t seed,
                                                       const StrategyParams& params) {
  if (name == "random") return std::make_unique<RandomStrategy>(seed);
  if (name == "round-robin") return std::make_unique<RoundRobinStrategy>();
  if (name == "least-load") return std::make_unique<LeastLoadStrategy>();
  if (name == "prefix-hash") return std::make_unique<PrefixHashStrategy>(replicas, params.chwbl);
  if (name == "kv-aware") return std::make_unique<KvAwareStrategy>(params.kv_aware, seed);
  if (name == "session") return std::make_unique<SessionStrategy>();
  return nullptr;
}

}  // namespace kvsweep::sim
