// Tests for store/itl_blob: every ITL list comes back bit for bit, and the common one is small.
#include "store/itl_blob.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error_kinds.h"

namespace kvsweep::store {
namespace {

// == would take -0.0 for 0.0 and fail on NaN: compare the bits.
void expect_same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(std::memcmp(&a[i], &b[i], sizeof(double)), 0) << i << ": " << a[i] << " " << b[i];
  }
}

TEST(ItlBlob, EmptyIsNoBytes) {
  EXPECT_TRUE(encode_itl({}).empty());
  EXPECT_TRUE(decode_itl("").empty());
}

// How predicted runs time their gaps (predict/virtual_load.cc): round(s * 1e6) / 1e3.
TEST(ItlBlob, WholeMicrosecondsAreDeltaVarintsAndExact) {
  std::vector<double> itl;
  for (int i = 0; i < 200; ++i) {
    const double seconds = 0.021 + 0.0001 * std::sin(i) + 1e-7 * i;
    itl.push_back(std::round(seconds * 1e6) / 1e3);
  }
  itl.push_back(0.0);
  itl.push_back(123456.789);  // a long stall
  itl.push_back(0.001);
  const std::string blob = encode_itl(itl);
  ASSERT_FALSE(blob.empty());
  EXPECT_EQ(static_cast<unsigned char>(blob[0]), kItlMicroseconds);
  // Neighbouring gaps differ by at most ~100 us: one or two bytes each, not JSON's seven.
  EXPECT_LT(blob.size(), itl.size() * 2 + 16) << blob.size();
  expect_same_bits(decode_itl(blob), itl);
}

// A real run splits a gap over the tokens one event carried: gap / 3 is no whole microsecond.
TEST(ItlBlob, AnyOtherDoubleKeepsEveryBit) {
  const double third = 25.0 / 3.0;
  const std::vector<double> cases[] = {
      {third, third, third, 0.1},
      {0.1, 1.0 / 3.0, 25.5, 1e-9},
      {-0.0},
      {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()},
      {1e300, -1e-300, std::numeric_limits<double>::denorm_min()},
  };
  for (const auto& itl : cases) {
    const std::string blob = encode_itl(itl);
    EXPECT_EQ(static_cast<unsigned char>(blob[0]), kItlRawDoubles);
    EXPECT_EQ(blob.size(), 1 + 8 * itl.size());
    expect_same_bits(decode_itl(blob), itl);
  }
}

TEST(ItlBlob, NegativeAndHugeWholeMicrosecondsRoundTrip) {
  const std::vector<double> itl = {-5.0, 5.0, -0.001, 999999999.999, 0.0, -999999999.999};
  const std::string blob = encode_itl(itl);
  EXPECT_EQ(static_cast<unsigned char>(blob[0]), kItlMicroseconds);
  expect_same_bits(decode_itl(blob), itl);
}

TEST(ItlBlob, CorruptBlobsAreRefusedWithAReason) {
  try {
    decode_itl(std::string(1, '\x07'));
    FAIL() << "expected a refusal";
  } catch (const kvsweep::CorruptData& e) {
    EXPECT_NE(std::string(e.what()).find("unknown form 7"), std::string::npos) << e.what();
  }
  // A varint whose last byte still says "more follows".
  EXPECT_THROW(decode_itl(std::string("\x01\x80", 2)), kvsweep::CorruptData);
  EXPECT_THROW(decode_itl(std::string("\x01") + std::string(11, '\xff')), kvsweep::CorruptData);
  EXPECT_THROW(decode_itl(std::string("\x02") + std::string(7, '\0')), kvsweep::CorruptData);
}

}  // namespace
}  // namespace kvsweep::store
