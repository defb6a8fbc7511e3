// A fixed-size seeded sample of a cell's measured requests, and its bytes.
#include "figures/request_sample.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "common/error_kinds.h"

namespace kvsweep::figures {
namespace {

constexpr std::size_t kEntryBytes = 8 + 8 + 8 + 4;

// splitmix64's finalizer: a well-mixed 64-bit hash of the index under the seed.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

void put_sample(std::string& out, std::uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(bits >> (8 * i)));
}

std::uint64_t get(const std::string& in, std::size_t at, int bytes) {
  std::uint64_t bits = 0;
  for (int i = 0; i < bytes; ++i) {
    bits |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  }
  return bits;
}

std::uint64_t double_bits(double value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

double bits_double(std::uint64_t bits) {
  double value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

}  // namespace

std::vector<SampledRequest> sample_requests(const std::vector<store::RequestRow>& requests,
                                            std::size_t size, std::uint64_t seed) {
  std::vector<std::pair<std::uint64_t, SampledRequest>> keyed;
  for (const store::RequestRow& r : requests) {
    if (r.warmup || !r.ok) continue;
    keyed.push_back({mix(seed ^ mix(static_cast<std::uint64_t>(r.index))),
                     {r.index, r.ttft_ms, r.e2e_ms, r.output_tokens}});
  }
  // Ties (the same index twice) fall back to the values, so the order of rows never matters.
  const auto by_key = [](const auto& a, const auto& b) {
    return std::tie(a.first, a.second.index, a.second.ttft_ms, a.second.e2e_ms) <
           std::tie(b.first, b.second.index, b.second.ttft_ms, b.second.e2e_ms);
  };
  if (keyed.size() > size) {
    std::nth_element(keyed.begin(), keyed.begin() + static_cast<std::ptrdiff_t>(size), keyed.end(),
                     by_key);
    keyed.resize(size);
  }
  std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second.index, a.first) < std::tie(b.second.index, b.first);
  });
  std::vector<SampledRequest> sample;
  sample.reserve(keyed.size());
  for (const auto& entry : keyed) sample.push_back(entry.second);
  return sample;
}

std::vector<store::RequestRow> sampled_rows(const std::vector<SampledRequest>& sample) {
  std::vector<store::RequestRow> rows;
  rows.reserve(sample.size());
  for (const SampledRequest& s : sample) {
    store::RequestRow row;
    row.index = s.index;
    row.ok = true;
    row.ttft_ms = s.ttft_ms;
    row.e2e_ms = s.e2e_ms;
    row.output_tokens = s.output_tokens;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string sample_to_bytes(const std::vector<SampledRequest>& sample) {
  std::string out;
  out.reserve(sample.size() * kEntryBytes);
  for (const SampledRequest& s : sample) {
    put_sample(out, static_cast<std::uint64_t>(s.index), 8);
    put_sample(out, double_bits(s.ttft_ms), 8);
    put_sample(out, double_bits(s.e2e_ms), 8);
    put_sample(out, static_cast<std::uint32_t>(s.output_tokens), 4);
  }
  return out;
}

std::vector<SampledRequest> sample_from_bytes(const std::string& bytes) {
  if (bytes.size() % kEntryBytes != 0) {
    throw CorruptData("request sample of " + std::to_string(bytes.size()) +
                      " bytes, not a multiple of " + std::to_string(kEntryBytes));
  }
  std::vector<SampledRequest> sample;
  sample.reserve(bytes.size() / kEntryBytes);
  for (std::size_t at = 0; at < bytes.size(); at += kEntryBytes) {
    SampledRequest s;
    s.index = static_cast<std::int64_t>(get(bytes, at, 8));
    s.ttft_ms = bits_double(get(bytes, at + 8, 8));
    s.e2e_ms = bits_double(get(bytes, at + 16, 8));
    s.output_tokens = static_cast<int>(static_cast<std::int32_t>(get(bytes, at + 24, 4)));
    sample.push_back(s);
  }
  return sample;
}

}  // namespace kvsweep::figures
