// wsm5_gpu.cu - CUDA backend of WSM5: the phases of wsm5_column (wsm5_physics.h) as kernels,
// one thread per cell (i,k) for the cell-local phases and one thread per column (and species)
// for the semi-Lagrangian sedimentation; column scratch in global memory laid out
// column-innermost (coalesced). A first version ran the whole column in one thread: 168
// registers with spills, 3 blocks per SM, and every level's scratch a dependent global load.
//
// Data flow per call (the staged pipeline, staged_call.h, does the order, the waits and the
// timing): the tile is split into j-slabs, each on one of a few streams. Each of the caller's
// arrays that is page-locked (Options::direct_locked, and the array registered or allocated
// page-locked) has a slab's tile rows copied straight between it and the device with strided
// copies: no packing, no staging. The others (pageable) the host packs, a slab's tile values,
// into page-locked staging laid out like the device block, copied in with one copy per run of
// neighbouring staged fields, and unpacks after the D2H copies; slab s+1 is packed and copied while slab s
// computes, and slab s is unpacked while slab s+1 is in flight. On the device the slab runs
// the phases of wsm5_column as kernels, then (if asked) refl10cm_wsm5 and effectRad_wsm5 in a
// per-column kernel. Only tile values are written back: nothing outside its:ite, kts:kte,
// jts:jte. Device and pinned buffers are allocated once and grow only when a larger tile
// arrives. Compiled twice (-DWRFGPU_MODE_NS=strict|fast).
#if defined(__CUDACC__)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_pipeline.h>

#include "config.h"
#include "cuda_util.h"
#include "device.h"
#include "errors.h"
#include "staged_call.h"
#include "stream_copy.h"
#include "wsm5_backends.h"
#include "wsm5_physics.h"
#include "wsm5_radar.h"

namespace wrfgpu {
namespace wsm5 {
namespace WRFGPU_MODE_NS {

namespace {

// Layout of one slab block (floats), identical on host (pinned) and device:
//   3-D fields [f][jj][k][i], f = 0..9: th qv qc qr qi qs den pii p delz
//   2-D fields [g][jj][i],   g = 0..4: rain snow rainncv snowncv sr
//   3-D re fields [r][jj][k][i], r = 0..2: re_cloud re_ice re_snow (only when asked)
//   3-D refl_10cm [jj][k][i] (only when asked)
constexpr int kIn3 = 10, kOut3 = 6, k2d = 5, kRe3 = 3, kRefl3 = 1;

struct SlabGeom {
  int j0, nj;            // first tile row (0-based within the tile) and row count
  std::size_t offset;    // offset of the block in the pinned/device buffer (floats)
  std::size_t cells;     // ni*nk*nj
  std::size_t cols;      // ni*nj
  std::size_t size() const { return cells * kIn3 + cols * k2d + cells * (kRe3 + kRefl3); }
  std::size_t re_offset() const { return cells * kIn3 + cols * k2d; }
  std::size_t refl_offset() const { return re_offset() + cells * kRe3; }
};

// Device scratch of one slab: the 15 column arrays and two sets of nislfv arrays (rain and
// snow sediment at the same time), each (nk+1) levels of every column, column-innermost;
// then three per-column values carried between the phases (delqrs1, delqrs2, tstepsnow).
constexpr int kGpuScratchArrays = kScratchArrays + kNislfvArrays;
constexpr int kCarry2d = 3;

// Views of one column (i,jj) of a slab block and of the slab scratch; level k of a 3-D field
// is at + k*ni (block) or + k*ncols (scratch), so threads of consecutive i are coalesced.
struct SlabView {
  float* blk;
  float* scratch;
  int ni, nk, njs, has_snow;
  int scratch_arrays;  // arrays of nk+1 levels before the carries (kColumnArrays with teams)
  __device__ std::size_t cells() const { return (std::size_t)ni * nk * njs; }
  __device__ int ncols() const { return ni * njs; }
  __device__ ColumnArgs args(int i, int jj) const {
    const std::size_t cl = cells();
    const int nc = ncols(), col = jj * ni + i;
    float* base3 = blk + (std::size_t)jj * ni * nk + i;
    auto f3 = [&](int f) { return Col{base3 + (std::size_t)f * cl, (std::ptrdiff_t)ni}; };
    float* base2 = blk + (std::size_t)kIn3 * cl + col;
    auto f2 = [&](int g) { return base2 + (std::size_t)g * nc; };
    ColumnArgs a;
    a.th = f3(0); a.q = f3(1); a.qc = f3(2); a.qr = f3(3); a.qi = f3(4); a.qs = f3(5);
    const Col den = f3(6), pii = f3(7), p = f3(8), dz = f3(9);
    a.den = CCol{den.p, den.s}; a.pii = CCol{pii.p, pii.s}; a.p = CCol{p.p, p.s};
    a.delz = CCol{dz.p, dz.s};
    a.rain = f2(0);
    a.snow = has_snow ? f2(1) : nullptr;
    a.rainncv = f2(2);
    a.snowncv = has_snow ? f2(3) : nullptr;
    a.sr = f2(4);
    return a;
  }
  __device__ ColumnScratch scr(int i, int jj) const {
    const int nc = ncols();
    return column_scratch(scratch + jj * ni + i, (std::ptrdiff_t)nc, (std::ptrdiff_t)(nk + 1) * nc);
  }
  // The second nislfv set (snow), after the kScratchArrays of column_scratch.
  __device__ NislfvScratch nis2(int i, int jj) const {
    const int nc = ncols();
    const std::ptrdiff_t pitch = (std::ptrdiff_t)(nk + 1) * nc;
    return nislfv_scratch(scratch + (std::ptrdiff_t)kScratchArrays * pitch + jj * ni + i,
                          (std::ptrdiff_t)nc, pitch);
  }
  __device__ float* carry(int which) const {
    return scratch + (std::size_t)scratch_arrays * (nk + 1) * ncols() +
           (std::size_t)which * ncols();
  }
};

// Thread -> cell (i,k,jj) of the slab, i fastest (the block layout [jj][k][i]).
// Slabs below 2^31 cells (all real ones) use 32-bit division, which the GPU does in a few
// instructions; 64-bit division is a long software routine.
__device__ bool cell_of(const SlabView& v, int& i, int& k, int& jj) {
  const long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (long)v.cells()) return false;
  if (v.cells() < (1ul << 31)) {
    const unsigned u = (unsigned)idx, r = u / (unsigned)v.ni;
    i = (int)(u - r * (unsigned)v.ni);
    k = (int)(r % (unsigned)v.nk);
    jj = (int)(r / (unsigned)v.nk);
    return true;
  }
  i = (int)(idx % v.ni);
  const long r = idx / v.ni;
  k = (int)(r % v.nk);
  jj = (int)(r / v.nk);
  return true;
}

// Minor loop phase 1 (wsm5_fallspeed_cell); on the first loop also the "begin" phase.
// fall_speeds 0 (the team sedimentation): saturation only; the team kernel computes the rain
// and snow fall speeds and den*q of its column (fall_speed_of), where they are used.
__global__ void __launch_bounds__(256) wsm5_fallspeed_kernel(Constants c, SlabView v, int first,
                                                             int fall_speeds) {
  int i, k, jj;
  if (!cell_of(v, i, k, jj)) return;
  const ColumnArgs a = v.args(i, jj);
  const ColumnScratch s = v.scr(i, jj);
  if (first) {
    wsm5_begin_fallspeed_cell(c, a, s, k, fall_speeds != 0);
    if (k == 0) wsm5_begin_column(a, v.carry(2) + jj * v.ni + i);
  } else {
    wsm5_fallspeed_cell(c, a, s, k, fall_speeds != 0);
  }
}

// Phase 2: one thread per column and species; rain threads first, then snow threads (the
// column in one thread, its nislfv scratch in global memory): the fallback of the team kernels
// below when their shared scratch does not fit (team_launch), and gpu_sediment_team = 1.
// These kernels are latency-bound (a serial loop per column): at 6 blocks of 128 per SM (80
// registers, a few spills) they ran faster than at 3 (164 registers, no spills): CONUS on an
// H100, 2.18 vs 2.79 ms for all WSM5 kernels (docs/performance.md).
#ifndef WRFGPU_WSM5_SED_MINB
#define WRFGPU_WSM5_SED_MINB 6
#endif
__global__ void __launch_bounds__(128, WRFGPU_WSM5_SED_MINB) wsm5_sediment_rs_kernel(Constants c, SlabView v, float dtcld) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int nc = v.ncols();
  if (t >= 2 * nc) return;
  const int species = t / nc, col = t % nc;
  const int i = col % v.ni, jj = col / v.ni;
  const ColumnScratch s = v.scr(i, jj);
  const NislfvScratch nis = species == 0 ? s.nis : v.nis2(i, jj);
  v.carry(species)[col] =
      wsm5_sediment_rain_snow_column(c, v.nk, dtcld, v.args(i, jj), s, nis, species);
}

// Phase 4: one thread per column (the fallback, as phase 2).
__global__ void __launch_bounds__(128, WRFGPU_WSM5_SED_MINB) wsm5_sediment_ice_kernel(Constants c, SlabView v, float dtcld) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= v.ncols()) return;
  const int i = col % v.ni, jj = col / v.ni;
  const ColumnScratch s = v.scr(i, jj);
  wsm5_sediment_ice_column(c, v.nk, dtcld, v.args(i, jj), s, s.nis, v.carry(0)[col],
                           v.carry(1)[col], v.carry(2) + col);
}

