// Reads YAML mappings field by field, collecting located errors (file:line:column, the source
// line and a caret, "did you mean") instead of stopping at the first. Shared by the scenario
// loader's parts.
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/join.h"
#include "common/spellcheck.h"
#include "driver/datasets/dataset_options.h"
#include "orchestrator/scenario_loader.h"
#include "orchestrator/scenario_spec.h"

namespace kvsweep::orchestrator {

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

inline std::string describe_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar: return '"' + node.Scalar() + '"';
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Null: return "nothing";
    default: return "an undefined value";
  }
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
      std::string message = "expected one of " + join(choices) + ", got " + describe_node(value);
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
        message += " (expected one of: " + join(known_) + ")";
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

// A scalar list, or a single scalar taken as a list of one.
inline std::vector<YAML::Node> scalars_of(const YAML::Node& node) {
  std::vector<YAML::Node> items;
  if (node.IsSequence()) {
    for (const auto& item : node) items.push_back(item);
  } else {
    items.push_back(node);
  }
  return items;
}

// The `target:` section (target_loader.cc). Reads every key for spec.target.kind.
void read_target(MappingReader& target, ScenarioSpec& spec, ErrorSink& sink);

}  // namespace kvsweep::orchestrator
