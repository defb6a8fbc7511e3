// Parser for the Prometheus text exposition format.
#include "common/prometheus_text.h"

#include <cctype>
#include <cstdlib>
#include <string>

namespace kvsweep {
namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}

// Parses `{a="x",b="y\"z"}` starting at text[pos] == '{'; leaves pos after '}'.
bool parse_labels(std::string_view text, std::size_t& pos,
                  std::map<std::string, std::string>& labels) {
  ++pos;  // '{'
  while (pos < text.size()) {
    while (pos < text.size() && (text[pos] == ',' || text[pos] == ' ')) ++pos;
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      return true;
    }
    const std::size_t key_start = pos;
    while (pos < text.size() && is_name_char(text[pos])) ++pos;
    std::string key(text.substr(key_start, pos - key_start));
    if (key.empty() || pos + 1 >= text.size() || text[pos] != '=' || text[pos + 1] != '"') {
      return false;
    }
    pos += 2;
    std::string value;
    while (pos < text.size() && text[pos] != '"') {
      if (text[pos] == '\\' && pos + 1 < text.size()) {
        ++pos;
        value += text[pos] == 'n' ? '\n' : text[pos];
      } else {
        value += text[pos];
      }
      ++pos;
    }
    if (pos >= text.size()) return false;
    ++pos;  // closing quote
    labels.emplace(std::move(key), std::move(value));
  }
  return false;
}

std::optional<PrometheusSample> parse_line(std::string_view line) {
  PrometheusSample sample;
  std::size_t pos = 0;
  while (pos < line.size() && is_name_char(line[pos])) ++pos;
  if (pos == 0) return std::nullopt;
  sample.name = std::string(line.substr(0, pos));
  if (pos < line.size() && line[pos] == '{' && !parse_labels(line, pos, sample.labels)) {
    return std::nullopt;
  }
  while (pos < line.size() && line[pos] == ' ') ++pos;
  const std::size_t value_end = line.find(' ', pos);
  const std::string value(line.substr(
      pos, value_end == std::string_view::npos ? std::string_view::npos : value_end - pos));
  if (value.empty()) return std::nullopt;
  char* end = nullptr;
  sample.value = std::strtod(value.c_str(), &end);  // accepts NaN, +Inf, 1e3
  if (end != value.c_str() + value.size()) return std::nullopt;
  return sample;
}

}  // namespace

std::vector<PrometheusSample> parse_prometheus_text(std::string_view text) {
  std::vector<PrometheusSample> samples;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (!line.empty() && line.front() != '#') {
      if (auto sample = parse_line(line)) samples.push_back(std::move(*sample));
    }
    start = end + 1;
  }
  return samples;
}

std::optional<double> sum_metric(const std::vector<PrometheusSample>& samples,
                                 std::string_view name) {
  std::optional<double> total;
  for (const auto& s : samples) {
    if (s.name == name) total = total.value_or(0) + s.value;
  }
  return total;
}

}  // namespace kvsweep
