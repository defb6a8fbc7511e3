// JSONL prompts (seed 004's prefix_prompts.jsonl, vLLM's custom dataset) -> single-turn requests.
#pragma once

#include "driver/datasets/dataset_options.h"
#include "driver/workload.h"

namespace kvsweep::driver {

// Reads options.path, one JSON object per line, blank lines skipped. Each line is either
//   {"prompt": "..."}                                           (the user message), or
//   {"messages": [{"role": "system", "content": "..."}, {"role": "user", "content": "..."}]}
// where messages are an optional system message then exactly one user message (a request
// with earlier assistant turns cannot be one single-turn Conversation; use sharegpt).
// Optional "max_tokens" or "output_tokens" (integer >= 1) sets that request's max_tokens;
// other keys ("id", "workload", "prefix_regime", ...) are ignored. One Conversation per line.
// A bad line is a DatasetError naming file:line and the field.
Workload load_jsonl_prompts(const DatasetOptions& options);

}  // namespace kvsweep::driver
