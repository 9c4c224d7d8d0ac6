// step_bench.cu - prototype (measurement only, not part of the library): one whole Ros3 step of
// RADM2SORG for 32 cells (lanes) split over the warps of a block (tools/split_proto/gen_step.py):
// the matrix and vector entries by rows in each warp's registers; the entries other warps read,
// and the rate constants, in shared memory; the other vectors in global memory (L2). Against
// the same statements run one thread per cell with every array in global memory (the lane
// kernel's way, 3 blocks of 4 warps per SM), in the same run, as cell-steps per second; the
// split's bits against that serial code. (Lane blocks beside the split on the same SMs were
// measured and lost: docs/radm2sorg.md, "Cells split over warps, measured".)
// Build: tools/split_proto/build.sh OUTDIR [P...]. Run: OUTDIR/step_bench_P [steps].
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "radm2sorg_mechanism.h"
#define WRFGPU_HD_SPLIT __host__ __device__ __forceinline__
#ifdef __CUDA_ARCH__
#define SPLIT_BARRIER() asm volatile("barrier.sync 0;" ::: "memory")  // non-aligned: see gen_step.py
#else
#define SPLIT_BARRIER() ((void)0)
#endif
#include STEP_HEADER

namespace kpp = wrfgpu::kpp_radm2sorg;
constexpr int NNZ = kpp::LU_NONZERO, NV = kpp::NVAR, NR = kpp::NREACT, NGV = SPLIT_NGV;
constexpr double kGhinv = 7.5, kHc1 = -0.3, kHc20 = 1.2, kHc21 = 2.1;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); std::exit(1); } } while (0)

// The split: a block of SPLIT_P warps, 32 cells; r [reaction][lane] and gv [value][lane] per block.
__global__ void __launch_bounds__(SPLIT_P * 32, 1)
    k_split(const double* __restrict__ rin, double* gv, double* gout, double* xout, int reps, long long* cycles) {
  extern __shared__ double sm[];
  double* g = sm;
  double* x = g + NNZ * 32;
  double* r = x + NV * 32;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  double* gvb = gv + (size_t)blockIdx.x * NGV * 32;
  for (int i = threadIdx.x; i < NR * 32; i += blockDim.x) r[i] = rin[(size_t)blockIdx.x * NR * 32 + i];
  long long t = 0;
  for (int rep = 0; rep < reps; ++rep) {
    __syncthreads();
    const long long t0 = clock64();
    split_step<double>(g, x, r, gvb, warp, lane, kGhinv, kHc1, kHc20, kHc21);
    __syncthreads();
    t += clock64() - t0;
  }
  for (int i = threadIdx.x; i < NNZ * 32; i += blockDim.x) gout[(size_t)blockIdx.x * NNZ * 32 + i] = g[i];
  for (int i = threadIdx.x; i < NV * 32; i += blockDim.x) xout[(size_t)blockIdx.x * NV * 32 + i] = x[i];
  if (threadIdx.x == 0) cycles[blockIdx.x] = t;
}

