// test_util.h - helpers shared by the GoogleTest suites.
#pragma once
#include <gtest/gtest.h>
#include <cstdlib>
#include <string>
#include "device.h"

namespace wrfgpu_test {

// Folder of the committed captures (WRFGPU_TEST_DATA, else ./test_data from the repo root).
inline std::string data_dir() {
  const char* d = std::getenv("WRFGPU_TEST_DATA");
  return d ? d : "test_data";
}
inline std::string data_file(const std::string& name) { return data_dir() + "/" + name; }

}  // namespace wrfgpu_test

// GPU tests run when a GPU is visible; otherwise they are reported as skipped, with why.
#define WRFGPU_REQUIRE_GPU()                                              \
  do {                                                                    \
    std::string why_;                                                     \
    if (::wrfgpu::gpu_count(&why_) == 0) GTEST_SKIP() << "no GPU: " << why_; \
  } while (0)
