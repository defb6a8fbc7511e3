// Tests for driver/datasets/load_workload.cc: dispatch by kind, unknown kinds.
#include "driver/datasets/load_workload.h"

#include <gtest/gtest.h>

#include "tests/driver/datasets/dataset_test_support.h"

namespace kvsweep::driver {
namespace {

using testing::error_of;
using testing::fixture;

TEST(LoadWorkload, DispatchesEveryKind) {
  DatasetOptions options;
  options.kind = "sharegpt";
  options.path = fixture("sharegpt.json");
  EXPECT_EQ(load_workload(options).description, "sharegpt: 6 conversations, 14 turns");
  options.kind = "chat-threads";
  options.path = fixture("chat_threads.json");
  EXPECT_TRUE(load_workload(options).conversations.at(0).replies_from_server);
  options.kind = "jsonl";
  options.path = fixture("prompts.jsonl");
  EXPECT_EQ(load_workload(options).conversations.size(), 3u);
  options.kind = "mooncake";
  options.path = fixture("mooncake.jsonl");
  options.block_size = 16;
  EXPECT_EQ(load_workload(options).arrival_s.size(), 4u);

  DatasetOptions synthetic;
  synthetic.kind = "shared-prefix";
  synthetic.num_prefixes = 2;
  synthetic.prompts_per_prefix = 2;
  synthetic.prefix_tokens = 8;
  synthetic.suffix_tokens = 4;
  EXPECT_EQ(load_workload(synthetic).conversations.size(), 4u);
  synthetic.kind = "synthetic-multiturn";
  synthetic.conversations = 2;
  EXPECT_EQ(load_workload(synthetic).conversations.size(), 2u);
}

TEST(LoadWorkload, UnknownKindListsKindsAndSuggestsTheNearest) {
  DatasetOptions options;
  options.kind = "sharegtp";
  EXPECT_EQ(error_of([&] { load_workload(options); }),
            "dataset kind: unknown \"sharegtp\" (known: synthetic-multiturn, sharegpt, "
            "chat-threads, shared-prefix, jsonl, mooncake, random); did you mean 'sharegpt'?");
}

TEST(LoadWorkload, FileKindsWithoutAPathSaySo) {
  DatasetOptions options;
  options.kind = "jsonl";
  EXPECT_EQ(error_of([&] { load_workload(options); }), "jsonl: path: required");
}

}  // namespace
}  // namespace kvsweep::driver
