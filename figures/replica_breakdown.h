// How one cell's requests and KV-cache hits split over the replicas that served them: request
// share and client-side hit rate per `replica` value, server-side hit rate per /metrics source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/rows.h"

namespace kvsweep::figures {

// What a request row with no replica recorded is shown as: counted, never dropped.
constexpr const char* kUnknownReplica = "unknown";

struct ReplicaFigures {
  std::string replica;        // the request rows' `replica` value, or kUnknownReplica
  std::int64_t requests = 0;  // measured requests, ok and failed
  std::int64_t failed = 0;
  double share = 0;  // requests / every measured request of the cell
  // Σ cached_tokens / Σ prompt_tokens over its ok requests that reported cached tokens.
  std::optional<double> cache_hit_client;
};

struct SourceFigures {
  std::string source;                   // the /metrics URL
  double queries = 0;                   // Δ prefix-cache queries (tokens) over the measured phase
  double share = 0;                     // queries / Σ queries of every source
  std::optional<double> kv_hit_server;  // Δ hits / Δ queries; nullopt without queries
};

struct ReplicaBreakdown {
  std::vector<ReplicaFigures> replicas;  // replica values in natural order ("2" before "10"),
                                         // unknown last
  std::vector<SourceFigures> sources;    // sources with both phases of the hit counters, by URL
};

// Warm-up requests are left out, as from every other figure.
ReplicaBreakdown replica_breakdown(const std::vector<store::RequestRow>& requests,
                                   const std::vector<store::MetricSample>& samples);

}  // namespace kvsweep::figures
