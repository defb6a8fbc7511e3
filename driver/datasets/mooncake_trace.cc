// Mooncake trace JSONL -> timed requests with hash_id-derived shared prompt prefixes.
#include "driver/datasets/mooncake_trace.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "common/input_file.h"
#include "driver/datasets/dataset_error.h"
#include "driver/datasets/dataset_limits.h"
#include "driver/datasets/json_input.h"
#include "driver/datasets/synthetic_text.h"

namespace kvsweep::driver {
namespace {

constexpr std::uint64_t kBlockStream = 21;
constexpr std::uint64_t kTailStream = 22;

const char* const kBlockSizeTrap =
    "block_size is required for mooncake traces: each hash_id stands for block_size tokens, and "
    "the trace's own value is not in the file. Mooncake's published traces use 512; vLLM's "
    "timed_trace defaults to 16, which silently makes prompts 32x shorter and shares far less "
    "prefix. Set dataset.block_size to the block size the trace was hashed with";

void check_block_count(std::size_t blocks, std::int64_t input_length, int block_size,
                       const std::string& location) {
  if (blocks == 0) return;  // a row with no hash_ids shares nothing: it is all tail
  const std::int64_t full = input_length / block_size;
  const std::int64_t covering = (input_length + block_size - 1) / block_size;
  const auto count = static_cast<std::int64_t>(blocks);
  if (count >= full && count <= covering) return;
  const std::int64_t per_block = (input_length + count - 1) / count;
  throw_field_error(
      location, "hash_ids",
      std::to_string(blocks) + " blocks of block_size " + std::to_string(block_size) +
          " do not match input_length " + std::to_string(input_length) + " (expected " +
          std::to_string(full) + (full == covering ? "" : " or " + std::to_string(covering)) +
          " blocks); this row fits a block_size of about " + std::to_string(per_block) +
          ": is block_size right? (Mooncake uses 512, vLLM defaults to 16)");
}

std::string block_text(std::uint64_t seed, std::uint64_t hash_id, int block_size) {
  std::mt19937_64 rng(derive_seed(seed, kBlockStream, hash_id));
  return text_of_tokens("", block_size, rng);
}

}  // namespace

Workload load_mooncake_trace(const DatasetOptions& options) {
  if (options.block_size <= 0) {
    throw DatasetError(
        "mooncake: " + std::string(kBlockSizeTrap) +
        (options.block_size < 0 ? " (got " + std::to_string(options.block_size) + ")" : ""));
  }
  if (!std::isfinite(options.time_scale) || options.time_scale <= 0) {
    throw DatasetError("mooncake: time_scale: expected a number > 0, got " +
                       std::to_string(options.time_scale));
  }
  if (options.path.empty()) throw DatasetError("mooncake: path: required");

  Workload workload;
  double first_ms = 0;
  double previous_ms = 0;
  std::uintmax_t text_bytes = 0;
  for_each_jsonl_row(options.path, [&](const nlohmann::json& row, int line) {
    const std::string location = line_location(options.path, line);
    const double timestamp_ms = require_number(row, "timestamp", location);
    const std::int64_t input_length = require_integer(row, "input_length", location, 1);
    const std::int64_t output_length = require_integer(row, "output_length", location, 1);
    // Each row's prompt is generated in memory: the sizes a trace asks for are bounded too.
    if (input_length > kMaxPromptTokens) {
      throw_field_error(location, "input_length",
                        "expected at most " + std::to_string(kMaxPromptTokens) + ", got " +
                            std::to_string(input_length));
    }
    if (output_length > kMaxOutputTokens) {
      throw_field_error(location, "output_length",
                        "expected at most " + std::to_string(kMaxOutputTokens) + ", got " +
                            std::to_string(output_length));
    }
    text_bytes += static_cast<std::uintmax_t>(input_length) * kBytesPerToken;
    if (text_bytes > kMaxWorkloadTextBytes ||
        workload.conversations.size() >= static_cast<std::size_t>(kMaxConversations)) {
      throw DatasetError(location + ": the trace up to here holds " +
                         std::to_string(workload.conversations.size() + 1) + " requests and " +
                         format_bytes(text_bytes) + " of prompt text, more than the " +
                         std::to_string(kMaxConversations) + " requests or " +
                         format_bytes(kMaxWorkloadTextBytes) + " a dataset may hold");
    }
    const nlohmann::json& hash_ids = require_array(row, "hash_ids", location);
    if (workload.conversations.empty()) {
      first_ms = timestamp_ms;
    } else if (timestamp_ms < previous_ms) {
      throw_field_error(location, "timestamp",
                        "rows must be in ascending time order, got " +
                            describe_json(row["timestamp"]) + " after " +
                            nlohmann::json(previous_ms).dump());
    }
    previous_ms = timestamp_ms;
    check_block_count(hash_ids.size(), input_length, options.block_size, location);

    std::string prompt;
    const std::size_t prompt_bytes = static_cast<std::size_t>(input_length) * kBytesPerToken;
    prompt.reserve(prompt_bytes);
    for (std::size_t j = 0; j < hash_ids.size(); ++j) {
      const std::int64_t hash_id = expect_integer(
          hash_ids[j], location + ": field \"hash_ids\"[" + std::to_string(j) + "]", 0);
      prompt += block_text(options.seed, static_cast<std::uint64_t>(hash_id), options.block_size);
    }
    if (prompt.size() >= prompt_bytes) {
      prompt.resize(prompt_bytes);  // the last block is partial
    } else {
      const std::uint64_t row_index = workload.conversations.size();
      std::mt19937_64 tail_rng(derive_seed(options.seed, kTailStream, row_index));
      const int tail_tokens = static_cast<int>((prompt_bytes - prompt.size()) / kBytesPerToken);
      prompt += text_of_tokens(std::to_string(row_index) + ": ", tail_tokens, tail_rng);
    }

    Conversation conversation;
    conversation.user.push_back(std::move(prompt));
    conversation.assistant.emplace_back();
    conversation.max_tokens.push_back(
        static_cast<int>(std::min<std::int64_t>(output_length, INT32_MAX)));
    workload.conversations.push_back(std::move(conversation));
    workload.arrival_s.push_back((timestamp_ms - first_ms) / 1000.0 * options.time_scale);
  });
  if (workload.conversations.empty())
    throw DatasetError(options.path + ": no rows (the file is empty)");
  workload.description = "mooncake: " + std::to_string(workload.conversations.size()) +
                         " requests, block_size " + std::to_string(options.block_size) + ", over " +
                         nlohmann::json(workload.arrival_s.back()).dump() + " s";
  return workload;
}

}  // namespace kvsweep::driver
