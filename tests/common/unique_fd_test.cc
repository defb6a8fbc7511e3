// Tests for common/unique_fd.h: a descriptor is closed exactly once, by whoever owns it last.
#include "common/unique_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace kvsweep {
namespace {

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

int open_null() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }

TEST(UniqueFd, ClosesWhatItOwnsWhenItGoes) {
  int raw = -1;
  {
    const UniqueFd fd(open_null());
    raw = fd.get();
    ASSERT_GE(raw, 0);
    EXPECT_TRUE(fd.valid());
    EXPECT_TRUE(is_open(raw));
  }
  EXPECT_FALSE(is_open(raw));
}

TEST(UniqueFd, AMoveHandsOwnershipOverAndTheOldOneClosesNothing) {
  UniqueFd first(open_null());
  const int raw = first.get();
  UniqueFd second(std::move(first));
  EXPECT_FALSE(first.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is set
  EXPECT_EQ(second.get(), raw);
  first = UniqueFd(open_null());
  const int other = first.get();
  second = std::move(first);  // closes `raw`, takes `other`
  EXPECT_FALSE(is_open(raw));
  EXPECT_TRUE(is_open(other));
  EXPECT_EQ(second.get(), other);
}

TEST(UniqueFd, ReleaseGivesItUpAndResetCloses) {
  UniqueFd fd(open_null());
  const int raw = fd.release();
  EXPECT_FALSE(fd.valid());
  EXPECT_TRUE(is_open(raw));
  fd.reset(raw);
  EXPECT_EQ(fd.get(), raw);
  fd.reset(raw);  // the same descriptor again: still held, not closed under it
  EXPECT_TRUE(is_open(raw));
  fd.reset();
  EXPECT_FALSE(is_open(raw));
}

TEST(UniqueFd, CloseReportsItsResultOnceAndAnEmptyOneIsFine) {
  UniqueFd fd(open_null());
  const int raw = fd.get();
  EXPECT_EQ(fd.close(), 0);
  EXPECT_FALSE(is_open(raw));
  EXPECT_FALSE(fd.valid());
  EXPECT_EQ(fd.close(), 0);  // nothing held: nothing closed a second time
  EXPECT_EQ(UniqueFd().close(), 0);
  EXPECT_EQ(close_descriptor(-1), 0);
  EXPECT_EQ(close_descriptor(raw), -1);  // already closed: the kernel says so
  EXPECT_EQ(errno, EBADF);
}

}  // namespace
}  // namespace kvsweep
