// The endpoint picker's scheduling cycle: its scorers, their weighted sum and the picker.
#include "sim/router/epp_scheduler.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace kvsweep::sim {

void append_epp_chat_message(std::string* out, std::string_view role, std::string_view content) {
  out->append("<|im_start|>").append(role).append("\n").append(content).append("<|im_end|>\n");
}

std::vector<std::uint64_t> epp_prefix_hashes(std::string_view model, std::string_view prompt,
                                             int hash_block_size, int max_blocks) {
  std::vector<std::uint64_t> hashes;
  const auto block = static_cast<std::size_t>(std::max(hash_block_size, 1));
  if (prompt.size() < block) return hashes;
  prompt = prompt.substr(0, block * static_cast<std::size_t>(std::max(max_blocks, 1)));
  hashes.reserve(prompt.size() / block);
  std::string buffer(model);
  buffer.append(prompt.substr(0, block));
  hashes.push_back(XXH64(buffer.data(), buffer.size(), 0));
  for (std::size_t at = block; at + block <= prompt.size(); at += block) {
    buffer.assign(prompt.substr(at, block));
    unsigned char previous[8];
    std::uint64_t h = hashes.back();
    for (unsigned char& byte : previous) {  // little-endian, as the EPP's toBytes
      byte = static_cast<unsigned char>(h & 0xff);
      h >>= 8;
    }
    buffer.append(reinterpret_cast<const char*>(previous), sizeof previous);
    hashes.push_back(XXH64(buffer.data(), buffer.size(), 0));
  }
  return hashes;
}

EppPrefixIndex::EppPrefixIndex(int replicas, int capacity)
    : capacity_(static_cast<std::size_t>(std::max(capacity, 1))),
      lrus_(static_cast<std::size_t>(std::max(replicas, 0))) {}

void EppPrefixIndex::add(std::span<const std::uint64_t> hashes, int replica) {
  Lru& lru = lrus_[static_cast<std::size_t>(replica)];
  for (const std::uint64_t h : hashes) {
    if (auto found = lru.where.find(h); found != lru.where.end()) {
      lru.order.splice(lru.order.begin(), lru.order, found->second);
      continue;
    }
    if (lru.order.size() == capacity_) {
      const std::uint64_t evicted = lru.order.back();
      lru.order.pop_back();
      lru.where.erase(evicted);
      auto holders = holders_.find(evicted);
      if (holders != holders_.end()) {
        std::erase(holders->second, replica);
        if (holders->second.empty()) holders_.erase(holders);
      }
    }
    lru.order.push_front(h);
    lru.where.emplace(h, lru.order.begin());
    holders_[h].push_back(replica);
  }
}

std::vector<int> EppPrefixIndex::match(std::span<const std::uint64_t> hashes) const {
  std::vector<int> matched(lrus_.size(), 0);
  for (const std::uint64_t h : hashes) {
    const auto holders = holders_.find(h);
    if (holders == holders_.end()) break;
    for (const int r : holders->second) ++matched[static_cast<std::size_t>(r)];
  }
  return matched;
}

void EppPrefixIndex::clear() {
  for (Lru& lru : lrus_) {
    lru.order.clear();
    lru.where.clear();
  }
  holders_.clear();
}

std::size_t EppPrefixIndex::entries() const {
  std::size_t sum = 0;
  for (const Lru& lru : lrus_) sum += lru.size();
  return sum;
}

std::vector<double> epp_scores(const EppScorer& scorer, const RouteQuery& query,
                               std::span<const int> prefix_matches, int total_hashes) {
  const std::size_t n = query.in_flight.size();
  std::vector<double> scores(n, 0.0);
  const auto load = [&](std::size_t r) {
    return query.server_loads.empty() ? ServerLoad{} : query.server_loads[r];
  };
  switch (scorer.kind) {
    case EppScorerKind::kPrefixCache:
      // Matched blocks over the request's blocks; a request too short to hash scores 0.
      for (std::size_t r = 0; r < n; ++r) {
        if (may_route(query, r) && total_hashes > 0 && !prefix_matches.empty()) {
          scores[r] = static_cast<double>(prefix_matches[r]) / total_hashes;
        }
      }
      break;
    case EppScorerKind::kQueue: {
      // (max - q) / (max - min) over the candidates; 1 for all when their queues are equal.
      int lo = std::numeric_limits<int>::max();
      int hi = std::numeric_limits<int>::min();
      for (std::size_t r = 0; r < n; ++r) {
        if (!may_route(query, r)) continue;
        lo = std::min(lo, load(r).waiting);
        hi = std::max(hi, load(r).waiting);
      }
      for (std::size_t r = 0; r < n; ++r) {
        if (!may_route(query, r)) continue;
        scores[r] = hi == lo ? 1.0 : static_cast<double>(hi - load(r).waiting) / (hi - lo);
      }
      break;
    }
    case EppScorerKind::kKvCacheUtilization:
      for (std::size_t r = 0; r < n; ++r) {
        if (may_route(query, r)) scores[r] = 1.0 - load(r).kv_usage;
      }
      break;
    case EppScorerKind::kLoadAware: {
      // 0.5 with an empty queue, falling linearly to 0 at `threshold` waiting requests.
      const double threshold = scorer.queue_threshold;
      for (std::size_t r = 0; r < n; ++r) {
        if (!may_route(query, r)) continue;
        const double waiting = std::min<double>(load(r).waiting, threshold);
        scores[r] = waiting == 0 ? 0.5 : 0.5 * (1.0 - waiting / threshold);
      }
      break;
    }
  }
  return scores;
}

