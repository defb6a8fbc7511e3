// Reads YAML files field by field with located errors (file:line:column, the source line and a
// caret, "did you mean"), collecting every error of a file instead of stopping at the first.
#include "common/yaml_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "common/duration.h"
#include "common/join.h"
#include "common/site_check.h"
#include "common/spellcheck.h"
#include "common/utf8_prefix.h"
#include "common/yaml_document_scan.h"

namespace kvsweep {
namespace {

std::string position(const YAML::Mark& mark) {
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

// `node[key]` through a const node: yaml-cpp's non-const operator[] adds a missing key to the
// mapping (and turns a null node into a mapping), which would change the document being read
// and invalidate an iteration over it in progress (a heap-buffer-overflow under ASan).
YAML::Node lookup(const YAML::Node& node, const std::string& key) { return node[key]; }

}  // namespace

YamlErrors::YamlErrors(std::string path, const std::string& text, std::vector<YamlError>* out)
    : path_(std::move(path)), out_(out) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // a file written on Windows
    lines_.push_back(line);
  }
}

namespace {

// The most of a message, and of its source line on each side of the caret, an error quotes.
constexpr std::size_t kMaxMessageBytes = 1000;
constexpr std::size_t kMaxLineBytes = 120;
constexpr std::size_t kLineSideBytes = 60;

// `line` as an error shows it, escaped, with a caret under byte `column`: the whole line when
// short, else up to kLineSideBytes on each side of the column, "..." where it is cut.
std::string line_with_caret(const std::string& line, std::size_t column) {
  constexpr std::size_t kWhole = std::string::npos;
  column = std::min(column, line.size());
  std::string shown = escaped_excerpt(line, kWhole);
  std::size_t caret = escaped_excerpt(line.substr(0, column), kWhole).size();
  if (shown.size() > kMaxLineBytes) {
    std::size_t start = column > kLineSideBytes ? column - kLineSideBytes : 0;
    while (start > 0 && (static_cast<unsigned char>(line[start]) & 0xc0) == 0x80) --start;
    const std::string before =
        (start > 0 ? "..." : "") + escaped_excerpt(line.substr(start, column - start), kWhole);
    shown = before + escaped_excerpt(line.substr(column), kLineSideBytes);
    caret = before.size();
  }
  return shown + '\n' + std::string(caret, ' ') + '^';
}

}  // namespace

void YamlErrors::add(const YAML::Mark& mark, const std::string& field, const std::string& message) {
  YamlError e;
  e.line = mark.line >= 0 ? mark.line + 1 : 0;
  e.column = mark.column >= 0 ? mark.column + 1 : 0;
  e.field = escaped_excerpt(field, kLineSideBytes * 2);
  // Whatever a reader quoted of the file in its message, escaped and bounded.
  e.message = escaped_excerpt(message, kMaxMessageBytes);
  std::ostringstream text;
  text << path_;
  if (e.line > 0) text << ':' << e.line << ':' << e.column;
  text << ": ";
  if (!e.field.empty()) text << e.field << ": ";
  text << e.message;
  if (e.line > 0 && e.line <= static_cast<int>(lines_.size())) {
    text << '\n' << line_with_caret(lines_[e.line - 1], static_cast<std::size_t>(e.column - 1));
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
  Scanned scanned;
  try {
    scan_documents(text, scanned);
    if (const auto& stuck = scanned.stuck) {
      const char at = static_cast<std::size_t>(stuck->pos) < text.size() ? text[stuck->pos] : ' ';
      errors.add(*stuck, "",
                 at == ','
                     ? "invalid YAML: a ',' outside [ ] or { }: items are separated by commas "
                       "only inside a flow list or mapping"
                     : std::string("invalid YAML: unexpected '") + at + "'");
      return std::nullopt;
    }
    // Refused before any tree exists: no walk of it (ours, a reader's, yaml-cpp's) can start.
    if (const auto& refused = scanned.scan.refused()) {
      errors.add(refused->first, "", refused->second);
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
  for (const DocumentScan::Duplicate& d : scanned.scan.duplicates()) {
    errors.add(d.mark, d.field,
               "key written twice in one mapping (first at " + position(d.first) +
                   "); only one of them would be used: remove the other");
  }
  return documents.front();
}

std::string describe_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar: {
      // A value is quoted short and escaped: a file named by mistake (a private key read as
      // one long scalar) is never printed whole.
      const std::string& value = node.Scalar();
      const std::string shown = escaped_excerpt(value, kMaxQuotedBytes);
      if (shown.size() > kMaxQuotedBytes) {
        return '"' + shown + "\" (" + std::to_string(value.size()) + " bytes)";
      }
      return '"' + shown + '"';
    }
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
  // A subnormal number (1e-310) is refused as NaN and infinities are: arithmetic on it ends in
  // them (a search from 1e-310 req/s probed "-nan").
  const bool number = value.IsScalar() && YAML::convert<double>::decode(value, parsed) &&
                      std::isfinite(parsed) && std::fpclassify(parsed) != FP_SUBNORMAL;
  if (!number || parsed < min_value || (!allow_equal && parsed == min_value) ||
      parsed > max_value) {
    std::string expected = what;
    if (std::isfinite(max_value)) {
      char max_text[32];
      std::snprintf(max_text, sizeof max_text, "%.15g", max_value);  // 1000000, not 1e+06
      expected += std::string(", at most ") + max_text;
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
