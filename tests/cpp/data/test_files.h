// Test support for the data and eval layers: scratch files with exact bytes.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"

namespace counterpoint::test_support {

// Writes `bytes` to a fresh file under the test temporary directory and returns its path.
inline std::string scratch_file(const std::string& name, const std::string& bytes) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string path = ::testing::TempDir() + "cp_" + info->test_suite_name() + "_" + info->name() +
                     "_" + name;
  write_file_atomic(path, bytes);
  return path;
}

inline std::string fixture(const std::string& relative) {
  return std::string(COUNTERPOINT_TEST_DATA_DIR) + "/data/" + relative;
}

// The real BEIR-layout data sets: $COUNTERPOINT_SHARED_DATA, else ../shared/data next to the
// source tree.
inline std::string shared_data_dir() {
  if (const char* dir = std::getenv("COUNTERPOINT_SHARED_DATA")) return dir;
  return std::string(COUNTERPOINT_SOURCE_DIR) + "/../shared/data";
}

// The message of the CorruptFile that `load` throws, or "" when it throws nothing.
template <typename Load>
std::string corrupt_message(Load load) {
  try {
    load();
  } catch (const CorruptFile& e) {
    return e.what();
  }
  return "";
}

}  // namespace counterpoint::test_support
