// What `plan` says about a sweep's dataset, and the stand-in for a file that cannot be shipped.
#include "orchestrator/cli/dataset_preview.h"

#include <cstdio>
#include <filesystem>

#include "driver/datasets/dataset_error.h"
#include "driver/datasets/length_distribution.h"
#include "driver/datasets/load_workload.h"
#include "orchestrator/scenario/dataset_tokens.h"

namespace kvsweep::orchestrator {
namespace {

std::string preview_number(double value, const char* format = "%g") {
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// `value` unless a factor sets load.dataset.<field>: then "by factor".
std::string or_by_factor(const ScenarioSpec& spec, const char* field, const std::string& value) {
  return spec.factor_setting(std::string("load.dataset.") + field) != nullptr ? "by factor" : value;
}

// A generated dataset's shape: "synthetic-multiturn, 800 conversations of 8-12 turns, ...".
std::string generated_text(const ScenarioSpec& spec, const driver::DatasetOptions& d) {
  std::string text = d.kind;
  if (d.kind == "synthetic-multiturn") {
    text += ", " + or_by_factor(spec, "conversations", std::to_string(d.conversations)) +
            " conversations of " + or_by_factor(spec, "turns", length_text(d.turns)) + " turns";
    const std::string system =
        or_by_factor(spec, "system_prompt_words", length_text(d.system_prompt_words));
    text +=
        system == "0" ? ", no system prompt" : ", a shared system prompt of " + system + " words";
    text += ", user messages of " + or_by_factor(spec, "user_words", length_text(d.user_words)) +
            " words, replies of " +
            or_by_factor(spec, "assistant_words", length_text(d.assistant_words)) + " words";
  } else if (d.kind == "shared-prefix") {
    text += ", " + or_by_factor(spec, "num_prefixes", std::to_string(d.num_prefixes)) +
            " prefixes of " + or_by_factor(spec, "prefix_tokens", std::to_string(d.prefix_tokens)) +
            " tokens, " +
            or_by_factor(spec, "prompts_per_prefix", std::to_string(d.prompts_per_prefix)) +
            " prompts each with a suffix of " +
            or_by_factor(spec, "suffix_tokens", std::to_string(d.suffix_tokens)) + " tokens";
  } else if (d.kind == "random") {
    text += ", " + or_by_factor(spec, "random_input_len", std::to_string(d.random_input_len)) +
            " input tokens";
    if (d.random_prefix_len > 0) {
      text += " after a shared prefix of " + std::to_string(d.random_prefix_len);
    }
  }
  return text;
}

// A file dataset: "sharegpt scenarios/data/x.json, conversations of 16+ messages, the first 800".
std::string file_text(const driver::DatasetOptions& d) {
  std::string text = d.kind + " " + d.path;
  if (d.kind == "sharegpt" && d.min_messages > 0) {
    text += ", conversations of " + std::to_string(d.min_messages) + "+ messages";
  }
  if (d.kind == "chat-threads") text += ", each turn's history carrying the server's replies";
  if ((d.kind == "sharegpt" || d.kind == "chat-threads") && d.max_conversations > 0) {
    text += ", the first " + std::to_string(d.max_conversations);
  }
  return text;
}

// "stand-in (the file is absent: ...): synthetic-multiturn, ...; max_tokens 76 (the dataset's
// output_tokens); sends 8078 requests of 833.1 prompt and 76.0 output tokens on average".
std::string stand_in_line(const ScenarioSpec& spec) {
  const driver::DatasetOptions& file = spec.load.dataset;
  driver::DatasetOptions stand_in = *spec.load.stand_in;
  stand_in.seed = spec.seed;  // what a cell sends: its dataset is seeded by the cell's seed
  std::string line = "stand-in ";
  line += std::filesystem::exists(file.path)
              ? "(unused: the file is there)"
              : "(the file is absent: --target sim and predict send this, a real target stops)";
  line += ": " + generated_text(spec, stand_in) + "; max_tokens " +
          max_tokens_text(stand_in, std::to_string(spec.load.max_tokens));
  try {
    const DatasetTokens tokens =
        count_dataset_tokens(driver::load_workload(stand_in), spec.load.max_tokens);
    line += "; at seed " + std::to_string(spec.seed) + " it sends " +
            std::to_string(tokens.requests) + " requests of " +
            preview_number(tokens.mean_prompt_tokens(), "%.1f") + " prompt and " +
            preview_number(tokens.mean_output_tokens(), "%.1f") +
            " output tokens on average (sim tokenizer)";
  } catch (const driver::DatasetError& e) {
    line += std::string("; cannot be generated: ") + e.what();
  }
  return line;
}

}  // namespace

std::string length_text(const driver::LengthDistribution& length) {
  if (length.stddev > 0) {
    std::string text =
        "mean " + preview_number(length.mean) + " (sd " + preview_number(length.stddev);
    if (length.min > 0 || length.max > 0) {
      text += ", " + std::to_string(length.min) + "-" +
              (length.max > 0 ? std::to_string(length.max) : std::string("no max"));
    }
    return text + ")";
  }
  if (length.mean == 0 && length.max > 0) {
    return std::to_string(length.min) + "-" + std::to_string(length.max);
  }
  // The constant, clamped as sample_length clamps it.
  double value = length.mean < length.min ? length.min : length.mean;
  if (length.max > 0 && value > length.max) value = length.max;
  return preview_number(value);
}

std::string max_tokens_text(const driver::DatasetOptions& d, const std::string& fallback) {
  // Every kept ShareGPT turn has a reply (a last question without one is dropped), so a
  // sharegpt request never falls back to load.max_tokens.
  if (d.kind == "sharegpt")
    return "each turn's answer length in the dataset (its bytes / 4, at least 1)";
  if (d.kind == "mooncake") return "each row's output_length";
  if (d.kind == "jsonl") return "each row's max_tokens, else " + fallback;
  if (d.kind == "random") {
    return std::to_string(d.random_output_len) + " (random_output_len" +
           (d.random_range_ratio > 0 ? ", spread by random_range_ratio)" : ")");
  }
  if ((d.kind == "synthetic-multiturn" || d.kind == "shared-prefix") &&
      driver::sets_max_tokens(d.output_tokens)) {
    return length_text(d.output_tokens) + " (the dataset's output_tokens)";
  }
  return fallback;
}

std::vector<std::string> dataset_lines(const ScenarioSpec& spec) {
  const driver::DatasetOptions& d = spec.load.dataset;
  const bool file = !d.path.empty();
  std::vector<std::string> lines{"dataset: " + (file ? file_text(d) : generated_text(spec, d))};
  if (file && spec.load.stand_in) lines.push_back(stand_in_line(spec));
  return lines;
}

}  // namespace kvsweep::orchestrator
