// Mooncake trace JSONL -> timed single-turn requests whose prompts share text as hash_ids do.
#pragma once

#include "driver/datasets/dataset_options.h"
#include "driver/workload.h"

namespace kvsweep::driver {

// Reads options.path, one row per line:
//   {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, ...]}
// (timestamp in ms; rows in ascending timestamp order). Row r becomes one single-turn request:
// - block j of its prompt is text derived only from (seed, hash_ids[j]), exactly block_size
//   tokens (kBytesPerToken bytes each), so rows sharing leading hash_ids share a byte-identical
//   prefix; the prompt is cut to input_length tokens when the last block is partial, and when
//   the blocks cover less than input_length a tail unique to the row fills the rest;
// - max_tokens = output_length;
// - arrival_s = (timestamp - first row's timestamp) / 1000 * time_scale.
// options.block_size is required: Mooncake's traces use 512, vLLM's default of 16 silently
// makes prompts 32x short. A row whose hash_ids do not match input_length at that block size
// (neither floor nor ceil of input_length / block_size blocks) is an error that says which
// block size the row would fit, since that is how a wrong block_size shows.
Workload load_mooncake_trace(const DatasetOptions& options);

}  // namespace kvsweep::driver
