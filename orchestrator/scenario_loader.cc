// Reads and validates a scenario YAML file; every problem is reported with file:line:column.
#include "orchestrator/scenario_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "common/spellcheck.h"
#include "driver/datasets/load_workload.h"
#include "sim/fleet.h"

namespace kvsweep::orchestrator {
namespace {

// Collects located errors and formats each with its source line and a caret.
class ErrorSink {
 public:
  ErrorSink(const std::string& path, const std::string& text,
            std::vector<ScenarioError>* errors)
      : path_(path), errors_(errors) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines_.push_back(line);
  }

  // mark is yaml-cpp's 0-based position; a negative line means "no position".
  void add(const YAML::Mark& mark, const std::string& field, const std::string& message) {
    ScenarioError e;
    e.line = mark.line >= 0 ? mark.line + 1 : 0;
    e.column = mark.column >= 0 ? mark.column + 1 : 0;
    e.field = field;
    e.message = message;
    std::ostringstream text;
    text << path_;
    if (e.line > 0) text << ':' << e.line << ':' << e.column;
    text << ": ";
    if (!field.empty()) text << field << ": ";
    text << message;
    if (e.line > 0 && e.line <= static_cast<int>(lines_.size())) {
      text << '\n' << lines_[e.line - 1] << '\n' << std::string(e.column - 1, ' ') << '^';
    }
    e.text = text.str();
    errors_->push_back(std::move(e));
  }

  bool empty() const { return errors_->empty(); }

 private:
  std::string path_;
  std::vector<std::string> lines_;
  std::vector<ScenarioError>* errors_;
};

std::string describe_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar: return '"' + node.Scalar() + '"';
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Null: return "nothing";
    default: return "an undefined value";
  }
}

std::string join_keys(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ", ") + k;
  return out;
}

// Reads one YAML mapping: each typed read marks its key as known; finish() reports the rest
// as unknown, with a suggestion when one is close.
class MappingReader {
 public:
  MappingReader(const YAML::Node& node, std::string prefix, ErrorSink& sink,
                std::map<std::string, SourceMark>& marks)
      : node_(node), prefix_(std::move(prefix)), sink_(sink), marks_(marks) {}

  std::string path_of(const std::string& key) const {
    return prefix_.empty() ? key : prefix_ + "." + key;
  }

  // The value node for key, or an invalid node when absent. Records the key as known.
  YAML::Node get(const std::string& key) {
    known_.push_back(key);
    YAML::Node value = node_[key];
    if (value.IsDefined()) {
      marks_[path_of(key)] = SourceMark{value.Mark().line + 1, value.Mark().column + 1};
    }
    return value;
  }

  void require(const std::string& key) {
    known_.push_back(key);
    if (!node_[key].IsDefined()) {
      sink_.add(node_.Mark(), path_of(key), "required key is missing");
    }
  }

  void read_string(const std::string& key, std::string* out) {
    YAML::Node value = get(key);
    if (!value.IsDefined()) return;
    if (!value.IsScalar()) {
      sink_.add(value.Mark(), path_of(key), "expected a string, got " + describe_node(value));
      return;
    }
    *out = value.Scalar();
  }

  template <typename Int>
  void read_int(const std::string& key, Int* out, Int min_value) {
    YAML::Node value = get(key);
    if (!value.IsDefined()) return;
    if (auto parsed = to_int<Int>(value, key, min_value)) *out = *parsed;
  }

  template <typename Int>
  std::optional<Int> to_int(const YAML::Node& value, const std::string& key, Int min_value) {
    const std::string expected = "expected an integer >= " + std::to_string(min_value);
    long long parsed = 0;
    // min_value is never negative here, so once parsed >= min_value the unsigned comparison
    // against Int's maximum is exact for every Int we read (int, int64_t, uint64_t).
    if (!value.IsScalar() || !YAML::convert<long long>::decode(value, parsed) ||
        parsed < static_cast<long long>(min_value) ||
        static_cast<unsigned long long>(parsed) >
            static_cast<unsigned long long>(std::numeric_limits<Int>::max())) {
      sink_.add(value.Mark(), path_of(key), expected + ", got " + describe_node(value));
      return std::nullopt;
    }
    return static_cast<Int>(parsed);
  }

  void read_duration(const std::string& key, double* out_s) {
    YAML::Node value = get(key);
    if (!value.IsDefined()) return;
    std::optional<double> seconds;
    if (value.IsScalar()) seconds = parse_duration_s(value.Scalar());
    if (!seconds || *seconds <= 0) {
      sink_.add(value.Mark(), path_of(key),
                "expected a duration > 0 such as 90s, 5m, 250ms or 30, got " +
                    describe_node(value));
      return;
    }
    *out_s = *seconds;
  }

