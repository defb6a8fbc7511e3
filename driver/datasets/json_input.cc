// Reading dataset files as JSON or JSONL, and typed field access with located errors.
#include "driver/datasets/json_input.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>

#include "common/input_file.h"
#include "common/utf8_prefix.h"
#include "driver/datasets/dataset_error.h"
#include "driver/datasets/dataset_limits.h"

namespace kvsweep::driver {
namespace {

using nlohmann::json;

// nlohmann's what() is "[json.exception.parse_error.101] parse error at line 1, column 5: <why>";
// we print our own location, so keep only <why>.
std::string parse_reason(const json::parse_error& error) {
  const std::string what = error.what();
  const std::size_t column = what.find("column ");
  const std::size_t colon = column == std::string::npos ? what.find("] ") : what.find(": ", column);
  if (colon == std::string::npos) return what;
  return what.substr(colon + 2);
}

std::string invalid_json(const std::string& path, std::string_view text, int first_line,
                         const json::parse_error& error) {
  // error.byte is 1-based: the offending character is text[byte - 1].
  const std::size_t offset = error.byte > 0 ? error.byte - 1 : 0;
  TextPosition position = position_of(text, offset);
  position.line += first_line - 1;
  return path + ":" + std::to_string(position.line) + ":" + std::to_string(position.column) +
         ": invalid JSON: " + parse_reason(error);
}

// nlohmann refuses a number beyond a double's range (1e999) with out_of_range.406, which
// carries no position. A second pass with a SAX handler that does nothing but keep where the
// parser stopped finds it, only on that error path.
class OverflowLocator : public json::json_sax_t {
 public:
  std::size_t offset = 0;  // 0-based, the start of the offending token
  std::string token;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception&) override {
    // `position` counts the characters read, the offending token's last one included.
    offset = position >= last_token.size() ? position - last_token.size() : 0;
    token = last_token;
    return false;
  }
};

// `text` parsed as one JSON value; every parser error is a DatasetError at path:line:column
// (lines counted from `first_line`).
json parse_located(const std::string& path, std::string_view text, int first_line) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& error) {
    throw DatasetError(invalid_json(path, text, first_line, error));
  } catch (const json::out_of_range&) {
    OverflowLocator locator;
    json::sax_parse(text, &locator);
    TextPosition position = position_of(text, locator.offset);
    position.line += first_line - 1;
    throw DatasetError(path + ":" + std::to_string(position.line) + ":" +
                       std::to_string(position.column) + ": invalid JSON: number " + locator.token +
                       " is beyond the range of a double");
  }
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

bool is_integral(const json& value) {
  if (value.is_number_integer()) return true;
  if (!value.is_number_float()) return false;
  const double number = value.get<double>();
  return std::isfinite(number) && std::floor(number) == number && std::fabs(number) < 9.0e15;
}

}  // namespace

std::string read_dataset_file(const std::string& path) {
  try {
    return read_input_file(path, kMaxDatasetFileBytes);
  } catch (const InputFileError& e) {
    throw DatasetError(path + ": cannot open: " + e.reason());
  }
}

json parse_json_document(const std::string& path) {
  const std::string text = read_dataset_file(path);
  return parse_located(path, text, 1);
}

void for_each_jsonl_row(const std::string& path,
                        const std::function<void(const json& row, int line)>& row) {
  // Checked before opening: a FIFO would block the open, /dev/zero would be one endless line.
  if (const auto problem = input_file_problem(path, kMaxDatasetFileBytes)) {
    throw DatasetError(path + ": cannot open: " + *problem);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DatasetError(path + ": cannot open: " + std::strerror(errno));
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (is_blank(line)) continue;
    const json value = parse_located(path, line, line_number);
    if (!value.is_object()) {
      throw DatasetError(line_location(path, line_number) + ": expected a JSON object, got " +
                         describe_json(value));
    }
    row(value, line_number);
  }
}

std::string describe_json(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return std::string("boolean ") + (value.get<bool>() ? "true" : "false");
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "number " + value.dump();
    case json::value_t::string: {
      const std::string& text = value.get_ref<const std::string&>();
      constexpr std::size_t kShown = 20;  // enough to recognise, short enough for one line
      if (text.size() <= kShown) return "string " + json(text).dump();
      // Cut before a character, never inside one (dump() threw on a cut one, found by
      // fuzz_dataset_chat_threads).
      return "string " + json(std::string(utf8_prefix(text, kShown)) + "...").dump();
    }
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    default:
      return value.type_name();
  }
}

const json* find_field(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

namespace {

const json& require_field(const json& object, std::string_view key, const std::string& location) {
  const json* value = find_field(object, key);
  if (value == nullptr) throw_field_error(location, key, "missing");
  return *value;
}

std::int64_t checked_integer(const json& value, std::int64_t minimum,
                             const std::function<void(const std::string&)>& fail) {
  if (!is_integral(value)) fail("expected an integer, got " + describe_json(value));
  const std::int64_t number =
      value.is_number_unsigned() &&
              value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)
          ? INT64_MAX
          : (value.is_number_float() ? static_cast<std::int64_t>(value.get<double>())
                                     : value.get<std::int64_t>());
  if (number < minimum) {
    fail("expected an integer >= " + std::to_string(minimum) + ", got " + std::to_string(number));
  }
  return number;
}

}  // namespace

std::string require_string(const json& object, std::string_view key, const std::string& location) {
  const json& value = require_field(object, key, location);
  if (!value.is_string())
    throw_field_error(location, key, "expected a string, got " + describe_json(value));
  return value.get<std::string>();
}

const json& require_array(const json& object, std::string_view key, const std::string& location) {
  const json& value = require_field(object, key, location);
  if (!value.is_array())
    throw_field_error(location, key, "expected an array, got " + describe_json(value));
  return value;
}

double require_number(const json& object, std::string_view key, const std::string& location) {
  const json& value = require_field(object, key, location);
  if (!value.is_number())
    throw_field_error(location, key, "expected a number, got " + describe_json(value));
  return value.get<double>();
}

std::int64_t require_integer(const json& object, std::string_view key, const std::string& location,
                             std::int64_t minimum) {
  const json& value = require_field(object, key, location);
  return checked_integer(value, minimum,
                         [&](const std::string& what) { throw_field_error(location, key, what); });
}

std::optional<std::int64_t> optional_integer(const json& object, std::string_view key,
                                             const std::string& location, std::int64_t minimum) {
  if (find_field(object, key) == nullptr) return std::nullopt;
  return require_integer(object, key, location, minimum);
}

const std::string& expect_string(const json& value, const std::string& location) {
  if (!value.is_string()) {
    throw DatasetError(location + ": expected a string, got " + describe_json(value));
  }
  return value.get_ref<const std::string&>();
}

std::int64_t expect_integer(const json& value, const std::string& location, std::int64_t minimum) {
  return checked_integer(
      value, minimum, [&](const std::string& what) { throw DatasetError(location + ": " + what); });
}

}  // namespace kvsweep::driver
