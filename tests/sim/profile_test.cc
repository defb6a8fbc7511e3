// Tests sim/profile.cc: the profile table.
#include "sim/profile.h"

#include <gtest/gtest.h>

namespace kvsweep::sim {
namespace {

TEST(Profile, ListsEveryProfile) {
  EXPECT_EQ(profile_names(),
            (std::vector<std::string>{"demo", "h100-llama3.1-8b", "h100-llama3.3-70b-tp4"}));
  EXPECT_FALSE(find_profile("h100").has_value());
}

// The demo profile is what the quickstart runs on: steps must stay short enough that a sweep
// takes minutes, and prefill must cost more per token than decode, as on a real GPU, so that
// cache hits (skipped prefill) are what routing can win.
TEST(Profile, DemoIsFastAndPrefillBound) {
  auto p = find_profile("demo");
  ASSERT_TRUE(p.has_value());
  const double full_prefill_step_us =
      p->base_us + p->per_prefill_token_us * p->max_num_batched_tokens;
  EXPECT_LT(full_prefill_step_us, 50'000);
  EXPECT_GE(p->base_us, 500);  // steps long enough that the event loop's overhead is noise
  EXPECT_LT(p->per_decode_token_us * p->max_num_seqs, full_prefill_step_us);
  EXPECT_EQ(p->block_size, 16);
  EXPECT_FALSE(p->source.empty());
}

TEST(Profile, H100KvCapacityFollowsTheArithmetic) {
  auto small = find_profile("h100-llama3.1-8b");
  ASSERT_TRUE(small.has_value());
  EXPECT_DOUBLE_EQ(small->base_us, 5752.7);
  // (80 * 0.9 - 16) GiB / 128 KiB per token / 16 tokens per block
  EXPECT_EQ(small->num_gpu_blocks, (72 - 16) * 1024 * 1024 / 128 / 16);
  auto big = find_profile("h100-llama3.3-70b-tp4");
  ASSERT_TRUE(big.has_value());
  EXPECT_DOUBLE_EQ(big->per_prefill_token_us, 76.42);
  EXPECT_EQ(big->num_gpu_blocks, (288 - 140) * 1024 * 1024 / 320 / 16);
}

}  // namespace
}  // namespace kvsweep::sim
