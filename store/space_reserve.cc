// Room kept on the store's disk: a file without a name holding real blocks until released.
#include "store/space_reserve.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <utility>
#include <vector>

namespace kvsweep::store {
namespace {

std::string directory_of(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// A file in `dir` that has no name, or -1 with errno set. O_TMPFILE never names it; a
// filesystem without O_TMPFILE gets a temporary file unlinked at once (only a kill between
// the two calls could leave a ".kvsweep-reserve-*" file behind).
int open_nameless(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
  std::string name = dir + "/.kvsweep-reserve-XXXXXX";
  const int named = ::mkostemp(name.data(), O_CLOEXEC);
  if (named >= 0) ::unlink(name.c_str());
  return named;
}

// Writes `bytes` of data and syncs them: for a filesystem without fallocate, so the blocks are
// on the disk rather than promised. Not zeros, which a compressing filesystem would not store.
// Returns 0 or an errno.
int write_out(int fd, std::int64_t bytes) {
  const std::vector<char> chunk(64 * 1024, '\xa5');
  std::int64_t written = 0;
  while (written < bytes) {
    const auto n = ::write(fd, chunk.data(),
                           static_cast<std::size_t>(std::min<std::int64_t>(
                               bytes - written, static_cast<std::int64_t>(chunk.size()))));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return ENOSPC;
    written += n;
  }
  return ::fdatasync(fd) == 0 ? 0 : errno;
}

// Returns 0 or an errno.
int allocate(int fd, std::int64_t bytes) {
  if (::fallocate(fd, 0, 0, bytes) == 0) return 0;
  if (errno != EOPNOTSUPP && errno != ENOSYS) return errno;
  return write_out(fd, bytes);
}

}  // namespace

SpaceReserve SpaceReserve::beside(const std::string& store_path, std::int64_t bytes) {
  const std::string dir = directory_of(store_path);
  const auto fail = [&](int error) {
    throw std::runtime_error(dir + ": cannot keep " + std::to_string((bytes + 1023) / 1024) +
                             " KiB free beside the store (a run holds that much back so it can "
                             "store what stopped it if the disk fills): " +
                             std::strerror(error));
  };
  const int fd = open_nameless(dir);
  if (fd < 0) fail(errno);
  SpaceReserve reserve(fd, bytes);  // closes fd if allocate fails
  if (bytes > 0) {
    if (const int error = allocate(fd, bytes); error != 0) fail(error);
  }
  return reserve;
}

SpaceReserve::~SpaceReserve() { release(); }

SpaceReserve::SpaceReserve(SpaceReserve&& other) noexcept
    : fd_(std::move(other.fd_)), bytes_(std::exchange(other.bytes_, 0)) {}

SpaceReserve& SpaceReserve::operator=(SpaceReserve&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::move(other.fd_);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void SpaceReserve::release() {
  // The file has no name: closing its only descriptor frees its blocks.
  fd_.reset();
  bytes_ = 0;
}

std::int64_t SpaceReserve::allocated_bytes() const {
  struct stat st {};
  if (!fd_ || ::fstat(fd_.get(), &st) != 0) return 0;
  return static_cast<std::int64_t>(st.st_blocks) * 512;
}

}  // namespace kvsweep::store
