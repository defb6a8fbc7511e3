// KubeAI's PrefixHash: consistent hashing with bounded loads (CHWBL) over an xxhash64 ring.
#include "sim/router/chwbl.h"

#include <xxhash.h>

#include <algorithm>
#include <numeric>

namespace kvsweep::sim {

std::string_view first_runes(std::string_view text, int n) {
  int runes = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool starts_rune = (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
    if (starts_rune && runes++ == n) return text.substr(0, i);
  }
  return text;
}

std::uint64_t xxhash64(std::string_view text) { return XXH64(text.data(), text.size(), 0); }

bool chwbl_load_ok(int load, std::int64_t total, int replicas, double mean_load_factor) {
  if (total == 0) return true;
  const double mean_after = static_cast<double>(total + 1) / replicas;
  return load <= mean_after * mean_load_factor;
}

ChwblRing::ChwblRing(const std::vector<std::string>& names, ChwblOptions options)
    : replicas_(static_cast<int>(names.size())), options_(options) {
  ring_.reserve(names.size() * static_cast<std::size_t>(options_.virtual_nodes));
  for (int r = 0; r < replicas_; ++r) {
    for (int j = 0; j < options_.virtual_nodes; ++j) {
      ring_.push_back({xxhash64(names[r] + std::to_string(j)), r});
    }
  }
  std::sort(ring_.begin(), ring_.end(), [](const Node& a, const Node& b) {
    return a.hash != b.hash ? a.hash < b.hash : a.replica < b.replica;
  });
}

int ChwblRing::pick(std::string_view key, std::span<const int> in_flight,
                    std::span<const std::uint8_t> routable) const {
  if (ring_.empty()) return 0;
  auto in_ring = [&](int replica) {
    return routable.empty() || routable[static_cast<std::size_t>(replica)] != 0;
  };
  const std::uint64_t h = xxhash64(key);
  auto it = std::lower_bound(ring_.begin(), ring_.end(), h,
                             [](const Node& node, std::uint64_t v) { return node.hash < v; });
  std::size_t index = it == ring_.end() ? 0 : static_cast<std::size_t>(it - ring_.begin());
  std::int64_t total = 0;
  int replicas = 0;
  for (int r = 0; r < replicas_; ++r) {
    if (!in_ring(r)) continue;
    total += in_flight[static_cast<std::size_t>(r)];
    ++replicas;
  }
  int first_seen = -1;
  for (std::size_t step = 0; step < ring_.size(); ++step, index = (index + 1) % ring_.size()) {
    const int replica = ring_[index].replica;
    if (!in_ring(replica)) continue;
    if (first_seen < 0) first_seen = replica;
    if (chwbl_load_ok(in_flight[replica], total, replicas, options_.mean_load_factor)) {
      return replica;
    }
  }
  return std::max(first_seen, 0);
}

}  // namespace kvsweep::sim
