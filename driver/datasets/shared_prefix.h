// Shared-prefix synthetic prompts (seed 004, SGLang generated-shared-prefix): groups x prompts.
#pragma once

#include "driver/datasets/dataset_options.h"
#include "driver/workload.h"

namespace kvsweep::driver {

// options.num_prefixes groups; group g has one prefix of exactly prefix_tokens tokens (see
// kBytesPerToken), starting "Prefix g: " so groups differ within their first characters (what
// KubeAI's PrefixHash keys on). Each of the group's prompts_per_prefix prompts is that prefix,
// byte for byte, then "\nQ<g>.<i>: " and filler to exactly suffix_tokens tokens: seed 004's
// "<BIG_SHARED_PREFIX>\nQ: <variant>" shape. Prompts are single-turn user messages, shuffled
// by seed unless options.ordered; max_tokens from options.output_tokens (constant 0: the run's).
// prefix_tokens and suffix_tokens must be >= 4 so the group and prompt tags fit.
Workload make_shared_prefix(const DatasetOptions& options);

}  // namespace kvsweep::driver
