// device.cu - device selection, information and error reporting for the CUDA backend.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
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

// The registrations made by host_register: start address -> range. `pinned`: this library
// called cudaHostRegister (so it unregisters); `failed`: registering failed and was reported,
// so the range is not tried again.
namespace {
struct Registration {
  std::size_t bytes = 0;
  bool pinned = false, failed = false;
};
std::mutex g_reg_mutex;
std::map<std::uintptr_t, Registration> g_reg;
bool g_reg_atexit = false;

void release_locked(std::map<std::uintptr_t, Registration>::iterator it) {
  if (it->second.pinned) {
    cudaHostUnregister(reinterpret_cast<void*>(it->first));
    cudaGetLastError();  // at exit the array may be gone already: nothing to report
  }
  g_reg.erase(it);
}

// What CUDA says of both ends (host_register asks this with g_reg_mutex held).
bool cuda_range_locked(const void* first, const void* last) {
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
}  // namespace

bool host_range_locked(const void* first, const void* last) {
  {  // inside a range host_register holds: no CUDA call (the hooks ask this at every call)
    const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(first), b = reinterpret_cast<std::uintptr_t>(last);
    std::lock_guard<std::mutex> lock(g_reg_mutex);
    auto it = g_reg.upper_bound(a);
    if (it != g_reg.begin()) {
      --it;
      if (!it->second.failed && b < it->first + it->second.bytes) return true;
    }
  }
  return cuda_range_locked(first, last);
}

bool host_register(const void* p, std::size_t bytes, const char* what) {
  if (p == nullptr || bytes == 0) return false;
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p), b = a + bytes;
  std::lock_guard<std::mutex> lock(g_reg_mutex);
  // Registrations overlapping [a, b): the last one starting below b, and those before it
  // that still reach a.
  auto it = g_reg.lower_bound(b);
  while (it != g_reg.begin()) {
    auto prev = std::prev(it);
    const std::uintptr_t start = prev->first, end = start + prev->second.bytes;
    if (end <= a) break;
    if (start <= a && b <= end) return !prev->second.failed;  // inside an earlier registration
    release_locked(prev);  // a different or grown array where an earlier one was
  }
  Registration r;
  r.bytes = bytes;
  const bool locked = cuda_range_locked(p, reinterpret_cast<const char*>(p) + bytes - 1);
  if (!g_reg_atexit) {  // registered after the CUDA runtime started, so it runs before its exit
    std::atexit(host_unregister_all);
    g_reg_atexit = true;
  }
  if (locked) {
    g_reg[a] = r;  // cudaHostAlloc memory, or registered by the caller: used as it is
    return true;
  }
  const cudaError_t e = cudaHostRegister(const_cast<void*>(p), bytes, cudaHostRegisterPortable);
  if (e == cudaSuccess) {
    r.pinned = true;
  } else {
    cudaGetLastError();
    if (e != cudaErrorHostMemoryAlreadyRegistered) {
      r.failed = true;
      std::fprintf(stderr,
                   "wrfgpu: cannot page-lock %s (%zu bytes at %p): cudaHostRegister: %s; its copies "
                   "go through page-locked staging buffers instead\n",
                   what ? what : "an array", bytes, p, cudaGetErrorString(e));
    }
  }
  g_reg[a] = r;
  return !r.failed;
}

void host_unregister(const void* p) {
  std::lock_guard<std::mutex> lock(g_reg_mutex);
  auto it = g_reg.find(reinterpret_cast<std::uintptr_t>(p));
  if (it != g_reg.end()) release_locked(it);
}

void host_unregister_all() {
  std::lock_guard<std::mutex> lock(g_reg_mutex);
  while (!g_reg.empty()) release_locked(g_reg.begin());
}

std::size_t host_registered_count() {
  std::lock_guard<std::mutex> lock(g_reg_mutex);
  std::size_t n = 0;
  for (const auto& r : g_reg) n += r.second.failed ? 0 : 1;
  return n;
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
