// device.h - GPU services seen from host code that need not include CUDA headers.
// Implemented in device.cu (CUDA builds) and device_none.cpp (builds without CUDA).
#pragma once
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace wrfgpu {

struct DeviceInfo {
  int id = -1;
  std::string name, pci_bus_id;
  int cc_major = 0, cc_minor = 0, sm_count = 0;
  std::size_t total_mem = 0, free_mem = 0, l2_bytes = 0;
  int runtime_version = 0, driver_version = 0;
  bool mps = false;  // contexts on this device go through the CUDA MPS server (cudaDevAttrMpsEnabled)
};

bool cuda_built();                        // this build has the CUDA backend
// Number of usable GPUs; 0 with the reason in *why (no driver, none visible, no CUDA build).
int gpu_count(std::string* why = nullptr);
// Select a device: explicit id >= 0, else local_rank modulo the visible devices.
// Returns the id chosen; throws RuntimeError naming the cause when none is usable.
int gpu_select(int explicit_id, int local_rank);
int gpu_current();                        // -1 if none selected yet
DeviceInfo gpu_info(int id);
// Throws RuntimeError when the current device has less than `bytes` free, naming both.
void gpu_require_memory(std::size_t bytes, const char* what);
void gpu_synchronize();
// "CUDA runtime X.Y, driver X.Y" (works without a device), or why there is none.
std::string cuda_version_string();
// Page-locked host memory (cudaHostAlloc), for callers that keep their arrays pinned so the
// GPU backends can copy tile rows straight from them. Throws RuntimeError when it cannot be
// had (no CUDA build, no device). host_free_locked(nullptr) is a no-op.
void* host_alloc_locked(std::size_t bytes);
void host_free_locked(void* p);
// count floats of page-locked host memory (or a page-locked copy of v), freed with it: a model
// that keeps its arrays pinned, in the replay's page-locked runs and the tests.
struct LockedArray {
  float* p = nullptr;
  std::size_t n = 0;
  explicit LockedArray(std::size_t count)
      : p(static_cast<float*>(host_alloc_locked(sizeof(float) * count))), n(count) {}
  explicit LockedArray(const std::vector<float>& v) : LockedArray(v.size()) {
    std::copy(v.begin(), v.end(), p);
  }
  LockedArray(LockedArray&& o) noexcept : p(o.p), n(o.n) { o.p = nullptr; o.n = 0; }
  LockedArray(const LockedArray&) = delete;
  LockedArray& operator=(const LockedArray&) = delete;
  ~LockedArray() { host_free_locked(p); }
  std::vector<float> values() const { return std::vector<float>(p, p + n); }
};
// True when the bytes first..last of a caller's array lie in page-locked host memory
// (cudaHostAlloc or cudaHostRegister): both ends are host-registered. false for pageable memory
// and in builds without CUDA. The GPU backends copy straight from and to such arrays.
bool host_range_locked(const void* first, const void* last);

// Page-locks a caller's long-lived array in place (cudaHostRegister), so that the GPU backends
// copy straight between it and the device. For arrays that live for the whole run (WRF's grid
// state): the caller promises the array is neither freed nor moved while registered, or calls
// host_unregister first (a freed and re-allocated range would keep the old pages pinned).
//  - A range inside one registered earlier is not registered again: a lookup, no CUDA call.
//  - A range that overlaps earlier registrations without lying inside one (a different array
//    at the same place, or a grown one) replaces them.
//  - Memory that already is page-locked (cudaHostAlloc) is used as it is.
//  - A failure (memlock limit, no device) prints one line on stderr naming `what`, the size and
//    CUDA's reason, once per range; the array's copies then go through the staging buffers as
//    before. Returns whether the range is page-locked.
// Every registration is released at exit (or by host_unregister_all), before the CUDA runtime
// shuts down. Builds without CUDA: false, nothing printed.
bool host_register(const void* p, std::size_t bytes, const char* what);
// Releases the registration that starts at p (made by host_register); no-op for any other p.
void host_unregister(const void* p);
void host_unregister_all();
// Ranges registered by host_register and held now (page-locked by it or found page-locked).
std::size_t host_registered_count();

}  // namespace wrfgpu
