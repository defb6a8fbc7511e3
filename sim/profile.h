// Timing and capacity profiles of a simulated replica (one GPU/model pair each).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kvsweep::sim {

// Step time = base_us + per_prefill_token_us * P + per_decode_token_us * D, where P is the
// number of prompt tokens computed in the step (cache misses only) and D the number of decode
// tokens (one per running sequence past its prefill). The BLIS regression form.
struct TimingProfile {
  std::string name;
  std::string source;                 // where the numbers come from, one line
  double base_us = 0;
  double per_prefill_token_us = 0;
  double per_decode_token_us = 0;
  int max_num_seqs = 256;             // vLLM --max-num-seqs
  int max_num_batched_tokens = 8192;  // vLLM --max-num-batched-tokens (chunked prefill budget)
  int num_gpu_blocks = 16384;         // KV capacity in blocks
  int block_size = 16;                // tokens per KV block
  int max_model_len = 16384;          // longest prompt + output accepted
  int default_max_tokens = 64;        // when a request gives no max_tokens
};

std::optional<TimingProfile> find_profile(const std::string& name);
std::vector<std::string> profile_names();

}  // namespace kvsweep::sim
