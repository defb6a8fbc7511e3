// A file in the temp directory holding some text, removed when the object goes away.
#include "orchestrator/targets/kube/temp_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "common/unique_fd.h"
#include "orchestrator/targets/planned_target.h"

namespace kvsweep::orchestrator::kube {

TempFile::TempFile(const std::string& prefix, const std::string& suffix, const std::string& text) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / (prefix + "XXXXXX" + suffix)).string();
  UniqueFd fd(::mkstemps(pattern.data(), static_cast<int>(suffix.size())));
  if (!fd) {
    throw TargetError("cannot create a temp file like " + pattern + ": " + std::strerror(errno));
  }
  path_ = pattern;
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd.get(), text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      fd.reset();
      ::unlink(path_.c_str());
      throw TargetError("cannot write " + path_ + ": " + why);
    }
    written += static_cast<std::size_t>(n);
  }
  if (fd.close() != 0) {  // the write-back can fail here
    const std::string why = std::strerror(errno);
    ::unlink(path_.c_str());
    throw TargetError("cannot write " + path_ + ": " + why);
  }
}

TempFile::~TempFile() { ::unlink(path_.c_str()); }

}  // namespace kvsweep::orchestrator::kube
