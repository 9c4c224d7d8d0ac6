// test_util.h - helpers shared by the GoogleTest suites.
#pragma once
#include <gtest/gtest.h>
#include <dirent.h>
#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>
#include "device.h"

namespace wrfgpu_test {

// Folder of the committed captures: WRFGPU_TEST_DATA, else ./test_data when the tests run
// from the repository root, else the test_data of the source tree the tests were built from.
inline std::string data_dir() {
  if (const char* d = std::getenv("WRFGPU_TEST_DATA")) return d;
#ifdef WRFGPU_SOURCE_DIR
  if (!std::ifstream("test_data/README.md").good()) return WRFGPU_SOURCE_DIR "/test_data";
#endif
  return "test_data";
}
inline std::string data_file(const std::string& name) { return data_dir() + "/" + name; }

// The captures in data_dir() whose name starts with `prefix`, contains `part` and ends in .nc,
// sorted, with their folder.
inline std::vector<std::string> data_files(const std::string& part, const std::string& prefix = "") {
  std::vector<std::string> v;
  DIR* d = opendir(data_dir().c_str());
  if (!d) return v;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() > 3 && n.substr(n.size() - 3) == ".nc" && n.find(part) != std::string::npos &&
        n.compare(0, prefix.size(), prefix) == 0)
      v.push_back(data_file(n));
  }
  closedir(d);
  std::sort(v.begin(), v.end());
  return v;
}

// The captures and references are committed: a missing one is a failure, not a skip.
inline ::testing::AssertionResult data_present(const std::string& what, bool present) {
  if (present) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << what << " not found in " << data_dir()
         << " (committed test data: run from the repository root or set WRFGPU_TEST_DATA)";
}

// A reusable barrier of n threads (C++17 has no std::barrier): the CPU tests run a GPU kernel's
// block as threads, one per GPU thread, and put this where the kernel synchronises.
struct Barrier {
  std::mutex m;
  std::condition_variable cv;
  int n, waiting = 0, generation = 0;
  explicit Barrier(int size) : n(size) {}
  void wait() {
    std::unique_lock<std::mutex> l(m);
    const int g = generation;
    if (++waiting == n) {
      waiting = 0;
      ++generation;
      cv.notify_all();
    } else {
      cv.wait(l, [&] { return generation != g; });
    }
  }
};

}  // namespace wrfgpu_test

// GPU tests run when a GPU is visible; otherwise they are reported as skipped, with why.
#define WRFGPU_REQUIRE_GPU()                                              \
  do {                                                                    \
    std::string why_;                                                     \
    if (::wrfgpu::gpu_count(&why_) == 0) GTEST_SKIP() << "no GPU: " << why_; \
  } while (0)
