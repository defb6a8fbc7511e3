// libFuzzer target: the coordinator's reading of a shard's records file (header, records,
// trailer), checked against a plan, and the merge of what it accepts. The first byte picks the
// plan: a closed loop's shard 1 of 2 (parts by run index), an open loop's shard 0 of 2 (parts by
// conversation), or a single shard, merged alone.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "driver/shard_merge.h"
#include "driver/shard_records.h"

namespace {

using kvsweep::driver::Conversation;
using kvsweep::driver::ShardPlan;

ShardPlan plan_of(int kind) {
  ShardPlan plan;
  plan.options.base_url = "http://127.0.0.1:9";
  plan.options.max_tokens = 8;
  plan.options.num_requests = 20;
  plan.options.shard.count = kind == 2 ? 1 : 2;
  if (kind == 0) {
    plan.options.concurrency = 2;
  } else {
    plan.options.request_rate = 10;
  }
  for (int c = 0; c < 4; ++c) {
    Conversation conversation;
    conversation.user = {"u0", "u1"};
    conversation.assistant = {"a0", "a1"};
    plan.workload.conversations.push_back(conversation);
  }
  return plan;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int kind = data[0] % 3;
  const int shard = kind == 0 ? 1 : 0;
  static const kvsweep::driver::ShardRecordBounds bounds[3] = {
      kvsweep::driver::shard_record_bounds(plan_of(0), 1),
      kvsweep::driver::shard_record_bounds(plan_of(1), 0),
      kvsweep::driver::shard_record_bounds(plan_of(2), 0)};
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    kvsweep::driver::ShardResult result =
        kvsweep::driver::parse_shard_records(text, "fuzz", bounds[kind]);
    if (result.index != shard) std::abort();  // the header's shard was checked
    if (kind == 2) (void)kvsweep::driver::merge_shards({std::move(result)});
  } catch (const std::runtime_error&) {
    // A located error about the input: what a bad records file must get.
  }
  return 0;
}
