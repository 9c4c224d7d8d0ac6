// ceilings.cu - micro-benchmarks for the device's ceilings (see ceilings.h).
#include <algorithm>
#include <vector>
#include "ceilings.h"
#include "cuda_util.h"

namespace wrfgpu {

namespace {

// 8 independent FMA chains per thread keep the pipes full; the result is stored so the
// compiler cannot drop the work.
template <class T>
__global__ void fma_kernel(T* out, int iters, T a, T b) {
  T x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
  for (int n = 0; n < iters; ++n) {
    x0 = fma(x0, a, b); x1 = fma(x1, a, b); x2 = fma(x2, a, b); x3 = fma(x3, a, b);
    x4 = fma(x4, a, b); x5 = fma(x5, a, b); x6 = fma(x6, a, b); x7 = fma(x7, a, b);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

template <class T>
double fma_gflops(int sms) {
  const int threads = 256, blocks = sms * 16, iters = 4096;
  DeviceBuffer<T> out;
  out.reserve((std::size_t)threads * blocks);
  EventTimer t;
  double best = 0;
  for (int rep = 0; rep < 4; ++rep) {
    t.start();
    fma_kernel<T><<<blocks, threads>>>(out.data(), iters, T(0.999999), T(1e-7));
    t.stop();
    WRFGPU_CUDA_CHECK_LAUNCH("fma_kernel");
    double ms = t.ms();
    double flops = 2.0 * 8.0 * iters * (double)threads * blocks;
    if (rep > 0) best = std::max(best, flops / (ms * 1e6));
  }
  return best;
}

double best_copy_gbs(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, double factor) {
  EventTimer t;
  double best = 0;
  for (int rep = 0; rep < 6; ++rep) {
    t.start();
    WRFGPU_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, 0));
    t.stop();
    double ms = t.ms();
    if (rep > 0) best = std::max(best, factor * bytes / (ms * 1e6));
  }
  return best;
}

}  // namespace

Ceilings measure_ceilings() {
  int dev = 0;
  WRFGPU_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p;
  WRFGPU_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  Ceilings c;
  // Copy buffers several times the L2, so the copy measures HBM.
  const std::size_t bytes = std::size_t(1) << 30;  // 1 GiB
  DeviceBuffer<char> a, b;
  a.reserve(bytes);
  b.reserve(bytes);
  WRFGPU_CUDA_CHECK(cudaMemset(a.data(), 1, bytes));
  c.d2d_gbs = best_copy_gbs(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, 2.0);
  const std::size_t hbytes = std::size_t(256) << 20;
  PinnedBuffer<char> h;
  h.reserve(hbytes);
  std::fill(h.data(), h.data() + hbytes, 3);
  c.h2d_gbs = best_copy_gbs(a.data(), h.data(), hbytes, cudaMemcpyHostToDevice, 1.0);
  c.d2h_gbs = best_copy_gbs(h.data(), a.data(), hbytes, cudaMemcpyDeviceToHost, 1.0);
  c.fp32_gflops = fma_gflops<float>(p.multiProcessorCount);
  c.fp64_gflops = fma_gflops<double>(p.multiProcessorCount);
  return c;
}

}  // namespace wrfgpu