// The default sedimentation: a team of lanes of one warp per column (and species). The
// per-level work of nislfv_rain_plm (fall speeds with their powf, arrival points, edge values,
// the remap integrals) is spread over the team's lanes, its recurrences run on lane 0, and the
// nislfv scratch lives in shared memory. A dry column costs its team one sum; one thread per
// column left most lanes of a warp waiting for its wettest column (24% of warps active).
// Same functions as the CPU (wsm5_physics.h, SerialTeam there), same bits.
struct WarpTeam {
  int lane, n;
  unsigned mask;
  __device__ int rank() const { return lane; }
  __device__ int size() const { return n; }
  __device__ void sync() const { __syncwarp(mask); }
};
// This thread's team (teams of n lanes, n divides 32, never straddle a warp), the team's index
// among all teams of the launch, and its scratch in the block's shared memory: the nislfv
// arrays, then kStageArrays arrays of column inputs staged from global memory.
constexpr int kStageArrays = 4;
constexpr int kTeamArrays = kNislfvArrays + kStageArrays;
// Floats of one team's scratch, padded so that the teams of a warp start n banks apart: their
// lanes, at the same level, then hit different shared-memory banks.
__host__ __device__ int team_floats(int n, int nk) {
  const int f = kTeamArrays * (nk + 1);
  return f + ((n % 32) - f % 32 + 32) % 32;
}
struct TeamThread {
  WarpTeam tm;
  long team;
  NislfvScratch nis;
  float* stage;  // kStageArrays arrays of nk+1 floats
};
__device__ TeamThread team_thread(int n, int nk) {
  extern __shared__ float smem[];
  const int wl = threadIdx.x & 31, lane = wl % n;
  const unsigned ones = n == 32 ? 0xffffffffu : ((1u << n) - 1u);
  TeamThread t;
  t.tm = WarpTeam{lane, n, ones << (wl - lane)};
  t.team = ((long)blockIdx.x * blockDim.x + threadIdx.x) / n;
  float* mine = smem + (std::ptrdiff_t)(threadIdx.x / n) * team_floats(n, nk);
  t.nis = nislfv_scratch(mine, 1, nk + 1);
  t.stage = mine + (std::ptrdiff_t)kNislfvArrays * (nk + 1);
  return t;
}

