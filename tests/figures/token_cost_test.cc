// Cost per million tokens follows from the fleet's hourly price and the throughput.
#include "figures/token_cost.h"

#include <gtest/gtest.h>

namespace kvsweep::figures {
namespace {

TEST(TokenCost, EightL4sServingAThousandTokensASecond) {
  // 8 GPUs at $0.80 an hour cost $6.40 an hour; 1,000 output tok/s is 3.6 M tokens an hour.
  const CostSpec cost{0.8, 8};
  const auto c = token_cost(cost, 1000, 4000.0);
  ASSERT_TRUE(c);
  EXPECT_NEAR(c->usd_per_million_output, 6.4 / 3.6, 1e-12);
  ASSERT_TRUE(c->usd_per_million_total);
  EXPECT_NEAR(*c->usd_per_million_total, 6.4 / 14.4, 1e-12);
  // Twice the throughput on the same fleet: half the cost per token.
  EXPECT_NEAR(token_cost(cost, 2000, std::nullopt)->usd_per_million_output,
              c->usd_per_million_output / 2, 1e-12);
}

TEST(TokenCost, NothingWithoutAPriceOrTokens) {
  EXPECT_FALSE(token_cost(CostSpec{}, 1000, 2000.0));
  EXPECT_FALSE(token_cost(CostSpec{0.8, 8}, 0, 2000.0));
  EXPECT_FALSE(token_cost(CostSpec{0.8, 8}, 1000, 0.0)->usd_per_million_total);
}

}  // namespace
}  // namespace kvsweep::figures
