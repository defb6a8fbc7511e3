// Reads YAML files field by field with located errors (file:line:column, the source line and a
// caret, "did you mean"), collecting every error of a file instead of stopping at the first.
#include "common/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/duration.h"
#include "common/join.h"
#include "common/site_check.h"
#include "common/spellcheck.h"

namespace kvsweep {
namespace {

// Deeper than any file kvsweep reads; the duplicate-key walk stops there rather than recurse
// without bound on a hostile file.
constexpr int kMaxWalkDepth = 64;

std::string position(const YAML::Mark& mark) {
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

// Reports every key written twice in one mapping, at any depth. yaml-cpp keeps both entries
// and a lookup finds the first, so the second would be silently ignored.
void report_duplicate_keys(const YAML::Node& node, const std::string& path, int depth,
                           YamlErrors& errors) {
  if (depth > kMaxWalkDepth) return;
  if (node.IsMap()) {
    std::map<std::string, YAML::Mark> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
      const std::string child = path.empty() ? key : path + "." + key;
      if (it->first.IsScalar()) {
        const auto [first, inserted] = seen.emplace(key, it->first.Mark());
        if (!inserted) {
          errors.add(it->first.Mark(), child,
                     "key written twice in one mapping (first at " + position(first->second) +
                         "); only one of them would be used: remove the other");
        }
      }
      report_duplicate_keys(it->second, child, depth + 1, errors);
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      report_duplicate_keys(node[i], path + "[" + std::to_string(i) + "]", depth + 1, errors);
    }
  }
}

// Listens to the parser and keeps nothing: only where each document starts matters.
class IgnoreEvents : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// yaml-cpp 0.7 leaves a ',' that opens a document (a stray ',' at the top level) unread and
// starts an empty document before it again and again: YAML::LoadAll never returns and fills
// memory. One pass over the events first finds a document that starts where the previous one
// did (nothing read in between) and gives its position; a syntax error is thrown as usual.
std::optional<YAML::Mark> stuck_document(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  struct DocumentStart : IgnoreEvents {
    YAML::Mark mark = YAML::Mark::null_mark();
    void OnDocumentStart(const YAML::Mark& at) override { mark = at; }
  } start;
  int previous_start = -1;
  while (parser.HandleNextDocument(start)) {
    if (start.mark.pos == previous_start) return start.mark;
    previous_start = start.mark.pos;
  }
  return std::nullopt;
}

// `node[key]` through a const node: yaml-cpp's non-const operator[] adds a missing key to the
// mapping (and turns a null node into a mapping), which would change the document being read
// and invalidate an iteration over it in progress (a heap-buffer-overflow under ASan).
YAML::Node lookup(const YAML::Node& node, const std::string& key) { return node[key]; }

}  // namespace

YamlErrors::YamlErrors(std::string path, const std::string& text, std::vector<YamlError>* out)
    : path_(std::move(path)), out_(out) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines_.push_back(line);
}

void YamlErrors::add(const YAML::Mark& mark, const std::string& field, const std::string& message) {
  YamlError e;
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
  out_->push_back(std::move(e));
}

std::optional<YAML::Node> load_yaml_document(const std::string& text, YamlErrors& errors) {
  // YAML is Unicode text. yaml-cpp reads other bytes into strings as they are, and they would
  // reach every JSON the run writes (a level's label in a cell's factors), which cannot hold
  // them: refuse them here, where the file and line are known.
  if (const auto bad = first_invalid_utf8(text)) {
    const auto end = text.begin() + static_cast<std::ptrdiff_t>(*bad);
    const std::size_t newline = text.rfind('\n', *bad);  // text[*bad] is no newline
    YAML::Mark mark;
    mark.pos = static_cast<int>(*bad);
    mark.line = static_cast<int>(std::count(text.begin(), end, '\n'));
    mark.column = static_cast<int>(newline == std::string::npos ? *bad : *bad - newline - 1);
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[*bad]));
    errors.add(
        mark, "",
        std::string("invalid YAML: byte ") + byte + " is not UTF-8 (a YAML file is UTF-8 text)");
    return std::nullopt;
  }
  std::vector<YAML::Node> documents;
  try {
    if (const auto stuck = stuck_document(text)) {
      const char at = static_cast<std::size_t>(stuck->pos) < text.size() ? text[stuck->pos] : ' ';
      errors.add(*stuck, "",
                 at == ','
                     ? "invalid YAML: a ',' outside [ ] or { }: items are separated by commas "
                       "only inside a flow list or mapping"
                     : std::string("invalid YAML: unexpected '") + at + "'");
      return std::nullopt;
    }
    documents = YAML::LoadAll(text);
  } catch (const YAML::ParserException& e) {
    errors.add(e.mark, "", "invalid YAML: " + e.msg);
    return std::nullopt;
  }
  if (documents.empty()) return YAML::Node(YAML::NodeType::Null);
  for (std::size_t i = 1; i < documents.size(); ++i) {
    // A lone "---" at the end opens an empty document: it holds nothing to ignore.
    if (documents[i].IsNull()) continue;
    errors.add(documents[i].Mark(), "",
               "a second YAML document (after ---): the file must hold one; merge it into the "
               "first or remove it");
    break;
  }
  report_duplicate_keys(documents.front(), "", 0, errors);
  return documents.front();
}

std::string describe_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return '"' + node.Scalar() + '"';
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Null:
      return "nothing";
    default:
      return "an undefined value";
  }
}

std::vector<YAML::Node> scalars_of(const YAML::Node& node) {
  std::vector<YAML::Node> items;
  if (node.IsSequence()) {
    for (const auto& item : node) items.push_back(item);
  } else {
    items.push_back(node);
  }
  return items;
}

