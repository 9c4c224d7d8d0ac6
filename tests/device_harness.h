// device_harness.h - the harness of the device tests of advection and RADM2SORG
// (src/advection/tests/test_advection_device.cu, src/radm2sorg/tests/test_radm2sorg_device.cu): a
// functor f(item, out) runs for each item on the host and in a kernel with one thread per item
// (it carries the host's or the device's pointers); the two halves' results must have the same
// bits. WSM5's device test (src/wsm5/tests/test_wsm5_device.cu) runs its functors its own way
// and shares the rest: Both, hexbits, num, same_bits, count_if_out. Built with
// -DWRFGPU_DEVICE_TEST_DRY_RUN (by hand; the Makefile never sets it), the "GPU" half runs on the
// host over copies of the inputs: a check of the inputs and the harness.
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cuda_util.h"

namespace wrfgpu_devtest {

// Device copies of host arrays, freed with the arena.
class DevArena {
 public:
  DevArena() = default;
  DevArena(const DevArena&) = delete;
  DevArena& operator=(const DevArena&) = delete;
  ~DevArena() {
    for (void* p : p_) {
#ifdef WRFGPU_DEVICE_TEST_DRY_RUN
      std::free(p);
#else
      cudaFree(p);
#endif
    }
  }
  template <class T>
  T* copy(const T* h, std::size_t n) {
    if (!h) return nullptr;
    T* d = alloc<T>(n);
#ifdef WRFGPU_DEVICE_TEST_DRY_RUN
    if (n) std::memcpy(d, h, n * sizeof(T));
#else
    if (n) WRFGPU_CUDA_CHECK(cudaMemcpy(d, h, n * sizeof(T), cudaMemcpyHostToDevice));
#endif
    return d;
  }
  template <class T>
  T* copy(const std::vector<T>& h) {
    return copy(h.data(), h.size());
  }
  // zero-filled, or (uninitialised) left as it comes: work that the physics must write before
  // it reads it, so that compute-sanitizer's initcheck sees a read before a write
  template <class T>
  T* alloc(std::size_t n, bool zero = true) {
    void* d = nullptr;
    const std::size_t bytes = std::max<std::size_t>(n, 1) * sizeof(T);
#ifdef WRFGPU_DEVICE_TEST_DRY_RUN
    d = std::malloc(bytes);
    std::memset(d, zero ? 0 : 0xff, bytes);  // uninitialised: NaN bits
#else
    WRFGPU_CUDA_CHECK(cudaMalloc(&d, bytes));
    if (zero) WRFGPU_CUDA_CHECK(cudaMemset(d, 0, bytes));
#endif
    p_.push_back(d);
    return static_cast<T*>(d);
  }
  template <class T>
  void back(T* h, const T* d, std::size_t n) {
#ifdef WRFGPU_DEVICE_TEST_DRY_RUN
    std::memcpy(h, d, n * sizeof(T));
#else
    WRFGPU_CUDA_CHECK(cudaMemcpy(h, d, n * sizeof(T), cudaMemcpyDeviceToHost));
#endif
  }

 private:
  std::vector<void*> p_;
};

template <class F, class T>
__global__ void k_items(F f, int n, T* out, int nout) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  f(i, out ? out + (std::size_t)i * nout : nullptr);
}

// f over items 0..n-1 on the device, `block` threads a block (the dry run: on the host).
template <class F, class T>
void launch(const F& f, int n, T* out, int nout, int block) {
  if (n <= 0) return;
#ifdef WRFGPU_DEVICE_TEST_DRY_RUN
  (void)block;
  for (int i = 0; i < n; ++i) f(i, out ? out + (std::size_t)i * nout : nullptr);
#else
  k_items<<<(n + block - 1) / block, block>>>(f, n, out, nout);
  WRFGPU_CUDA_CHECK(cudaGetLastError());
  WRFGPU_CUDA_CHECK(cudaDeviceSynchronize());
#endif
}

