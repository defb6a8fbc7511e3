// Located messages for DatasetError.
#include "driver/datasets/dataset_error.h"

namespace kvsweep::driver {

std::string line_location(const std::string& path, int line) {
  return path + ":" + std::to_string(line);
}

std::string path_location(const std::string& path, const std::string& json_path) {
  return json_path.empty() ? path : path + ": " + json_path;
}

void throw_field_error(const std::string& location, std::string_view field,
                       const std::string& what) {
  throw DatasetError(location + ": field \"" + std::string(field) + "\": " + what);
}

TextPosition position_of(std::string_view text, std::size_t offset) {
  TextPosition position;
  const std::size_t end = offset < text.size() ? offset : text.size();
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++position.line;
      position.column = 1;
    } else {
      ++position.column;
    }
  }
  return position;
}

}  // namespace kvsweep::driver
