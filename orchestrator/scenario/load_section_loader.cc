// Reads a scenario's `load:` section: the dataset, the load shape, the bounds of a cell, its
// cache policy. The factor system re-reads this section with a cell's levels applied, so a
// level is checked exactly as the field itself.
#include <algorithm>
#include <filesystem>
#include <optional>

#include "common/input_file.h"
#include "driver/datasets/dataset_limits.h"
#include "driver/datasets/load_workload.h"
#include "driver/load_options.h"
#include "orchestrator/scenario/scenario_reads.h"

namespace kvsweep::orchestrator {
namespace {

// Which dataset kinds read each dataset key: a key given for another kind is an error rather
// than silently ignored.
const std::map<std::string, std::vector<std::string>>& dataset_key_kinds() {
  static const std::map<std::string, std::vector<std::string>> kinds = {
      {"path", {"sharegpt", "chat-threads", "jsonl", "mooncake"}},
      {"stand_in", {"sharegpt", "chat-threads", "jsonl", "mooncake"}},
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

// The generated kinds, which a stand-in must be.
bool generated_kind(const std::string& kind) {
  return kind == "synthetic-multiturn" || kind == "shared-prefix" || kind == "random";
}

// `stand_in`: where a stand-in for an absent file goes; null for a stand-in itself.
void read_dataset_path(YamlMapReader& dataset, driver::DatasetOptions& d,
                       const std::optional<driver::DatasetOptions>* stand_in,
                       const ScenarioSpec& spec, YamlErrors& sink) {
  dataset.read_string("path", &d.path);
  if (!d.path.empty()) {
    // Relative paths are relative to the scenario file, so a scenario runs from any folder.
    std::filesystem::path file(d.path);
    if (file.is_relative()) {
      file = std::filesystem::path(spec.path).parent_path() / file;
    }
    d.path = file.lexically_normal().string();
    // With a stand-in, an absent file is decided when the sweep knows its target.
    if (!std::filesystem::exists(file)) {
      if (stand_in == nullptr || !stand_in->has_value()) {
        sink.add(dataset.node()["path"].Mark(), dataset.path_of("path"), "no such file: " + d.path);
      }
    } else if (const auto problem = input_file_problem(d.path, driver::kMaxDatasetFileBytes)) {
      // /dev/zero, a FIFO, a directory, a file of many gigabytes: refused before the sweep.
      sink.add(dataset.node()["path"].Mark(), dataset.path_of("path"), d.path + ": " + *problem);
    }
  }
  if (kind_reads("path", d.kind) && d.path.empty() && !dataset.node()["path"].IsDefined()) {
    sink.add(dataset.node().Mark(), dataset.path_of("path"),
             "dataset kind " + d.kind + " reads a file: give its path");
  }
}

// A length read from the scenario, within its limit (driver/datasets/dataset_limits.h).
void read_bounded_length(YamlMapReader& reader, const std::string& key,
                         driver::LengthDistribution* out, int min_value, int limit) {
  read_length(reader, key, out, min_value, limit);
  if (!reader.node()[key].IsDefined()) return;
  if (const auto problem = driver::length_limit_problem(*out, limit)) {
    const YAML::Node value = reader.node()[key];
    const YAML::Node at =
        value.IsMap() && value[problem->field].IsDefined() ? value[problem->field] : value;
    reader.errors().add(at.Mark(), reader.path_of(key) + "." + problem->field, problem->message);
  }
}

// vLLM's random dataset: lengths in tokens, r in [0, 1) as vLLM's --random-range-ratio.
void read_random_keys(YamlMapReader& dataset, driver::DatasetOptions& d, YamlErrors& sink) {
  dataset.read_int("num_prompts", &d.num_prompts, 1, driver::kMaxConversations);
  dataset.read_int("random_input_len", &d.random_input_len, 0, driver::kMaxPromptTokens);
  dataset.read_int("random_output_len", &d.random_output_len, 1, driver::kMaxOutputTokens);
  dataset.read_int("random_prefix_len", &d.random_prefix_len, 0, driver::kMaxPromptTokens);
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

// One dataset mapping into `d`. `stand_in`: where the mapping's own stand_in goes; null for a
// stand-in itself (which has none).
void read_dataset(YamlMapReader& dataset, driver::DatasetOptions& d,
                  std::optional<driver::DatasetOptions>* stand_in, const ScenarioSpec& spec,
                  YamlErrors& sink) {
  dataset.read_choice("kind", &d.kind, driver::dataset_kinds());
  for (const auto& [key, kinds] : dataset_key_kinds()) {
    const YAML::Node value = dataset.node()[key];
    if (value.IsDefined() && !kind_reads(key, d.kind)) {
      sink.add(value.Mark(), dataset.path_of(key),
               "not used by dataset kind " + d.kind + " (used by: " + join(kinds) + ")");
    }
  }
  if (stand_in != nullptr) {
    if (YAML::Node node = dataset.mapping("stand_in"); node.IsDefined()) {
      const std::string path = dataset.path_of("stand_in");
      driver::DatasetOptions generated = LoadSpec::default_dataset();
      YamlMapReader reader(node, path, sink);
      read_dataset(reader, generated, nullptr, spec, sink);
      if (!generated_kind(generated.kind)) {
        sink.add(node.Mark(), path + ".kind",
                 "a stand-in is generated: synthetic-multiturn, shared-prefix or random, not " +
                     generated.kind);
      }
      *stand_in = generated;
    }
  }
  read_dataset_path(dataset, d, stand_in, spec, sink);
  using driver::kMaxConversations;
  using driver::kMaxMessageWords;
  using driver::kMaxPromptTokens;
  dataset.read_int("min_messages", &d.min_messages, 0, driver::kMaxTurns * 2);
  dataset.read_int("max_conversations", &d.max_conversations, 0, kMaxConversations);
  dataset.read_int("conversations", &d.conversations, 1, kMaxConversations);
  read_bounded_length(dataset, "turns", &d.turns, 1, driver::kMaxTurns);
  read_bounded_length(dataset, "system_prompt_words", &d.system_prompt_words, 0, kMaxMessageWords);
  read_bounded_length(dataset, "user_words", &d.user_words, 1, kMaxMessageWords);
  read_bounded_length(dataset, "assistant_words", &d.assistant_words, 1, kMaxMessageWords);
  read_bounded_length(dataset, "output_tokens", &d.output_tokens, 1, driver::kMaxOutputTokens);
  dataset.read_int("prefix_tokens", &d.prefix_tokens, 0, kMaxPromptTokens);
  dataset.read_int("num_prefixes", &d.num_prefixes, 1, kMaxConversations);
  dataset.read_int("prompts_per_prefix", &d.prompts_per_prefix, 1, kMaxConversations);
  dataset.read_int("suffix_tokens", &d.suffix_tokens, 0, kMaxPromptTokens);
  dataset.read_bool("ordered", &d.ordered);
  read_random_keys(dataset, d, sink);
  dataset.read_int("block_size", &d.block_size, 1, kMaxPromptTokens);
  dataset.read_double("time_scale", &d.time_scale, 0, false, "a number > 0", driver::kMaxTimeScale);
  if (d.kind == "mooncake" && d.block_size == 0) {
    sink.add(dataset.node().Mark(), dataset.path_of("block_size"),
             "required for mooncake traces (Mooncake's own traces use 512; vLLM's silent "
             "default of 16 makes prompts 32x too short)");
  }
  // The sizes together: every conversation of a generated dataset is held in memory.
  if (const std::uintmax_t bytes = driver::generated_text_bytes(d);
      sink.empty() && bytes > driver::kMaxWorkloadTextBytes) {
    sink.add(dataset.node().Mark(), "load.dataset",
             "these sizes make about " + format_bytes(bytes) + " of prompt text, more than the " +
                 format_bytes(driver::kMaxWorkloadTextBytes) +
                 " a dataset may hold; lower the counts or lengths");
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
  load.read_int("warm_passes", &l.warm_passes, 1, kMaxWarmPasses);
  const YAML::Node passes = load.node()["warm_passes"];
  if (passes.IsDefined() && l.cache != CachePolicy::kWarm) {
    sink.add(
        passes.Mark(), load.path_of("warm_passes"),
        std::string("only read with cache: warm (cache is ") + cache_policy_name(l.cache) + ")");
  }
}

}  // namespace

void read_length(YamlMapReader& reader, const std::string& key, driver::LengthDistribution* out,
                 int min_value, int max_value) {
  const YAML::Node value = reader.get(key);
  if (!value.IsDefined()) return;
  const std::string path = reader.path_of(key);
  if (value.IsScalar()) {
    if (auto n = reader.to_int<int>(value, key, min_value, max_value)) {
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
  fields.read_double("mean", &d.mean, 0, true, "a number >= 0", max_value);
  fields.read_double("stddev", &d.stddev, 0, true, "a number >= 0", max_value);
  fields.read_int("min", &d.min, 0, max_value);
  fields.read_int("max", &d.max, 0, max_value);
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
    read_dataset(dataset, spec.load.dataset, &spec.load.stand_in, spec, sink);
  }
  load.read_choice("endpoint", &l.endpoint, {"chat", "completions"});
  load.read_bool("stream", &l.stream);
  load.read_int("max_tokens", &l.max_tokens, 1, driver::kMaxTokens);
  load.read_bool("ignore_eos", &l.ignore_eos);
  if (load.node()["temperature"].IsDefined()) {
    double t = 0;
    load.read_double("temperature", &t, 0, true, "a number >= 0", kMaxTemperature);
    l.temperature = t;
  } else {
    load.get("temperature");
  }
  load.read_double("request_rate", &l.request_rate, kMinRate, true, "a rate in requests/s >= 0.001",
                   kMaxRate);
  load.read_double("burstiness", &l.burstiness, 0, false, "a number > 0 (1 = Poisson)",
                   kMaxBurstiness);
  read_turn_order(load, l);
  load.read_int("threads", &l.threads, 0, kMaxThreads);
  load.read_bool("new_connection_per_request", &l.new_connection_per_request);
  load.read_int<std::int64_t>("num_requests", &l.num_requests, 1, driver::kMaxRequests);
  load.read_duration("duration", &l.duration_s);
  load.read_duration("timeout", &l.timeout_s);
  load.read_int<std::int64_t>("max_event_bytes", &l.max_event_bytes,
                              static_cast<std::int64_t>(driver::kMinEventBytes),
                              static_cast<std::int64_t>(driver::kMaxEventBytes));
  read_cache_policy(load, l, sink);
  load.read_bool("stop_when_over_capacity", &l.stop_when_over_capacity);
  load.read_int("shards", &l.shards, 1, driver::kMaxShards);
  if (YAML::Node node = load.mapping("shard_job"); node.IsDefined()) {
    YamlMapReader job(node, "load.shard_job", sink, load.marks());
    LoadSpec::ShardJob& j = l.shard_job;
    job.read_choice("runner", &j.runner, {"local", "job"});
    job.read_string("image", &j.image);
    job.read_string("cpu", &j.cpu);
    job.read_string("memory", &j.memory);
    job.read_string("env_secret", &j.env_secret);
    if (YAML::Node selector = job.mapping("node_selector"); selector.IsDefined()) {
      for (const auto& entry : selector) {
        if (!entry.second.IsScalar()) {
          sink.add(entry.second.Mark(), "load.shard_job.node_selector",
                   "expected label: value pairs");
          continue;
        }
        j.node_selector[entry.first.as<std::string>()] = entry.second.as<std::string>();
      }
    }
    job.finish();
  }
  if (l.shards > 1 && l.stop_when_over_capacity) {
    sink.add(load.node()["shards"].Mark(), "load.shards",
             "not with load.stop_when_over_capacity: each shard sees only its own requests' TTFT "
             "and would stop alone");
  }
  if (YAML::Node node = load.mapping("validity"); node.IsDefined()) {
    YamlMapReader validity(node, "load.validity", sink, load.marks());
    ValidityRules& v = l.validity;
    validity.read_double("max_send_shortfall", &v.max_send_shortfall, 0, true,
                         "a fraction >= 0 (0.03: 3%)", 1);
    validity.read_double("max_send_delay_p99_ms", &v.max_send_delay_p99_ms, 0, false,
                         "a number of ms > 0", kMaxMs);
    validity.read_double("min_in_flight_fraction", &v.min_in_flight_fraction, 0, true,
                         "a fraction >= 0 (0.9: 90%)", 1);
    validity.read_double("backlog_grace_ms", &v.backlog_grace_ms, 0, true, "a number of ms >= 0",
                         kMaxMs);
    validity.read_double("trend_alpha", &v.trend_alpha, 0, false, "a significance > 0 (0.01)", 0.5);
    validity.read_double("min_ttft_rise_per_10s", &v.min_ttft_rise_per_10s, 0, true,
                         "a fraction >= 0 (0.05: 5% of the median per 10 s)", 100);
    validity.finish();
  }
  if (YAML::Node node = load.mapping("warmup"); node.IsDefined()) {
    YamlMapReader warmup(node, "load.warmup", sink, load.marks());
    warmup.read_int<std::int64_t>("requests", &l.warmup_requests, 0, driver::kMaxRequests);
    warmup.finish();
  }
  load.finish();
}

}  // namespace kvsweep::orchestrator
