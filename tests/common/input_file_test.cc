// Tests for common/input_file.cc: only regular files of a bounded size are read.
#include "common/input_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace kvsweep {
namespace {

std::string reason_of(const std::string& path, std::uintmax_t max_bytes) {
  try {
    read_input_file(path, max_bytes);
  } catch (const InputFileError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": " + e.reason());
    return e.reason();
  }
  ADD_FAILURE() << "read " << path;
  return "";
}

TEST(InputFile, ReadsARegularFileWhole) {
  const std::string path = ::testing::TempDir() + "input_file_small";
  std::ofstream(path, std::ios::binary) << "name: x\n";
  EXPECT_EQ(read_input_file(path, 100), "name: x\n");
  EXPECT_FALSE(input_file_problem(path, 100).has_value());
}

TEST(InputFile, DevicesDirectoriesAndFifosAreRefusedAtOnce) {
  EXPECT_EQ(reason_of("/dev/zero", 1 << 20), "not a regular file (a character device)");
  EXPECT_EQ(reason_of("/dev/urandom", 1 << 20), "not a regular file (a character device)");
  EXPECT_EQ(reason_of("/", 1 << 20), "not a regular file (a directory)");
  EXPECT_EQ(*input_file_problem("/dev/zero", 1 << 20), "not a regular file (a character device)");
  const std::string fifo = ::testing::TempDir() + "input_file_fifo";
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No writer ever opens it: the read must not wait for one.
  EXPECT_EQ(reason_of(fifo, 1 << 20), "not a regular file (a FIFO)");
  EXPECT_EQ(*input_file_problem(fifo, 1 << 20), "not a regular file (a FIFO)");
  std::filesystem::remove(fifo);
}

TEST(InputFile, AFileOverTheLimitIsRefusedWithoutReadingIt) {
  const std::string path = ::testing::TempDir() + "input_file_sparse";
  std::filesystem::remove(path);
  std::ofstream(path, std::ios::binary).close();
  std::filesystem::resize_file(path, std::uintmax_t{3} << 30);  // sparse: no disk used
  EXPECT_EQ(reason_of(path, std::uintmax_t{1} << 30), "3.0 GiB, more than the 1.0 GiB allowed");
  std::filesystem::remove(path);
}

TEST(InputFile, MissingFileSaysSo) {
  EXPECT_EQ(reason_of("/nonexistent/x.yaml", 100), "No such file or directory");
  EXPECT_EQ(*input_file_problem("/nonexistent/x.yaml", 100), "No such file or directory");
}

TEST(InputFile, BytesAreFormattedForMessages) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(64 * 1024), "64.0 KiB");
  EXPECT_EQ(format_bytes((std::uintmax_t{3} << 30) / 2), "1.5 GiB");
}

}  // namespace
}  // namespace kvsweep
