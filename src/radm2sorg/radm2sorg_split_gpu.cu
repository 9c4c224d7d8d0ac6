// radm2sorg_split_gpu.cu - CUDA backend, cells split over warps: Auto's kernel for Ros3 in double
// precision, WRF's chemistry, at every call size (docs/radm2sorg.md, "The split kernel"). A
// block of 8 warps holds 32 cells, lane l of every warp working on the block's cell l, one
// block per SM. Each pass of the kernel's loop is one step attempt (kpp_rosenbrock.h
// ros_attempt) for the 32 cells, its straight-line statements split over the warps by matrix
// rows (generated/radm2sorg_split.h, tools/kpp_gen/kpp_split.py): each warp keeps its rows of
// the matrix and of the vector being solved in registers, and stores to shared memory only the
// entries another warp reads. The vectors live in the block's global scratch, the rate constants
// in shared memory.
//
// Around the step, warp 0 keeps the 32 cells' integrator state (kpp::RosLane, in shared memory)
// and runs ros_attempt's bookkeeping and step-size control with the serial integrator's own
// functions (ros_start, ros_step_control, ros_begin_step). Differences from ros_attempt, with the
// same bits: every pass evaluates Fcn0 = fun(Y) and the matrix again (a rejected step or a retry
// after a singular matrix recomputes them from the same inputs), and a singular matrix (any
// warp's flag) halves H for the next pass, at most 5 times in a row, as ros_PrepareMatrix does.
// A cell that is done stores its record and its lane takes the next cell of the chunk's hand-out
// order (the lane kernel's refill, radm2sorg_lane_gpu.cu).
//
// It reads and writes the same cell records as the other two kernels (radm2sorg_gpu.cu) and
// gives the same bits: its statements are the generated code's, in an order that respects every
// dependency. Compiled twice (WRFGPU_MODE_NS = strict, fast).
#define WRFGPU_KPP_SPLIT __host__ __device__ __forceinline__
#include <algorithm>
#include <cstdio>
#include "config.h"
#include "cuda_util.h"
#include "errors.h"
#include "generated/radm2sorg_split.h"
#include "radm2sorg_lane.h"

