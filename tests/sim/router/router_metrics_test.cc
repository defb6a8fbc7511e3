// Tests for sim/router/router_metrics.cc: the router's decisions, in-flight and timing.
#include "sim/router/router_metrics.h"

#include <gtest/gtest.h>

#include "common/prometheus_text.h"

namespace kvsweep::sim {
namespace {

TEST(RouterMetrics, RouterCountsDecisionsPerStrategyAndInFlight) {
  const std::map<std::string, std::vector<std::uint64_t>> decisions{{"prefix-hash", {1, 2}},
                                                                    {"round-robin", {3, 3}}};
  const std::vector<int> in_flight{0, 4};
  const std::string text = router_metrics_text(decisions, in_flight);
  EXPECT_NE(text.find("kvsweep_router_decisions_total{replica=\"1\",strategy=\"prefix-hash\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("kvsweep_router_in_flight{replica=\"1\"} 4\n"), std::string::npos);
  EXPECT_EQ(sum_metric(parse_prometheus_text(text), "kvsweep_router_decisions_total"), 9);
}

TEST(RouterMetrics, RouterDecisionTimeIsAHistogramInSeconds) {
  Histogram decisions({1e-6, 1e-5});
  decisions.observe(5e-7);
  decisions.observe(3e-6);
  const std::string text =
      router_metrics_text({}, std::vector<int>{0}, RouterStats{nullptr, 0, &decisions});
  EXPECT_NE(text.find("# TYPE kvsweep_router_decision_seconds histogram\n"), std::string::npos);
  EXPECT_NE(text.find("kvsweep_router_decision_seconds_bucket{le=\"1e-06\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kvsweep_router_decision_seconds_bucket{le=\"1e-05\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kvsweep_router_decision_seconds_count 2\n"), std::string::npos);
  // Without the histogram (a router that does not time itself) the family is left out.
  EXPECT_EQ(router_metrics_text({}, std::vector<int>{0}).find("decision_seconds"),
            std::string::npos);
}

}  // namespace
}  // namespace kvsweep::sim
