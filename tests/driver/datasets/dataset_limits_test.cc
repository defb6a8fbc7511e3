// Tests for driver/datasets/dataset_limits.cc and the loaders' file checks (issue 15 item 7):
// sizes a typo makes huge, and paths that are not regular files, are clear errors at once.
#include "driver/datasets/dataset_limits.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "driver/datasets/load_workload.h"
#include "tests/driver/datasets/dataset_test_support.h"

namespace kvsweep::driver {
namespace {

using testing::error_of;
using testing::write_file;

TEST(DatasetLimits, HugeCountsAndLengthsAreRefusedBeforeAnythingIsGenerated) {
  DatasetOptions options;
  options.kind = "synthetic-multiturn";
  options.conversations = 2'000'000'000;
  EXPECT_EQ(error_of([&] { load_workload(options); }),
            "synthetic-multiturn: conversations: expected at most 1000000, got 2000000000");
  options.conversations = 4;
  options.system_prompt_words = LengthDistribution{2e9};
  EXPECT_EQ(error_of([&] { load_workload(options); }),
            "synthetic-multiturn: system_prompt_words.mean: expected at most 1000000, got "
            "2000000000");
}

TEST(DatasetLimits, CountsWithinLimitsThatMakeTooMuchTextAreRefused) {
  DatasetOptions options;
  options.kind = "shared-prefix";
  options.num_prefixes = 1000;
  options.prompts_per_prefix = 1000;
  options.prefix_tokens = 100'000;
  const std::string error = error_of([&] { load_workload(options); });
  EXPECT_EQ(error.rfind("shared-prefix: sizes: these sizes make about ", 0), 0u) << error;
  EXPECT_NE(error.find("more than the 1.0 GiB a dataset may hold"), std::string::npos) << error;
}

TEST(DatasetLimits, ALengthWithoutAMaxIsJudgedBySixStddevs) {
  LengthDistribution spread{100};
  spread.stddev = 10;
  EXPECT_DOUBLE_EQ(practical_upper_bound(spread), 160);
  EXPECT_FALSE(length_limit_problem(spread, 1000).has_value());
  spread.stddev = 1000;
  const auto problem = length_limit_problem(spread, 1000);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->field, "stddev");
  EXPECT_EQ(problem->message, "with no max, draws reach about 6100; give a max of at most 1000");
  spread.max = 1000;  // a max bounds the draws whatever the spread
  EXPECT_FALSE(length_limit_problem(spread, 1000).has_value());
}

TEST(DatasetLimits, DevicesAreNotDatasets) {
  for (const std::string kind : {"jsonl", "mooncake", "sharegpt", "chat-threads"}) {
    DatasetOptions options;
    options.kind = kind;
    options.path = "/dev/zero";
    options.block_size = 16;
    EXPECT_EQ(error_of([&] { load_workload(options); }),
              "/dev/zero: cannot open: not a regular file (a character device)")
        << kind;
  }
}

TEST(DatasetLimits, AFifoIsRefusedWithoutWaitingForAWriter) {
  const std::string path = ::testing::TempDir() + "dataset_limits_fifo";
  std::filesystem::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  for (const std::string kind : {"jsonl", "sharegpt"}) {
    DatasetOptions options;
    options.kind = kind;
    options.path = path;
    EXPECT_EQ(error_of([&] { load_workload(options); }),
              path + ": cannot open: not a regular file (a FIFO)")
        << kind;
  }
  std::filesystem::remove(path);
}

TEST(DatasetLimits, ATraceRowAskingForAHugePromptIsLocated) {
  const std::string path = ::testing::TempDir() + "dataset_limits_trace.jsonl";
  write_file(path,
             "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [1]}\n"
             "{\"timestamp\": 5, \"input_length\": 2000000000, \"output_length\": 5, "
             "\"hash_ids\": [1]}\n");
  DatasetOptions options;
  options.kind = "mooncake";
  options.path = path;
  options.block_size = 16;
  const std::string error = error_of([&] { load_workload(options); });
  EXPECT_NE(error.find(path + ":2"), std::string::npos) << error;
  EXPECT_NE(error.find("input_length"), std::string::npos) << error;
  EXPECT_NE(error.find("expected at most 1000000, got 2000000000"), std::string::npos) << error;
}

}  // namespace
}  // namespace kvsweep::driver
