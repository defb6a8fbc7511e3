// Results of other tools, read for `kvsweep audit`.
#include "reports/outside_result.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace kvsweep::reports {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::invalid_argument(where + ": " + what);
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
  fail(where, field + ": expected a number, got \"" + t + "\"");
}

std::string format_count(double most) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", most);
  return text;
}

std::optional<OutsideResult> from_json(const std::string& text, const std::string& path) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  OutsideResult r;
  r.where = path;
  r.label = j.value("label", "");
  if (r.label.empty() || j["label"].is_null()) r.label = j.value("model_id", path);
  const auto number = [&](const char* key, bool required) -> std::optional<double> {
    if (!j.contains(key) || j[key].is_null()) {
      if (required) fail(path, std::string(key) + ": missing from the result JSON");
      return std::nullopt;
    }
    if (j[key].is_string()) return parse_number(j[key].get<std::string>(), path, key);
    if (!j[key].is_number()) fail(path, std::string(key) + ": expected a number");
    return j[key].get<double>();
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
  r.duration_s = *number("duration", true);
  r.request_throughput = *number("request_throughput", true);
  if (auto v = count("total_output_tokens", false, kMostRequests * 1e3)) {
    r.total_output_tokens = std::llround(*v);
  }
  r.mean_ttft_ms = number("mean_ttft_ms", false);
  r.mean_tpot_ms = number("mean_tpot_ms", false);
  r.request_rate = number("request_rate", false);
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
  if (const auto v = flag_number(line, "--request-rate")) c.request_rate = *v;
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
  c.headings[static_cast<int>(level)] = trim(line.substr(level));
  c.headings.erase(c.headings.upper_bound(static_cast<int>(level)), c.headings.end());
}

std::string label_of(const Context& c) {
  std::string label;
  for (const auto& [level, text] : c.headings) {
    if (level < 2) continue;  // the document's title says nothing of one run
    label += (label.empty() ? "" : " / ") + text;
  }
  return label;
}

}  // namespace

std::vector<OutsideResult> read_outside_results(const std::string& text, const std::string& path) {
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
    results.push_back(r);
  }
  if (results.empty()) {
    fail(path, "no \"Serving Benchmark Result\" block and no result JSON object");
  }
  return results;
}

}  // namespace kvsweep::reports