// The same statements one thread per cell, all arrays in global memory, each warp its own 32
// cells ([element][lane]); warp w takes the inputs (r, y, fix) of source block w % nsrc.
__global__ void __launch_bounds__(128, 3) k_lane(const double* __restrict__ rin, const double* __restrict__ gvin,
                                                 double* g, double* x, double* gv, int reps, int nsrc) {
  const int lane = threadIdx.x & 31;
  const size_t w = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  double* gw = g + w * NNZ * 32;
  double* xw = x + w * NV * 32;
  double* gvw = gv + w * NGV * 32;
  const double* rw = rin + (w % nsrc) * NR * 32;
  for (int i = 0; i < NV + 2; ++i) gvw[i * 32 + lane] = gvin[(w % nsrc) * NGV * 32 + i * 32 + lane];  // y, fix
  for (int rep = 0; rep < reps; ++rep) split_step_serial<double>(gw, xw, rw, gvw, lane, kGhinv, kHc1, kHc20, kHc21);
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 50;
  int nsm = 0, clk = 0;
  CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0));
  const int blocks = nsm;
  std::vector<double> r((size_t)blocks * NR * 32), gv((size_t)blocks * NGV * 32, 0.0);
  unsigned s = 4242;
  auto rnd = [&] { s = s * 1664525u + 1013904223u; return (s >> 8) / 16777216.0; };
  for (auto& v : r) v = 0.01 + rnd();
  for (int b = 0; b < blocks; ++b)
    for (int i = 0; i < NV + 2; ++i)
      for (int l = 0; l < 32; ++l) gv[((size_t)b * NGV + i) * 32 + l] = 0.05 + 0.2 * rnd();
  const size_t ng = (size_t)blocks * NNZ * 32, nx = (size_t)blocks * NV * 32, nr = r.size(), ngv = gv.size();
  double *dr, *dgv, *go, *xo, *sg, *sx, *sgv;
  long long* dc;
  CK(cudaMalloc(&dr, nr * 8)); CK(cudaMalloc(&dgv, ngv * 8)); CK(cudaMalloc(&go, ng * 8)); CK(cudaMalloc(&xo, nx * 8));
  CK(cudaMalloc(&sg, ng * 8)); CK(cudaMalloc(&sx, nx * 8)); CK(cudaMalloc(&sgv, ngv * 8));
  CK(cudaMalloc(&dc, blocks * sizeof(long long)));
  CK(cudaMemcpy(dr, r.data(), nr * 8, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dgv, gv.data(), ngv * 8, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(sgv, gv.data(), ngv * 8, cudaMemcpyHostToDevice));
  const size_t shm = (size_t)(NNZ + NV + NR) * 32 * 8;
  CK(cudaFuncSetAttribute(k_split, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm));
  // The reference: one step, one thread per cell, blocks of 32 (a warp per source block).
  k_lane<<<blocks, 32>>>(dr, sgv, sg, sx, sgv, 1, blocks);
  CK(cudaGetLastError());
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  k_split<<<blocks, SPLIT_P * 32, shm>>>(dr, dgv, go, xo, 1, dc);  // warm-up, and the step compared
  CK(cudaGetLastError());
  CK(cudaEventRecord(e0));
  k_split<<<blocks, SPLIT_P * 32, shm>>>(dr, dgv, go, xo, reps, dc);
  CK(cudaEventRecord(e1));
  CK(cudaEventSynchronize(e1));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  std::vector<long long> cyc(blocks);
  CK(cudaMemcpy(cyc.data(), dc, blocks * sizeof(long long), cudaMemcpyDeviceToHost));
  double c = 0;
  for (long long v : cyc) c += (double)v / reps;
  cudaFuncAttributes fs, fl;
  CK(cudaFuncGetAttributes(&fs, k_split));
  CK(cudaFuncGetAttributes(&fl, k_lane));
  std::printf("split P=%d, %d levels (%d registers): %.4f ms per step (%d blocks of 32 cells), %.0f cycles per step per "
              "block (SM clock %d MHz): %.1f M cell-steps per second\n", SPLIT_P, SPLIT_LEVELS, fs.numRegs, ms / reps,
              blocks, c / blocks, clk / 1000, blocks * 32 / (ms / reps) / 1e3);
  {
    const int lblocks = 3 * nsm, lwarps = lblocks * 4;
    double *lg, *lx, *lgv;
    CK(cudaMalloc(&lg, (size_t)lwarps * NNZ * 32 * 8));
    CK(cudaMalloc(&lx, (size_t)lwarps * NV * 32 * 8));
    CK(cudaMalloc(&lgv, (size_t)lwarps * NGV * 32 * 8));
    const int lreps = reps / 4 > 0 ? reps / 4 : 1;
    k_lane<<<lblocks, 128>>>(dr, dgv, lg, lx, lgv, 1, blocks);
    CK(cudaEventRecord(e0));
    k_lane<<<lblocks, 128>>>(dr, dgv, lg, lx, lgv, lreps, blocks);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    std::printf("the same statements the lane kernel's way (%d registers): %.4f ms per step (%d cells): %.1f M "
                "cell-steps per second\n", fl.numRegs, ms / lreps, lwarps * 32, lwarps * 32 / (ms / lreps) / 1e3);
    CK(cudaFree(lg)); CK(cudaFree(lx)); CK(cudaFree(lgv));
  }
  // Bits: the split's G, X and vectors after its steps against the reference's one step (the
  // step is the same each time: it reads Y, fix and R, which it does not write).
  std::vector<double> a(ng), b(ng), ax(nx), bx(nx), av(ngv), bv(ngv);
  CK(cudaMemcpy(a.data(), go, ng * 8, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(b.data(), sg, ng * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(ax.data(), xo, nx * 8, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(bx.data(), sx, nx * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(av.data(), dgv, ngv * 8, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(bv.data(), sgv, ngv * 8, cudaMemcpyDeviceToHost));
  size_t diff = 0;
  for (size_t i = 0; i < ng; ++i) diff += std::memcmp(&a[i], &b[i], 8) != 0;
  for (size_t i = 0; i < nx; ++i) diff += std::memcmp(&ax[i], &bx[i], 8) != 0;
  for (size_t i = 0; i < ngv; ++i) diff += std::memcmp(&av[i], &bv[i], 8) != 0;
  std::printf("bits: %zu of %zu values differ from the serial statements\n", diff, ng + nx + ngv);
  return diff != 0;
}
