// device.cu - device selection, information and error reporting for the CUDA backend.
#include <cstdio>
#include <cstdlib>
#include <string>
#include "cuda_util.h"
#include "device.h"

namespace wrfgpu {

[[noreturn]] void cuda_fail(cudaError_t e, const char* call, const char* file, int line) {
  char buf[1024];
  std::snprintf(buf, sizeof buf, "CUDA error %d (%s: %s) in %s at %s:%d", (int)e,
                cudaGetErrorName(e), cudaGetErrorString(e), call, file, line);
  throw RuntimeError(buf);
}

bool cuda_built() { return true; }

int gpu_count(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls are not poisoned
    if (why) *why = std::string("CUDA reports ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
    return 0;
  }
  if (n == 0 && why) *why = "no CUDA device is visible (CUDA_VISIBLE_DEVICES?)";
  return n;
}

static int g_current = -1;

int gpu_select(int explicit_id, int local_rank) {
  std::string why;
  int n = gpu_count(&why);
  if (n == 0) throw RuntimeError("no usable GPU: " + why);
  int id;
  if (explicit_id >= 0) {
    if (explicit_id >= n)
      throw RuntimeError("GPU " + std::to_string(explicit_id) + " asked for, but only " +
                         std::to_string(n) + " visible");
    id = explicit_id;
  } else {
    id = (local_rank < 0 ? 0 : local_rank) % n;
  }
  WRFGPU_CUDA_CHECK(cudaSetDevice(id));
  WRFGPU_CUDA_CHECK(cudaFree(0));  // create the context now, so failures surface here
  g_current = id;
  return id;
}

int gpu_current() { return g_current; }

DeviceInfo gpu_info(int id) {
  DeviceInfo d;
  cudaDeviceProp p;
  WRFGPU_CUDA_CHECK(cudaGetDeviceProperties(&p, id));
  d.id = id;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.total_mem = p.totalGlobalMem;
  d.l2_bytes = p.l2CacheSize;
  char bus[64];
  WRFGPU_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, id));
  d.pci_bus_id = bus;
  WRFGPU_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  WRFGPU_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  int mps = 0;
  if (cudaDeviceGetAttribute(&mps, cudaDevAttrMpsEnabled, id) != cudaSuccess) {
    cudaGetLastError();
    mps = 0;
  }
  d.mps = mps != 0;
  int cur = 0;
  WRFGPU_CUDA_CHECK(cudaGetDevice(&cur));
  if (cur == id) {
    std::size_t fr = 0, tot = 0;
    WRFGPU_CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
    d.free_mem = fr;
  }
  return d;
}

void gpu_require_memory(std::size_t bytes, const char* what) {
  std::size_t fr = 0, tot = 0;
  WRFGPU_CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
  if (bytes > fr) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "too little GPU memory for %s: needs %.1f MiB, %.1f MiB free of %.1f MiB", what,
                  bytes / 1048576.0, fr / 1048576.0, tot / 1048576.0);
    throw RuntimeError(buf);
  }
}

void gpu_synchronize() { WRFGPU_CUDA_CHECK(cudaDeviceSynchronize()); }

void* host_alloc_locked(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocDefault);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw RuntimeError("cannot allocate " + std::to_string(bytes) +
                       " bytes of page-locked host memory: " + cudaGetErrorString(e));
  }
  return p;
}
void host_free_locked(void* p) {
  if (p) cudaFreeHost(p);
}
bool host_range_locked(const void* first, const void* last) {
  for (const void* p : {first, last}) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
      cudaGetLastError();  // clear: pageable memory is not an error
      return false;
    }
    if (a.type != cudaMemoryTypeHost) return false;
  }
  return true;
}

std::string cuda_version_string() {
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaError_t e = cudaDriverGetVersion(&drv);
  char b[128];
  if (e != cudaSuccess || drv == 0)
    std::snprintf(b, sizeof b, "CUDA runtime %d.%d, no CUDA driver", rt / 1000, (rt % 1000) / 10);
  else
    std::snprintf(b, sizeof b, "CUDA runtime %d.%d, driver %d.%d", rt / 1000, (rt % 1000) / 10,
                  drv / 1000, (drv % 1000) / 10);
  return b;
}

}  // namespace wrfgpu
