// Reads YAML files field by field with located errors (file:line:column, the source line and a
// caret, "did you mean"), collecting every error of a file instead of stopping at the first.
// Knows YAML and plain values only: readers of a file's own types build on it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/source_mark.h"
#include "common/yaml_limits.h"

namespace kvsweep {

struct YamlError {
  int line = 0;  // 1-based, 0 when the error has no position (file unreadable)
  int column = 0;
  std::string field;    // dotted path, "load.max_tokens"
  std::string message;  // "expected an integer >= 1, got \"many\""
  std::string text;     // the whole formatted error: location, message, source line, caret
};

// Collects the located errors of one file into `out`, each formatted as
//   path:line:column: field: message
//   <the source line>
//        ^
// quoting at most a short excerpt of the file: control characters escaped, the message cut at
// 1,000 bytes, a source line longer than 120 bytes shown 60 bytes each side of the caret.
class YamlErrors {
 public:
  YamlErrors(std::string path, const std::string& text, std::vector<YamlError>* out);

  // `mark` is yaml-cpp's 0-based position; a negative line means "no position". `field` may
  // be "" (an error about the whole file).
  void add(const YAML::Mark& mark, const std::string& field, const std::string& message);

  bool empty() const { return out_->empty(); }
  std::size_t count() const { return out_->size(); }
  // Where the errors go: another file's errors (one a scenario names) can join them.
  std::vector<YamlError>* out() const { return out_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> lines_;
  std::vector<YamlError>* out_;
};

// Parses `text` as one YAML document. A syntax error is reported and gives nullopt. A second
// document, and every key written twice in one mapping (at the second place, naming the
// first), are reported but the first document is still returned, so the caller's own checks
// report the rest in the same pass. A document past kMaxYamlNodes once expanded, or with an
// alias inside the node it names, is refused at that alias (nullopt), before any tree is
// built. An empty text is a Null node.
std::optional<YAML::Node> load_yaml_document(const std::string& text, YamlErrors& errors);

// How a node reads in a message: "\"fast\"", "a list", "a mapping", "nothing". A scalar is
// quoted escaped (escaped_excerpt) and, past kMaxQuotedBytes, cut: "\"-----BEGIN ...\" (1679
// bytes)".
std::string describe_node(const YAML::Node& node);
inline constexpr std::size_t kMaxQuotedBytes = 48;

// A list's items, or a single node taken as a list of one.
std::vector<YAML::Node> scalars_of(const YAML::Node& node);

// Reads one mapping. Every read marks its key as known (and, when `marks` is given, records
// where its value was written under the key's dotted path); finish() reports every other key
// as unknown, with "did you mean" when one is close. Wrong values are reported, never thrown,
// and leave the output as it was (the default).
class YamlMapReader {
 public:
  YamlMapReader(const YAML::Node& node, std::string prefix, YamlErrors& errors,
                std::map<std::string, SourceMark>* marks = nullptr);

  // "load.max_tokens" for key "max_tokens" under prefix "load".
  std::string path_of(const std::string& key) const;

  // The value node for `key`, or an undefined node when absent. Marks the key as known.
  YAML::Node get(const std::string& key);
  // Reports "required key is missing" when `key` is absent. Marks the key as known.
  void require(const std::string& key);

  void read_string(const std::string& key, std::string* out);
  // An integer in [min_value, max_value]; min_value must not be negative.
  template <typename Int>
  void read_int(const std::string& key, Int* out, Int min_value,
                Int max_value = std::numeric_limits<Int>::max()) {
    const YAML::Node value = get(key);
    if (!value.IsDefined()) return;
    if (auto parsed = to_int<Int>(value, key, min_value, max_value)) *out = *parsed;
  }
  // A finite number >= min_value (> min_value unless allow_equal) and <= max_value; `what`
  // says what is expected in the error: "a rate in requests/s > 0" (" at most <max_value>" is
  // added when a max is given). NaN and infinities are refused.
  void read_double(const std::string& key, double* out, double min_value, bool allow_equal,
                   const std::string& what,
                   double max_value = std::numeric_limits<double>::infinity());
  void read_bool(const std::string& key, bool* out);
  // One of `choices`, with "did you mean" for a near miss.
  void read_choice(const std::string& key, std::string* out,
                   const std::vector<std::string>& choices);
  // A duration > 0 such as 90s, 5m, 250ms or 30 (seconds), at most max_s; with allow_zero, 0
  // too.
  void read_duration(const std::string& key, double* out_s, bool allow_zero = false,
                     double max_s = kMaxDurationS);

  // A week: longer than any cell, gate or timeout kvsweep waits out, and far from where a
  // duration overflows a clock.
  static constexpr double kMaxDurationS = 7 * 24 * 3600;
  // A nested mapping, or an undefined node (with an error when present but not a mapping).
  YAML::Node mapping(const std::string& key);

  // `value` as an integer in [min_value, max_value], reported under `key` when it is not.
  template <typename Int>
  std::optional<Int> to_int(const YAML::Node& value, const std::string& key, Int min_value,
                            Int max_value = std::numeric_limits<Int>::max()) {
    long long parsed = 0;
    // min_value is never negative here, so once parsed >= min_value the unsigned comparison
    // against max_value is exact for every Int we read (int, int64_t, uint64_t).
    const bool ok =
        value.IsScalar() && YAML::convert<long long>::decode(value, parsed) &&
        parsed >= static_cast<long long>(min_value) &&
        static_cast<unsigned long long>(parsed) <= static_cast<unsigned long long>(max_value);
    if (!ok) {
      report_not_int(value, key, std::to_string(min_value),
                     max_value == std::numeric_limits<Int>::max() ? "" : std::to_string(max_value));
      return std::nullopt;
    }
    return static_cast<Int>(parsed);
  }

  // Reports every key of the mapping no read asked for.
  void finish();

  const YAML::Node& node() const { return node_; }
  // The keys read so far: what this mapping accepts, for a caller's own suggestions.
  const std::vector<std::string>& known() const { return known_; }
  YamlErrors& errors() { return errors_; }
  std::map<std::string, SourceMark>* marks() { return marks_; }

 private:
  void report_not_int(const YAML::Node& value, const std::string& key, const std::string& min,
                      const std::string& max);

  YAML::Node node_;
  std::string prefix_;
  YamlErrors& errors_;
  std::map<std::string, SourceMark>* marks_;
  std::vector<std::string> known_;
};

}  // namespace kvsweep
