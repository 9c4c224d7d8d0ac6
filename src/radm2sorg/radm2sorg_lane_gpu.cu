// radm2sorg_lane_gpu.cu - CUDA backend, a lane per cell, for large calls (docs/radm2sorg.md,
// "Lane per cell with refill"). Each lane of a warp integrates its own cell with the serial
// integrator of the CPU backend (kpp_rosenbrock.h), one step attempt per iteration of the
// kernel's loop (ros_start, ros_attempt): a lane whose cell is done stores it and takes the next
// cell from the call's counter while the other lanes go on, so a warp's lanes stay busy until
// the counter runs out, however different their cells' step counts. The cells' arrays live in
// global memory, one block per warp laid out [element][lane] (stride 32, each access of a warp
// one 256-byte line in double). Per step attempt it moves about a quarter less memory than the
// serial integrator did with Jac0 and a pass per vector operation: jac_ghimj writes the
// Rosenbrock matrix straight from the Jacobian and ros_combine / ros_new_solution make each
// stage's vectors and the error norm in one pass (kpp_rosenbrock.h; docs/radm2sorg.md has the
// measured traffic and its floor).
//
// It reads and writes the same cell records as the warp-per-cell kernel (radm2sorg_gpu.cu: VAR,
// FIX, RCONST per cell, written by the prologue kernel, read back by the epilogue) and gives
// the same bits: both run the serial integrator's operations in the same order (the warp kernel
// is held to the serial integrator bit for bit, docs/radm2sorg.md "Warp per cell").
// Compiled twice (WRFGPU_MODE_NS = strict, fast).

// The generated functions as this file's own copies (static), inlined where they are called:
// kpp_solve into the kernel, the others into the functions of LaneMech below (the library's
// other kernels call them as __noinline__ functions, radm2sorg_parameters.h).
#define WRFGPU_KPP_BIG static __host__ __device__ __forceinline__
#include <algorithm>
#include <cstdio>
#include <string>
#include "config.h"
#include "cuda_util.h"
#include "errors.h"
#include "radm2sorg_lane.h"

