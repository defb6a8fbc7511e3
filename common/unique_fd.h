// An owning file descriptor: closed exactly once, by its destructor or by close(), never by
// hand. The one place kvsweep calls ::close (unique_fd.cc): a descriptor another library owns
// until it hands it back (libcurl's close-socket callback, a socket cpp-httplib gives up) is
// closed with close_descriptor().
#pragma once

#include <utility>

namespace kvsweep {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }

  // Gives the descriptor up without closing it: the caller owns it now.
  int release() noexcept { return std::exchange(fd_, -1); }
  // Closes what it held (errors ignored: nothing is left to do about them) and holds `fd`.
  void reset(int fd = -1) noexcept;
  // Closes now and returns ::close's result (0, or -1 with errno set): a file written through
  // the descriptor reports a failed write-back here (NFS, a full disk). Holds nothing after.
  int close() noexcept;

 private:
  int fd_ = -1;
};

// Closes a descriptor this code does not own through a UniqueFd; returns ::close's result.
int close_descriptor(int fd) noexcept;

}  // namespace kvsweep