EppStrategy::EppStrategy(std::shared_ptr<const EppConfig> config, int replicas, std::uint64_t seed)
    : config_(std::move(config)), rng_(seed) {
  for (const EppScorer& s : config_->scorers) {
    if (s.kind == EppScorerKind::kPrefixCache) {
      indexes_.emplace_back(replicas, s.lru_capacity_per_server);
    }
  }
}

bool EppStrategy::needs_prompt_text() const { return !indexes_.empty(); }

bool EppStrategy::needs_server_loads() const {
  return std::any_of(config_->scorers.begin(), config_->scorers.end(),
                     [](const EppScorer& s) { return s.kind != EppScorerKind::kPrefixCache; });
}

int EppStrategy::pick(const RouteQuery& query) {
  const std::size_t n = query.in_flight.size();
  std::vector<double> totals(n, 0.0);
  // Each prefix scorer's hashes of this request and its matches per replica, kept for the
  // record after the pick.
  std::vector<std::vector<std::uint64_t>> hashes;
  std::vector<std::vector<int>> prefix_matches;
  last_lookups_.clear();
  std::size_t prefix = 0;
  for (const EppScorer& s : config_->scorers) {
    std::vector<int> matches;
    int total = 0;
    if (s.kind == EppScorerKind::kPrefixCache) {
      hashes.push_back(
          epp_prefix_hashes({}, query.prompt_text, s.hash_block_size, s.max_prefix_blocks));
      matches = indexes_[prefix++].match(hashes.back());
      total = static_cast<int>(hashes.back().size());
      last_lookups_.push_back(PrefixLookup{0, total, s.hash_block_size});
    }
    const std::vector<double> scores = epp_scores(s, query, matches, total);
    // Each score is clamped to [0, 1] and weighted; the weights are not normalised.
    for (std::size_t r = 0; r < n; ++r) totals[r] += std::clamp(scores[r], 0.0, 1.0) * s.weight;
    if (s.kind == EppScorerKind::kPrefixCache) prefix_matches.push_back(std::move(matches));
  }
  std::vector<int> candidates;
  for (std::size_t r = 0; r < n; ++r) {
    if (may_route(query, r)) candidates.push_back(static_cast<int>(r));
  }
  if (candidates.empty()) {  // every replica out: as the router's other strategies, all of them
    for (std::size_t r = 0; r < n; ++r) candidates.push_back(static_cast<int>(r));
  }
  int chosen = 0;
  if (config_->picker == EppPickerKind::kRandom) {
    chosen = candidates[std::uniform_int_distribution<std::size_t>(0, candidates.size() - 1)(rng_)];
  } else {
    std::shuffle(candidates.begin(), candidates.end(), rng_);
    std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) {
      return totals[static_cast<std::size_t>(a)] > totals[static_cast<std::size_t>(b)];
    });
    chosen = candidates.front();
  }
  // What each index held on the chosen replica before the request is recorded there (the
  // plugin's PreRequest matches, then adds).
  for (std::size_t i = 0; i < indexes_.size(); ++i) {
    last_lookups_[i].matched_blocks = prefix_matches[i][static_cast<std::size_t>(chosen)];
    indexes_[i].add(hashes[i], chosen);
  }
  last_totals_ = std::move(totals);
  return chosen;
}

std::size_t EppStrategy::prefix_index_entries() const {
  if (indexes_.empty()) return 0;
  return indexes_.front().entries();
}

}  // namespace kvsweep::sim
