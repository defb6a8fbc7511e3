// A file in the temp directory holding some text, removed when the object goes away.
#include "orchestrator/targets/kube/temp_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "orchestrator/targets/planned_target.h"

namespace kvsweep::orchestrator::kube {

TempFile::TempFile(const std::string& prefix, const std::string& suffix, const std::string& text) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / (prefix + "XXXXXX" + suffix)).string();
  const int fd = ::mkstemps(pattern.data(), static_cast<int>(suffix.size()));
  if (fd < 0) {
    throw TargetError("cannot create a temp file like " + pattern + ": " + std::strerror(errno));
  }
  path_ = pattern;
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(path_.c_str());
      throw TargetError("cannot write " + path_ + ": " + why);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(path_.c_str());
    throw TargetError("cannot write " + path_ + ": " + why);
  }
}

TempFile::~TempFile() { ::unlink(path_.c_str()); }

}  // namespace kvsweep::orchestrator::kube