template <class T>
struct Both {
  std::vector<T> host, dev;
  int nout = 0;
};

// n items of nout outputs: fh on the host, fd (the same functor with device pointers) on the GPU.
template <class T, class F>
Both<T> run_both(const F& fh, const F& fd, int n, int nout, int block) {
  Both<T> r;
  r.nout = nout;
  r.host.assign((std::size_t)n * nout, T(0));
  r.dev.assign((std::size_t)n * nout, T(0));
  for (int i = 0; i < n; ++i) fh(i, r.host.data() + (std::size_t)i * nout);
  if (n == 0) return r;
  DevArena a;
  T* dout = a.alloc<T>(r.dev.size());
  launch(fd, n, dout, nout, block);
  a.back(r.dev.data(), dout, r.dev.size());
  return r;
}

inline std::string hexbits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  char b[16];
  std::snprintf(b, sizeof b, "0x%08" PRIx32, u);
  return b;
}
inline std::string hexbits(double x) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  char b[24];
  std::snprintf(b, sizeof b, "0x%016" PRIx64, u);
  return b;
}
// enough digits to tell two values of T apart (9 float, 17 double)
inline std::string num(double x, int digits) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*g", digits, x);
  return b;
}

// What output j of item i is, with the inputs it was computed from (for the failure message).
using Describe = std::function<std::string(int item, int j)>;

// The host's and the GPU's results have the same bits, with two exceptions that are counted
// and printed: two NaNs (the GPU's canonical NaN is not x86's) and zeros of opposite sign (nvcc
// may compile b < a ? b : a to PTX min, which orders -0 below +0: src/wsm5/tests/test_wsm5_device.cu).
// skip(item, j) leaves a result out.
template <class T>
::testing::AssertionResult same_bits(const Both<T>& r, const Describe& what,
                                     const std::function<bool(int, int)>& skip = nullptr) {
  const int digits = sizeof(T) == sizeof(float) ? 9 : 17;
  std::size_t ndiff = 0, first = 0, compared = 0, signed_zeros = 0, first_zero = 0;
  for (std::size_t q = 0; q < r.host.size(); ++q) {
    if (skip && skip((int)(q / r.nout), (int)(q % r.nout))) continue;
    ++compared;
    if (std::memcmp(&r.host[q], &r.dev[q], sizeof(T)) == 0) continue;
    if (std::isnan(r.host[q]) && std::isnan(r.dev[q])) continue;
    if (r.host[q] == T(0) && r.dev[q] == T(0)) {
      if (signed_zeros++ == 0) first_zero = q;
      continue;
    }
    if (ndiff++ == 0) first = q;
  }
  if (signed_zeros)
    std::printf("%zu of %zu results are zeros of opposite sign on the host and the GPU; first: %s: "
                "host %s, GPU %s\n",
                signed_zeros, compared, what((int)(first_zero / r.nout), (int)(first_zero % r.nout)).c_str(),
                hexbits(r.host[first_zero]).c_str(), hexbits(r.dev[first_zero]).c_str());
  if (compared == 0) return ::testing::AssertionFailure() << "nothing compared";
  if (ndiff == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << ndiff << " of " << compared << " results differ; first: "
         << what((int)(first / r.nout), (int)(first % r.nout)) << " [item " << first / r.nout
         << ", output " << first % r.nout << "]: host " << num(r.host[first], digits) << " ("
         << hexbits(r.host[first]) << "), GPU " << num(r.dev[first], digits) << " ("
         << hexbits(r.dev[first]) << ")";
}

// How many items have output j satisfying pred (coverage counts).
template <class T, class P>
int count_if_out(const Both<T>& r, int j, const P& pred) {
  int c = 0;
  for (std::size_t q = j; q < r.host.size(); q += r.nout) c += pred(r.host[q]) ? 1 : 0;
  return c;
}

}  // namespace wrfgpu_devtest
