// Test helper: runs a process out of file descriptors (a low RLIMIT_NOFILE, every descriptor
// taken) and gives them back, to see what a server does when accept() fails with EMFILE.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <vector>

#include "tests/support/sanitized_build.h"

namespace kvsweep::sim::testing {

// Whether this is `make sanitize`'s build. The sanitizer runtime opens /proc/self/maps to check
// a dynamic type the first time it sees it; with every descriptor taken that open fails and
// UBSan reports a valid object as having an "invalid vptr". Tests that run the process out of
// descriptors therefore run in the normal suite only.
using kvsweep::testing::kSanitizedBuild;

// Lowers RLIMIT_NOFILE for the test and takes every descriptor left; gives them all back and
// restores the limit however the test ends.
class DescriptorHog {
 public:
  DescriptorHog() {
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    int highest = ::open("/dev/null", O_RDONLY);
    ::close(highest);
    rlimit low = saved_;
    low.rlim_cur = static_cast<rlim_t>(highest + 32);
    ::setrlimit(RLIMIT_NOFILE, &low);
    for (int fd; (fd = ::open("/dev/null", O_RDONLY)) >= 0;) held_.push_back(fd);
  }
  ~DescriptorHog() {
    release_all();
    ::setrlimit(RLIMIT_NOFILE, &saved_);
  }
  DescriptorHog(const DescriptorHog&) = delete;
  DescriptorHog& operator=(const DescriptorHog&) = delete;

  void release_one() {
    ::close(held_.back());
    held_.pop_back();
  }
  void release_all() {
    for (int fd : held_) ::close(fd);
    held_.clear();
  }

 private:
  rlimit saved_{};
  std::vector<int> held_;
};

}  // namespace kvsweep::sim::testing
