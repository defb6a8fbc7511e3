// DatasetOptions: what a scenario's `load.dataset` (or `kvsweep load`) asks a loader for.
#pragma once

#include <cstdint>
#include <string>

#include "driver/datasets/length_distribution.h"

namespace kvsweep::driver {

// A plain struct filled by the scenario loader; each loader reads only its kind's fields and
// validates them (DatasetError names the field). docs/datasets.md documents every kind.
struct DatasetOptions {
  // "synthetic-multiturn" | "sharegpt" | "chat-threads" | "shared-prefix" | "jsonl" | "mooncake"
  // | "random"
  std::string kind;
  std::string path;        // file-based kinds: sharegpt, chat-threads, jsonl, mooncake
  std::uint64_t seed = 1;  // every generated text and order derives from it; no clock is read

  // sharegpt (seed 002): keep conversations with at least min_messages usable messages, the
  // first max_conversations of them in file order. 0 = no limit.
  int min_messages = 0;
  int max_conversations = 0;

  // synthetic-multiturn: lengths in words, as make_synthetic_multiturn. With every
  // distribution constant the dataset is exactly make_synthetic_multiturn's.
  int conversations = 64;
  LengthDistribution turns{6};                  // turns per conversation (at least 1)
  LengthDistribution system_prompt_words{600};  // drawn once: one system prompt shared by all
  LengthDistribution user_words{40};
  LengthDistribution assistant_words{40};

  // synthetic-multiturn and shared-prefix: max_tokens per request, in tokens; the constant 0
  // leaves max_tokens to the run (load.max_tokens).
  LengthDistribution output_tokens{0};

  // shared-prefix (seed 004, SGLang generated-shared-prefix): num_prefixes groups of
  // prompts_per_prefix prompts; each prompt is its group's prefix then a unique suffix.
  int prefix_tokens = 2048;
  int num_prefixes = 64;
  int prompts_per_prefix = 16;
  int suffix_tokens = 128;
  bool ordered = false;  // false: shuffled by seed (SGLang's default); true: group by group

  // random (vLLM's `random` dataset): num_prompts single-turn prompts; each is one shared
  // prefix of random_prefix_len tokens, then a unique part whose length is drawn uniformly from
  // [floor(random_input_len * (1 - r)), ceil(random_input_len * (1 + r))], asking for an output
  // length drawn likewise from random_output_len (at least 1); r = random_range_ratio in [0, 1).
  int num_prompts = 1000;
  int random_input_len = 1024;
  int random_output_len = 128;
  double random_range_ratio = 0.0;
  int random_prefix_len = 0;

  // mooncake: tokens per hash_id block. Required (0 = unset is an error): Mooncake's traces
  // use 512, vLLM's timed_trace silently defaults to 16 and makes prompts 32x too short.
  int block_size = 0;
  double time_scale = 1.0;  // arrival_s = (timestamp_ms - first) / 1000 * time_scale

  // Same options, same workload: a sweep loads each distinct one once.
  bool operator==(const DatasetOptions&) const = default;
};

}  // namespace kvsweep::driver
