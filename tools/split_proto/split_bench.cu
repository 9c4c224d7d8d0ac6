// split_bench.cu - prototype (measurement only, not part of the library): what an operation
// costs when one RADM2SORG step's matrix work is split over the warps of a block, lanes =
// 32 cells, the matrix and vector in shared memory (docs/radm2sorg.md, "A model of the lane
// kernel's traffic, and of cells split over warps"). kpp_decomp then one kpp_solve, split by
// tools/split_proto/gen_split.py P, against the library's serial generated code run by one
// thread per cell on the same data (the same bits, or the split is wrong).
// Build: tools/split_proto/build.sh OUTDIR (also checks the split on the CPU).
// Run: OUTDIR/split_benchP [reps]: ms per rep, cycles per rep per block (clock64 around the
// split alone), and whether the bits equal the serial code's. Cycles per rep over the busiest
// warp's operand loads (gen_split.py prints them) is the cost per operation the model needs.
// The same run times the work the lane kernel's way (k_lane), so the two compare on one host.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "radm2sorg_linalg.h"
#include SPLIT_HEADER

namespace kpp = wrfgpu::kpp_radm2sorg;
constexpr int NNZ = kpp::LU_NONZERO, NV = kpp::NVAR;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); std::exit(1); } } while (0)

// The split: block of SPLIT_P warps, 32 cells; gin/xin per block [element][lane].
__global__ void __launch_bounds__(SPLIT_P * 32, 1)
    k_split(const double* __restrict__ gin, const double* __restrict__ xin, double* gout, double* xout,
            int reps, int do_work, long long* cycles) {
  extern __shared__ double sm[];
  double* g = sm;
  double* x = sm + NNZ * 32;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const double* gb = gin + (size_t)blockIdx.x * NNZ * 32;
  const double* xb = xin + (size_t)blockIdx.x * NV * 32;
  long long t = 0;
  for (int r = 0; r < reps; ++r) {
    for (int i = threadIdx.x; i < NNZ * 32; i += blockDim.x) g[i] = gb[i];
    for (int i = threadIdx.x; i < NV * 32; i += blockDim.x) x[i] = xb[i];
    __syncthreads();
    const long long t0 = clock64();
    if (do_work) split_decomp_solve<double>(g, x, warp, lane);
    __syncthreads();
    t += clock64() - t0;
  }
  for (int i = threadIdx.x; i < NNZ * 32; i += blockDim.x) gout[(size_t)blockIdx.x * NNZ * 32 + i] = g[i];
  for (int i = threadIdx.x; i < NV * 32; i += blockDim.x) xout[(size_t)blockIdx.x * NV * 32 + i] = x[i];
  if (threadIdx.x == 0) cycles[blockIdx.x] = t;
}

// The reference: one thread per cell, the library's serial code, stride 32 in its block.
__global__ void k_serial(double* g, double* x) {
  const int lane = threadIdx.x;
  double* gb = g + (size_t)blockIdx.x * NNZ * 32 + lane;
  double* xb = x + (size_t)blockIdx.x * NV * 32 + lane;
  kpp::kpp_decomp(gb, 32);
  kpp::kpp_solve(gb, xb, 32);
}