namespace wrfgpu {
namespace radm2sorg {
namespace WRFGPU_MODE_NS {

namespace {

namespace sp = mech::split;
constexpr int kThreads = sp::WARPS * 32;
constexpr unsigned long long kNone = ~0ull;  // a lane without a cell
// Dynamic shared memory: the published entries, then the rate constants ([value][lane]).
constexpr std::size_t kSmemBytes = (std::size_t)(sp::SLOTS + mech::NREACT) * 32 * sizeof(double);
// A cell's record and its Y over a lane's WARPS threads, values per thread
constexpr int kRecordPerThread = (kCellVals + sp::WARPS - 1) / sp::WARPS;
constexpr int kYPerThread = (mech::NVAR + sp::WARPS - 1) / sp::WARPS;

// The block's integrator state, one entry per lane (warp 0 writes it; every warp reads it
// after a barrier).
struct SplitControl {
  kpp::RosLane lane[32];
  kpp::SplitScalars sc[32];       // the next attempt's scalars
  unsigned long long cell[32];    // the lane's cell, kNone when it has none
  unsigned long long old_cell[32];  // a lane whose cell is done: that cell (its record is stored)
  int nsing[32];                  // singular matrices in a row (ros_PrepareMatrix: at most 5)
  int sing[sp::WARPS][32];        // each warp's singular flags of the attempt
  int fresh[32], accepted[32], done[32];
  int quit;
};

// The scalars of the attempt from the lane's H, as ros_attempt computes them.
__device__ kpp::SplitScalars split_scalars(const kpp::RosLane& L, const kpp::RosCoeffs& r,
                                           const kpp::RosControl& ctl) {
  kpp::SplitScalars s;
  s.ghinv = 1.0 / ((double)L.direction * L.H * r.Gamma[0]);  // ros_PrepareMatrix
  s.a10 = r.A[0];
  s.hc10 = r.C[0] / ((double)L.direction * L.H);  // HC(j) = C(j)/(direction*H)
  s.hc20 = r.C[1] / ((double)L.direction * L.H);
  s.hc21 = r.C[2] / ((double)L.direction * L.H);
  s.m0 = r.M[0], s.m1 = r.M[1], s.m2 = r.M[2];
  s.e0 = r.E[0], s.e1 = r.E[1], s.e2 = r.E[2];
  s.atol = ctl.atol, s.rtol = ctl.rtol;
  return s;
}

// Warp 0: lanes without a cell take the next ones (one atomic for all of them) and begin them;
// the next attempt's scalars for every lane with a cell; quit when no lane has one.
__device__ __forceinline__ void hand_out(SplitControl& sh, const kpp::RosCoeffs& coef,
                                         const kpp::RosControl& ctl, double time_end, std::size_t ncell,
                                         int* stats, unsigned long long* next, const unsigned* order,
                                         int lane, unsigned long long& cell, bool& more) {
  int fresh = 0;
  while (more) {
    unsigned long long k;
    if (!take_positions(cell == kNone, next, ncell, more, k)) break;
    if (k >= ncell) continue;
    const std::size_t c = order ? order[k] : k;  // longest expected first
    kpp::RosLane L;
    if (kpp::ros_start(ctl, 0.0, time_end, L) == 0) {
      cell = c;
      fresh = 1;
      sh.lane[lane] = L;
      sh.nsing[lane] = 0;
    } else {
      store_stats(stats, ncell, c, L.st);  // nothing to integrate, or bad controls: Y as given
    }
  }
  sh.cell[lane] = cell;
  sh.fresh[lane] = fresh;
  if (cell != kNone) sh.sc[lane] = split_scalars(sh.lane[lane], coef, ctl);
  const bool any = __any_sync(0xffffffffu, cell != kNone);
  if (lane == 0) sh.quit = !any;
}

// All warps, each thread its lane's values warp, warp + WARPS, ...: a lane whose attempt was
// accepted copies Ynew to Y; a lane whose cell is done stores Y into that cell's record; a lane
// given a new cell loads its record (Y and FIX into the vectors, RCONST into shared memory). All
// loads first (gv and r carry no __restrict__, so a load after a store would wait for it); a
// thread reads a value before it overwrites it.
__device__ __forceinline__ void move_records(const SplitControl& sh, double* cells, double* gv, double* r,
                                             int warp, int lane) {
  const bool acc = sh.accepted[lane], dn = sh.done[lane], fr = sh.fresh[lane];
  if (!(acc || dn || fr)) return;
  const int from = acc ? sp::OFF_YNEW : sp::OFF_Y;
  double* out = dn ? cells + sh.old_cell[lane] * kCellVals : nullptr;
  const double* in = fr ? cells + sh.cell[lane] * kCellVals : nullptr;
  double y[kYPerThread], v[kRecordPerThread];
#pragma unroll
  for (int j = 0; j < kYPerThread; ++j) {
    const int i = warp + j * sp::WARPS;
    y[j] = i < mech::NVAR ? gv[(from + i) * 32 + lane] : 0.0;
  }
#pragma unroll
  for (int j = 0; j < kRecordPerThread; ++j) {
    const int i = warp + j * sp::WARPS;
    v[j] = in && i < kCellVals ? in[i] : 0.0;
  }
#pragma unroll
  for (int j = 0; j < kYPerThread; ++j) {
    const int i = warp + j * sp::WARPS;
    if (i < mech::NVAR) {
      if (out) out[i] = y[j];
      if (!in) gv[(sp::OFF_Y + i) * 32 + lane] = y[j];
    }
  }
  if (in) {
#pragma unroll
    for (int j = 0; j < kRecordPerThread; ++j) {
      const int i = warp + j * sp::WARPS;
      if (i < mech::NVAR + mech::NFIX)
        gv[(sp::OFF_Y + i) * 32 + lane] = v[j];
      else if (i < kCellVals)
        r[(i - mech::NVAR - mech::NFIX) * 32 + lane] = v[j];
    }
  }
}

// One block per SM: the step keeps each warp's rows in its registers (255 per thread).
__global__ void __launch_bounds__(kThreads, 1)
    radm2sorg_split_kernel(CellOptions opt, std::size_t ncell, double* __restrict__ cells,
                           int* __restrict__ stats, unsigned long long* __restrict__ next,
                           const unsigned* __restrict__ order, double* scratch,
                           unsigned long long* __restrict__ retries) {
  extern __shared__ double split_smem[];
  double* pub = split_smem;
  double* r = pub + sp::SLOTS * 32;
  __shared__ SplitControl sh;
  __shared__ kpp::RosCoeffs coef;
  const int lane = (int)(threadIdx.x & 31u), warp = (int)(threadIdx.x >> 5);
  double* gv = scratch + (std::size_t)blockIdx.x * sp::NGV * 32;  // [value][lane]
  double time_end;
  const kpp::RosControl ctl = cell_controls(opt, time_end);

  // Lanes without a cell run the step on what they hold: zeros at first (never read back).
  for (int i = threadIdx.x; i < sp::NGV * 32; i += kThreads) gv[i] = 0.0;
  for (int i = threadIdx.x; i < (sp::SLOTS + mech::NREACT) * 32; i += kThreads) split_smem[i] = 0.0;
  if (warp == 0) {
    if (lane == 0) coef = kpp::ros_coeffs(ctl.method);
    __syncwarp();  // warp 0 reads coef here and in hand_out; the other warps after a barrier
    sh.cell[lane] = kNone;
    sh.nsing[lane] = 0;
    // A lane that never gets a cell (a call of fewer cells than the launch has lanes) runs the
    // step on zeros. Zero scalars would make its pivots 0, which split_rcp flags, and its block
    // would run every attempt twice; the scalars of H = 1 give nonzero pivots and error scales.
    // Nothing of that lane is read back.
    kpp::RosLane idle;
    idle.H = 1.0;
    sh.sc[lane] = split_scalars(idle, coef, ctl);
  }
  unsigned long long cell = kNone;  // warp 0: its lane's cell
  bool more = true;                 // warp 0: the counter has cells left
  // A pass: the attempt (all warps); warp 0's bookkeeping, then its hand-out to the lanes whose
  // cell is done and the next attempt's scalars; the records moved (all warps). Three barriers
  // a pass: the hand-out and the new records in phases of their own cost two more, and 1.11x
  // at 28,899 warm cells (docs/radm2sorg.md, "Bookkeeping and hand-out in one phase").
  if (warp == 0) {
    sh.accepted[lane] = sh.done[lane] = 0;
    hand_out(sh, coef, ctl, time_end, ncell, stats, next, order, lane, cell, more);
  }
  __syncthreads();
  move_records(sh, cells, gv, r, warp, lane);
  __syncthreads();
  while (!sh.quit) {
    // The attempt, all warps (it ends with a barrier). Divisions on their fast path only; if a
    // lane of the block had one the fast path does not cover, the attempt again with the plain
    // division, from the same inputs (the step does not write Y, FIX or the rate constants).
    {
      const kpp::SplitScalars sc = sh.sc[lane];
      int f = mech::split_step<double, false>(pub, r, gv, warp, lane, sc);
      if (__syncthreads_or(f & kpp::SPLIT_INEXACT)) {
        if (threadIdx.x == 0) atomicAdd(retries, 1ull);
        f = mech::split_step<double, true>(pub, r, gv, warp, lane, sc);
      }
      sh.sing[warp][lane] = f & kpp::SPLIT_SINGULAR;
    }
    __syncthreads();
    // Warp 0: ros_attempt's bookkeeping and step-size control; then the hand-out to lanes whose
    // cell is done, and the next attempt's scalars.
    if (warp == 0) {
      int accepted = 0, done = 0;
      if (cell != kNone) {
        kpp::RosLane& L = sh.lane[lane];
        kpp::RosStats& st = L.st;
        if (L.new_step) {  // Fcn0 and Jac0 at Y
          st.nfun++;
          st.njac++;
          L.new_step = false;
        }
        st.ndec++;
        int sing = 0;
        for (int w = 0; w < sp::WARPS; ++w) sing |= sh.sing[w][lane];
        int status = 0;
        if (sing) {  // ros_PrepareMatrix: H halved, at most 5 times in a row
          st.nsng++;
          if (++sh.nsing[lane] <= 5) {
            L.H = L.H * 0.5;
          } else {
            st.texit = L.T_;
            status = st.status = -8;
          }
        } else {
          sh.nsing[lane] = 0;
          st.nfun++;     // the second stage's fun(Ynew)
          st.nsol += 3;  // the three stages' solves
          const double err = sqrt(gv[sp::OFF_ERRSUM * 32 + lane] / (double)mech::NVAR);  // ros_ErrorNorm
          if (kpp::ros_step_control(err, coef.ELO, L.o, L.direction, L.T_, L.H, L.reject_last,
                                    L.reject_more, st)) {
            accepted = 1;
            status = kpp::ros_begin_step(L);
          }
        }
        if (status != 0) {
          done = 1;
          store_stats(stats, ncell, cell, st);
          sh.old_cell[lane] = cell;
          cell = kNone;
        }
      }
      sh.accepted[lane] = accepted;
      sh.done[lane] = done;
      hand_out(sh, coef, ctl, time_end, ncell, stats, next, order, lane, cell, more);
    }
    __syncthreads();
    move_records(sh, cells, gv, r, warp, lane);
    __syncthreads();
  }
}

struct SplitLaunch {
  int dev = -1;
  int nsm = 0;
};
const SplitLaunch& split_launch() {
  static SplitLaunch c;
  int dev;
  WRFGPU_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev == c.dev) return c;
  c = SplitLaunch();
  int optin = 0, per_sm = 0;
  WRFGPU_CUDA_CHECK(cudaDeviceGetAttribute(&c.nsm, cudaDevAttrMultiProcessorCount, dev));
  WRFGPU_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  const std::size_t need = kSmemBytes + sizeof(SplitControl) + sizeof(kpp::RosCoeffs);
  if ((std::size_t)optin < need)
    throw RuntimeError("radm2sorg: the split kernel needs " + std::to_string(need) +
                       " bytes of shared memory per block, this GPU gives " + std::to_string(optin));
  WRFGPU_CUDA_CHECK(cudaFuncSetAttribute(radm2sorg_split_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kSmemBytes));
  WRFGPU_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, radm2sorg_split_kernel,
                                                                  kThreads, kSmemBytes));
  if (per_sm < 1) throw RuntimeError("radm2sorg: the split kernel does not fit on this GPU");
  if (config::flag("WRFGPU_RADM2SORG_VERBOSE").value_or(false)) {
    cudaFuncAttributes fa;
    WRFGPU_CUDA_CHECK(cudaFuncGetAttributes(&fa, radm2sorg_split_kernel));
    std::fprintf(stderr, "radm2sorg split kernel: %d threads per block, %d registers, %zu B local, %zu B shared\n",
                 kThreads, fa.numRegs, (std::size_t)fa.localSizeBytes, kSmemBytes + fa.sharedSizeBytes);
  }
  c.dev = dev;
  return c;
}

}  // namespace

bool split_supports(const CellOptions& opt, bool use_float) {
  return !use_float && opt.ctl.method == kpp::kRos3 && opt.ctl.autonomous;
}

int split_blocks(std::size_t ncell) {
  const SplitLaunch& c = split_launch();
  // at most a block per 32 cells (a cell per lane): small calls spread over more SMs
  const std::size_t want = (ncell + 31) / 32;
  return (int)std::max<std::size_t>(1, std::min<std::size_t>((std::size_t)c.nsm, want));
}

std::size_t split_scratch_values(int blocks) { return (std::size_t)blocks * sp::NGV * 32; }

void launch_split(const CellOptions& opt, std::size_t ncell, double* cells, int* stats,
                  unsigned long long* next, const unsigned* order, double* scratch, int blocks,
                  unsigned long long* retries, cudaStream_t st) {
  split_launch();
  radm2sorg_split_kernel<<<blocks, kThreads, kSmemBytes, st>>>(opt, ncell, cells, stats, next, order, scratch,
                                                               retries);
  WRFGPU_CUDA_CHECK_LAUNCH("radm2sorg_split_kernel");
}

}  // namespace WRFGPU_MODE_NS
}  // namespace radm2sorg
}  // namespace wrfgpu
