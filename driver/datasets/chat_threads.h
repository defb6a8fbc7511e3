// Chat threads JSON (seed 001's k6 chat client) -> conversations answered by the server.
#pragma once

#include "driver/datasets/dataset_options.h"
#include "driver/workload.h"

namespace kvsweep::driver {

// Reads options.path, a JSON array of threads. A thread is either KubeAI's
// `{"id": ..., "userMessages": ["...", ...], "systemPrompt": "..."}` (systemPrompt optional;
// other keys ignored) or a bare array of user messages. Each thread is one Conversation with
// replies_from_server = true: turn k carries what the server answered to turns < k, as the k6
// client appended `choices[0].message`. `assistant` holds empty strings (no dataset replies);
// max_tokens is left to the run (the k6 client used base-request.json's max_tokens).
// options.max_conversations > 0 keeps the first that many threads.
Workload load_chat_threads(const DatasetOptions& options);

}  // namespace kvsweep::driver
