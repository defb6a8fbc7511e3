// Tests for orchestrator/cli/load_args.cc: vLLM-style option forms of `kvsweep load`.
#include "orchestrator/cli/load_args.h"

#include <gtest/gtest.h>

namespace kvsweep::orchestrator {
namespace {

TEST(LoadCommand, GoodputTakesVllmsForm) {
  std::string error;
  const auto slo = parse_goodput({"ttft:500", "e2el:3000.5"}, &error);
  ASSERT_TRUE(slo.has_value()) << error;
  EXPECT_DOUBLE_EQ(*slo->ttft_ms, 500);
  EXPECT_FALSE(slo->tpot_ms.has_value());
  EXPECT_DOUBLE_EQ(*slo->e2e_ms, 3000.5);
}

TEST(LoadCommand, GoodputRejectsUnknownMetricsAndBadNumbers) {
  std::string error;
  EXPECT_FALSE(parse_goodput({"itl:5"}, &error).has_value());
  EXPECT_EQ(error, "unknown metric \"itl\" (expected ttft, tpot or e2el)");
  EXPECT_FALSE(parse_goodput({"ttft:fast"}, &error).has_value());
  EXPECT_EQ(error, "expected a number of milliseconds > 0 in \"ttft:fast\"");
  EXPECT_FALSE(parse_goodput({"ttft"}, &error).has_value());
  EXPECT_EQ(error, "expected METRIC:MS, got \"ttft\"");
}

TEST(LoadCommand, HeadersSplitAtTheFirstSeparator) {
  EXPECT_EQ(parse_header("x-routing=prefix=1"),
            std::make_pair(std::string("x-routing"), std::string("prefix=1")));
  EXPECT_EQ(parse_header("X-Session-ID: abc"),
            std::make_pair(std::string("X-Session-ID"), std::string("abc")));
  EXPECT_FALSE(parse_header("novalue").has_value());
  EXPECT_FALSE(parse_header("=v").has_value());
}

TEST(LoadCommand, ResultFileNamedLikeVllms) {
  EXPECT_EQ(result_file_name("kvsweep", 800, 8000, "meta/llama-3.1-8b", "20261122-043000"),
            "kvsweep-800qps-concurrency8000-meta-llama-3.1-8b-20261122-043000.json");
  EXPECT_EQ(result_file_name("run", 0, 0, "m", "20261122-043000"),
            "run-infqps-m-20261122-043000.json");
}

}  // namespace
}  // namespace kvsweep::orchestrator
