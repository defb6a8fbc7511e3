// vLLM's `random` dataset: a shared prefix, then random text of uniformly drawn lengths.
#pragma once

#include "driver/datasets/dataset_options.h"
#include "driver/workload.h"

namespace kvsweep::driver {

// options.num_prompts single-turn prompts (DatasetOptions documents the lengths). Lengths are
// in tokens of the sim's tokenizer (kBytesPerToken bytes each, synthetic_text.h); vLLM instead
// draws token ids from the model's vocabulary and re-tokenizes, and takes the tokenizer's
// special tokens off the input length: against a real model our prompts are about as long,
// not exactly. Each prompt's unique part starts with "R<i>: ", so prompts differ right after
// the prefix (prefix caches share the prefix and nothing more). Deterministic for a seed.
// DatasetError names the field when a length or the ratio is out of range.
Workload make_random_prompts(const DatasetOptions& options);

}  // namespace kvsweep::driver
