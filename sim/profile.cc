// Timing and capacity profiles of a simulated replica (one GPU/model pair each).
#include "sim/profile.h"

#include <array>

namespace kvsweep::sim {
namespace {

// The table of known profiles. Built on each call: no mutable global state, and it is tiny.
// KV capacity arithmetic (GiB, as vLLM sizes memory; KV bytes/token = 2 * layers * kv_heads *
// head_dim * 2 bytes for BF16):
//  - Llama-3.1-8B on 1x H100 80 GB: 80 * 0.9 = 72 GiB usable, minus ~16 GiB weights = 56 GiB
//    of KV; 56 GiB / 128 KiB per token = 458,752 tokens = 28,672 blocks of 16.
//  - Llama-3.3-70B TP4 on 4x H100 80 GB: 320 * 0.9 = 288 GiB, minus ~140 GiB weights =
//    148 GiB; 148 GiB / 320 KiB per token = 484,966 tokens (rounded down) = 30,310 blocks of 16.
std::array<TimingProfile, 3> all_profiles() {
  TimingProfile demo;
  demo.name = "demo";
  // Shaped like a small model on a small GPU, sped up so a whole sweep takes minutes: prefill
  // costs about as much per token as the H100 8B fit (what cache hits save), a decode step is
  // cheap, and 4096 blocks (65k tokens) hold about a quarter of the quickstart's conversations,
  // so where routing sends a conversation decides whether its history is still cached.
  demo.source = "hand-set: a fast small model for laptops and the quickstart, not a fit";
  demo.base_us = 1000;
  demo.per_prefill_token_us = 20;
  demo.per_decode_token_us = 30;
  demo.max_num_seqs = 64;
  demo.max_num_batched_tokens = 2048;
  demo.num_gpu_blocks = 4096;
  demo.block_size = 16;
  demo.max_model_len = 16384;

  TimingProfile llama8b;
  llama8b.name = "h100-llama3.1-8b";
  llama8b.source =
      "BLIS blackbox fit, vLLM 0.8.4, Llama-3.1-8B 1x H100 (inference-sim defaults.yaml "
      "@3d79c654); KV derived: (72 - 16) GiB / 128 KiB per token";
  llama8b.base_us = 5752.7;
  llama8b.per_prefill_token_us = 17.25;
  llama8b.per_decode_token_us = 6.00;
  llama8b.max_num_seqs = 256;
  llama8b.max_num_batched_tokens = 8192;
  llama8b.num_gpu_blocks = 28672;
  llama8b.block_size = 16;
  llama8b.max_model_len = 131072;  // Llama 3.1 context length; fits 458k tokens of KV

  TimingProfile llama70b;
  llama70b.name = "h100-llama3.3-70b-tp4";
  llama70b.source =
      "BLIS blackbox fit, vLLM 0.8.4, Llama-3.3-70B 4x H100 TP4 (inference-sim defaults.yaml "
      "@3d79c654); KV derived: (288 - 140) GiB / 320 KiB per token";
  llama70b.base_us = 12601;
  llama70b.per_prefill_token_us = 76.42;
  llama70b.per_decode_token_us = 66.84;
  llama70b.max_num_seqs = 256;
  llama70b.max_num_batched_tokens = 8192;
  llama70b.num_gpu_blocks = 30310;
  llama70b.block_size = 16;
  llama70b.max_model_len = 131072;

  return {demo, llama8b, llama70b};
}

}  // namespace

std::optional<TimingProfile> find_profile(const std::string& name) {
  for (TimingProfile& profile : all_profiles()) {
    if (profile.name == name) return profile;
  }
  return std::nullopt;
}

std::vector<std::string> profile_names() {
  std::vector<std::string> names;
  for (const TimingProfile& profile : all_profiles()) names.push_back(profile.name);
  return names;
}

}  // namespace kvsweep::sim
