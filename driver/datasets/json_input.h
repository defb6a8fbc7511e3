// Reading dataset files as JSON or JSONL, and typed field access with located errors.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace kvsweep::driver {

// The whole file; DatasetError "path: cannot open: No such file or directory" otherwise.
std::string read_dataset_file(const std::string& path);

// One JSON document; a syntax error is "path:line:column: invalid JSON: <parser's reason>".
nlohmann::json parse_json_document(const std::string& path);

// Calls `row(value, line)` for every non-blank line of a JSONL file, line numbers 1-based.
// Each line must hold one JSON object; otherwise DatasetError "path:line[:column]: ...".
void for_each_jsonl_row(const std::string& path,
                        const std::function<void(const nlohmann::json& row, int line)>& row);

// A short description of a value for "expected X, got Y": `null`, `number 2.5`, `string "ab.."`.
std::string describe_json(const nlohmann::json& value);

// Field access on an object; `location` is a line_location or path_location. Errors read
// `location: field "key": missing` or `... expected a string, got number 3`.
const nlohmann::json* find_field(const nlohmann::json& object, std::string_view key);
std::string require_string(const nlohmann::json& object, std::string_view key,
                           const std::string& location);
const nlohmann::json& require_array(const nlohmann::json& object, std::string_view key,
                                    const std::string& location);
double require_number(const nlohmann::json& object, std::string_view key,
                      const std::string& location);
// An integer >= `minimum` (JSON integers only: 2.0 is accepted, 2.5 is not).
std::int64_t require_integer(const nlohmann::json& object, std::string_view key,
                             const std::string& location, std::int64_t minimum);
std::optional<std::int64_t> optional_integer(const nlohmann::json& object, std::string_view key,
                                             const std::string& location, std::int64_t minimum);

// Same checks for an array element or a whole value: `location: expected a string, got null`.
const std::string& expect_string(const nlohmann::json& value, const std::string& location);
std::int64_t expect_integer(const nlohmann::json& value, const std::string& location,
                            std::int64_t minimum);

}  // namespace kvsweep::driver
