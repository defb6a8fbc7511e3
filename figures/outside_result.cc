// Results of other tools, read for `kvsweep audit`.
#include "figures/outside_result.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "common/error_kinds.h"
#include "common/site_check.h"
#include "common/utf8_prefix.h"

namespace kvsweep::figures {
namespace {

// A label is a heading or the JSON's label: longer than this is cut (every block repeats it).
constexpr std::size_t kMaxLabelBytes = 200;
// A result JSON is flat; vLLM's per-request arrays are one level down.
constexpr int kMaxJsonDepth = 32;
// The keys of a vLLM result JSON the audit reads.
constexpr std::string_view kResultKeys[] = {
    "label",        "model_id",     "completed",    "duration",        "request_throughput",
    "mean_ttft_ms", "mean_tpot_ms", "request_rate", "max_concurrency", "total_output_tokens",
    "num_prompts"};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// Every message names a path and quotes the file: no byte of either reaches a terminal as a
// control sequence.
[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw UsageError(strip_control_characters(where + ": " + what));
}

// A quoted excerpt of a bad value: short, cut before a character.
std::string excerpt(const std::string& text) {
  return text.size() <= 60 ? text : std::string(utf8_prefix(text, 57)) + "...";
}

double parse_number(const std::string& text, const std::string& where, const std::string& field) {
  const std::string t = trim(text);
  if (t == "inf" || t == "Inf" || t == "infinity") return std::numeric_limits<double>::infinity();
  try {
    std::size_t used = 0;
    const double value = std::stod(t, &used);
    if (used == t.size() && std::isfinite(value)) return value;
  } catch (const std::exception&) {
  }
  fail(where, field + ": expected a number, got \"" + excerpt(t) + "\"");
}

std::string format_value(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// What a figure of a result may be: rates, times and throughputs are finite and at least 0;
// only the rate asked for may be inf (vLLM's "no limit"), and it must be above 0.
enum class Figure { kAtLeastZero, kRate };

// `value` (of `field`, at `where`) checked as `kind`; returns it.
double checked(double value, Figure kind, const std::string& where, const std::string& field) {
  if (kind == Figure::kRate) {
    if (!(value > 0))
      fail(where, field + ": expected a rate > 0 or inf, got " + format_value(value));
    return value;
  }
  if (!std::isfinite(value) || value < 0) {
    fail(where, field + ": expected a finite number >= 0, got " + format_value(value));
  }
  return value;
}

std::string format_count(double most) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", most);
  return text;
}

// A label from the file: one line of printable text, at most kMaxLabelBytes.
std::string clean_label(const std::string& text) {
  const std::string clean = trim(strip_control_characters(text));
  return std::string(utf8_prefix(clean, kMaxLabelBytes));
}

// The result JSON's parse: the audit reads top-level scalars only, so every nested array or
// object is dropped as it is read (a vLLM file's per-request arrays cost nothing), and
// nesting deeper than kMaxJsonDepth is refused at once; what was dropped is remembered by key,
// to say so if the audit needed it.
nlohmann::json parse_result_json(const std::string& text, const std::string& path,
                                 std::map<std::string, std::string>& dropped) {
  std::string key;
  bool wanted = false;
  const nlohmann::json::parser_callback_t keep_top_level_scalars =
      [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        using Event = nlohmann::json::parse_event_t;
        if (depth > kMaxJsonDepth) {
          fail(path, "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
        }
        if (event == Event::key && depth == 1) {
          key = parsed.get<std::string>();
          // Only the keys the audit reads are kept: a million others cost nothing.
          wanted = std::find(std::begin(kResultKeys), std::end(kResultKeys), key) !=
                   std::end(kResultKeys);
          return wanted;
        }
        if ((event == Event::object_start || event == Event::array_start) && depth >= 1) {
          // depth counts the container being opened: 1 is a top-level key's value.
          if (depth == 1 && wanted) {
            dropped[key] = event == Event::object_start ? "an object" : "an array";
          }
          return false;
        }
        return true;
      };
  try {
    return nlohmann::json::parse(text, keep_top_level_scalars);
  } catch (const nlohmann::json::exception& e) {
    fail(path, std::string("starts like JSON but is not JSON: ") + e.what());
  }
}

std::optional<OutsideResult> from_json(const std::string& text, const std::string& path) {
  std::map<std::string, std::string> dropped;
  const nlohmann::json j = parse_result_json(text, path, dropped);
  if (!j.is_object()) return std::nullopt;
  OutsideResult r;
  r.where = path;
  // A text, or null (vLLM writes "label": null without --label) as if absent.
  const auto text_of = [&](const char* key) -> std::string {
    if (dropped.count(key)) {
      fail(path, std::string(key) + ": expected a string or null, got " + dropped[key]);
    }
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return "";
    if (!it->is_string()) {
      fail(path, std::string(key) + ": expected a string or null, got " + it->type_name());
    }
    return clean_label(it->get<std::string>());
  };
  r.label = text_of("label");
  if (r.label.empty()) r.label = text_of("model_id");
  if (r.label.empty()) r.label = clean_label(path);
  const auto number = [&](const char* key, bool required) -> std::optional<double> {
    if (dropped.count(key))
      fail(path, std::string(key) + ": expected a number, got " + dropped[key]);
    if (!j.contains(key) || j[key].is_null()) {
      if (required) fail(path, std::string(key) + ": missing from the result JSON");
      return std::nullopt;
    }
    if (j[key].is_string()) return parse_number(j[key].get<std::string>(), path, key);
    if (!j[key].is_number()) fail(path, std::string(key) + ": expected a number");
    return j[key].get<double>();
  };
  // A figure: a number checked as `kind` (JSON's 1e400 reads as infinity).
  const auto figure = [&](const char* key, bool required, Figure kind) -> std::optional<double> {
    const auto v = number(key, required);
    if (v) checked(*v, kind, path, key);
    return v;
  };
  // A count: a number from 0 to `most` (casting inf or 1e300 to an integer is undefined).
  const auto count = [&](const char* key, bool required, double most) -> std::optional<double> {
    const auto v = number(key, required);
    if (v && !(*v >= 0 && *v <= most)) {
      fail(path, std::string(key) + ": expected a count from 0 to " + format_count(most));
    }
    return v;
  };
  constexpr double kMostRequests = 1e15;
  constexpr double kMostConcurrency = std::numeric_limits<int>::max();
  r.completed = std::llround(*count("completed", true, kMostRequests));
  r.duration_s = *figure("duration", true, Figure::kAtLeastZero);
  r.request_throughput = *figure("request_throughput", true, Figure::kAtLeastZero);
  if (auto v = count("total_output_tokens", false, kMostRequests * 1e3)) {
    r.total_output_tokens = std::llround(*v);
  }
  r.mean_ttft_ms = figure("mean_ttft_ms", false, Figure::kAtLeastZero);
  r.mean_tpot_ms = figure("mean_tpot_ms", false, Figure::kAtLeastZero);
  r.request_rate = figure("request_rate", false, Figure::kRate);
  if (auto v = count("max_concurrency", false, kMostConcurrency)) {
    r.max_concurrency = static_cast<int>(*v);
  }
  if (auto v = count("num_prompts", false, kMostRequests)) r.num_prompts = std::llround(*v);
  return r;
}

// The command line's load settings and the headings seen so far, as a file is read.
struct Context {
  std::map<int, std::string> headings;  // level -> text
  std::optional<double> request_rate;
  std::optional<int> max_concurrency;
  std::optional<std::int64_t> num_prompts;
  bool in_fence = false;
};

// The value after the last `flag` on the line (`--request-rate=800`, `--request-rate 800`), if
// any: a plain scan, not std::regex, whose recursive matcher can exhaust the stack on one long
// line of a pasted log.
std::optional<std::string> flag_value(const std::string& line, const std::string& flag) {
  const auto at = line.rfind(flag);
  if (at == std::string::npos) return std::nullopt;
  std::size_t i = at + flag.size();
  if (i >= line.size() || (line[i] != '=' && line[i] != ' ')) return std::nullopt;
  while (i < line.size() && (line[i] == '=' || line[i] == ' ')) ++i;
  std::size_t end = i;
  while (end < line.size() &&
         (std::isalnum(static_cast<unsigned char>(line[end])) != 0 || line[end] == '.')) {
    ++end;
  }
  if (end == i) return std::nullopt;
  return line.substr(i, end - i);
}

// A flag's value as a number; nullopt for prose that names the flag ("set --request-rate to").
std::optional<double> flag_number(const std::string& line, const std::string& flag) {
  const auto text = flag_value(line, flag);
  if (!text) return std::nullopt;
  try {
    return parse_number(*text, "", flag);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

void note_context(const std::string& line, Context& c) {
  // A rate of 0 or below is no rate (vLLM refuses it too).
  if (const auto v = flag_number(line, "--request-rate"); v && *v > 0) c.request_rate = *v;
  // A count outside what an int holds (inf, 1e300, negative) is no count: casting it would be
  // undefined behaviour (found by fuzz_outside_result).
  if (const auto v = flag_number(line, "--max-concurrency");
      v && *v >= 0 && *v <= std::numeric_limits<int>::max()) {
    c.max_concurrency = static_cast<int>(*v);
  }
  if (const auto v = flag_number(line, "--num-prompts"); v && *v >= 0 && *v <= 1e15) {
    c.num_prompts = std::llround(*v);
  }
  // A markdown heading: '#' at the line's start, outside a code fence (YAML comments in a
  // fenced block are no headings).
  if (line.rfind("```", 0) == 0) c.in_fence = !c.in_fence;
  if (c.in_fence || line.empty() || line[0] != '#') return;
  const auto level = line.find_first_not_of('#');
  if (level == std::string::npos || level > 6 || line[level] != ' ') return;
  c.headings[static_cast<int>(level)] = clean_label(line.substr(level));
  c.headings.erase(c.headings.upper_bound(static_cast<int>(level)), c.headings.end());
}

std::string label_of(const Context& c) {
  std::string label;
  for (const auto& [level, text] : c.headings) {
    if (level < 2) continue;  // the document's title says nothing of one run
    label += (label.empty() ? "" : " / ") + text;
  }
  return std::string(utf8_prefix(label, kMaxLabelBytes));
}

}  // namespace

std::string strip_control_characters(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\t') {
      out += ' ';
    } else if (c < 0x20 || c == 0x7f) {
      continue;  // C0 controls (ESC starts a terminal's sequences) and DEL
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      ++i;  // C1 controls, U+0080 to U+009F (U+009B is a terminal's CSI)
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::vector<OutsideResult> read_outside_results(const std::string& text, const std::string& path) {
  // Not UTF-8 is no result file a tool wrote: said with its line, before any label is made
  // of it (a label is printed, and written as JSON).
  if (const auto bad = first_invalid_utf8(text)) {
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(*bad), '\n');
    const auto line_start = text.rfind('\n', *bad == 0 ? 0 : *bad - 1);
    const std::size_t column =
        *bad - (line_start == std::string::npos || *bad == 0 ? 0 : line_start + 1) + 1;
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[*bad]));
    fail(path + ":" + std::to_string(line), "not UTF-8 text (byte " + std::string(byte) +
                                                " at column " + std::to_string(column) +
                                                "); save the file as UTF-8");
  }
  const std::string head = trim(text.substr(0, text.find_first_not_of(" \t\r\n") + 1));
  if (head == "{") {
    if (auto r = from_json(text, path)) return {*r};
    fail(path, "starts like JSON but is no JSON object");
  }
  std::vector<OutsideResult> results;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  Context context;
  while (std::getline(in, line)) {
    ++number;
    if (line.find("Serving Benchmark Result") == std::string::npos) {
      note_context(line, context);
      continue;
    }
    OutsideResult r;
    r.where = path + ":" + std::to_string(number);
    r.label = label_of(context);
    r.request_rate = context.request_rate;
    r.max_concurrency = context.max_concurrency;
    r.num_prompts = context.num_prompts;
    std::map<std::string, std::pair<std::string, int>> rows;  // key -> value, line
    while (std::getline(in, line)) {
      ++number;
      const std::string t = trim(line);
      if (t.find_first_not_of('=') == std::string::npos && !t.empty()) break;  // the closing rule
      const auto colon = t.find(':');
      if (colon == std::string::npos) continue;  // a section rule
      rows[trim(t.substr(0, colon))] = {trim(t.substr(colon + 1)), number};
    }
    const auto value = [&](const std::string& key, bool required) -> std::optional<double> {
      const auto it = rows.find(key);
      if (it == rows.end()) {
        if (required) fail(r.where, "\"" + key + "\" missing from the block");
        return std::nullopt;
      }
      return parse_number(it->second.first, path + ":" + std::to_string(it->second.second), key);
    };
    // A count: a number from 0 to `most` (casting inf or 1e300 to an integer is undefined).
    const auto count = [&](const std::string& key, bool required,
                           double most) -> std::optional<double> {
      const auto v = value(key, required);
      if (v && !(*v >= 0 && *v <= most)) {
        const auto& row = rows.at(key);
        fail(path + ":" + std::to_string(row.second),
             key + ": expected a count from 0 to " + format_count(most));
      }
      return v;
    };
    constexpr double kMostRequests = 1e15;
    r.completed = std::llround(*count("Successful requests", true, kMostRequests));
    r.duration_s = *value("Benchmark duration (s)", true);
    r.request_throughput = *value("Request throughput (req/s)", true);
    if (auto v = count("Total generated tokens", false, kMostRequests * 1e3)) {
      r.total_output_tokens = std::llround(*v);
    }
    r.mean_ttft_ms = value("Mean TTFT (ms)", false);
    r.mean_tpot_ms = value("Mean TPOT (ms)", false);
    if (auto v = count("Maximum request concurrency", false, std::numeric_limits<int>::max())) {
      r.max_concurrency = static_cast<int>(*v);
    }
    if (auto v = value("Request rate configured (RPS)", false)) r.request_rate = *v;
    // Every figure finite and >= 0, named with its line; the rate asked for > 0 or inf.
    const auto line_of = [&](const std::string& key) {
      const auto it = rows.find(key);
      return it == rows.end() ? r.where : path + ":" + std::to_string(it->second.second);
    };
    checked(r.duration_s, Figure::kAtLeastZero, line_of("Benchmark duration (s)"),
            "Benchmark duration (s)");
    checked(r.request_throughput, Figure::kAtLeastZero, line_of("Request throughput (req/s)"),
            "Request throughput (req/s)");
    if (r.mean_ttft_ms)
      checked(*r.mean_ttft_ms, Figure::kAtLeastZero, line_of("Mean TTFT (ms)"), "Mean TTFT (ms)");
    if (r.mean_tpot_ms)
      checked(*r.mean_tpot_ms, Figure::kAtLeastZero, line_of("Mean TPOT (ms)"), "Mean TPOT (ms)");
    if (rows.count("Request rate configured (RPS)")) {
      checked(*r.request_rate, Figure::kRate, line_of("Request rate configured (RPS)"),
              "Request rate configured (RPS)");
    }
    results.push_back(r);
  }
  if (results.empty()) {
    fail(path, "no \"Serving Benchmark Result\" block and no result JSON object");
  }
  return results;
}

}  // namespace kvsweep::figures
