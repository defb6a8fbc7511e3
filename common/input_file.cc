// Input files a user names: regular files of a bounded size only.
#include "common/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/unique_fd.h"

namespace kvsweep {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

std::optional<std::string> problem_of(const struct stat& info, std::uintmax_t max_bytes) {
  if (!S_ISREG(info.st_mode)) return "not a regular file (" + kind_of(info.st_mode) + ")";
  const auto size = static_cast<std::uintmax_t>(info.st_size);
  if (size > max_bytes) {
    return format_bytes(size) + ", more than the " + format_bytes(max_bytes) + " allowed";
  }
  return std::nullopt;
}

}  // namespace

std::string format_bytes(std::uintmax_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024;
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

std::optional<std::string> input_file_problem(const std::string& path, std::uintmax_t max_bytes) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::string(std::strerror(errno));
  return problem_of(info, max_bytes);
}

std::string read_input_file(const std::string& path, std::uintmax_t max_bytes) {
  const auto fail = [&](const std::string& why) { return InputFileError(path, why); };
  // O_NONBLOCK: opening a FIFO must not wait for a writer before fstat can refuse it.
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) throw fail(std::strerror(errno));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) throw fail(std::strerror(errno));
  if (const auto problem = problem_of(info, max_bytes)) throw fail(*problem);
  std::string text;
  text.reserve(static_cast<std::size_t>(info.st_size));
  char buffer[64 * 1024];
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw fail(std::strerror(errno));
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {
      throw fail("grew past the " + format_bytes(max_bytes) + " allowed while being read");
    }
  }
  return text;
}

}  // namespace kvsweep