  void read_double(const std::string& key, double* out, double min_value, bool allow_equal,
                   const std::string& what) {
    YAML::Node value = get(key);
    if (!value.IsDefined()) return;
    double parsed = 0;
    const bool number = value.IsScalar() && YAML::convert<double>::decode(value, parsed) &&
                        !std::isnan(parsed);
    if (!number || parsed < min_value || (!allow_equal && parsed == min_value)) {
      sink_.add(value.Mark(), path_of(key), "expected " + what + ", got " + describe_node(value));
      return;
    }
    *out = parsed;
  }

  void read_bool(const std::string& key, bool* out) {
    YAML::Node value = get(key);
    if (!value.IsDefined()) return;
    bool parsed = false;
    if (!value.IsScalar() || !YAML::convert<bool>::decode(value, parsed)) {
      sink_.add(value.Mark(), path_of(key), "expected true or false, got " + describe_node(value));
      return;
    }
    *out = parsed;
  }

  void read_choice(const std::string& key, std::string* out,
                   const std::vector<std::string>& choices) {
    YAML::Node value = get(key);
    if (!value.IsDefined()) return;
    const std::string text = value.IsScalar() ? value.Scalar() : "";
    if (std::find(choices.begin(), choices.end(), text) == choices.end()) {
      std::string message = "expected one of " + join_keys(choices) + ", got " + describe_node(value);
      if (auto s = closest_word(text, choices); s && value.IsScalar()) {
        message += "; did you mean '" + *s + "'?";
      }
      sink_.add(value.Mark(), path_of(key), message);
      return;
    }
    *out = text;
  }

  // A length: a number, or {mean, stddev, min, max} (GuideLLM's form).
  void read_length(const std::string& key, driver::LengthDistribution* out, int min_value) {
    YAML::Node value = get(key);
    if (!value.IsDefined()) return;
    if (value.IsScalar()) {
      if (auto n = to_int<int>(value, key, min_value)) *out = driver::LengthDistribution{double(*n)};
      return;
    }
    if (!value.IsMap()) {
      sink_.add(value.Mark(), path_of(key),
                "expected a number or {mean, stddev, min, max}, got " + describe_node(value));
      return;
    }
    MappingReader fields(value, path_of(key), sink_, marks_);
    driver::LengthDistribution d;
    fields.read_double("mean", &d.mean, 0, true, "a number >= 0");
    fields.read_double("stddev", &d.stddev, 0, true, "a number >= 0");
    fields.read_int("min", &d.min, 0);
    fields.read_int("max", &d.max, 0);
    fields.finish();
    if (d.max > 0 && d.max < d.min) {
      sink_.add(value.Mark(), path_of(key), "max is below min");
      return;
    }
    *out = d;
  }

  const YAML::Node& node() const { return node_; }

  // A nested mapping, or an invalid node (with an error when present but not a mapping).
  YAML::Node mapping(const std::string& key) {
    YAML::Node value = get(key);
    if (value.IsDefined() && !value.IsMap()) {
      sink_.add(value.Mark(), path_of(key), "expected a mapping, got " + describe_node(value));
      return YAML::Node(YAML::NodeType::Undefined);
    }
    return value;
  }

  void finish() {
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
      std::string message = "unknown key";
      if (auto suggestion = closest_word(key, known_)) {
        message += "; did you mean '" + *suggestion + "'?";
      } else {
        message += " (expected one of: " + join_keys(known_) + ")";
      }
      sink_.add(it->first.Mark(), path_of(key), message);
    }
  }

 private:
  YAML::Node node_;
  std::string prefix_;
  ErrorSink& sink_;
  std::map<std::string, SourceMark>& marks_;
  std::vector<std::string> known_;
};

// A factor's levels: a list, or a single scalar taken as a list of one.
std::vector<YAML::Node> levels_of(const YAML::Node& node) {
  std::vector<YAML::Node> levels;
  if (node.IsSequence()) {
    for (const auto& item : node) levels.push_back(item);
  } else {
    levels.push_back(node);
  }
  return levels;
}

