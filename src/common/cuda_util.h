// cuda_util.h - CUDA plumbing done once: error checks, reusable device and pinned
// buffers, streams, event timers and NVTX ranges. Included only by .cu files.
#pragma once
#include <cuda_runtime.h>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>
#include "errors.h"
#include "wrf_dims.h"

#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define WRFGPU_HAVE_NVTX 1
#else
#define WRFGPU_HAVE_NVTX 0
#endif

namespace wrfgpu {

[[noreturn]] void cuda_fail(cudaError_t e, const char* call, const char* file, int line);

// Every CUDA runtime call goes through this: file, line and the failing call are reported.
#define WRFGPU_CUDA_CHECK(call)                                                   \
  do {                                                                            \
    cudaError_t wrfgpu_e_ = (call);                                               \
    if (wrfgpu_e_ != cudaSuccess) ::wrfgpu::cuda_fail(wrfgpu_e_, #call, __FILE__, __LINE__); \
  } while (0)
// After a kernel launch: launch-configuration errors now, execution errors at the next sync.
#define WRFGPU_CUDA_CHECK_LAUNCH(what) WRFGPU_CUDA_CHECK(cudaGetLastError())

// A device buffer allocated once and reused across calls; grows only when a call needs
// more. Never shrinks, never reallocates for a same-size call.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { if (p_) cudaFree(p_); }
  T* reserve(std::size_t n) {
    if (n > cap_) {
      if (p_) WRFGPU_CUDA_CHECK(cudaFree(p_));
      p_ = nullptr;
      WRFGPU_CUDA_CHECK(cudaMalloc(&p_, n * sizeof(T)));
      cap_ = n;
    }
    n_ = n;
    return p_;
  }
  T* data() const { return p_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }
 private:
  T* p_ = nullptr;
  std::size_t cap_ = 0, n_ = 0;
};

// Page-locked host memory, for transfers that overlap kernels. Reused like DeviceBuffer.
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { if (p_) cudaFreeHost(p_); }
  T* reserve(std::size_t n) {
    if (n > cap_) {
      if (p_) WRFGPU_CUDA_CHECK(cudaFreeHost(p_));
      p_ = nullptr;
      WRFGPU_CUDA_CHECK(cudaMallocHost(&p_, n * sizeof(T)));
      cap_ = n;
    }
    n_ = n;
    return p_;
  }
  T* data() const { return p_; }
  std::size_t size() const { return n_; }
 private:
  T* p_ = nullptr;
  std::size_t cap_ = 0, n_ = 0;
};

// A small pool of non-blocking streams, created once.
class StreamSet {
 public:
  explicit StreamSet(int n = 0) { resize(n); }
  ~StreamSet() { for (auto s : s_) cudaStreamDestroy(s); }
  void resize(int n) {
    while ((int)s_.size() < n) {
      cudaStream_t s;
      WRFGPU_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      s_.push_back(s);
    }
  }
  cudaStream_t operator[](int i) const { return s_[i % s_.size()]; }
  int size() const { return (int)s_.size(); }
 private:
  std::vector<cudaStream_t> s_;
};

// Elapsed time between two events recorded on a stream, in milliseconds.
class EventTimer {
 public:
  EventTimer() {
    WRFGPU_CUDA_CHECK(cudaEventCreate(&a_));
    WRFGPU_CUDA_CHECK(cudaEventCreate(&b_));
  }
  ~EventTimer() { cudaEventDestroy(a_); cudaEventDestroy(b_); }
  void start(cudaStream_t s = 0) { WRFGPU_CUDA_CHECK(cudaEventRecord(a_, s)); }
  void stop(cudaStream_t s = 0) { WRFGPU_CUDA_CHECK(cudaEventRecord(b_, s)); }
  float ms() {
    WRFGPU_CUDA_CHECK(cudaEventSynchronize(b_));
    float t = 0;
    WRFGPU_CUDA_CHECK(cudaEventElapsedTime(&t, a_, b_));
    return t;
  }
 private:
  cudaEvent_t a_, b_;
};

// NVTX range: every phase (H2D, kernel, D2H) is named so Nsight Systems shows it.
struct NvtxRange {
  explicit NvtxRange(const char* name) {
#if WRFGPU_HAVE_NVTX
    nvtxRangePushA(name);
#else
    (void)name;
#endif
  }
  ~NvtxRange() {
#if WRFGPU_HAVE_NVTX
    nvtxRangePop();
#endif
  }
};

// The box i0.., k0.., j0.. (ni x nk x nj values) of a WRF (i,k,j) host array of layout d <->
// a dense [j][k][i] device array, as one strided copy: the page-locked paths of the backends
// copy the caller's tiles this way, nothing outside the box touched.
inline void copy_wrf_box(float* host, const WrfDims& d, int i0, int ni, int k0, int nk, int j0, int nj,
                         float* dev, bool to_device, cudaStream_t st) {
  cudaMemcpy3DParms p = {};
  const cudaPitchedPtr h = make_cudaPitchedPtr(host, sizeof(float) * d.nx(), d.nx(), d.nz());
  const cudaPitchedPtr g = make_cudaPitchedPtr(dev, sizeof(float) * ni, ni, nk);
  const cudaPos hp = make_cudaPos(sizeof(float) * (i0 - d.ims), k0 - d.kms, j0 - d.jms);
  if (to_device) { p.srcPtr = h; p.srcPos = hp; p.dstPtr = g; p.kind = cudaMemcpyHostToDevice; }
  else { p.srcPtr = g; p.dstPtr = h; p.dstPos = hp; p.kind = cudaMemcpyDeviceToHost; }
  p.extent = make_cudaExtent(sizeof(float) * ni, nk, nj);
  WRFGPU_CUDA_CHECK(cudaMemcpy3DAsync(&p, st));
}

}  // namespace wrfgpu
