// libFuzzer target: one dataset loader (KVSWEEP_FUZZ_DATASET_KIND: sharegpt, chat-threads,
// jsonl, mooncake) on a file holding the input. The file is a memfd, a regular file the
// loaders open by path (/proc/self/fd/N), so no disk is written per input.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "driver/datasets/dataset_error.h"
#include "driver/datasets/load_workload.h"

namespace {

// One memfd for the whole run, truncated and rewritten per input.
int input_fd() {
  static const int fd = memfd_create("kvsweep-fuzz-dataset", 0);
  if (fd < 0) std::abort();
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const int fd = input_fd();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) {
    std::abort();
  }
  kvsweep::driver::DatasetOptions options;
  options.kind = KVSWEEP_FUZZ_DATASET_KIND;
  options.path = "/proc/self/fd/" + std::to_string(fd);
  options.block_size = 16;  // mooncake needs it said
  try {
    (void)kvsweep::driver::load_workload(options);
  } catch (const kvsweep::driver::DatasetError&) {
    // A located error is the expected answer to bad input.
  }
  return 0;
}
