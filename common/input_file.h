// Input files a user names (a scenario, a dataset): regular files of a bounded size only, so a
// path such as /dev/zero, /dev/urandom or a FIFO is refused at once instead of read forever.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace kvsweep {

// What read_input_file throws: what() is "<path>: <reason>".
class InputFileError : public std::runtime_error {
 public:
  InputFileError(const std::string& path, const std::string& reason)
      : std::runtime_error(path + ": " + reason), reason_(reason) {}
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

// Why `path` cannot be read as an input of at most max_bytes, or nullopt when it can: "No such
// file or directory", "not a regular file (a character device)", "2.0 GiB, more than the 1.0
// GiB allowed". Reads no byte of the file (stat only: a FIFO never blocks it).
std::optional<std::string> input_file_problem(const std::string& path, std::uintmax_t max_bytes);

// The whole file, after the checks above made on the opened file itself, reading at most
// max_bytes + 1 bytes (a file that grew past the limit meanwhile is refused too). Throws
// InputFileError.
std::string read_input_file(const std::string& path, std::uintmax_t max_bytes);

// "512 B", "64.0 KiB", "1.5 GiB": sizes in messages.
std::string format_bytes(std::uintmax_t bytes);

}  // namespace kvsweep
