// The only ::close in kvsweep.
#include "common/unique_fd.h"

#include <unistd.h>

namespace kvsweep {

void UniqueFd::reset(int fd) noexcept {
  if (fd_ >= 0 && fd_ != fd) ::close(fd_);
  fd_ = fd;
}

int UniqueFd::close() noexcept {
  if (fd_ < 0) return 0;
  return ::close(std::exchange(fd_, -1));
}

int close_descriptor(int fd) noexcept { return fd < 0 ? 0 : ::close(fd); }

}  // namespace kvsweep