void read_factors(MappingReader& factors, ScenarioSpec& spec, ErrorSink& sink) {
  factors.require("strategy");
  factors.require("concurrency");
  const std::vector<std::string> known = sim::strategy_names();
  if (YAML::Node node = factors.get("strategy"); node.IsDefined()) {
    std::set<std::string> seen;
    for (const auto& level : levels_of(node)) {
      if (!level.IsScalar()) {
        sink.add(level.Mark(), "factors.strategy",
                 "expected a strategy name, got " + describe_node(level));
        continue;
      }
      const std::string name = level.Scalar();
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string message = "unknown strategy \"" + name + "\"";
        if (auto s = closest_word(name, known)) {
          message += "; did you mean '" + *s + "'?";
        } else {
          message += " (expected one of: " + join_keys(known) + ")";
        }
        sink.add(level.Mark(), "factors.strategy", message);
      } else if (!seen.insert(name).second) {
        sink.add(level.Mark(), "factors.strategy", "strategy \"" + name + "\" is listed twice");
      } else {
        spec.strategies.push_back(name);
      }
    }
  }
  if (YAML::Node node = factors.get("concurrency"); node.IsDefined()) {
    for (const auto& level : levels_of(node)) {
      if (auto c = factors.to_int<int>(level, "concurrency", 1)) spec.concurrency.push_back(*c);
    }
  }
  factors.read_int("repeats", &spec.repeats, 1);
  factors.finish();
}

void read_target(MappingReader& target, ScenarioSpec& spec, ErrorSink& sink) {
  if (YAML::Node kind = target.get("kind"); kind.IsDefined()) {
    if (!kind.IsScalar() || kind.Scalar() != "sim") {
      sink.add(kind.Mark(), "target.kind",
               "unsupported target " + describe_node(kind) + " (this version supports: sim)");
    }
  }
  target.read_int("replicas", &spec.target.replicas, 1);
  if (YAML::Node profile = target.get("profile"); profile.IsDefined()) {
    const auto known = sim::profile_names();
    if (!profile.IsScalar()) {
      sink.add(profile.Mark(), "target.profile",
               "expected a profile name, got " + describe_node(profile));
    } else if (std::find(known.begin(), known.end(), profile.Scalar()) == known.end()) {
      std::string message = "unknown profile \"" + profile.Scalar() + "\"";
      if (auto s = closest_word(profile.Scalar(), known)) {
        message += "; did you mean '" + *s + "'?";
      } else {
        message += " (expected one of: " + join_keys(known) + ")";
      }
      sink.add(profile.Mark(), "target.profile", message);
    } else {
      spec.target.profile = profile.Scalar();
    }
  }
  target.finish();
}

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
      {"block_size", {"mooncake"}},
      {"time_scale", {"mooncake"}},
  };
  return kinds;
}

void read_dataset(MappingReader& dataset, ScenarioSpec& spec, ErrorSink& sink) {
  driver::DatasetOptions& d = spec.load.dataset;
  dataset.read_choice("kind", &d.kind, driver::dataset_kinds());
  for (const auto& [key, kinds] : dataset_key_kinds()) {
    const YAML::Node value = dataset.node()[key];
    if (value.IsDefined() && std::find(kinds.begin(), kinds.end(), d.kind) == kinds.end()) {
      sink.add(value.Mark(), dataset.path_of(key),
               "not used by dataset kind " + d.kind + " (used by: " + join_keys(kinds) + ")");
    }
  }
  dataset.read_string("path", &d.path);
  if (!d.path.empty()) {
    // Relative paths are relative to the scenario file, so a scenario runs from any folder.
    std::filesystem::path file(d.path);
    if (file.is_relative()) {
      file = std::filesystem::path(spec.path).parent_path() / file;
    }
    d.path = file.lexically_normal().string();
    if (!std::filesystem::exists(file)) {
      sink.add(dataset.node()["path"].Mark(), "load.dataset.path",
               "no such file: " + d.path);
    }
  }
  const auto& kinds = dataset_key_kinds();
  if (std::find(kinds.at("path").begin(), kinds.at("path").end(), d.kind) != kinds.at("path").end() &&
      d.path.empty() && !dataset.node()["path"].IsDefined()) {
    sink.add(dataset.node().Mark(), "load.dataset.path",
             "dataset kind " + d.kind + " reads a file: give its path");
  }
  dataset.read_int("min_messages", &d.min_messages, 0);
  dataset.read_int("max_conversations", &d.max_conversations, 0);
  dataset.read_int("conversations", &d.conversations, 1);
  dataset.read_length("turns", &d.turns, 1);
  dataset.read_length("system_prompt_words", &d.system_prompt_words, 0);
  dataset.read_length("user_words", &d.user_words, 1);
  dataset.read_length("assistant_words", &d.assistant_words, 1);
  dataset.read_length("output_tokens", &d.output_tokens, 1);
  dataset.read_int("prefix_tokens", &d.prefix_tokens, 0);
  dataset.read_int("num_prefixes", &d.num_prefixes, 1);
  dataset.read_int("prompts_per_prefix", &d.prompts_per_prefix, 1);
  dataset.read_int("suffix_tokens", &d.suffix_tokens, 0);
  dataset.read_bool("ordered", &d.ordered);
  dataset.read_int("block_size", &d.block_size, 1);
  dataset.read_double("time_scale", &d.time_scale, 0, false, "a number > 0");
  if (d.kind == "mooncake" && d.block_size == 0) {
    sink.add(dataset.node().Mark(), "load.dataset.block_size",
             "required for mooncake traces (Mooncake's own traces use 512; vLLM's silent "
             "default of 16 makes prompts 32x too short)");
  }
  dataset.finish();
}

