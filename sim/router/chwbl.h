// KubeAI's PrefixHash: consistent hashing with bounded loads (CHWBL) over an xxhash64 ring.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kvsweep::sim {

// KubeAI's defaults (api/k8s/v1/model_types.go): meanLoadFactor 125 %, replication 256,
// prefixCharLength 100.
struct ChwblOptions {
  double mean_load_factor = 1.25;
  int virtual_nodes = 256;  // ring entries per replica
  int prefix_chars = 100;   // key length in UTF-8 code points ("runes")
};

// The first n code points of UTF-8 text (the whole text if shorter). A continuation byte
// never starts a code point, so a cut never splits a multi-byte character.
std::string_view first_runes(std::string_view text, int n);

// xxhash64 with seed 0, what KubeAI's cespare/xxhash Sum64 computes.
std::uint64_t xxhash64(std::string_view text);

// KubeAI chwblLoadOK: any load is fine on an idle fleet; otherwise a replica may take the
// request while its in-flight count stays within factor * the mean load after adding it.
bool chwbl_load_ok(int load, std::int64_t total, int replicas, double mean_load_factor);

// The ring is built once and never changes (replicas are fixed for a fleet's life).
class ChwblRing {
 public:
  // Replica i is called names[i]; its ring nodes hash names[i] + decimal j, j < virtual_nodes.
  ChwblRing(const std::vector<std::string>& names, ChwblOptions options);

  // Walks the ring clockwise from the first node >= xxhash64(key) (wrapping) and returns the
  // first replica whose load passes chwbl_load_ok; the first replica seen if none passes.
  // `key` is used as given (cut it with first_runes first); in_flight has one entry per replica.
  // A replica whose `routable` entry is 0 is skipped and left out of the mean load, as KubeAI
  // drops an endpoint that is not ready from its ring; empty `routable`: every replica counts.
  int pick(std::string_view key, std::span<const int> in_flight,
           std::span<const std::uint8_t> routable = {}) const;

  const ChwblOptions& options() const { return options_; }

 private:
  struct Node {
    std::uint64_t hash = 0;
    int replica = 0;
  };
  std::vector<Node> ring_;  // sorted by hash
  int replicas_ = 0;
  ChwblOptions options_;
};

}  // namespace kvsweep::sim
