// A fixed-size, seeded sample of a cell's measured requests, kept in its summary so that
// `compare` can still bootstrap a cell whose raw request rows were pruned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "store/rows.h"

namespace kvsweep::figures {

// What compare's run_samples reads of a request (figures/compare.h).
struct SampledRequest {
  std::int64_t index = 0;  // the request's index in its cell
  double ttft_ms = 0;
  double e2e_ms = 0;
  int output_tokens = 0;
};

// 2,000 requests: compare's bootstrap needs a few hundred a side (--min-samples), and 2,000
// fixed-width entries are 48 KB a cell.
constexpr std::size_t kRequestSampleSize = 2000;

// The measured successful requests (warm-up and failures left out, as run_samples does) with
// the `size` smallest hashes of (seed, index): the same rows give the same sample in any order,
// and a cell with at most `size` such requests is kept whole. Ordered by index.
std::vector<SampledRequest> sample_requests(const std::vector<store::RequestRow>& requests,
                                            std::size_t size = kRequestSampleSize,
                                            std::uint64_t seed = 0x6b767377);

// The sample as rows compare's run_samples accepts (ok, measured, the three fields set).
std::vector<store::RequestRow> sampled_rows(const std::vector<SampledRequest>& sample);

// Fixed-width little-endian bytes (index, ttft, e2e, output tokens: 28 bytes each), doubles
// bit for bit. from_bytes throws std::invalid_argument on a length that is not a multiple of 28.
std::string sample_to_bytes(const std::vector<SampledRequest>& sample);
std::vector<SampledRequest> sample_from_bytes(const std::string& bytes);

}  // namespace kvsweep::figures
