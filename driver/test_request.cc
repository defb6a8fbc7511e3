// The one request sent before a load run to check the URL, model and key, as vLLM's client does.
#include "driver/test_request.h"

#include "driver/load_run.h"
#include "driver/workload.h"

namespace kvsweep::driver {

RequestRecord send_test_request(const LoadOptions& options) {
  Workload workload;
  workload.description = "test request";
  Conversation conversation;
  conversation.user.push_back(kTestRequestPrompt);
  conversation.assistant.push_back("");
  conversation.max_tokens.push_back(1);
  workload.conversations.push_back(std::move(conversation));

  // The run's own shape is irrelevant here: one user, one request, nothing warm-up.
  LoadOptions one = options;
  one.concurrency = 1;
  one.request_rate = 0;
  one.max_concurrency = 0;
  one.num_requests = 1;
  one.duration_s = 0;
  one.warmup_requests = 0;
  one.warmup_conversations = 0;
  one.warmup_s = 0;
  one.max_tokens = 1;
  one.max_tokens_cap = 0;
  one.on_measured_underway = nullptr;
  one.shard = {};  // the one test request is never split
  LoadResult result = run_load(one, workload);
  if (result.records.empty()) {  // only when the stop flag was already raised
    RequestRecord record;
    record.error_kind = kErrorCancelled;
    record.error = "run stopped before the test request was sent";
    return record;
  }
  return std::move(result.records.front());
}

}  // namespace kvsweep::driver