namespace wrfgpu {
namespace radm2sorg {
namespace WRFGPU_MODE_NS {

namespace {

constexpr int kLaneThreads = 128;  // 4 warps per block
constexpr int kW = 32;             // lanes per warp: the stride of a warp's block
// A lane's values in its warp's block: the cell record (VAR, FIX, RCONST), then RosWork.
constexpr std::size_t kLaneVals = (std::size_t)mech::NVAR + mech::NFIX + mech::NREACT +
                                  kpp::ros_work_size<Mech>();

// The mechanism as the lane kernel calls it: fun, jac_ghimj and kpp_decomp each as a function
// of its own (a register allocation of its own: inlined into the kernel, their temporaries
// spill, 156 KB of spill stores in all, and the kernel is 5-6x slower), kpp_solve inlined.
// Measured against every function inlined and against only jac_ghimj, or jac_ghimj and
// kpp_decomp, apart (docs/radm2sorg.md, "Lane per cell with refill").
struct LaneMech : Mech {
  template <class T>
  __device__ __noinline__ static void fun(const T* v, const T* f, const T* r, T* vdot, std::ptrdiff_t s) {
    Mech::fun(v, f, r, vdot, s);
  }
  template <class T>
  __device__ __noinline__ static void jac_ghimj(const T* v, const T* f, const T* r, double ghinv, T* jvs,
                                                std::ptrdiff_t s) {
    Mech::jac_ghimj(v, f, r, ghinv, jvs, s);
  }
  template <class T>
  __device__ __noinline__ static int decomp(T* jvs, std::ptrdiff_t s) { return Mech::decomp(jvs, s); }
};

template <class T>
__device__ void store_cell(std::size_t c, std::size_t ncell, const T* y, T* cells, int* stats,
                           const kpp::RosStats& st) {
  T* b = cells + c * kCellVals;
  for (int i = 0; i < mech::NVAR; ++i) b[i] = y[i * kW];
  store_stats(stats, ncell, c, st);
}

// 3 blocks (12 warps) per SM: 168 registers. The generated functions are spill-free at 255
// registers and spill little at 128 (WRFGPU_KPP_FENCE, radm2sorg_parameters.h); more warps hide
// more of the latency of the lanes' loads but move more DRAM bytes (the L2 holds less of each
// warp's working set). On an H100, the issue's device, 3 blocks were as fast as 2 and 3% faster
// than 4 at CONUS size; on an H200 (more DRAM bandwidth) 3 and 4 blocks were 5-7% faster than 2,
// 6 (80 registers, spilling again) slower. Before the fences, 3 and 4 blocks spilled more and
// were 8% and 18% slower (docs/radm2sorg.md, "Spill-free generated code").
template <class T>
__global__ void __launch_bounds__(kLaneThreads, 3)
    radm2sorg_lane_kernel(CellOptions opt, std::size_t ncell, T* __restrict__ cells,
                          int* __restrict__ stats, unsigned long long* __restrict__ next,
                          const unsigned* __restrict__ order, T* __restrict__ scratch) {
  __shared__ kpp::RosCoeffs coef;  // the same for every lane: read as broadcasts
  double time_end;
  const kpp::RosControl ctl = cell_controls(opt, time_end);
  if (threadIdx.x == 0) coef = kpp::ros_coeffs(ctl.method);
  __syncthreads();

  const unsigned full = 0xffffffffu;
  const int lane = (int)(threadIdx.x & 31u);
  const std::size_t warp = ((std::size_t)blockIdx.x * blockDim.x + threadIdx.x) / kW;
  T* base = scratch + warp * kLaneVals * kW + lane;
  T* y = base;
  T* fix = base + mech::NVAR * kW;
  T* rct = base + (mech::NVAR + mech::NFIX) * kW;
  const kpp::RosWork<T> w = kpp::ros_work_at<Mech>(base + kCellVals * kW, kW);

  std::size_t cell = ncell;  // the lane's cell; ncell: none
  kpp::RosLane L;
  bool more = true;  // the counter has cells left (the same in every lane)
  for (;;) {
    // Lanes without a cell take the next ones, one atomic per warp for all of them.
    while (more) {
      unsigned long long k;
      if (!take_positions(cell == ncell, next, ncell, more, k)) break;
      if (k >= ncell) continue;
      const std::size_t c = order ? order[k] : k;  // longest expected first
      const T* b = cells + c * kCellVals;
      for (int i = 0; i < (int)kCellVals; ++i) base[i * kW] = b[i];
      if (kpp::ros_start(ctl, 0.0, time_end, L) == 0)
        cell = c;
      else
        store_cell(c, ncell, y, cells, stats, L.st);  // nothing to integrate, or bad controls
    }
    if (!__any_sync(full, cell != ncell)) break;
    if (cell != ncell && kpp::ros_attempt<LaneMech>(L, y, fix, rct, ctl, coef, w, kW) != 0) {
      store_cell(cell, ncell, y, cells, stats, L.st);
      cell = ncell;
    }
  }
}

// The kernel's shape on the current device: blocks per SM and SMs, worked out once per device
// and precision (occupancy query).
struct LaneLaunch {
  int dev = -1;
  int per_sm = 0, nsm = 0;
};
template <class T>
const LaneLaunch& lane_launch() {
  static LaneLaunch c;
  int dev;
  WRFGPU_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev == c.dev) return c;
  c = LaneLaunch();
  // As much L1 as the SM can give: the kernel keeps only its coefficients in shared memory,
  // and its lanes' arrays are reread through L1 (docs/radm2sorg.md,
  // "Chunks for a tail, and the lane kernel's L1": 0-1.5% of its time on an H200).
  WRFGPU_CUDA_CHECK(cudaFuncSetAttribute(radm2sorg_lane_kernel<T>,
                                         cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  WRFGPU_CUDA_CHECK(cudaDeviceGetAttribute(&c.nsm, cudaDevAttrMultiProcessorCount, dev));
  WRFGPU_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &c.per_sm, radm2sorg_lane_kernel<T>, kLaneThreads, 0));
  if (c.per_sm < 1) throw RuntimeError("radm2sorg: the lane-per-cell kernel does not fit on this GPU");
  if (config::flag("WRFGPU_RADM2SORG_VERBOSE").value_or(false))
    std::fprintf(stderr, "radm2sorg lane kernel: %d threads per block, %d blocks per SM\n",
                 kLaneThreads, c.per_sm);
  c.dev = dev;
  return c;
}

}  // namespace

template <class T>
int lane_warps(std::size_t ncell) {
  const LaneLaunch& c = lane_launch<T>();
  // at most a warp per 64 cells: every lane integrates at least two cells one after the other
  const std::size_t want = (ncell + 2 * kW - 1) / (2 * kW);
  const std::size_t blocks =
      std::min<std::size_t>((std::size_t)c.per_sm * c.nsm, (want + 3) / 4);
  return (int)(blocks * (kLaneThreads / kW));
}

template <class T>
int lane_device_sms() {
  return lane_launch<T>().nsm;
}

template <class T>
std::size_t lane_scratch_values(int warps) {
  return (std::size_t)warps * kLaneVals * kW;
}

template <class T>
void launch_lane(const CellOptions& opt, std::size_t ncell, T* cells, int* stats,
                 unsigned long long* next, const unsigned* order, T* scratch, int warps,
                 cudaStream_t st) {
  const unsigned blocks = (unsigned)(warps / (kLaneThreads / kW));
  radm2sorg_lane_kernel<T><<<blocks, kLaneThreads, 0, st>>>(opt, ncell, cells, stats, next, order, scratch);
  WRFGPU_CUDA_CHECK_LAUNCH("radm2sorg_lane_kernel");
}

template int lane_warps<double>(std::size_t);
template int lane_warps<float>(std::size_t);
template int lane_device_sms<double>();
template int lane_device_sms<float>();
template std::size_t lane_scratch_values<double>(int);
template std::size_t lane_scratch_values<float>(int);
template void launch_lane<double>(const CellOptions&, std::size_t, double*, int*,
                                  unsigned long long*, const unsigned*, double*, int, cudaStream_t);
template void launch_lane<float>(const CellOptions&, std::size_t, float*, int*,
                                 unsigned long long*, const unsigned*, float*, int, cudaStream_t);

}  // namespace WRFGPU_MODE_NS
}  // namespace radm2sorg
}  // namespace wrfgpu