YamlMapReader::YamlMapReader(const YAML::Node& node, std::string prefix, YamlErrors& errors,
                             std::map<std::string, SourceMark>* marks)
    : node_(node), prefix_(std::move(prefix)), errors_(errors), marks_(marks) {}

std::string YamlMapReader::path_of(const std::string& key) const {
  return prefix_.empty() ? key : prefix_ + "." + key;
}

YAML::Node YamlMapReader::get(const std::string& key) {
  known_.push_back(key);
  YAML::Node value = lookup(node_, key);
  if (value.IsDefined() && marks_ != nullptr) {
    (*marks_)[path_of(key)] = SourceMark{value.Mark().line + 1, value.Mark().column + 1};
  }
  return value;
}

void YamlMapReader::require(const std::string& key) {
  known_.push_back(key);
  if (!lookup(node_, key).IsDefined())
    errors_.add(node_.Mark(), path_of(key), "required key is missing");
}

void YamlMapReader::read_string(const std::string& key, std::string* out) {
  const YAML::Node value = get(key);
  if (!value.IsDefined()) return;
  if (!value.IsScalar()) {
    errors_.add(value.Mark(), path_of(key), "expected a string, got " + describe_node(value));
    return;
  }
  *out = value.Scalar();
}

void YamlMapReader::report_not_int(const YAML::Node& value, const std::string& key,
                                   const std::string& min, const std::string& max) {
  const std::string expected = max.empty() ? "expected an integer >= " + min
                                           : "expected an integer from " + min + " to " + max;
  errors_.add(value.Mark(), path_of(key), expected + ", got " + describe_node(value));
}

void YamlMapReader::read_double(const std::string& key, double* out, double min_value,
                                bool allow_equal, const std::string& what, double max_value) {
  const YAML::Node value = get(key);
  if (!value.IsDefined()) return;
  double parsed = 0;
  const bool number =
      value.IsScalar() && YAML::convert<double>::decode(value, parsed) && std::isfinite(parsed);
  if (!number || parsed < min_value || (!allow_equal && parsed == min_value) ||
      parsed > max_value) {
    std::string expected = what;
    if (std::isfinite(max_value)) {
      std::ostringstream max_text;
      max_text << max_value;
      expected += ", at most " + max_text.str();
    }
    errors_.add(value.Mark(), path_of(key),
                "expected " + expected + ", got " + describe_node(value));
    return;
  }
  *out = parsed;
}

void YamlMapReader::read_bool(const std::string& key, bool* out) {
  const YAML::Node value = get(key);
  if (!value.IsDefined()) return;
  bool parsed = false;
  // yaml-cpp reads YAML 1.1 spellings (true/false, yes/no, on/off) as bool; nothing else.
  if (!value.IsScalar() || !YAML::convert<bool>::decode(value, parsed)) {
    errors_.add(value.Mark(), path_of(key), "expected true or false, got " + describe_node(value));
    return;
  }
  *out = parsed;
}

void YamlMapReader::read_choice(const std::string& key, std::string* out,
                                const std::vector<std::string>& choices) {
  const YAML::Node value = get(key);
  if (!value.IsDefined()) return;
  const std::string text = value.IsScalar() ? value.Scalar() : "";
  if (std::find(choices.begin(), choices.end(), text) != choices.end()) {
    *out = text;
    return;
  }
  std::string message = "expected one of " + join(choices) + ", got " + describe_node(value);
  if (auto s = closest_word(text, choices); s && value.IsScalar()) {
    message += "; did you mean '" + *s + "'?";
  }
  errors_.add(value.Mark(), path_of(key), message);
}

void YamlMapReader::read_duration(const std::string& key, double* out_s, bool allow_zero,
                                  double max_s) {
  const YAML::Node value = get(key);
  if (!value.IsDefined()) return;
  std::optional<double> seconds;
  if (value.IsScalar()) seconds = parse_duration_s(value.Scalar());
  if (!seconds || *seconds < 0 || (*seconds == 0 && !allow_zero)) {
    errors_.add(value.Mark(), path_of(key),
                std::string("expected a duration ") + (allow_zero ? ">= 0" : "> 0") +
                    " such as 90s, 5m, 250ms or 30, got " + describe_node(value));
    return;
  }
  if (*seconds > max_s) {
    std::ostringstream max_text;
    max_text << max_s / 3600 << "h";
    errors_.add(
        value.Mark(), path_of(key),
        "expected a duration of at most " + max_text.str() + ", got " + describe_node(value));
    return;
  }
  *out_s = *seconds;
}

YAML::Node YamlMapReader::mapping(const std::string& key) {
  YAML::Node value = get(key);
  if (value.IsDefined() && !value.IsMap()) {
    errors_.add(value.Mark(), path_of(key), "expected a mapping, got " + describe_node(value));
    return YAML::Node(YAML::NodeType::Undefined);
  }
  return value;
}

void YamlMapReader::finish() {
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (!it->first.IsScalar()) {  // `: 3`, `[a]: 3`: a key no read can ask for
      errors_.add(it->first.Mark(), prefix_,
                  "expected a key name before ':', got " + describe_node(it->first));
      continue;
    }
    const std::string key = it->first.Scalar();
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    std::string message = "unknown key";
    if (auto suggestion = closest_word(key, known_)) {
      message += "; did you mean '" + *suggestion + "'?";
    } else {
      message += " (expected one of: " + join(known_) + ")";
    }
    errors_.add(it->first.Mark(), path_of(key), message);
  }
}

}  // namespace kvsweep
