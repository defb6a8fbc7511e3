// Helpers for dataset tests: fixture paths, the message a loader throws, small text files.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <string>

#include "driver/datasets/dataset_error.h"

namespace kvsweep::driver::testing {

inline std::string fixture(const std::string& name) {
  return std::string(KVSWEEP_DATASET_FIXTURES) + "/" + name;
}

// The DatasetError message `load` throws; fails the test when it throws nothing.
inline std::string error_of(const std::function<void()>& load) {
  try {
    load();
  } catch (const DatasetError& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a DatasetError";
  return "";
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace kvsweep::driver::testing
