// The cache-behaviour check: 4 replicas, a workload whose ideal hit rate is near 100 %;
// random routing must land near 25-35 %, prefix-hash and kv-aware above 85 %, all measured from
// the replicas' /metrics counters over loopback HTTP.
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "sim/fleet.h"
#include "tests/sim/interleaved_hit_rate.h"

namespace kvsweep::sim {
namespace {

double hit_rate(const std::string& strategy, const std::string& profile_dir) {
  FleetOptions options;
  options.replicas = 4;
  options.profile = "hit-rate-test";
  options.profile_dirs = {profile_dir};
  options.strategy = strategy;
  options.seed = 5;
  return testing::interleaved_hit_rate(options);
}

class HitRate : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kvsweep_hit_rate_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::ofstream(dir_ + "/hit-rate-test.yaml") << testing::kHitRateProfile;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(HitRate, RandomIsNearAQuarterPrefixAwareIsAboveEightyFivePercent) {
  const double random = hit_rate("random", dir_);
  const double prefix_hash = hit_rate("prefix-hash", dir_);
  const double kv_aware = hit_rate("kv-aware", dir_);
  RecordProperty("random", std::to_string(random));
  RecordProperty("prefix_hash", std::to_string(prefix_hash));
  RecordProperty("kv_aware", std::to_string(kv_aware));
  std::printf("hit rate: random %.3f, prefix-hash %.3f, kv-aware %.3f\n", random, prefix_hash,
              kv_aware);
  EXPECT_GE(random, 0.25);
  EXPECT_LE(random, 0.35);
  EXPECT_GT(prefix_hash, 0.85);
  EXPECT_GT(kv_aware, 0.85);
}

}  // namespace
}  // namespace kvsweep::sim
