// device.h - GPU services seen from host code that need not include CUDA headers.
// Implemented in device.cu (CUDA builds) and device_none.cpp (builds without CUDA).
#pragma once
#include <cstddef>
#include <string>

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
// True when the bytes first..last of a caller's array lie in page-locked host memory
// (cudaHostAlloc or cudaHostRegister): both ends are host-registered. false for pageable memory
// and in builds without CUDA. The GPU backends copy straight from and to such arrays.
bool host_range_locked(const void* first, const void* last);

}  // namespace wrfgpu
