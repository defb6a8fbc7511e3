// Writing an output file whole or not at all: a temporary file beside it, renamed over it.
#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>

#include "common/unique_fd.h"

namespace kvsweep {
namespace {

// Closes and removes the temporary file unless release()d after the rename.
class TempFile {
 public:
  TempFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~TempFile() {
    fd_.reset();
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }
  // Closes the file; false (errno set) when the close reported a write error.
  bool close() { return fd_.close() == 0; }
  void release() { path_.clear(); }

 private:
  UniqueFd fd_;
  std::string path_;
};

[[noreturn]] void fail(const std::string& path, int error) {
  throw std::runtime_error("cannot write " + path + ": " + std::strerror(error));
}

// A hidden name beside the target, unique by pid and a random number; created exclusively.
TempFile create_temp(const std::string& path) {
  const std::filesystem::path target(path);
  std::random_device random;
  for (int attempt = 0; attempt < 16; ++attempt) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".%d.%08x.tmp", static_cast<int>(::getpid()), random());
    const std::string name =
        (target.parent_path() / ("." + target.filename().string() + suffix)).string();
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return TempFile(fd, name);
    if (errno != EEXIST) fail(path, errno);
  }
  fail(path, EEXIST);
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view text) {
  TempFile temp = create_temp(path);
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(temp.fd(), text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path, errno);
    written += static_cast<std::size_t>(n);
  }
  // Data on disk before the rename: a crash right after it must not leave an empty file.
  if (::fsync(temp.fd()) != 0) fail(path, errno);
  if (!temp.close()) fail(path, errno);
  if (::rename(temp.path().c_str(), path.c_str()) != 0) fail(path, errno);
  temp.release();
}

}  // namespace kvsweep
