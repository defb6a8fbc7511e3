// The compact form of a request's inter-token latencies in the store (schema 7): a byte string
// that gives back the very same doubles, about two bytes a gap instead of JSON's seven or more.
#pragma once

#include <string>
#include <vector>

namespace kvsweep::store {

// Layout. Empty: no gaps. Otherwise a first byte names the form:
//  1  whole microseconds: each gap's microseconds minus the previous gap's (the first minus 0),
//     zigzag-mapped and written as a LEB128 varint. Chosen when every gap is exactly
//     microseconds / 1000 as a double (bit for bit), which is how predicted runs time them;
//     steady decoding makes neighbouring gaps alike, so most deltas take one byte.
//  2  raw: each gap as 8 little-endian bytes of its IEEE-754 double. Chosen otherwise (a real
//     run's gap split over k tokens, a NaN, a -0.0), so nothing is ever rounded.
constexpr unsigned char kItlMicroseconds = 1;
constexpr unsigned char kItlRawDoubles = 2;

std::string encode_itl(const std::vector<double>& itl_ms);

// Throws std::invalid_argument saying what is wrong (unknown form, truncated varint, a raw
// length that is not a multiple of 8); the caller adds which row it was.
std::vector<double> decode_itl(const std::string& blob);

}  // namespace kvsweep::store