// Column inputs of the sedimentation staged in shared memory before nislfv_rain_plm runs: the
// mixing ratio (rain and snow) or den*q (ice) in dq, den and dz; w holds the fall speeds the
// rain and snow teams compute. The team copies each array at once; nislfv_rain_plm's loops
// would load them level by level (member 0's interface heights waited on dz four levels at a
// time, every division by dz on its load). The views then point at shared memory
// unconditionally, so the compiler emits shared-memory accesses for them.
struct Staged {
  Col dq, den, dz, w;
};
__device__ Staged staged_arrays(float* base, int nk) {
  const std::ptrdiff_t pitch = nk + 1;
  return Staged{Col{base, 1}, Col{base + pitch, 1}, Col{base + 2 * pitch, 1},
                Col{base + 3 * pitch, 1}};
}
// The copies are asynchronous (cp.async): every level's load is in flight at once. A plain
// copy loop waits for each load before its store, as the compiler cannot tell the shared
// scratch from the global arrays (both are reached through the same generic pointers).
__device__ void stage_async(const WarpTeam& tm, int nk, Col dst, CCol src) {
  for (int k = tm.rank(); k < nk; k += tm.size())
    __pipeline_memcpy_async(&dst[k], &src[k], sizeof(float));
}
__device__ void stage_wait(const WarpTeam& tm) {
  __pipeline_commit();
  __pipeline_wait_prior(0);
  tm.sync();  // the other members' copies too
}
__device__ void stage_column(const WarpTeam& tm, int nk, const Staged& st, Col q, CCol den,
                             CCol dz) {
  stage_async(tm, nk, st.dq, CCol{q.p, q.s});
  stage_async(tm, nk, st.den, den);
  stage_async(tm, nk, st.dz, dz);
  stage_wait(tm);
}

__global__ void __launch_bounds__(128) wsm5_sediment_rs_team_kernel(Constants c, SlabView v,
                                                                    float dtcld, int n) {
  const TeamThread t = team_thread(n, v.nk);
  const int nc = v.ncols();
  if (t.team >= 2L * nc) return;  // the whole team
  const int species = (int)(t.team / nc), col = (int)(t.team % nc);
  const int i = col % v.ni, jj = col / v.ni;
  ColumnArgs a = v.args(i, jj);
  ColumnScratch s = v.scr(i, jj);
  const Staged st = staged_arrays(t.stage, v.nk);
  // q, then the fall speed (workr/works) and den*q (denqr/denqs) of each level, as the
  // fallspeed phase computes them (fallspeed_values), here where they are used: they live in
  // shared memory only, as nothing after the sedimentation reads them. The fall speed needs
  // denfac (and t for snow) only where there is rain or snow.
  stage_column(t.tm, v.nk, st, species == 0 ? a.qr : a.qs, a.den, a.delz);
  for (int k = t.tm.rank(); k < v.nk; k += t.tm.size()) {
    const float q = st.dq[k], den = st.den[k];
    st.w[k] = q <= 0.0f ? 0.0f : fall_speed_of(c, species, q, den, s.denfac[k], s.t[k]);
    st.dq[k] = den * q;
  }
  t.tm.sync();
  s.denqr = st.dq; s.denqs = st.dq;
  s.workr = st.w; s.works = st.w;
  a.den = CCol{st.den.p, 1}; a.delz = CCol{st.dz.p, 1};
  const float delq = wsm5_sediment_rain_snow_column(t.tm, c, v.nk, dtcld, a, s, t.nis, species);
  if (t.tm.rank() == 0) v.carry(species)[col] = delq;
}

__global__ void __launch_bounds__(128) wsm5_sediment_ice_team_kernel(Constants c, SlabView v,
                                                                     float dtcld, int n) {
  const TeamThread t = team_thread(n, v.nk);
  if (t.team >= v.ncols()) return;
  const int col = (int)t.team, i = col % v.ni, jj = col / v.ni;
  ColumnArgs a = v.args(i, jj);
  ColumnScratch s = v.scr(i, jj);
  const Staged st = staged_arrays(t.stage, v.nk);
  stage_column(t.tm, v.nk, st, s.denqi, a.den, a.delz);
  s.denqi = st.dq;
  a.den = CCol{st.den.p, 1}; a.delz = CCol{st.dz.p, 1};
  wsm5_sediment_ice_column(t.tm, c, v.nk, dtcld, a, s, t.nis, v.carry(0)[col], v.carry(1)[col],
                           v.carry(2) + col);
}

// Launch shape of the team kernels: 128 threads per block, fewer when the teams' scratch
// (team_floats each) would not fit in shared memory.
constexpr int kDefaultSedimentTeam = 8;
struct TeamLaunch {
  int team = 1;            // lanes per column; 1: the one-thread kernels
  int threads = 128;       // per block
  std::size_t smem = 0;    // bytes per block
};
TeamLaunch team_launch(int team, int nk) {
  TeamLaunch t;
  if (team <= 1) return t;
  const std::size_t per_team = sizeof(float) * team_floats(team, nk);
  const std::size_t limit = 200 * 1024;  // below the 227 KB an sm_80/sm_90 block may opt in to
  int teams = 128 / team;
  while (teams > 1 && per_team * teams > limit) teams /= 2;
  if (per_team * teams > limit) return t;  // thousands of levels: one thread per column
  t.team = team;
  t.threads = teams * team;
  t.smem = per_team * teams;
  static std::size_t opted = 0;  // opt in to more than 48 KB once per size
  if (t.smem > 48 * 1024 && t.smem > opted) {
    WRFGPU_CUDA_CHECK(cudaFuncSetAttribute(wsm5_sediment_rs_team_kernel,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)t.smem));
    WRFGPU_CUDA_CHECK(cudaFuncSetAttribute(wsm5_sediment_ice_team_kernel,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)t.smem));
    opted = t.smem;
  }
  return t;
}

