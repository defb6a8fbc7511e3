// Router strategies behind one interface: pick a replica from a request's key and the loads.
#include "sim/routing_strategy.h"

#include <algorithm>
#include <random>

namespace kvsweep::sim {
namespace {

class RandomStrategy final : public RoutingStrategy {
 public:
  explicit RandomStrategy(std::uint64_t seed) : rng_(seed) {}
  int pick(const RouteQuery& query) override {
    std::uniform_int_distribution<int> any(0, static_cast<int>(query.in_flight.size()) - 1);
    return any(rng_);
  }

 private:
  std::mt19937_64 rng_;
};

class RoundRobinStrategy final : public RoutingStrategy {
 public:
  int pick(const RouteQuery& query) override {
    const int chosen = static_cast<int>(next_ % query.in_flight.size());
    ++next_;
    return chosen;
  }

 private:
  std::uint64_t next_ = 0;
};

// KubeAI breaks ties by Go map order (unspecified); the lowest index keeps runs repeatable.
class LeastLoadStrategy final : public RoutingStrategy {
 public:
  int pick(const RouteQuery& query) override {
    const auto lowest = std::min_element(query.in_flight.begin(), query.in_flight.end());
    return static_cast<int>(lowest - query.in_flight.begin());
  }
};

class PrefixHashStrategy final : public RoutingStrategy {
 public:
  PrefixHashStrategy(int replicas, ChwblOptions options) : ring_(names(replicas), options) {}
  int pick(const RouteQuery& query) override {
    return ring_.pick(first_runes(query.first_user_message, ring_.options().prefix_chars),
                      query.in_flight);
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
  return {"random", "round-robin", "least-load", "prefix-hash"};
}

std::string replica_name(int index) { return "replica-" + std::to_string(index); }

std::unique_ptr<RoutingStrategy> make_strategy(const std::string& name, int replicas,
                                               std::uint64_t seed, ChwblOptions chwbl) {
  if (name == "random") return std::make_unique<RandomStrategy>(seed);
  if (name == "round-robin") return std::make_unique<RoundRobinStrategy>();
  if (name == "least-load") return std::make_unique<LeastLoadStrategy>();
  if (name == "prefix-hash") return std::make_unique<PrefixHashStrategy>(replicas, chwbl);
  return nullptr;
}

}  // namespace kvsweep::sim
