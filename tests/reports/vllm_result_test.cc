// Tests reports/vllm_result.cc: vLLM's result keys and its console block, line for line.
#include "reports/vllm_result.h"

#include <gtest/gtest.h>

#include "tests/reports/request_builders.h"

namespace kvsweep::reports {
namespace {

using kvsweep::testing::failed_request;
using kvsweep::testing::ok_request;

// Two ok requests (TTFT 100 and 300 ms, 3 tokens each) and a timeout, over a 2 s window.
figures::CellMetrics small_cell() {
  std::vector<store::RequestRow> rows;
  rows.push_back(ok_request(0, 0.0, 100, 500, 40, 3, 20, {200, 200}));
  rows.push_back(ok_request(1, 0.5, 300, 1500, 60, 3, 30, {600, 600}));
  rows.push_back(failed_request(2, 1.0, 1000, "timeout"));
  figures::Slo slo;
  slo.ttft_ms = 200;
  return compute_cell_metrics(rows, {}, slo);
}

TEST(VllmResult, JsonUsesVllmKeysAndInfAsAString) {
  VllmRunInfo info;
  info.date = "20261122-043000";
  info.endpoint_type = "openai-chat";
  info.model_id = "m";
  info.num_prompts = 3;
  PercentileSelection selection;
  selection.percentiles = {50, 99.9};
  const auto j = vllm_result_json(small_cell(), info, selection);
  EXPECT_EQ(j["request_rate"], "inf");
  EXPECT_TRUE(j["max_concurrency"].is_null());
  EXPECT_EQ(j["completed"], 2);
  EXPECT_EQ(j["failed"], 1);
  EXPECT_EQ(j["total_input_tokens"], 100);
  EXPECT_DOUBLE_EQ(j["duration"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["request_throughput"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["request_goodput"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["mean_ttft_ms"].get<double>(), 200);
  EXPECT_DOUBLE_EQ(j["median_ttft_ms"].get<double>(), 200);
  EXPECT_DOUBLE_EQ(j["std_ttft_ms"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(j["p50_ttft_ms"].get<double>(), 200);
  EXPECT_DOUBLE_EQ(j["p99.9_ttft_ms"].get<double>(), 299.8);
  EXPECT_DOUBLE_EQ(j["mean_tpot_ms"].get<double>(), 400);
  EXPECT_FALSE(j.contains("p50_e2el_ms"));  // e2el is not a selected percentile metric
  EXPECT_DOUBLE_EQ(j["mean_e2el_ms"].get<double>(), 1000);
  EXPECT_EQ(j["failed_by_kind"]["timeout"], 1);
}

TEST(VllmResult, JsonHasVllmsPeakOutputTokensAndConcurrency) {
  const auto j = vllm_result_json(small_cell(), {});
  // Token times 0.1, 0.3, 0.5 and 0.8 s fall in the first 1 s bucket; 1.4 and 2.0 later.
  EXPECT_DOUBLE_EQ(j["max_output_tokens_per_s"].get<double>(), 4.0);
  // The second request is sent as the first ends: never two in flight.
  EXPECT_EQ(j["max_concurrent_requests"], 1);
}

TEST(VllmResult, SpecDecodeAcceptanceRateIsAPercentageAsVllmWritesIt) {
  figures::CellMetrics m = small_cell();
  EXPECT_FALSE(vllm_result_json(m, {}).contains("spec_decode_acceptance_rate"));
  m.spec_decode_acceptance = 0.625;
  const auto j = vllm_result_json(m, {});
  EXPECT_DOUBLE_EQ(j["spec_decode_acceptance_rate"].get<double>(), 62.5);
  EXPECT_FALSE(j.contains("spec_decode_acceptance"));  // the old fraction key is gone
}

// The golden is vLLM's own format applied to small_cell(): each row "{:<40} {:<10}" (label
// padded to 40, a space, value padded to 10), ".2f" values where vLLM formats floats, titles
// "{s:=^50}" / "{s:-^50}", in vLLM's order (vllm/benchmarks/serve.py). kvsweep's own sections
// (prefix cache, failures) follow vLLM's, in the same format, before the closing line.
TEST(VllmResult, ConsoleBlockIsVllmsByteForByte) {
  VllmRunInfo info;
  info.max_concurrency = 4;
  info.request_rate = 2.5;
  EXPECT_EQ(serving_result_text(small_cell(), {}, &info),
            "============ Serving Benchmark Result ============\n"
            "Successful requests:                     2         \n"
            "Failed requests:                         1         \n"
            "Maximum request concurrency:             4         \n"
            "Request rate configured (RPS):           2.50      \n"
            "Benchmark duration (s):                  2.00      \n"
            "Total input tokens:                      100       \n"
            "Total generated tokens:                  6         \n"
            "Request throughput (req/s):              1.00      \n"
            "Request goodput (req/s):                 0.50      \n"
            "Output token throughput (tok/s):         3.00      \n"
            "Peak output token throughput (tok/s):    4.00      \n"
            "Peak concurrent requests:                1.00      \n"
            "Total token throughput (tok/s):          53.00     \n"
            "---------------Time to First Token----------------\n"
            "Mean TTFT (ms):                          200.00    \n"
            "Median TTFT (ms):                        200.00    \n"
            "P99 TTFT (ms):                           298.00    \n"
            "-----Time per Output Token (excl. 1st token)------\n"
            "Mean TPOT (ms):                          400.00    \n"
            "Median TPOT (ms):                        400.00    \n"
            "P99 TPOT (ms):                           596.00    \n"
            "---------------Inter-token Latency----------------\n"
            "Mean ITL (ms):                           400.00    \n"
            "Median ITL (ms):                         400.00    \n"
            "P99 ITL (ms):                            600.00    \n"
            "-------------------Prefix Cache-------------------\n"
            "Cached prompt tokens, client (%):        50.00     \n"
            "---------------------Failures---------------------\n"
            "timeout:                                 1         \n"
            "  first: timeout after 1000 ms\n"
            "==================================================\n");
}

TEST(VllmResult, ConsoleBlockWithoutACapOrARateLeavesThoseRowsOutAsVllmDoes) {
  const std::string text = serving_result_text(small_cell());
  EXPECT_EQ(text.find("Maximum request concurrency:"), std::string::npos) << text;
  EXPECT_EQ(text.find("Request rate configured (RPS):"), std::string::npos) << text;
  EXPECT_NE(text.find("Failed requests:                         1         \n"
                      "Benchmark duration (s):                  2.00      \n"),
            std::string::npos)
      << text;
}

TEST(VllmResult, FailuresSayTheFirstReasonOfEachKindWithItsStatus) {
  store::RequestRow refused = failed_request(0, 0.0, 5, "http_status");
  refused.http_status = 404;
  refused.error = "HTTP 404: The model `wrong-model` does not exist.";
  store::RequestRow cut = failed_request(1, 0.1, 5, "stream_dropped");
  cut.http_status = 200;
  cut.error = "stream ended before data: [DONE]";
  const figures::CellMetrics m = figures::compute_cell_metrics({refused, refused, cut}, {});
  const std::string text = serving_result_text(m);
  EXPECT_NE(text.find("http_status:                             2         \n"
                      "  first: HTTP 404: The model `wrong-model` does not exist.\n"
                      "stream_dropped:                          1         \n"
                      "  first: stream ended before data: [DONE] (HTTP 200)\n"),
            std::string::npos)
      << text;
  const auto j = vllm_result_json(m, VllmRunInfo{});
  EXPECT_EQ(j["first_failure_by_kind"]["http_status"]["http_status"], 404);
  EXPECT_EQ(j["first_failure_by_kind"]["http_status"]["error"],
            "HTTP 404: The model `wrong-model` does not exist.");
}

TEST(VllmResult, TokenCountsWithoutUsageAreUnknownOrEstimatedNeverZero) {
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < 3; ++i) {
    store::RequestRow r = ok_request(i, 0.0, 100, 1000, -1, 3, -1, {450, 450});
    r.tokens_estimated = true;
    rows.push_back(r);
  }
  const figures::CellMetrics m = figures::compute_cell_metrics(rows, {});
  const std::string text = serving_result_text(m);
  EXPECT_NE(text.find("Total input tokens:                      unknown   \n"
                      "Total generated tokens:                  9 (estimated)\n"
                      "Request throughput (req/s):              3.00      \n"
                      "Output token throughput (tok/s):         9.00 (estimated)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Total token throughput (tok/s):          unknown   \n"), std::string::npos)
      << text;
  // The note follows the block: every line inside it has vLLM's shape.
  EXPECT_NE(text.find("==================================================\n"
                      "Note: the server sent no token usage for 3 of 3 requests: output tokens "
                      "are counted content events; input tokens are unknown.\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("Total input tokens:                     0"), std::string::npos);

  const auto j = vllm_result_json(m, VllmRunInfo{});
  EXPECT_TRUE(j["total_input_tokens"].is_null());
  EXPECT_TRUE(j["total_token_throughput"].is_null());
  EXPECT_EQ(j["total_output_tokens"], 9);
  EXPECT_EQ(j["input_tokens_known"], false);
  EXPECT_EQ(j["output_tokens_estimated"], true);
  EXPECT_EQ(vllm_result_json(small_cell(), VllmRunInfo{})["output_tokens_estimated"], false);
}

TEST(VllmResult, PercentileKeysFollowVllm) {
  EXPECT_EQ(percentile_key(99), "p99");
  EXPECT_EQ(percentile_key(99.9), "p99.9");
  EXPECT_EQ(percentile_key(50), "p50");
}

}  // namespace
}  // namespace kvsweep::reports
