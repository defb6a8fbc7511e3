// Tests for driver/datasets/length_distribution.cc: constant, normal clamped, uniform.
#include "driver/datasets/length_distribution.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "tests/driver/datasets/dataset_test_support.h"

namespace kvsweep::driver {
namespace {

using testing::error_of;

std::vector<int> draw(const LengthDistribution& d, std::uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  std::vector<int> lengths;
  for (int i = 0; i < count; ++i) lengths.push_back(sample_length(d, rng));
  return lengths;
}

TEST(LengthDistribution, ConstantNeedsNoDrawAndIsClamped) {
  std::mt19937_64 rng(1);
  const std::mt19937_64 before = rng;
  EXPECT_EQ(sample_length(LengthDistribution{40}, rng), 40);
  EXPECT_EQ(sample_length(LengthDistribution{40.6}, rng), 41);
  EXPECT_EQ(sample_length(LengthDistribution{40, 0, 50, 0}, rng), 50);
  EXPECT_EQ(sample_length(LengthDistribution{40, 0, 0, 30}, rng), 30);
  EXPECT_TRUE(rng == before);
  EXPECT_TRUE(is_constant(LengthDistribution{40}));
}

TEST(LengthDistribution, NormalIsSeededAndClampedToMinMax) {
  const LengthDistribution d{100, 50, 80, 120};
  const std::vector<int> a = draw(d, 42, 2000);
  EXPECT_EQ(a, draw(d, 42, 2000));
  EXPECT_NE(a, draw(d, 43, 2000));
  std::set<int> seen(a.begin(), a.end());
  EXPECT_EQ(*seen.begin(), 80);  // stddev 50 reaches past both bounds in 2000 draws
  EXPECT_EQ(*seen.rbegin(), 120);
  EXPECT_GT(seen.size(), 30u);  // and fills the range between them
  EXPECT_FALSE(is_constant(d));
}

TEST(LengthDistribution, NormalNeverGoesNegative) {
  for (int length : draw(LengthDistribution{1, 10}, 3, 500)) EXPECT_GE(length, 0);
}

TEST(LengthDistribution, OnlyMinAndMaxIsUniform) {
  const LengthDistribution d{0, 0, 5, 8};
  const std::vector<int> lengths = draw(d, 9, 400);
  const std::set<int> seen(lengths.begin(), lengths.end());
  EXPECT_EQ(seen, (std::set<int>{5, 6, 7, 8}));
  EXPECT_EQ(lengths, draw(d, 9, 400));
}

TEST(LengthDistribution, SetsMaxTokensUnlessTheConstantZero) {
  EXPECT_FALSE(sets_max_tokens(LengthDistribution{0}));
  EXPECT_TRUE(sets_max_tokens(LengthDistribution{128}));
  EXPECT_TRUE(sets_max_tokens(LengthDistribution{0, 0, 1, 4}));
  EXPECT_TRUE(sets_max_tokens(LengthDistribution{0, 0, 3, 0}));  // constant clamped up to 3
}

TEST(LengthDistribution, InvalidValuesNameTheField) {
  EXPECT_EQ(error_of([] {
              validate_length_distribution({10, -1, 0, 0}, "x: user_words");
            }),
            "x: user_words: stddev: expected a number >= 0, got -1");
  EXPECT_EQ(error_of([] {
              validate_length_distribution({10, 0, 20, 10}, "x: user_words");
            }),
            "x: user_words: max 10 is below min 20");
  EXPECT_EQ(error_of([] {
              validate_length_distribution({-2.5, 0, 0, 0}, "x: turns");
            }),
            "x: turns: mean: expected a number >= 0, got -2.5");
  EXPECT_NO_THROW(validate_length_distribution({10, 2, 0, 0}, "x"));
}

}  // namespace
}  // namespace kvsweep::driver
