// Reads and validates a scenario YAML file; every problem is reported with file:line:column.
#include "orchestrator/scenario_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "common/spellcheck.h"
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

void read_load(MappingReader& load, ScenarioSpec& spec, ErrorSink& sink,
               std::map<std::string, SourceMark>& marks) {
  if (YAML::Node node = load.mapping("dataset"); node.IsDefined()) {
    MappingReader dataset(node, "load.dataset", sink, marks);
    DatasetSpec& d = spec.load.dataset;
    if (YAML::Node kind = dataset.get("kind"); kind.IsDefined()) {
      if (!kind.IsScalar() || kind.Scalar() != "synthetic-multiturn") {
        sink.add(kind.Mark(), "load.dataset.kind",
                 "unsupported dataset " + describe_node(kind) +
                     " (this version supports: synthetic-multiturn)");
      }
    }
    dataset.read_int("conversations", &d.conversations, 1);
    dataset.read_int("turns", &d.turns, 1);
    dataset.read_int("system_prompt_words", &d.system_prompt_words, 0);
    dataset.read_int("user_words", &d.user_words, 1);
    dataset.read_int("assistant_words", &d.assistant_words, 1);
    dataset.finish();
  }
  load.read_int("max_tokens", &spec.load.max_tokens, 1);
  load.read_int<std::int64_t>("num_requests", &spec.load.num_requests, 1);
  load.read_duration("duration", &spec.load.duration_s);
  load.read_duration("timeout", &spec.load.timeout_s);
  if (YAML::Node node = load.mapping("warmup"); node.IsDefined()) {
    MappingReader warmup(node, "load.warmup", sink, marks);
    warmup.read_int<std::int64_t>("requests", &spec.load.warmup_requests, 0);
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