// Phase 3 (wsm5_melt_cell).
__global__ void __launch_bounds__(256) wsm5_melt_kernel(Constants c, SlabView v, float dtcld) {
  int i, k, jj;
  if (!cell_of(v, i, k, jj)) return;
  wsm5_melt_cell(c, dtcld, v.args(i, jj), v.scr(i, jj), k);
}

// Phase 5 (wsm5_local_cell).
__global__ void __launch_bounds__(256) wsm5_local_kernel(Constants c, SlabView v, float dtcld, int last) {
  int i, k, jj;
  if (!cell_of(v, i, k, jj)) return;
  wsm5_local_cell(c, dtcld, v.args(i, jj), v.scr(i, jj), k, last != 0);
}

// Diagnostics after the update, one thread per column: refl10cm_wsm5 (wsm5 l.198-216; per-level
// double work arrays column-innermost) and effectRad_wsm5 (l.219-238).
__global__ void __launch_bounds__(128)
wsm5_diag_kernel(Constants c, RadarTables rt, SlabView v, double* rwork, int do_re, int do_refl) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int ncols = v.ncols();
  if (col >= ncols) return;
  const int i = col % v.ni, jj = col / v.ni;
  const std::size_t cells = v.cells();
  const std::ptrdiff_t ks = v.ni;
  const ColumnArgs a = v.args(i, jj);
  float* const base_re = v.blk + (std::size_t)kIn3 * cells + (std::size_t)k2d * ncols;
  if (do_refl) {
    float* fbase = base_re + (std::size_t)kRe3 * cells + (std::size_t)jj * v.ni * v.nk + i;
    const ReflArgs r{CCol{a.th.p, ks}, a.pii, a.p, CCol{a.q.p, ks}, CCol{a.qr.p, ks},
                     CCol{a.qs.p, ks}, Col{fbase, ks}};
    refl10cm_column(c, rt, v.nk, r, rwork + col, (std::ptrdiff_t)ncols,
                    (std::ptrdiff_t)v.nk * ncols);
  }
  if (do_re) {
    float* rbase = base_re + (std::size_t)jj * v.ni * v.nk + i;
    EffRadArgs e{CCol{a.th.p, ks}, a.pii, CCol{a.qc.p, ks},
                 CCol{a.qi.p, ks}, CCol{a.qs.p, ks}, a.den,
                 Col{rbase, ks}, Col{rbase + cells, ks}, Col{rbase + 2 * cells, ks}};
    effect_rad_column(c, v.nk, e);
  }
}

// Input check on the device: NaN/Inf in the 10 3-D inputs and values not > 0
// in th, den, pii, p, delz, as scan_fields3 does on the host; per field the smallest tile
// index (i fastest, then k, then j) of a bad cell.
__global__ void __launch_bounds__(256)
wsm5_check_kernel(SlabView v, int j0, unsigned long long* first_bad) {
  int i, k, jj;
  if (!cell_of(v, i, k, jj)) return;
  const std::size_t cells = v.cells();
  const std::size_t at = ((std::size_t)jj * v.nk + k) * v.ni + i;
  const unsigned long long lin = ((unsigned long long)(j0 + jj) * v.nk + k) * v.ni + i;
  for (int f = 0; f < kIn3; ++f) {
    const float x = v.blk[(std::size_t)f * cells + at];
    const bool positive = f == 0 || f >= 6;  // th, den, pii, p, delz (kField3Positive)
    const bool bad = !isfinite(x) || (positive && !(x > 0.f));
    if (bad) atomicMin(first_bad + f, lin);
  }
}

// WSM5 on one slab: the phases of wsm5_column, in WRF's order, as kernels on one stream.
void launch_slab(const Constants& c, const RadarTables& rt, const SlabView& v, float delt,
                 double* rwork, bool do_re, bool do_refl, const TeamLaunch& tl, cudaStream_t st) {
  const long cells = (long)v.ni * v.nk * v.njs, cols = (long)v.ni * v.njs;
  const int tc = 256, ts = 128;
  const unsigned bc = (unsigned)((cells + tc - 1) / tc);
  const unsigned bs = (unsigned)((cols + ts - 1) / ts);
  // sedimentation: 2*cols (rain, snow) and cols (ice) columns, one thread or one team each
  const long lanes = (long)tl.team, per_block = tl.threads;
  const unsigned bs2 = (unsigned)((2 * cols * lanes + per_block - 1) / per_block);
  const unsigned bs1 = (unsigned)((cols * lanes + per_block - 1) / per_block);
  const int loops = minor_loops(delt);
  const float dtcld = minor_dt(delt);
  for (int loop = 1; loop <= loops; ++loop) {
    wsm5_fallspeed_kernel<<<bc, tc, 0, st>>>(c, v, loop == 1 ? 1 : 0, tl.team > 1 ? 0 : 1);
    WRFGPU_CUDA_CHECK_LAUNCH("wsm5_fallspeed_kernel");
    if (tl.team > 1) {
      wsm5_sediment_rs_team_kernel<<<bs2, tl.threads, tl.smem, st>>>(c, v, dtcld, tl.team);
      WRFGPU_CUDA_CHECK_LAUNCH("wsm5_sediment_rs_team_kernel");
    } else {
      wsm5_sediment_rs_kernel<<<bs2, ts, 0, st>>>(c, v, dtcld);
      WRFGPU_CUDA_CHECK_LAUNCH("wsm5_sediment_rs_kernel");
    }
    wsm5_melt_kernel<<<bc, tc, 0, st>>>(c, v, dtcld);
    WRFGPU_CUDA_CHECK_LAUNCH("wsm5_melt_kernel");
    if (tl.team > 1) {
      wsm5_sediment_ice_team_kernel<<<bs1, tl.threads, tl.smem, st>>>(c, v, dtcld, tl.team);
      WRFGPU_CUDA_CHECK_LAUNCH("wsm5_sediment_ice_team_kernel");
    } else {
      wsm5_sediment_ice_kernel<<<bs1, ts, 0, st>>>(c, v, dtcld);
      WRFGPU_CUDA_CHECK_LAUNCH("wsm5_sediment_ice_kernel");
    }
    wsm5_local_kernel<<<bc, tc, 0, st>>>(c, v, dtcld, loop == loops ? 1 : 0);
    WRFGPU_CUDA_CHECK_LAUNCH("wsm5_local_kernel");
  }
  if (do_re || do_refl) {
    wsm5_diag_kernel<<<bs, ts, 0, st>>>(c, rt, v, rwork, do_re ? 1 : 0, do_refl ? 1 : 0);
    WRFGPU_CUDA_CHECK_LAUNCH("wsm5_diag_kernel");
  }
}

