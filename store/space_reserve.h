// Room kept on the store's disk while a run writes, given back when the disk fills so the run
// can still store what stopped it.
#pragma once

#include <cstdint>
#include <string>

#include "common/unique_fd.h"

namespace kvsweep::store {

// Thread contract: one owner; movable, not copyable.
class SpaceReserve {
 public:
  // Allocates `bytes` of real blocks (fallocate; where a filesystem lacks it, written data, not
  // a sparse file) on the filesystem of `store_path`'s directory, in a file that has no name:
  // O_TMPFILE, else a temporary file unlinked as soon as it is made. No other program sees it
  // and no run can leave it behind: its blocks return to the disk when release() or the
  // destructor closes it, or when the process ends, kill -9 included. Throws
  // std::runtime_error naming the directory and the reason when the room is not there.
  static SpaceReserve beside(const std::string& store_path, std::int64_t bytes);

  SpaceReserve() = default;  // holds nothing
  ~SpaceReserve();
  SpaceReserve(SpaceReserve&& other) noexcept;
  SpaceReserve& operator=(SpaceReserve&& other) noexcept;
  SpaceReserve(const SpaceReserve&) = delete;
  SpaceReserve& operator=(const SpaceReserve&) = delete;

  // Gives the room back to the disk now; does nothing the second time.
  void release();
  std::int64_t bytes() const { return bytes_; }  // 0 once released
  // The blocks the disk has given the reserve (fstat), to show it is not sparse; 0 once released.
  std::int64_t allocated_bytes() const;

 private:
  SpaceReserve(int fd, std::int64_t bytes) : fd_(fd), bytes_(bytes) {}

  UniqueFd fd_;
  std::int64_t bytes_ = 0;
};

}  // namespace kvsweep::store
