// DatasetError: the one exception dataset loaders throw, and the located messages it carries.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kvsweep::driver {

// Every message says where: the file, then the line (JSONL) or the JSON path (JSON), then the
// field, as in `data/x.jsonl:3: field "prompt": expected a string, got number` or
// `data/sg.json: [4].conversations[2]: field "value": expected a string, got null`.
class DatasetError : public std::runtime_error {
 public:
  explicit DatasetError(const std::string& message) : std::runtime_error(message) {}
};

// "file:line" for a JSONL row.
std::string line_location(const std::string& path, int line);

// "file: json_path" for an element of a JSON document ("file" alone when json_path is empty).
std::string path_location(const std::string& path, const std::string& json_path);

// `location: field "name": what`.
[[noreturn]] void throw_field_error(const std::string& location, std::string_view field,
                                    const std::string& what);

// The 1-based line and column of byte `offset` (0-based) in `text`.
struct TextPosition {
  int line = 1;
  int column = 1;
};
TextPosition position_of(std::string_view text, std::size_t offset);

}  // namespace kvsweep::driver