// True when the tile of a caller's array lies in page-locked memory (cudaHostAlloc or
// cudaHostRegister): its first and last tile elements are both host-registered.
bool tile_locked(const float* base, std::size_t first, std::size_t last) {
  return base == nullptr || host_range_locked(base + first, base + last);
}

// Tile rows of slab rows j0..j0+nj-1 of a WRF (i,k,j) array <-> a dense [jj][k][i] device
// field, as one strided copy (no staging, nothing outside the tile touched).
void copy3d(const WrfDims& d, int j0, int nj, float* host, float* dev, bool to_device,
            cudaStream_t st) {
  copy_wrf_box(host, d, d.its, d.tile_ni(), d.kts, d.tile_nk(), d.jts + j0, nj, dev, to_device, st);
}
void copy2d(const WrfDims& d, int j0, int nj, float* host, float* dev, bool to_device,
            cudaStream_t st) {
  const int ni = d.tile_ni();
  float* h = host + d.idx2(d.its, d.jts + j0);
  if (to_device)
    WRFGPU_CUDA_CHECK(cudaMemcpy2DAsync(dev, sizeof(float) * ni, h, sizeof(float) * d.nx(),
                                        sizeof(float) * ni, nj, cudaMemcpyHostToDevice, st));
  else
    WRFGPU_CUDA_CHECK(cudaMemcpy2DAsync(h, sizeof(float) * d.nx(), dev, sizeof(float) * ni,
                                        sizeof(float) * ni, nj, cudaMemcpyDeviceToHost, st));
}

// Everything the backend keeps between calls (one per mode): its buffers and the pipeline,
// whose lock serialises the calls.
struct Context {
  StagedPipeline pipe{"wsm5"};
  DeviceBuffer<float> dev, scratch;
  DeviceBuffer<double> rwork;   // refl10cm work arrays (only when refl_10cm is asked)
  PinnedBuffer<float> pin;
  DeviceBuffer<unsigned long long> first_bad;  // per 3-D input: first bad cell (device check)
  std::size_t reserved = 0;     // bytes held by dev + scratch
  std::size_t reserved_rwork = 0;  // bytes held by rwork
};
Context& context() {
  static Context* c = new Context();  // never destroyed: CUDA may be gone at exit
  return *c;
}

}  // namespace

