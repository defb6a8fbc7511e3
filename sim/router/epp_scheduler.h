// The endpoint picker's scheduling cycle: its scorers, their weighted sum and the picker.
//
// Follows the Gateway API Inference Extension v1.0.0 (commit ffea2632) with llm-d-inference-
// scheduler v0.3.2's load-aware-scorer (commit c834d27a); docs/sim.md says where it departs.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/router/epp_config.h"
#include "sim/router/routing_strategy.h"

namespace kvsweep::sim {

// The prompt text the EPP hashes (pkg/epp/util/request/body.go): a completion's prompt as sent,
// a chat's messages each as "<|im_start|>{role}\n{content}<|im_end|>\n".
void append_epp_chat_message(std::string* out, std::string_view role, std::string_view content);

// The estimated prefix scorer's block hashes of `prompt` (prefix/plugin.go hashPrompt): the text
// cut at hash_block_size * max_blocks characters, then whole blocks of hash_block_size
// characters only (a prompt shorter than one block has none), each xxhash64 of the block
// followed by the previous hash's 8 little-endian bytes; the first block's text is preceded by
// the model name.
std::vector<std::uint64_t> epp_prefix_hashes(std::string_view model, std::string_view prompt,
                                             int hash_block_size, int max_blocks);

// The prefix scorer's index (prefix/indexer.go): per replica an LRU of the block hashes the EPP
// sent there, `capacity` entries each; a hash evicted from a replica's LRU no longer names it.
// Not thread-safe: the strategy's thread only.
class EppPrefixIndex {
 public:
  EppPrefixIndex(int replicas, int capacity);
  // After a request was scheduled to `replica`: every hash of it, each moved to the front.
  void add(std::span<const std::uint64_t> hashes, int replica);
  // Per replica, how many leading hashes are found there: walking from the first, each hash
  // counts for every replica holding it, and the walk stops at the first hash none holds.
  std::vector<int> match(std::span<const std::uint64_t> hashes) const;
  void clear();
  std::size_t size(int replica) const { return lrus_[static_cast<std::size_t>(replica)].size(); }
  std::size_t entries() const;  // every replica's size, summed

 private:
  struct Lru {
    std::list<std::uint64_t> order;  // front: most recently added
    std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where;
    std::size_t size() const { return order.size(); }
  };
  std::size_t capacity_;
  std::vector<Lru> lrus_;
  std::unordered_map<std::uint64_t, std::vector<int>> holders_;  // hash -> replicas holding it
};

// Each scorer's score per replica for one request, before weighting; a replica that may not
// be chosen gets no score (0) and takes no part in the queue scorer's min and max.
std::vector<double> epp_scores(const EppScorer& scorer, const RouteQuery& query,
                               std::span<const int> prefix_matches, int total_hashes);

// The EPP as a routing strategy: filters (decode-filter keeps every replica), the weighted sum
// of clamped scores, then the picker: max-score shuffles the candidates (seeded here, where the
// EPP seeds from the clock), sorts them by score keeping that order among ties, and takes the
// first; random-picker takes any candidate. After the pick, every prefix scorer records the
// request's hashes on the chosen replica (the plugin's PreRequest).
class EppStrategy final : public RoutingStrategy {
 public:
  EppStrategy(std::shared_ptr<const EppConfig> config, int replicas, std::uint64_t seed);
  int pick(const RouteQuery& query) override;
  bool needs_prompt_text() const override;
  bool needs_server_loads() const override;
  std::span<const PrefixLookup> last_prefix_lookups() const override { return last_lookups_; }
  std::size_t prefix_index_entries() const override;
  // The weighted total of the last pick, per replica (tests, and why a replica won).
  const std::vector<double>& last_totals() const { return last_totals_; }

 private:
  std::shared_ptr<const EppConfig> config_;
  std::vector<EppPrefixIndex> indexes_;  // one per prefix scorer, in the scorers' order
  std::mt19937_64 rng_;
  std::vector<double> last_totals_;
  std::vector<PrefixLookup> last_lookups_;  // one per prefix scorer
};

}  // namespace kvsweep::sim