// The same work as the lane kernel does it, for a same-run comparison: a thread per cell, the
// cells' arrays in global memory laid out per warp [element][lane], 3 blocks of 4 warps per SM
// (the lane kernel's shape), each rep from a pristine copy.
__global__ void __launch_bounds__(128, 3) k_lane(const double* __restrict__ gin, const double* __restrict__ xin,
                                                 double* g, double* x, int reps, int nsrc) {
  const int lane = threadIdx.x & 31;
  const size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  double* gb = g + warp * NNZ * 32 + lane;
  double* xb = x + warp * NV * 32 + lane;
  const double* gi = gin + (warp % nsrc) * NNZ * 32 + lane;  // the split's blocks of data, reused
  const double* xi = xin + (warp % nsrc) * NV * 32 + lane;
  for (int r = 0; r < reps; ++r) {
    for (int e = 0; e < NNZ; ++e) gb[e * 32] = gi[e * 32];
    for (int i = 0; i < NV; ++i) xb[i * 32] = xi[i * 32];
    kpp::kpp_decomp(gb, 32);
    kpp::kpp_solve(gb, xb, 32);
  }
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 200;
  int nsm = 0, clk = 0;
  CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0));
  const int blocks = nsm;
  const size_t ng = (size_t)blocks * NNZ * 32, nx = (size_t)blocks * NV * 32;
  std::vector<double> g(ng), x(nx);
  unsigned s = 12345;
  auto rnd = [&] { s = s * 1664525u + 1013904223u; return (s >> 8) / 16777216.0; };
  for (int b = 0; b < blocks; ++b)
    for (int e = 0; e < NNZ; ++e)
      for (int l = 0; l < 32; ++l) {
        bool diag = false;
        for (int i = 0; i < NV; ++i) diag = diag || kpp::LU_DIAG[i] == e;
        g[((size_t)b * NNZ + e) * 32 + l] = diag ? 1.0 + rnd() : 0.01 * (rnd() - 0.5);
      }
  for (auto& v : x) v = rnd() - 0.5;
  double *dg, *dx, *go, *xo, *rg, *rx;
  long long* dc;
  CK(cudaMalloc(&dg, ng * 8)); CK(cudaMalloc(&dx, nx * 8)); CK(cudaMalloc(&go, ng * 8));
  CK(cudaMalloc(&xo, nx * 8)); CK(cudaMalloc(&rg, ng * 8)); CK(cudaMalloc(&rx, nx * 8));
  CK(cudaMalloc(&dc, blocks * sizeof(long long)));
  CK(cudaMemcpy(dg, g.data(), ng * 8, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dx, x.data(), nx * 8, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(rg, g.data(), ng * 8, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(rx, x.data(), nx * 8, cudaMemcpyHostToDevice));
  const size_t shm = (size_t)(NNZ + NV) * 32 * 8;
  CK(cudaFuncSetAttribute(k_split, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm));
  k_serial<<<blocks, 32>>>(rg, rx);
  CK(cudaGetLastError());
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  std::vector<long long> cyc(blocks);
  for (int work = 0; work <= 1; ++work) {
    k_split<<<blocks, SPLIT_P * 32, shm>>>(dg, dx, go, xo, 2, work, dc);  // warm-up
    CK(cudaEventRecord(e0));
    k_split<<<blocks, SPLIT_P * 32, shm>>>(dg, dx, go, xo, reps, work, dc);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    CK(cudaMemcpy(cyc.data(), dc, blocks * sizeof(long long), cudaMemcpyDeviceToHost));
    double c = 0;
    for (long long v : cyc) c += (double)v / reps;
    std::printf("P=%d levels=%d %s: %.4f ms per rep (%d blocks of 32 cells), %.0f cycles per rep per block "
                "(SM clock %d MHz): %.1f M cell decomp+solves per second\n", SPLIT_P, SPLIT_LEVELS,
                work ? "decomp+solve" : "copies only", ms / reps, blocks, c / blocks, clk / 1000,
                blocks * 32 / (ms / reps) / 1e3);
  }
  {  // the lane kernel's way, on 384 cells per SM
    const int lblocks = 3 * nsm, lwarps = lblocks * 4;
    double *lg, *lx;
    CK(cudaMalloc(&lg, (size_t)lwarps * NNZ * 32 * 8));
    CK(cudaMalloc(&lx, (size_t)lwarps * NV * 32 * 8));
    const int lreps = reps / 4 > 0 ? reps / 4 : 1;
    k_lane<<<lblocks, 128>>>(dg, dx, lg, lx, 1, blocks);
    CK(cudaEventRecord(e0));
    k_lane<<<lblocks, 128>>>(dg, dx, lg, lx, lreps, blocks);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    std::printf("lane kernel's way: %.4f ms per rep (%d cells, copies from a pristine block included): "
                "%.1f M cell decomp+solves per second\n", ms / lreps, lwarps * 32, lwarps * 32 / (ms / lreps) / 1e3);
    CK(cudaFree(lg)); CK(cudaFree(lx));
  }
  std::vector<double> a(ng), b(ng), ax(nx), bx(nx);
  CK(cudaMemcpy(a.data(), go, ng * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(b.data(), rg, ng * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(ax.data(), xo, nx * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(bx.data(), rx, nx * 8, cudaMemcpyDeviceToHost));
  size_t diff = 0;
  for (size_t i = 0; i < ng; ++i) diff += std::memcmp(&a[i], &b[i], 8) != 0;
  for (size_t i = 0; i < nx; ++i) diff += std::memcmp(&ax[i], &bx[i], 8) != 0;
  std::printf("bits: %zu of %zu values differ from the serial code\n", diff, ng + nx);
  return diff != 0;
}
