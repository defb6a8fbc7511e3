// The compact form of a request's inter-token latencies: microsecond deltas or raw doubles.
#include "store/itl_blob.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "common/error_kinds.h"

namespace kvsweep::store {
namespace {

// Past this a gap is not a latency anyone measured, and the int64 arithmetic below must not
// overflow: 1e12 ms is about 31 years.
constexpr double kMaxMicrosecondGapMs = 1e12;

// The whole microseconds `ms` is exactly, when it is: dividing them by 1000 gives the same bits.
bool exact_microseconds(double ms, std::int64_t& us) {
  if (!std::isfinite(ms) || std::fabs(ms) > kMaxMicrosecondGapMs) return false;
  us = std::llround(ms * 1000.0);
  const double back = static_cast<double>(us) / 1000.0;
  return std::memcmp(&back, &ms, sizeof ms) == 0;  // bits, so -0.0 is not taken for 0.0
}

void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

std::uint64_t zigzag(std::int64_t value) {
  return (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
}

std::int64_t unzigzag(std::uint64_t value) {
  return static_cast<std::int64_t>(value >> 1) ^ -static_cast<std::int64_t>(value & 1);
}

std::string encode_raw(const std::vector<double>& itl_ms) {
  std::string out(1, static_cast<char>(kItlRawDoubles));
  out.reserve(1 + itl_ms.size() * 8);
  for (const double gap : itl_ms) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &gap, sizeof bits);
    for (int byte = 0; byte < 8; ++byte) out.push_back(static_cast<char>(bits >> (8 * byte)));
  }
  return out;
}

std::vector<double> decode_microseconds(const std::string& blob) {
  std::vector<double> itl;
  std::int64_t previous = 0;
  std::size_t at = 1;
  while (at < blob.size()) {
    std::uint64_t value = 0;
    int shift = 0;
    for (;;) {
      if (at >= blob.size()) throw CorruptData("ITL blob ends inside a varint");
      if (shift > 63) throw CorruptData("ITL blob has a varint longer than 64 bits");
      const auto byte = static_cast<unsigned char>(blob[at++]);
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      shift += 7;
      if ((byte & 0x80) == 0) break;
    }
    // Unsigned addition wraps instead of overflowing on a corrupt blob.
    previous = static_cast<std::int64_t>(static_cast<std::uint64_t>(previous) +
                                         static_cast<std::uint64_t>(unzigzag(value)));
    itl.push_back(static_cast<double>(previous) / 1000.0);
  }
  return itl;
}

std::vector<double> decode_raw(const std::string& blob) {
  if ((blob.size() - 1) % 8 != 0) {
    throw CorruptData("ITL blob of raw doubles is " + std::to_string(blob.size() - 1) +
                      " bytes long, not a multiple of 8");
  }
  std::vector<double> itl;
  itl.reserve((blob.size() - 1) / 8);
  for (std::size_t at = 1; at < blob.size(); at += 8) {
    std::uint64_t bits = 0;
    for (int byte = 0; byte < 8; ++byte) {
      bits |= static_cast<std::uint64_t>(static_cast<unsigned char>(blob[at + byte])) << (8 * byte);
    }
    double gap = 0;
    std::memcpy(&gap, &bits, sizeof gap);
    itl.push_back(gap);
  }
  return itl;
}

}  // namespace

std::string encode_itl(const std::vector<double>& itl_ms) {
  if (itl_ms.empty()) return {};
  std::string out(1, static_cast<char>(kItlMicroseconds));
  out.reserve(1 + itl_ms.size() * 2);
  std::int64_t previous = 0;
  for (const double gap : itl_ms) {
    std::int64_t us = 0;
    if (!exact_microseconds(gap, us)) return encode_raw(itl_ms);
    put_varint(out, zigzag(us - previous));  // both within ±1e15: no overflow
    previous = us;
  }
  return out;
}

std::vector<double> decode_itl(const std::string& blob) {
  if (blob.empty()) return {};
  const auto form = static_cast<unsigned char>(blob[0]);
  if (form == kItlMicroseconds) return decode_microseconds(blob);
  if (form == kItlRawDoubles) return decode_raw(blob);
  throw CorruptData("ITL blob of unknown form " + std::to_string(form));
}

}  // namespace kvsweep::store
