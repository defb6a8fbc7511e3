// Reads a scenario's `load:` section: the dataset, the load shape, the bounds of a cell, its
// cache policy. The factor system re-reads this section with a cell's levels applied, so a
// level is checked exactly as the field itself.
#include <algorithm>
#include <filesystem>

#include "driver/datasets/load_workload.h"
#include "orchestrator/scenario/scenario_reads.h"

namespace kvsweep::orchestrator {
namespace {

// Which dataset kinds read each dataset key: a key given for another kind is an error rather
// than silently ignored.
const std::map<std::string, std::vector<std::string>>& dataset_key_kinds() {
  static const std::map<std::string, std::vector<std::string>> kinds = {
      {"path", {"sharegpt", "chat-threads", "jsonl", "mooncake"}},
      {"min_messages", {"sharegpt"}},
      {"max_conversations", {"sharegpt"}},
      {"conversations", {"synthetic-multiturn"}},
      {"turns", {"synthetic-multiturn"}},
      {"system_prompt_words", {"synthetic-multiturn"}},
      {"user_words", {"synthetic-multiturn"}},
      {"assistant_words", {"synthetic-multiturn"}},
      {"output_tokens", {"synthetic-multiturn", "shared-prefix"}},
      {"prefix_tokens", {"shared-prefix"}},
      {"num_prefixes", {"shared-prefix"}},
      {"prompts_per_prefix", {"shared-prefix"}},
      {"suffix_tokens", {"shared-prefix"}},
      {"ordered", {"shared-prefix"}},
      {"num_prompts", {"random"}},
      {"random_input_len", {"random"}},
      {"random_output_len", {"random"}},
      {"random_range_ratio", {"random"}},
      {"random_prefix_len", {"random"}},
      {"block_size", {"mooncake"}},
      {"time_scale", {"mooncake"}},
  };
  return kinds;
}

bool kind_reads(const std::string& key, const std::string& kind) {
  const auto& kinds = dataset_key_kinds().at(key);
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

void read_dataset_path(YamlMapReader& dataset, ScenarioSpec& spec, YamlErrors& sink) {
  driver::DatasetOptions& d = spec.load.dataset;
  dataset.read_string("path", &d.path);
  if (!d.path.empty()) {
    // Relative paths are relative to the scenario file, so a scenario runs from any folder.
    std::filesystem::path file(d.path);
    if (file.is_relative()) {
      file = std::filesystem::path(spec.path).parent_path() / file;
    }
    d.path = file.lexically_normal().string();
    if (!std::filesystem::exists(file)) {
      sink.add(dataset.node()["path"].Mark(), "load.dataset.path", "no such file: " + d.path);
    }
  }
  if (kind_reads("path", d.kind) && d.path.empty() && !dataset.node()["path"].IsDefined()) {
    sink.add(dataset.node().Mark(), "load.dataset.path",
             "dataset kind " + d.kind + " reads a file: give its path");
  }
}

// vLLM's random dataset: lengths in tokens, r in [0, 1) as vLLM's --random-range-ratio.
void read_random_keys(YamlMapReader& dataset, driver::DatasetOptions& d, YamlErrors& sink) {
  dataset.read_int("num_prompts", &d.num_prompts, 1);
  dataset.read_int("random_input_len", &d.random_input_len, 0);
  dataset.read_int("random_output_len", &d.random_output_len, 1);
  dataset.read_int("random_prefix_len", &d.random_prefix_len, 0);
  double ratio = d.random_range_ratio;
  dataset.read_double("random_range_ratio", &ratio, 0, true, "a number in [0, 1)");
  if (ratio >= 1) {
    sink.add(dataset.node()["random_range_ratio"].Mark(), "load.dataset.random_range_ratio",
             "expected a number in [0, 1), got \"" + dataset.node()["random_range_ratio"].Scalar() +
                 "\"");
  } else {
    d.random_range_ratio = ratio;
  }
}

void read_dataset(YamlMapReader& dataset, ScenarioSpec& spec, YamlErrors& sink) {
  driver::DatasetOptions& d = spec.load.dataset;
  dataset.read_choice("kind", &d.kind, driver::dataset_kinds());
  for (const auto& [key, kinds] : dataset_key_kinds()) {
    const YAML::Node value = dataset.node()[key];
    if (value.IsDefined() && !kind_reads(key, d.kind)) {
      sink.add(value.Mark(), dataset.path_of(key),
               "not used by dataset kind " + d.kind + " (used by: " + join(kinds) + ")");
    }
  }
  read_dataset_path(dataset, spec, sink);
  dataset.read_int("min_messages", &d.min_messages, 0);
  dataset.read_int("max_conversations", &d.max_conversations, 0);
  dataset.read_int("conversations", &d.conversations, 1);
  read_length(dataset, "turns", &d.turns, 1);
  read_length(dataset, "system_prompt_words", &d.system_prompt_words, 0);
  read_length(dataset, "user_words", &d.user_words, 1);
  read_length(dataset, "assistant_words", &d.assistant_words, 1);
  read_length(dataset, "output_tokens", &d.output_tokens, 1);
  dataset.read_int("prefix_tokens", &d.prefix_tokens, 0);
  dataset.read_int("num_prefixes", &d.num_prefixes, 1);
  dataset.read_int("prompts_per_prefix", &d.prompts_per_prefix, 1);
  dataset.read_int("suffix_tokens", &d.suffix_tokens, 0);
  dataset.read_bool("ordered", &d.ordered);
  read_random_keys(dataset, d, sink);
  dataset.read_int("block_size", &d.block_size, 1);
  dataset.read_double("time_scale", &d.time_scale, 0, false, "a number > 0");
  if (d.kind == "mooncake" && d.block_size == 0) {
    sink.add(dataset.node().Mark(), "load.dataset.block_size",
             "required for mooncake traces (Mooncake's own traces use 512; vLLM's silent "
             "default of 16 makes prompts 32x too short)");
  }
  dataset.finish();
}

void read_turn_order(YamlMapReader& load, LoadSpec& l) {
  std::string turns;
  load.read_choice("turns", &turns, {"independent", "sequential"});
  if (!turns.empty()) {
    l.turns = turns == "sequential" ? driver::LoadOptions::Turns::kSequential
                                    : driver::LoadOptions::Turns::kIndependent;
  }
  load.read_duration("think_time", &l.think_time_s, /*allow_zero=*/true);
}

void read_cache_policy(YamlMapReader& load, LoadSpec& l, YamlErrors& sink) {
  std::string cache;
  load.read_choice("cache", &cache, {"cold", "warm", "as-is"});
  if (cache == "cold") l.cache = CachePolicy::kCold;
  if (cache == "warm") l.cache = CachePolicy::kWarm;
  if (cache == "as-is") l.cache = CachePolicy::kAsIs;
  load.read_int("warm_passes", &l.warm_passes, 1);
  const YAML::Node passes = load.node()["warm_passes"];
  if (passes.IsDefined() && l.cache != CachePolicy::kWarm) {
    sink.add(
        passes.Mark(), load.path_of("warm_passes"),
        std::string("only read with cache: warm (cache is ") + cache_policy_name(l.cache) + ")");
  }
}

}  // namespace

void read_length(YamlMapReader& reader, const std::string& key, driver::LengthDistribution* out,
                 int min_value) {
  const YAML::Node value = reader.get(key);
  if (!value.IsDefined()) return;
  const std::string path = reader.path_of(key);
  if (value.IsScalar()) {
    if (auto n = reader.to_int<int>(value, key, min_value)) {
      *out = driver::LengthDistribution{static_cast<double>(*n)};
    }
    return;
  }
  if (!value.IsMap()) {
    reader.errors().add(
        value.Mark(), path,
        "expected a number or {mean, stddev, min, max}, got " + describe_node(value));
    return;
  }
  YamlMapReader fields(value, path, reader.errors(), reader.marks());
  driver::LengthDistribution d;
  fields.read_double("mean", &d.mean, 0, true, "a number >= 0");
  fields.read_double("stddev", &d.stddev, 0, true, "a number >= 0");
  fields.read_int("min", &d.min, 0);
  fields.read_int("max", &d.max, 0);
  fields.finish();
  if (d.max > 0 && d.max < d.min) {
    reader.errors().add(value.Mark(), path, "max is below min");
    return;
  }
  *out = d;
}

void read_load(YamlMapReader& load, ScenarioSpec& spec, YamlErrors& sink) {
  LoadSpec& l = spec.load;
  if (YAML::Node node = load.mapping("dataset"); node.IsDefined()) {
    YamlMapReader dataset(node, "load.dataset", sink, load.marks());
    read_dataset(dataset, spec, sink);
  }
  load.read_choice("endpoint", &l.endpoint, {"chat", "completions"});
  load.read_bool("stream", &l.stream);
  load.read_int("max_tokens", &l.max_tokens, 1);
  load.read_bool("ignore_eos", &l.ignore_eos);
  if (load.node()["temperature"].IsDefined()) {
    double t = 0;
    load.read_double("temperature", &t, 0, true, "a number >= 0");
    l.temperature = t;
  } else {
    load.get("temperature");
  }
  load.read_double("request_rate", &l.request_rate, 0, false, "a rate in requests/s > 0");
  load.read_double("burstiness", &l.burstiness, 0, false, "a number > 0 (1 = Poisson)");
  read_turn_order(load, l);
  load.read_int("threads", &l.threads, 0);
  load.read_bool("new_connection_per_request", &l.new_connection_per_request);
  load.read_int<std::int64_t>("num_requests", &l.num_requests, 1);
  load.read_duration("duration", &l.duration_s);
  load.read_duration("timeout", &l.timeout_s);
  read_cache_policy(load, l, sink);
  if (YAML::Node node = load.mapping("warmup"); node.IsDefined()) {
    YamlMapReader warmup(node, "load.warmup", sink, load.marks());
    warmup.read_int<std::int64_t>("requests", &l.warmup_requests, 0);
    warmup.finish();
  }
  load.finish();
}

}  // namespace kvsweep::orchestrator
