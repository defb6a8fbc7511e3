// ShareGPT JSON -> multi-turn conversations (seed 002's modified vLLM client).
#pragma once

#include "driver/datasets/dataset_options.h"
#include "driver/workload.h"

namespace kvsweep::driver {

// Reads options.path: [{"id": ..., "conversations": [{"from": "human", "value": "..."}, ...]}].
// - A leading "system" message becomes the system prompt.
// - Then messages must alternate user ("human", "user") and assistant ("gpt", "assistant",
//   "chatgpt", "bard", "bing"), starting with a user message; the conversation is cut at the
//   first message that breaks this (a repeated role, an unknown role, a later "system"), and a
//   trailing user message with no reply is dropped (it has no output length to follow).
// - Usable messages (2 per turn) below options.min_messages drop the conversation; at most
//   options.max_conversations are kept, the first in file order.
// - Turn k sends user messages 0..k with the dataset's replies in between, so prompt 1 is
//   message (1) and prompt 2 messages (1, 2, 3), as in seed 002.
// - max_tokens of turn k follows the dataset's reply k: its size in bytes / kBytesPerToken,
//   at least 1 (vLLM's sharegpt loader uses the reply's token count the same way).
Workload load_sharegpt(const DatasetOptions& options);

}  // namespace kvsweep::driver
