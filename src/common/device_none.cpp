// device_none.cpp - device services in a build without CUDA: there is no GPU to use, and
// every request for one says so plainly.
#include "device.h"
#include "errors.h"

namespace wrfgpu {

bool cuda_built() { return false; }
int gpu_count(std::string* why) {
  if (why) *why = "this build of wrfgpu has no CUDA backend (configured --without-cuda)";
  return 0;
}
int gpu_select(int, int) {
  throw RuntimeError("cannot select a GPU: this build of wrfgpu has no CUDA backend");
}
int gpu_current() { return -1; }
DeviceInfo gpu_info(int) {
  throw RuntimeError("no GPU information: this build of wrfgpu has no CUDA backend");
}
void gpu_require_memory(std::size_t, const char*) {
  throw RuntimeError("no GPU memory: this build of wrfgpu has no CUDA backend");
}
void gpu_synchronize() {}
std::string cuda_version_string() { return "no CUDA (CPU-only build)"; }
void* host_alloc_locked(std::size_t) {
  throw RuntimeError("no page-locked host memory: this build of wrfgpu has no CUDA backend");
}
void host_free_locked(void*) {}
bool host_range_locked(const void*, const void*) { return false; }
bool host_register(const void*, std::size_t, const char*) { return false; }
void host_unregister(const void*) {}
void host_unregister_all() {}
std::size_t host_registered_count() { return 0; }

}  // namespace wrfgpu