void read_load(MappingReader& load, ScenarioSpec& spec, ErrorSink& sink,
               std::map<std::string, SourceMark>& marks) {
  LoadSpec& l = spec.load;
  if (YAML::Node node = load.mapping("dataset"); node.IsDefined()) {
    MappingReader dataset(node, "load.dataset", sink, marks);
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
  load.read_int<std::int64_t>("num_requests", &l.num_requests, 1);
  load.read_duration("duration", &l.duration_s);
  load.read_duration("timeout", &l.timeout_s);
  if (YAML::Node node = load.mapping("warmup"); node.IsDefined()) {
    MappingReader warmup(node, "load.warmup", sink, marks);
    warmup.read_int<std::int64_t>("requests", &l.warmup_requests, 0);
    warmup.finish();
  }
  load.finish();
}

}  // namespace

std::optional<double> parse_duration_s(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string unit = text.substr(used);
  if (!std::isfinite(value)) return std::nullopt;
  if (unit.empty() || unit == "s") return value;
  if (unit == "ms") return value / 1000.0;
  if (unit == "m") return value * 60.0;
  if (unit == "h") return value * 3600.0;
  return std::nullopt;
}

std::optional<ScenarioSpec> parse_scenario(const std::string& text, const std::string& path,
                                           std::vector<ScenarioError>* errors) {
  ErrorSink sink(path, text, errors);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    sink.add(e.mark, "", "invalid YAML: " + e.msg);
    return std::nullopt;
  }
  if (!root.IsMap()) {
    sink.add(root.Mark(), "", "a scenario must be a YAML mapping (name:, target:, factors:, ...)");
    return std::nullopt;
  }

  ScenarioSpec spec;
  spec.path = path;
  spec.text = text;
  MappingReader top(root, "", sink, spec.marks);
  top.require("name");
  top.require("factors");
  top.read_string("name", &spec.name);
  top.read_string("description", &spec.description);
  top.read_string("model", &spec.model);
  top.read_int<std::uint64_t>("seed", &spec.seed, 0);
  if (YAML::Node node = top.mapping("target"); node.IsDefined()) {
    MappingReader target(node, "target", sink, spec.marks);
    read_target(target, spec, sink);
  }
  if (YAML::Node node = top.mapping("factors"); node.IsDefined()) {
    MappingReader factors(node, "factors", sink, spec.marks);
    read_factors(factors, spec, sink);
  }
  if (YAML::Node node = top.mapping("load"); node.IsDefined()) {
    MappingReader load(node, "load", sink, spec.marks);
    read_load(load, spec, sink, spec.marks);
  }
  if (YAML::Node node = top.mapping("report"); node.IsDefined()) {
    MappingReader report(node, "report", sink, spec.marks);
    report.read_string("baseline", &spec.baseline);
    report.finish();
  }
  top.finish();

  if (spec.load.num_requests == 0 && spec.load.duration_s == 0 &&
      spec.load.dataset.kind != "mooncake" &&
      !spec.marks.count("load.num_requests") && !spec.marks.count("load.duration")) {
    YAML::Node load = root["load"];
    sink.add(load.IsDefined() ? load.Mark() : root.Mark(), "load",
             "give num_requests, duration or both: a cell needs an end");
  }
  if (!spec.baseline.empty() && !spec.strategies.empty() &&
      std::find(spec.strategies.begin(), spec.strategies.end(), spec.baseline) ==
          spec.strategies.end()) {
    sink.add(root["report"]["baseline"].Mark(), "report.baseline",
             "baseline \"" + spec.baseline + "\" is not one of factors.strategy (" +
                 join_keys(spec.strategies) + ")");
  }
  if (spec.baseline.empty() && !spec.strategies.empty()) spec.baseline = spec.strategies.front();
  if (!sink.empty()) return std::nullopt;
  return spec;
}

std::optional<ScenarioSpec> load_scenario_file(const std::string& path,
                                               std::vector<ScenarioError>* errors) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ScenarioError e;
    e.message = "cannot read the scenario file";
    e.text = path + ": " + e.message;
    errors->push_back(e);
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_scenario(text.str(), path, errors);
}

}  // namespace kvsweep::orchestrator
