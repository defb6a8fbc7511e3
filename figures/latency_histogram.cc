// A mergeable log-bucket latency histogram with 0.5% relative accuracy, and its compact bytes.
#include "figures/latency_histogram.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/error_kinds.h"

namespace kvsweep::figures {
namespace {

const double kGamma =
    (1 + LatencyHistogram::kRelativeAccuracy) / (1 - LatencyHistogram::kRelativeAccuracy);
const double kLogGamma = std::log(kGamma);

int bucket_of(double value) { return static_cast<int>(std::ceil(std::log(value) / kLogGamma)); }

double value_of(int bucket) { return 2 * std::pow(kGamma, bucket) / (1 + kGamma); }

void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

std::uint64_t get_varint(const std::string& in, std::size_t& at) {
  std::uint64_t value = 0;
  for (int shift = 0;; shift += 7) {
    if (at >= in.size()) throw CorruptData("histogram bytes end inside a number");
    if (shift > 63) throw CorruptData("histogram bytes hold a number over 64 bits");
    const auto byte = static_cast<unsigned char>(in[at++]);
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value;
  }
}

std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

// Latencies in ms between 1 ns and 100 years all land well inside this.
constexpr std::int64_t kMaxBucketMagnitude = 100000;

}  // namespace

void LatencyHistogram::add(double value) {
  ++count_;
  if (!(value > 0) || !std::isfinite(value)) {  // NaN and infinities: no bucket stands for them
    ++zero_count_;
    return;
  }
  ++buckets_[bucket_of(value)];
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  zero_count_ += other.zero_count_;
  count_ += other.count_;
  for (const auto& [bucket, n] : other.buckets_) buckets_[bucket] += n;
}

double LatencyHistogram::value_at_rank(std::int64_t k) const {
  if (k < zero_count_) return 0;
  std::int64_t seen = zero_count_;
  for (const auto& [bucket, n] : buckets_) {
    seen += n;
    if (k < seen) return value_of(bucket);
  }
  return buckets_.empty() ? 0 : value_of(buckets_.rbegin()->first);
}

std::vector<double> LatencyHistogram::values_at_even_ranks(std::int64_t points) const {
  std::vector<double> out;
  if (count_ == 0 || points <= 0) return out;
  const std::int64_t k = std::min(count_, points);
  out.reserve(static_cast<std::size_t>(k));
  // One walk over the buckets: the ranks ascend, so each is found where the last one was.
  auto bucket = buckets_.begin();
  std::int64_t seen = zero_count_;  // values in the zero bucket and the buckets passed
  for (std::int64_t i = 0; i < k; ++i) {
    const std::int64_t rank = k == 1 ? 0 : i * (count_ - 1) / (k - 1);
    if (rank < zero_count_) {
      out.push_back(0);
      continue;
    }
    while (bucket != buckets_.end() && rank >= seen + bucket->second) {
      seen += bucket->second;
      ++bucket;
    }
    out.push_back(bucket == buckets_.end() ? value_of(buckets_.rbegin()->first)
                                           : value_of(bucket->first));
  }
  return out;
}

double LatencyHistogram::percentile(double p) const {
  if (count_ == 0) return 0;
  p = std::clamp(p, 0.0, 100.0);
  const double rank = p / 100.0 * static_cast<double>(count_ - 1);
  const auto lower = static_cast<std::int64_t>(std::floor(rank));
  const auto upper = std::min(lower + 1, count_ - 1);
  const double fraction = rank - static_cast<double>(lower);
  const double low = value_at_rank(lower);
  return low + (value_at_rank(upper) - low) * fraction;
}

std::string LatencyHistogram::to_bytes() const {
  std::string out;
  put_varint(out, static_cast<std::uint64_t>(zero_count_));
  int previous = 0;
  for (const auto& [bucket, n] : buckets_) {
    put_varint(out, zigzag(bucket - previous));
    put_varint(out, static_cast<std::uint64_t>(n));
    previous = bucket;
  }
  return out;
}

LatencyHistogram LatencyHistogram::from_bytes(const std::string& bytes) {
  LatencyHistogram h;
  if (bytes.empty()) return h;
  std::size_t at = 0;
  const auto zeros = get_varint(bytes, at);
  h.zero_count_ = static_cast<std::int64_t>(zeros);
  h.count_ = h.zero_count_;
  std::int64_t bucket = 0;
  while (at < bytes.size()) {
    bucket += unzigzag(get_varint(bytes, at));
    const auto n = static_cast<std::int64_t>(get_varint(bytes, at));
    if (bucket > kMaxBucketMagnitude || bucket < -kMaxBucketMagnitude || n <= 0 ||
        (!h.buckets_.empty() && bucket <= h.buckets_.rbegin()->first)) {
      throw CorruptData("histogram bytes hold a bucket out of order or range");
    }
    h.buckets_[static_cast<int>(bucket)] = n;
    h.count_ += n;
  }
  return h;
}

}  // namespace kvsweep::figures