// WSM5 through the staged pipeline (staged_call.h): a chunk is a slab of tile rows; every
// slab has its own staging (Staging::PerCall), so WRF's arrays are written only after every
// slab's inputs were checked.
void run_gpu(const Constants& c, const WrfDims& d, float delt, const State& s,
             const Options& opt, Timing* timing) {
  const auto t0 = std::chrono::steady_clock::now();
  Context& ctx = context();
  const auto lock = ctx.pipe.lock();
  if (gpu_current() < 0) gpu_select(-1, 0);

  const int ni = d.tile_ni(), nk = d.tile_nk(), nj = d.tile_nj();
  const bool has_snow = s.snow != nullptr && s.snowncv != nullptr;
  const bool do_re = want_re(s, opt);
  const bool do_refl = want_refl(s, opt);
  // radar_init once on the host (cached); the kernel gets the tables by value
  const RadarTables rt = do_refl ? radar_tables(c) : RadarTables{};

  // Slabs: enough to overlap transfers with compute, each big enough to fill the GPU in the
  // column-parallel sedimentation phases (WRFGPU_WSM5_SLABS overrides, for tuning).
  int nslab = opt.gpu_slabs;
  if (nslab <= 0) nslab = config::integer("WRFGPU_WSM5_SLABS").value_or(0);
  if (nslab <= 0) nslab = std::max(1, std::min(nj, (ni * nj) / 32768));
  nslab = std::min(std::max(nslab, 1), nj);
  const int nstream = std::max(1, std::min(opt.gpu_streams > 0 ? opt.gpu_streams : 3, nslab));
  // Lanes per column in the sedimentation (WRFGPU_WSM5_TEAM overrides, for tuning).
  int team = opt.gpu_sediment_team;
  if (team <= 0)
    if (const auto e = config::choice("WRFGPU_WSM5_TEAM")) team = std::stoi(*e);
  if (team <= 0) team = kDefaultSedimentTeam;
  if (team != 1 && team != 2 && team != 4 && team != 8 && team != 16 && team != 32)
    throw RuntimeError("wsm5: sedimentation team of " + std::to_string(team) +
                       " lanes (gpu_sediment_team or WRFGPU_WSM5_TEAM): expected 1, 2, 4, 8, 16 or 32");
  const TeamLaunch tl = team_launch(team, nk);
  std::vector<SlabGeom> slabs(nslab);
  std::size_t total = 0, max_cols = 0;
  for (int q = 0; q < nslab; ++q) {
    SlabGeom& g = slabs[q];
    g.j0 = (int)((long)nj * q / nslab);
    g.nj = (int)((long)nj * (q + 1) / nslab) - g.j0;
    g.cells = (std::size_t)ni * nk * g.nj;
    g.cols = (std::size_t)ni * g.nj;
    g.offset = total;
    total += g.size();
    max_cols = std::max(max_cols, g.cols);
  }
  // The team kernels keep their nislfv scratch in shared memory: global scratch only for the
  // column arrays then (the one-thread kernels need their two nislfv sets after them).
  const int scratch_arrays = tl.team > 1 ? kColumnArrays : kGpuScratchArrays;
  const std::size_t scratch_per_stream =
      ((std::size_t)scratch_arrays * (nk + 1) + kCarry2d) * max_cols;
  const std::size_t rwork_per_stream = do_refl ? (std::size_t)kReflArrays * nk * max_cols : 0;
  const std::size_t need = sizeof(float) * (total + scratch_per_stream * nstream);
  if (need > ctx.reserved) {  // growing: make sure the device has room, with a clear error
    gpu_require_memory(need - ctx.reserved, "wsm5 device buffers");
    ctx.reserved = need;
  }
  const std::size_t rneed = sizeof(double) * rwork_per_stream * nstream;
  if (rneed > ctx.reserved_rwork) {
    gpu_require_memory(rneed - ctx.reserved_rwork, "wsm5 reflectivity work arrays");
    ctx.reserved_rwork = rneed;
  }
  float* dev = ctx.dev.reserve(total);
  float* scr = ctx.scratch.reserve(scratch_per_stream * nstream);
  double* rwk = do_refl ? ctx.rwork.reserve(rwork_per_stream * nstream) : nullptr;

  const float* in3[kIn3] = {s.th, s.qv, s.qc, s.qr, s.qi, s.qs, s.den, s.pii, s.p, s.delz};
  float* out3[kOut3] = {s.th, s.qv, s.qc, s.qr, s.qi, s.qs};
  float* out2[k2d] = {s.rain, has_snow ? s.snow : nullptr, s.rainncv, has_snow ? s.snowncv : nullptr, s.sr};
  float* re3[kRe3] = {s.re_cloud, s.re_ice, s.re_snow};

  // Each array on its own path: a page-locked one is copied straight between the caller's
  // memory and the device (strided copies of the tile rows, no packing); a pageable one is
  // packed into page-locked staging laid out like the device block, and copied from there.
  // Inside WRF, wrf_patch page-locks the grid state (moist, rho, rainnc, ...) and, with its
  // patch 0005, th_phy, pi_phy, p_phy and dz8w, which stock WRF allocates again at every step:
  // every array then goes straight. Without 0005 those four alone are staged.
  const std::size_t first3 = d.idx3(d.its, d.kts, d.jts), last3 = d.idx3(d.ite, d.kte, d.jte);
  const std::size_t first2 = d.idx2(d.its, d.jts), last2 = d.idx2(d.ite, d.jte);
  const auto t_lk = std::chrono::steady_clock::now();
  bool lk3[kIn3], lk2[k2d], lk_re[kRe3], lk_refl = true;  // straight (page-locked, or absent)
  for (int f = 0; f < kIn3; ++f) lk3[f] = opt.direct_locked && tile_locked(in3[f], first3, last3);
  for (int g = 0; g < k2d; ++g) lk2[g] = opt.direct_locked && tile_locked(out2[g], first2, last2);
  for (int r = 0; r < kRe3; ++r) lk_re[r] = !do_re || (opt.direct_locked && tile_locked(re3[r], first3, last3));
  if (do_refl) lk_refl = opt.direct_locked && tile_locked(s.refl_10cm, first3, last3);
  int staged_arrays = 0, staged_in3 = 0;
  for (int f = 0; f < kIn3; ++f) staged_in3 += lk3[f] ? 0 : 1;
  staged_arrays = staged_in3 + (lk_refl ? 0 : 1);
  for (int g = 0; g < k2d; ++g) staged_arrays += lk2[g] ? 0 : 1;
  for (int r = 0; r < kRe3; ++r) staged_arrays += lk_re[r] ? 0 : 1;
  const bool direct = staged_arrays == 0;
  const auto t_lk_end = std::chrono::steady_clock::now();
  if (timing) {
    timing->direct = direct;
    timing->staged_arrays = staged_arrays;
  }
  float* pin = direct ? nullptr : ctx.pin.reserve(total);  // staging, for pageable arrays only
  // Input scans (run() leaves the 3-D ones to this backend), always before anything is written
  // to the caller's arrays, so that on bad input they are still untouched:
  //  - page-locked arrays: on the device after the H2D copies (the pipeline's device check),
  //    before the D2H copies;
  //  - pageable arrays: on the host as they are packed, by the copy itself (copy_row_stream
  //    tests every value it moves; a field found bad is scanned again by scan_fields3 for the
  //    message). (A separate host scan before packing read every input twice: 4.1 ms of a
  //    13.0 ms CONUS call on an H100 host; a device scan made the first slab's results wait
  //    for the last slab's check.)
  const bool device_check = opt.validate && staged_in3 < kIn3;
  const bool host_check = opt.validate && staged_in3 > 0;
  unsigned long long* dbad = nullptr;
  unsigned long long bad[kIn3];
  if (device_check) {
    dbad = ctx.first_bad.reserve(kIn3);
    WRFGPU_CUDA_CHECK(cudaMemset(dbad, 0xff, sizeof(unsigned long long) * kIn3));  // none yet
  }

  ChunkPlan plan;
  plan.name = "wsm5";
  plan.chunks = nslab;
  plan.streams = nstream;
  plan.staging = Staging::PerCall;
  plan.device_check = device_check;
  ChunkSteps steps;
  auto view = [&](int q) {
    return SlabView{dev + slabs[q].offset, scr + (std::size_t)(q % nstream) * scratch_per_stream,
                    ni, nk, slabs[q].nj, has_snow ? 1 : 0, scratch_arrays};
  };
  // A slab's arrays in the order of its block: where each lies in the block, the caller's
  // array, and whether it is copied straight. Staged neighbours go in one copy.
  struct Piece {
    std::size_t off, n;
    float* host;
    bool is3d, straight;
  };
  struct Pieces {  // at most kIn3 + 2 in, kOut3 + k2d + kRe3 + kRefl3 out: no allocation per copy
    Piece p[kOut3 + k2d + kRe3 + kRefl3 > kIn3 + 2 ? kOut3 + k2d + kRe3 + kRefl3 : kIn3 + 2];
    int n = 0;
    void add(const Piece& x) { p[n++] = x; }
  };
  auto pieces = [&](const SlabGeom& g, bool in) {
    Pieces v;
    for (int f = 0; f < (in ? kIn3 : kOut3); ++f)
      v.add({f * g.cells, g.cells, const_cast<float*>(in3[f]), true, lk3[f]});
    for (int gg = 0; gg < (in ? 2 : k2d); ++gg)  // in: rain and snow; out: every 2-D output
      if (out2[gg] != nullptr) v.add({kIn3 * g.cells + gg * g.cols, g.cols, out2[gg], false, lk2[gg]});
    if (!in && do_re)
      for (int r = 0; r < kRe3; ++r) v.add({g.re_offset() + r * g.cells, g.cells, re3[r], true, lk_re[r]});
    if (!in && do_refl) v.add({g.refl_offset(), g.cells, s.refl_10cm, true, lk_refl});
    return v;
  };
  enum class Which { All, Straight, Staged };
  auto copy_pieces = [&](int q, bool in, cudaStream_t st, Which which) {
    const SlabGeom& g = slabs[q];
    float* dblk = dev + g.offset;
    const Pieces v = pieces(g, in);
    for (int a = 0; a < v.n;) {
      const Piece& x = v.p[a];
      if (which != Which::All && x.straight != (which == Which::Straight)) {
        ++a;
        continue;
      }
      if (x.straight) {
        if (x.is3d) copy3d(d, g.j0, g.nj, x.host, dblk + x.off, in, st);
        else copy2d(d, g.j0, g.nj, x.host, dblk + x.off, in, st);
        ++a;
        continue;
      }
      int b = a + 1;
      std::size_t end = x.off + x.n;
      for (; b < v.n && !v.p[b].straight && v.p[b].off == end; ++b) end += v.p[b].n;
      float* h = pin + g.offset + x.off;
      WRFGPU_CUDA_CHECK(cudaMemcpyAsync(in ? dblk + x.off : h, in ? h : dblk + x.off,
                                        sizeof(float) * (end - x.off),
                                        in ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, st));
      a = b;
    }
  };
  // Pageable arrays: the slab's tile values into the staging, with streaming stores
  // (stream_copy.h), testing each value for what scan_fields3 refuses (NaN/Inf; not > 0 in
  // th, den, pii, p, delz).
  steps.pack = [&](int q) {
    if (direct) return true;
    const SlabGeom& g = slabs[q];
    float* h = pin + g.offset;
    unsigned bad_fields = 0;
#pragma omp parallel reduction(| : bad_fields)
    {
#pragma omp for collapse(2) schedule(static) nowait
      for (int f = 0; f < kIn3; ++f)
        for (int jj = 0; jj < g.nj; ++jj) {
          if (lk3[f]) continue;
          for (int k = 0; k < nk; ++k) {
            float* to = h + f * g.cells + ((std::size_t)jj * nk + k) * ni;
            const float* from = in3[f] + d.idx3(d.its, d.kts + k, d.jts + g.j0 + jj);
            const bool b = kField3Positive[f] ? copy_row_stream<true>(to, from, ni)
                                              : copy_row_stream<false>(to, from, ni);
            if (b) bad_fields |= 1u << f;
          }
        }
      stream_fence();
    }
    float* h2 = h + kIn3 * g.cells;
    for (int jj = 0; jj < g.nj; ++jj) {
      if (!lk2[0])
        std::memcpy(h2 + (std::size_t)jj * ni, s.rain + d.idx2(d.its, d.jts + g.j0 + jj), sizeof(float) * ni);
      if (has_snow && !lk2[1])
        std::memcpy(h2 + g.cols + (std::size_t)jj * ni, s.snow + d.idx2(d.its, d.jts + g.j0 + jj),
                    sizeof(float) * ni);
    }
    return !(host_check && bad_fields != 0);
  };
  // Both kinds in one call (inside WRF: the grid state page-locked, solve_em's automatic arrays
  // not): the straight H2D copies of every slab are queued first, as the pipeline's prologue,
  // so that they run while the host packs the staged fields; each slab's copy_in is then its
  // staged fields alone. (Inside WRF a rank's call is one slab, whose packing on the rank's one
  // thread took 1.4 ms of a 2.9-3.9 ms call, with the straight copies waiting behind it.)
  bool any_straight = (s.rain && lk2[0]) || (has_snow && lk2[1]);
  for (int f = 0; f < kIn3; ++f) any_straight = any_straight || lk3[f];
  const bool split_in = !direct && any_straight;
  if (split_in)
    steps.prologue = [&](cudaStream_t st) {
      for (int q = 0; q < nslab; ++q) copy_pieces(q, true, st, Which::Straight);
    };
  steps.copy_in = [&](int q, cudaStream_t st) { copy_pieces(q, true, st, split_in ? Which::Staged : Which::All); };
  // Page-locked arrays: NaN/Inf and non-positive values of the 3-D inputs on the device.
  steps.check = [&](int q, cudaStream_t st) {
    const long cells = (long)slabs[q].cells;
    wsm5_check_kernel<<<(unsigned)((cells + 255) / 256), 256, 0, st>>>(view(q), slabs[q].j0, dbad);
    WRFGPU_CUDA_CHECK_LAUNCH("wsm5_check_kernel");
  };
  auto read_bad = [&]() {
    WRFGPU_CUDA_CHECK(cudaMemcpy(bad, dbad, sizeof bad, cudaMemcpyDeviceToHost));
  };
  steps.checks_pass = [&]() {
    read_bad();
    for (int f = 0; f < kIn3; ++f)
      if (bad[f] != ~0ull) return false;
    return true;
  };
  // After a failed device check, or a staged field found bad while packing (the checks queued
  // until then have run: the pipeline drained the streams).
  steps.report_bad = [&]() {
    if (device_check) {
      read_bad();
      for (int f = 0; f < kIn3; ++f)
        if (bad[f] != ~0ull) throw_bad_field3(d, in3[f], kField3Name[f], (long)bad[f]);
    }
    scan_fields3(d, s);  // names the first bad value of the caller's arrays
  };
  steps.launch = [&](int q, cudaStream_t st) {
    double* drwk = do_refl ? rwk + (std::size_t)(q % nstream) * rwork_per_stream : nullptr;
    launch_slab(c, rt, view(q), delt, drwk, do_re, do_refl, tl, st);
  };
  // D2H of slab q: the updated fields, the 2-D outputs and the diagnostics, straight into the
  // caller's page-locked arrays, or into the staging for the pageable ones.
  steps.copy_out = [&](int q, cudaStream_t st) { copy_pieces(q, false, st, Which::All); };
  // Pageable arrays: slab q's tile values back into WRF's arrays (streaming stores too,
  // fenced before they are read).
  steps.unpack = [&](int q) {
    if (direct) return;  // the D2H copies wrote the caller's arrays
    const SlabGeom& g = slabs[q];
    const float* h = pin + g.offset;
#pragma omp parallel
    {
#pragma omp for collapse(2) schedule(static) nowait
      for (int f = 0; f < kOut3; ++f)
        for (int jj = 0; jj < g.nj; ++jj) {
          if (lk3[f]) continue;
          for (int k = 0; k < nk; ++k)
            copy_row_stream(out3[f] + d.idx3(d.its, d.kts + k, d.jts + g.j0 + jj),
                            h + f * g.cells + ((std::size_t)jj * nk + k) * ni, ni);
        }
      stream_fence();
    }
    const float* h2 = h + kIn3 * g.cells;
    for (int gg = 0; gg < k2d; ++gg) {
      if (out2[gg] == nullptr || lk2[gg]) continue;
      for (int jj = 0; jj < g.nj; ++jj)
        std::memcpy(out2[gg] + d.idx2(d.its, d.jts + g.j0 + jj), h2 + gg * g.cols + (std::size_t)jj * ni,
                    sizeof(float) * ni);
    }
    if (do_re) {
      const float* hr = h + g.re_offset();
#pragma omp parallel for collapse(2) schedule(static)
      for (int r3 = 0; r3 < kRe3; ++r3)
        for (int jj = 0; jj < g.nj; ++jj) {
          if (lk_re[r3]) continue;
          for (int k = 0; k < nk; ++k)
            std::memcpy(re3[r3] + d.idx3(d.its, d.kts + k, d.jts + g.j0 + jj),
                        hr + r3 * g.cells + ((std::size_t)jj * nk + k) * ni, sizeof(float) * ni);
        }
    }
    if (do_refl && !lk_refl) {
      const float* hf = h + g.refl_offset();
#pragma omp parallel for collapse(2) schedule(static)
      for (int jj = 0; jj < g.nj; ++jj)
        for (int k = 0; k < nk; ++k)
          std::memcpy(s.refl_10cm + d.idx3(d.its, d.kts + k, d.jts + g.j0 + jj),
                      hf + ((std::size_t)jj * nk + k) * ni, sizeof(float) * ni);
    }
  };

  // WRFGPU_TRACE=1: what the call spends before its pipeline (the pipeline prints its own).
  if (config::flag("WRFGPU_TRACE").value_or(false)) {
    const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    std::fprintf(stderr, "wsm5 set-up: %.3f ms before the pipeline, of which %.3f ms finding which arrays are page-locked\n",
                 ms(t0, std::chrono::steady_clock::now()), ms(t_lk, t_lk_end));
  }
  const StagedTimes t = ctx.pipe.run(plan, steps);
  if (timing) {
    timing->h2d_ms = t.h2d_ms;
    timing->kernel_ms = t.kernel_ms;
    timing->d2h_ms = t.d2h_ms;
    timing->check_ms = t.check_ms;  // the 3-D inputs, on the device (run() adds its host checks)
    timing->total_ms =  // with the buffers' set-up
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    timing->backend = Backend::Gpu;
  }
}

}  // namespace WRFGPU_MODE_NS
}  // namespace wsm5
}  // namespace wrfgpu

#endif  // __CUDACC__
