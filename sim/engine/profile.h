// Timing and capacity profiles of a simulated replica (one GPU/model pair each), read from YAML.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvsweep::sim {

// How a replica keeps prompts for reuse.
//  - kPaged: vLLM's paged KV cache: fixed-size blocks shared by every request through a
//    hash -> block map, evicted LRU (sim/engine/block_pool.h).
//  - kSlot: llama.cpp's server: max_num_seqs slots, each keeping the tokens of the last request
//    it served; a new request takes the free slot sharing the longest token prefix with its
//    prompt and reuses that prefix only (no sharing across slots, no eviction but by overwrite).
enum class EngineKind { kPaged, kSlot };

// "paged" or "slot", as profiles spell them.
const char* engine_kind_name(EngineKind kind);

// Step time = base_us + per_prefill_token_us * P + per_decode_token_us * D
//           + per_kv_usage_us * kv_usage + per_context_token_us * A, where P is the number of
// prompt tokens computed in the step (cache misses only), D the number of decode tokens (one per
// running sequence past its prefill), kv_usage the fraction of KV blocks held (0..1) and A the
// attention pairs the step computes: each computed token attends to every token of its
// sequence up to itself, so a decode of a sequence holding L tokens adds L + 1, and P prompt
// tokens after R already computed add P * R + P * (P + 1) / 2. The BLIS regression form, plus an
// optional KV-pressure term (Dynamo's mocker makes decode time grow with KV usage) and an
// optional context term (attention's cost, which on a small model or a CPU is a large share of a
// step and grows with each sequence's length: bench/real_engine/step_time.mjs measures it).
struct TimingProfile {
  std::string name;
  std::string source;  // where the numbers come from, one line
  double base_us = 0;
  double per_prefill_token_us = 0;
  double per_decode_token_us = 0;
  double per_kv_usage_us = 0;         // 0: no KV-usage term
  double per_context_token_us = 0;    // 0: no context (attention) term
  int max_num_seqs = 256;             // vLLM --max-num-seqs
  int max_num_batched_tokens = 8192;  // vLLM --max-num-batched-tokens (chunked prefill budget)
  int num_gpu_blocks = 16384;         // KV capacity in blocks
  int block_size = 16;                // tokens per KV block
  int max_model_len = 16384;          // longest prompt + output accepted
  int default_max_tokens = 64;        // when a request gives no max_tokens
  // vLLM --[no-]enable-prefix-caching. Off: no hits, nothing registered as cached, and the
  // prefix-cache query/hit counters stay 0 (vLLM does not count them then).
  bool enable_prefix_caching = true;
  // The cache's shape (above). A slot engine holds max_num_seqs slots of max_model_len tokens;
  // num_gpu_blocks x block_size is then only the capacity its KV usage is a fraction of.
  EngineKind engine = EngineKind::kPaged;
};

// Reads one profile file through common/yaml_reader.h. `origin` names it in errors: every error
// of the file, each "profiles/x.yaml:4:17: base_us: expected a number >= 0, got "fast"" then
// the source line and a caret under the column. NaN, infinities and unknown keys are errors.
std::optional<TimingProfile> parse_profile(std::string_view yaml_text, const std::string& origin,
                                           std::string* error);

// The profile as a file parse_profile reads back equal: every key, numbers in their shortest
// exact form, `comment` (if any) as a leading "# " line. How `kvsweep calibrate` writes a fit.
std::string profile_to_yaml(const TimingProfile& profile, const std::string& comment = "");

// Directories named by KVSWEEP_PROFILE_PATH (colon-separated), in order.
std::vector<std::string> profile_path_from_env();

// Looks `name` up in `dirs` (every *.yaml / *.yml file there), then in the directories of
// KVSWEEP_PROFILE_PATH, then among the profiles shipped in the binary: a user file shadows a
// shipped profile of the same name. nullopt if not found, or if the file that defines it is
// invalid (then *error says why; error may be null).
std::optional<TimingProfile> find_profile(const std::string& name,
                                          const std::vector<std::string>& dirs, std::string* error);
std::optional<TimingProfile> find_profile(const std::string& name);  // shipped + env only

// Every loadable profile name, shipped ones first, then user ones not already listed.
std::vector<std::string> profile_names(const std::vector<std::string>& dirs);
std::vector<std::string> profile_names();

}  // namespace kvsweep::sim
