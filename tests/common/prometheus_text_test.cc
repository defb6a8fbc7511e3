#include "common/prometheus_text.h"

#include <gtest/gtest.h>

namespace kvsweep {
namespace {

constexpr const char* kScrape =
    "# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of tokens.\n"
    "# TYPE vllm:prefix_cache_hits_total counter\n"
    "vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 1200.0\n"
    "vllm:prefix_cache_hits_total{engine=\"1\",model_name=\"m\"} 300\n"
    "vllm:kv_cache_usage_perc{model_name=\"a \\\"quoted\\\" name\"} 0.25 1712345678\r\n"
    "vllm:num_requests_running 3\n"
    "this line is broken {\n"
    "vllm:bad_value{x=\"1\"} twelve\n";

TEST(PrometheusText, ParsesLabelsValuesAndSkipsComments) {
  const auto samples = parse_prometheus_text(kScrape);
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(samples[0].name, "vllm:prefix_cache_hits_total");
  EXPECT_EQ(samples[0].labels.at("engine"), "0");
  EXPECT_DOUBLE_EQ(samples[0].value, 1200.0);
  EXPECT_EQ(samples[2].labels.at("model_name"), "a \"quoted\" name");
  EXPECT_DOUBLE_EQ(samples[2].value, 0.25);
  EXPECT_EQ(samples[3].name, "vllm:num_requests_running");
  EXPECT_TRUE(samples[3].labels.empty());
}

TEST(PrometheusText, SumsOverLabelSets) {
  const auto samples = parse_prometheus_text(kScrape);
  EXPECT_DOUBLE_EQ(*sum_metric(samples, "vllm:prefix_cache_hits_total"), 1500.0);
  EXPECT_FALSE(sum_metric(samples, "vllm:prefix_cache_queries_total").has_value());
}

}  // namespace
}  // namespace kvsweep
