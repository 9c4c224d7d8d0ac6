// radm2sorg_gpu.cu - CUDA backend, a warp per cell, in three kernels. The prologue (a thread
// per cell: unit conversions, FIX, rate constants) writes each cell's VAR, FIX and RCONST
// contiguously; the team kernel gives each warp one cell at a time from an atomic counter (a
// warp that finishes a cell takes the next, so the call follows the mean step count, not the
// slowest cell of a fixed group) and integrates it with kpp_rosenbrock_team.h, the cell's
// vectors, LU matrix and rate terms in shared memory; the epilogue (a thread per cell) stores
// the results back. When the caller knows each cell's expected step count (the previous
// call's), the counter walks the cells longest first, so that no slow cell starts last and the
// call does not end on a tail of one or two busy warps. Chunks of many cells go to the
// lane-per-cell kernel instead (radm2sorg_lane_gpu.cu: a lane per cell, the same records and
// the same bits), which is faster from about 1,000 cells per SM.
// (The thread-per-cell kernel that came first, its arrays in global scratch with the cell
// index innermost or outermost, is measured against this one in docs/radm2sorg.md and was
// removed.)
// The physics is the same header code as the CPU backend. Compiled twice (WRFGPU_MODE_NS =
// strict, fast).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include "config.h"
#include "errors.h"
#include "cuda_util.h"
#include "radm2sorg_backends.h"
#include "radm2sorg_lane.h"
#include "staged_call.h"

namespace wrfgpu {
namespace radm2sorg {
namespace WRFGPU_MODE_NS {

namespace {

// Cells in flight per SM are what sets this latency-bound kernel's speed (docs/radm2sorg.md,
// "Twenty cells per SM"). An H100 SM holds 20 of them when (a) each cell's shared block leaves
// out the rate constants, which the kernel reads from the cell's record in global memory
// (through L1), and (b) a thread has at most 96 registers: the register file is split over the
// SM's four schedulers, 16 K registers each, so 5 warps per scheduler need <= 102 registers per
// thread (allocated in steps of 8). __maxnreg__ states the cap; __launch_bounds__(640) makes ptxas
// choose 48 registers and spill. __maxnreg__ came with CUDA 12.4: older toolkits build the
// kernel as before, 16 warps of 128 registers (10% slower on an H100).
#if __CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 4)
constexpr int kTeamMaxWarps = 20;  // warps (cells in flight) per block, at most (one block per
                                   // SM keeps one copy of the schedules)
#define WRFGPU_TEAM_KERNEL_REGS __maxnreg__(96)
#else
constexpr int kTeamMaxWarps = 16;
#define WRFGPU_TEAM_KERNEL_REGS __launch_bounds__(kTeamMaxWarps * 32)
#endif

template <class T>
__global__ void team_prologue_kernel(CellOptions opt, StateMap map, std::size_t ncell,
                                     const float* __restrict__ state,
                                     const float* __restrict__ met, T* __restrict__ cells) {
  const std::size_t c = (std::size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= ncell) return;
  T* b = cells + c * kCellVals;
  cell_prologue<T>(c, ncell, state, met, map, opt, b, b + mech::NVAR, b + mech::NVAR + mech::NFIX, 1);
}

template <class T>
__global__ void team_epilogue_kernel(CellOptions opt, StateMap map, std::size_t ncell,
                                     float* __restrict__ state, const float* __restrict__ met,
                                     float* __restrict__ vdrog3, const T* __restrict__ cells) {
  const std::size_t c = (std::size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= ncell) return;
  const T* b = cells + c * kCellVals;
  cell_epilogue<T>(c, ncell, state, met, vdrog3, map, opt, b, b + mech::NVAR + mech::NFIX, 1);
}

// Shared memory of a block: the decomposition and solve schedules (decomp ops, solve runs,
// then their offsets), then one TeamLayout block per warp.
__host__ __device__ inline int team_sched_ints(const kpp::TeamTables& tb) {
  return 2 * mech::team::DECOMP_NOPS + tb.solve_nrun + (tb.decomp_nlev + 1) +
         (tb.solve_nseg * mech::team::TEAM_LANES + 1);
}
__host__ __device__ inline std::size_t team_sched_bytes(const kpp::TeamTables& tb) {
  return (team_sched_ints(tb) * sizeof(int) + 15) / 16 * 16;
}
const kpp::TeamTables& device_team_tables();
// A warp's shared block: the TeamLayout up to its rate constants, which stay in global memory;
// an even count of T, so that the next block is 8-byte aligned in float too.
__host__ __device__ inline int team_block_size(const TeamLayout& L) { return (L.rct + 1) & ~1; }
template <class T>
std::size_t team_smem_bytes(const TeamLayout& L, int warps) {
  return team_sched_bytes(device_team_tables()) + (std::size_t)warps * team_block_size(L) * sizeof(T);
}

template <class T>
__global__ void WRFGPU_TEAM_KERNEL_REGS
    radm2sorg_team_kernel(CellOptions opt, kpp::TeamTables tb, TeamLayout L, std::size_t ncell,
                          T* __restrict__ cells,
                          int* __restrict__ stats, unsigned long long* __restrict__ next,
                          const unsigned* __restrict__ order) {
  extern __shared__ double team_smem[];
  const int warp = (int)(threadIdx.x >> 5), lane = (int)(threadIdx.x & 31u);
  {  // the schedules into shared memory, for the whole block
    int* sh = reinterpret_cast<int*>(team_smem);
    const int n1 = 2 * mech::team::DECOMP_NOPS, n2 = tb.solve_nrun, n3 = tb.decomp_nlev + 1;
    const int nsched = team_sched_ints(tb);
    for (int i = threadIdx.x; i < nsched; i += blockDim.x)
      sh[i] = i < n1 ? tb.decomp_op[i]
            : i < n1 + n2 ? tb.solve_run[i - n1]
            : i < n1 + n2 + n3 ? tb.decomp_lev[i - n1 - n2]
                               : tb.solve_rseg[i - n1 - n2 - n3];
    tb.decomp_op = sh;
    tb.solve_run = sh + n1;
    tb.decomp_lev = sh + n1 + n2;
    tb.solve_rseg = sh + n1 + n2 + n3;
    __syncthreads();
  }
  T* block = reinterpret_cast<T*>(reinterpret_cast<char*>(team_smem) + team_sched_bytes(tb)) +
             (std::size_t)warp * team_block_size(L);  // one TeamLayout block per warp
  const kpp::TeamWork<T> w = team_work_at<T>(L, block);
  T* y = block + L.y;
  double time_end;
  const kpp::RosControl ctl = cell_controls(opt, time_end);
  const kpp::WarpTeam tm;
  for (;;) {
    unsigned long long c = 0;
    if (lane == 0) {
      c = atomicAdd(next, 1ull);
      if (order && c < ncell) c = order[c];  // hand-out order: longest expected first
    }
    c = __shfl_sync(0xffffffffu, c, 0);
    if (c >= ncell) break;
    T* b = cells + c * kCellVals;
    const T* rct = b + mech::NVAR + mech::NFIX;  // read in place (see kTeamMaxWarps)
    for (int i = lane; i < mech::NVAR + mech::NFIX; i += 32) y[i] = b[i];
    __syncwarp();
    kpp::RosStats st;
    kpp::ros_integrate_team<Mech, T>(tm, tb, y, rct, 0.0, time_end, ctl, st, w);
    for (int i = lane; i < mech::NVAR; i += 32) b[i] = y[i];
    if (lane == 0) store_stats(stats, ncell, c, st);
    __syncwarp();
  }
}

// The team kernel's launch shape for one device and one TeamLayout, worked out once (the
// occupancy queries are not repeated per call): warps per block giving the most cells in
// flight per SM (shared memory and registers), the fewest warps per block among equals,
// within the device's opt-in shared memory.
struct TeamLaunch {
  int dev = -1, nT = -1;
  int warps = 0, per_sm = 0, nsm = 0;
  std::size_t smem = 0;
};
template <class T>
const TeamLaunch& team_launch(const TeamLayout& L) {
  static TeamLaunch c;
  int dev;
  WRFGPU_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev == c.dev && L.nT == c.nT) return c;
  c = TeamLaunch();
  int optin = 0;
  WRFGPU_CUDA_CHECK(cudaDeviceGetAttribute(&c.nsm, cudaDevAttrMultiProcessorCount, dev));
  WRFGPU_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  const std::size_t smax = std::min<std::size_t>(team_smem_bytes<T>(L, kTeamMaxWarps), (std::size_t)optin);
  WRFGPU_CUDA_CHECK(cudaFuncSetAttribute(radm2sorg_team_kernel<T>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smax));
  auto blocks = [&](int wpb) {
    int nb = 0;
    WRFGPU_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &nb, radm2sorg_team_kernel<T>, wpb * 32, team_smem_bytes<T>(L, wpb)));
    return nb;
  };
  for (int wpb = 1; wpb <= kTeamMaxWarps && team_smem_bytes<T>(L, wpb) <= smax; ++wpb) {
    const int nb = blocks(wpb);
    if (nb * wpb > c.per_sm * c.warps) { c.warps = wpb; c.per_sm = nb; }
  }
  if (const auto w = config::integer("WRFGPU_RADM2SORG_TEAM_WARPS")) {  // tuning
    const int wpb = *w;
    if (wpb > kTeamMaxWarps || team_smem_bytes<T>(L, wpb) > smax)
      throw InputError("WRFGPU_RADM2SORG_TEAM_WARPS='" + std::to_string(wpb) +
                       "': a block of that many warps does not fit in this GPU's shared memory (" +
                       std::to_string(team_smem_bytes<T>(L, wpb)) + " bytes)");
    c.warps = wpb;
    c.per_sm = blocks(wpb);
  }
  c.smem = team_smem_bytes<T>(L, c.warps > 0 ? c.warps : 1);
  if (c.warps < 1 || c.per_sm < 1)
    throw RuntimeError("radm2sorg: the warp-per-cell kernel does not fit on this GPU (" +
                       std::to_string(c.smem) + " bytes of shared memory per block)");
  if (config::flag("WRFGPU_RADM2SORG_VERBOSE").value_or(false))
    std::fprintf(stderr, "radm2sorg team kernel: %d warps per block, %d blocks per SM, %zu B shared\n",
                 c.warps, c.per_sm, c.smem);
  c.dev = dev;
  c.nT = L.nT;
  return c;
}

// The generated tables, copied to the device once (one buffer, each array 16-byte aligned).
const kpp::TeamTables& device_team_tables() {
  static kpp::TeamTables dev = [] {
    namespace t = mech::team;
    const kpp::TeamTables h = team_tables_host();
    struct Part { const void* src; std::size_t bytes; const void** dst; };
    kpp::TeamTables d = h;
    const Part parts[] = {
        {h.lu_diag, sizeof(int) * mech::NVAR, (const void**)&d.lu_diag},
        {h.a_rate, sizeof(kpp::TeamRate) * mech::NREACT, (const void**)&d.a_rate},
        {h.b_rate, sizeof(kpp::TeamRate) * (std::size_t)t::NB, (const void**)&d.b_rate},
        {h.vdot_sum, sizeof(kpp::TeamSum) * mech::NVAR, (const void**)&d.vdot_sum},
        {h.jvs_sum, sizeof(kpp::TeamSum) * mech::LU_NONZERO, (const void**)&d.jvs_sum},
        {h.vdot_term, sizeof(kpp::TeamTerm) * (std::size_t)t::NVDOT_TERMS, (const void**)&d.vdot_term},
        {h.jvs_term, sizeof(kpp::TeamTerm) * (std::size_t)t::NJVS_TERMS, (const void**)&d.jvs_term},
        {h.decomp_lev, sizeof(t::DECOMP_LEV), (const void**)&d.decomp_lev},
        {h.decomp_op, sizeof(t::DECOMP_OP), (const void**)&d.decomp_op},
        {h.solve_rseg, sizeof(int) * (t::SOLVE_NSEG * t::TEAM_LANES + 1), (const void**)&d.solve_rseg},
        {h.solve_run, sizeof(int) * (std::size_t)h.solve_nrun, (const void**)&d.solve_run},
    };
    std::size_t total = 0;
    for (const Part& p : parts) total += (p.bytes + 15) / 16 * 16;
    std::vector<char> host(total, 0);
    char* dev_base = nullptr;
    WRFGPU_CUDA_CHECK(cudaMalloc(&dev_base, total));  // lives as long as the process
    std::size_t off = 0;
    for (const Part& p : parts) {
      std::memcpy(host.data() + off, p.src, p.bytes);
      *p.dst = dev_base + off;
      off += (p.bytes + 15) / 16 * 16;
    }
    WRFGPU_CUDA_CHECK(cudaMemcpy(dev_base, host.data(), total, cudaMemcpyHostToDevice));
    return d;
  }();
  return dev;
}

// One pipeline slot: a chunk's device buffers and its page-locked staging, in and out (separate,
// so that chunk i+2 is packed and queued while chunk i still integrates: Staging::PerSlot of
// staged_call.h). Two slots let chunk i+1 be packed and copied in while chunk i integrates.
struct Slot {
  DeviceBuffer<float> state, met, vdrog3;
  DeviceBuffer<int> stats;
  DeviceBuffer<double> scratch;           // the cells' records (kCellVals), reinterpreted for float
  DeviceBuffer<double> lane_scratch;      // the lane kernel's per-warp blocks, likewise
  DeviceBuffer<unsigned long long> next;  // the next cell to take; [1]: the split kernel's retries
  DeviceBuffer<unsigned> order;           // hand-out order (expected_steps)
  PinnedBuffer<float> h_state, h_met, h_state_out, h_vdrog3;
  PinnedBuffer<unsigned> h_order;
  PinnedBuffer<int> h_stats;
  PinnedBuffer<unsigned long long> h_retries;
};
constexpr int kSlots = 2;
struct Context {
  StagedPipeline pipe{"radm2sorg"};
  Slot slot[kSlots];
};
Context& context() {
  static Context* c = new Context();  // never destroyed: CUDA may be gone at exit
  return *c;
}

// Cells per chunk: chunk_cells (radm2sorg_backends.h). More chunks than that cost more where a
// chunk's persistent kernel ends with a tail of partly idle blocks (measured on an H100, the
// warp kernel, 28,899 cells handed out longest first: 1, 2, 3 and 4 chunks took 9.95, 9.83,
// 10.79 and 11.48 ms end to end; in index order 1, 2, 4 and 8 chunks took 13.0, 12.7, 14.1 and
// 18.8 ms). WRFGPU_RADM2SORG_CHUNKS (tuning, measurement) sets the count, at least the rule's.
std::size_t chunk_size(std::size_t ncell, std::size_t batch, int nsm, StepCounts counts) {
  std::size_t chunk = chunk_cells(ncell, batch, nsm, counts);
  if (const auto n = config::integer("WRFGPU_RADM2SORG_CHUNKS")) {
    const std::size_t nchunk = std::max<std::size_t>((std::size_t)*n, (ncell + chunk - 1) / chunk);
    chunk = (ncell + nchunk - 1) / nchunk;
  }
  return chunk;
}

// The call, cut into chunks of cells that go through two pipeline slots: the host packs a
// chunk's fields (the caller's arrays are field-major, field f of cell c at f*ncell + c) into
// the slot's page-locked staging, the slot's stream copies them in, runs the kernels and
// copies the results out; while it does, the host packs the next chunk into the other slot
// and unpacks the chunk before. vdrog3 is only an output (written for every cell when
// p_nu0 > 1, else left alone), so it is never copied in. The inputs are checked as the call
// goes (check; null: they were checked before the call).
template <class T>
void run_gpu_t(Context& ctx, const CellOptions& opt, std::size_t ncell, const CellIO& io,
               const StateMap& map, const CellStatsOut& stats, std::size_t batch, GpuSolver solver,
               const std::uint8_t* expected_steps, const CellCheck* check, GpuTimes* times) {
  Slot* S = ctx.slot;
  // WRFGPU_RADM2SORG_BATCH (tuning): cells per launch instead of Options::gpu_batch.
  if (const auto b = config::integer("WRFGPU_RADM2SORG_BATCH")) batch = (std::size_t)*b;
  const int nsm = lane_device_sms<T>();
  const StepCounts counts = step_counts(expected_steps, ncell);
  const bool narrow = counts == StepCounts::Narrow;
  const std::size_t chunk = chunk_size(ncell, batch, nsm, counts);
  const bool out_vd = opt.p_nu0 > 1;
  const int nsf = kNState, nmf = kNMet, nvf = out_vd ? kLdrog : 0;
  // the tables, layout and launch shape, the same for every chunk
  const kpp::TeamTables* tb = &device_team_tables();
  const TeamLayout L = team_layout(std::max(kpp::ros_coeffs(opt.ctl.method).S, 1));
  const TeamLaunch* cfg = &team_launch<T>(L);
  // The split kernel wherever it can run (Ros3 in double: WRF's chemistry), faster than the other
  // two at every size measured, 2,000 to 4.46 million cells (docs/radm2sorg.md, "The split
  // kernel"); otherwise a lane per cell for chunks of many cells, or of fewer when the previous
  // call's step counts were narrow (lane_by_size), else a warp per cell
  const bool can_split = split_supports(opt, sizeof(T) == sizeof(float));
  if (solver == GpuSolver::Split && !can_split)
    throw InputError("radm2sorg: the split GPU solver (WRFGPU_RADM2SORG_SOLVER=split) runs Ros3 in double "
                     "precision only; this call asks for method " + std::to_string(opt.ctl.method) +
                     (sizeof(T) == sizeof(float) ? " in float" : ""));
  const bool split = solver == GpuSolver::Split || (solver == GpuSolver::Auto && can_split);
  const bool lane = !split && (solver == GpuSolver::Lane ||
                               (solver == GpuSolver::Auto && lane_by_size(chunk, nsm, narrow)));
  // The split kernel on cells with a tail of long step counts: the rule's chunks at both ends,
  // up to `batch` cells in between (chunk_starts). The benchmark's cells at CONUS in 18 chunks
  // instead of 30: 1.035-1.045x end to end on an H200. WRF's own cells (narrow counts) keep the
  // rule's: in chunks of 279,000 cells or more their kernels took 1.12-1.19x longer
  // (docs/radm2sorg.md, "The split kernel's chunks"). A count asked for with
  // WRFGPU_RADM2SORG_CHUNKS is kept as asked.
  const bool ramp = split && counts == StepCounts::Tail && !config::integer("WRFGPU_RADM2SORG_CHUNKS");
  const std::vector<std::size_t> first = chunk_starts(ncell, chunk, batch, ramp);
  const std::size_t nchunk = first.size() - 1;
  auto first_cell = [&](int i) { return first[i]; };
  auto cells_in = [&](int i) { return first[i + 1] - first[i]; };

  ChunkPlan plan;
  plan.name = "radm2sorg";
  plan.chunks = (int)nchunk;
  plan.streams = kSlots;
  plan.staging = Staging::PerSlot;
  ChunkSteps steps;
  // Packing and unpacking are copies of whole fields between the caller's arrays (io: the
  // dense batch, or WRF's arrays) and the page-locked staging, one field per OpenMP thread
  // (the caller's arrays are pageable: one thread's memcpy rate would be most of a small
  // call's time). Inside a parallel region of the caller they run on its thread alone.
  // The first kSlots chunks test their values in the staging as they are packed (still in
  // cache); check_later scans the caller's arrays for the later chunks while the first ones
  // run, before anything is unpacked (staged_call.h, Staging::PerSlot).
  steps.pack = [&](int i) {
    Slot& sl = S[i % kSlots];
    const std::size_t c0 = first_cell(i), n = cells_in(i);
    float* hs = sl.h_state.reserve(nsf * n);
    float* hm = sl.h_met.reserve(nmf * n);
    const bool test = check && i < kSlots;
    int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad)
    for (int f = 0; f < nsf + nmf; ++f) {
      float* dst = f < nsf ? hs + f * n : hm + (f - nsf) * n;
      io.get(f, c0, n, dst);
      if (test) bad |= field_has_bad(f, dst, n) ? 1 : 0;
    }
    if (bad) return false;
    if (expected_steps) longest_first_order(expected_steps + c0, n, sl.h_order.reserve(n));
    return true;
  };
  if (check) {
    steps.check_later = [&]() { return check->good_from(first[std::min<std::size_t>(nchunk, kSlots)]); };
    steps.report_bad = [&]() { check->report(); };
  }
  unsigned long long retries = 0;
  steps.unpack = [&](int i) {
    Slot& sl = S[i % kSlots];
    const std::size_t c0 = first_cell(i), n = cells_in(i);
    if (split) retries += sl.h_retries.data()[0];
#pragma omp parallel for schedule(static)
    for (int f = 0; f < nsf + nvf + 5; ++f) {
      if (f < nsf)
        io.put(f, c0, n, sl.h_state_out.data() + f * n);
      else if (f < nsf + nvf)
        io.put(f, c0, n, sl.h_vdrog3.data() + (f - nsf) * n);
      else
        std::memcpy(stats.field[f - nsf - nvf] + c0, sl.h_stats.data() + (f - nsf - nvf) * n, n * sizeof(int));
    }
  };
  steps.copy_in = [&](int i, cudaStream_t st) {
    Slot& sl = S[i % kSlots];
    const std::size_t n = cells_in(i);
    float* ds = sl.state.reserve(nsf * n);
    float* dm = sl.met.reserve(nmf * n);
    WRFGPU_CUDA_CHECK(cudaMemcpyAsync(ds, sl.h_state.data(), nsf * n * sizeof(float),
                                      cudaMemcpyHostToDevice, st));
    WRFGPU_CUDA_CHECK(cudaMemcpyAsync(dm, sl.h_met.data(), nmf * n * sizeof(float),
                                      cudaMemcpyHostToDevice, st));
    if (expected_steps)
      WRFGPU_CUDA_CHECK(cudaMemcpyAsync(sl.order.reserve(n), sl.h_order.data(), n * sizeof(unsigned),
                                        cudaMemcpyHostToDevice, st));
  };
  steps.launch = [&](int i, cudaStream_t st) {
    Slot& sl = S[i % kSlots];
    const std::size_t n = cells_in(i);
    float* ds = sl.state.data();
    float* dm = sl.met.data();
    float* dv = sl.vdrog3.reserve(kLdrog * n);
    int* dst = sl.stats.reserve(5 * n);
    const std::size_t nscr = ((std::size_t)kCellVals * n * sizeof(T) + sizeof(double) - 1) / sizeof(double);
    T* scr = reinterpret_cast<T*>(sl.scratch.reserve(nscr));
    unsigned* dord = expected_steps ? sl.order.data() : nullptr;
    const std::size_t want = (n + cfg->warps - 1) / cfg->warps;
    const unsigned grid = (unsigned)std::min<std::size_t>((std::size_t)cfg->per_sm * cfg->nsm, want);
    unsigned long long* next = sl.next.reserve(2);
    const unsigned tb1 = 128, b1 = (unsigned)((n + tb1 - 1) / tb1);
    WRFGPU_CUDA_CHECK(cudaMemsetAsync(next, 0, 2 * sizeof(unsigned long long), st));
    team_prologue_kernel<T><<<b1, tb1, 0, st>>>(opt, map, n, ds, dm, scr);
    WRFGPU_CUDA_CHECK_LAUNCH("team_prologue_kernel");
    if (split) {
      const int blocks = split_blocks(n);
      double* ss = sl.lane_scratch.reserve(split_scratch_values(blocks));
      launch_split(opt, n, reinterpret_cast<double*>(scr), dst, next, dord, ss, blocks, next + 1, st);
    } else if (lane) {
      const int warps = lane_warps<T>(n);
      T* ls = reinterpret_cast<T*>(sl.lane_scratch.reserve(
          (lane_scratch_values<T>(warps) * sizeof(T) + sizeof(double) - 1) / sizeof(double)));
      launch_lane<T>(opt, n, scr, dst, next, dord, ls, warps, st);
    } else {
      radm2sorg_team_kernel<T><<<grid, cfg->warps * 32, cfg->smem, st>>>(opt, *tb, L, n, scr, dst, next, dord);
      WRFGPU_CUDA_CHECK_LAUNCH("radm2sorg_team_kernel");
    }
    team_epilogue_kernel<T><<<b1, tb1, 0, st>>>(opt, map, n, ds, dm, dv, scr);
    WRFGPU_CUDA_CHECK_LAUNCH("team_epilogue_kernel");
  };
  steps.copy_out = [&](int i, cudaStream_t st) {
    Slot& sl = S[i % kSlots];
    const std::size_t n = cells_in(i);
    sl.h_vdrog3.reserve(kLdrog * n);
    sl.h_stats.reserve(5 * n);
    WRFGPU_CUDA_CHECK(cudaMemcpyAsync(sl.h_state_out.reserve(nsf * n), sl.state.data(), nsf * n * sizeof(float),
                                      cudaMemcpyDeviceToHost, st));
    if (nvf > 0)
      WRFGPU_CUDA_CHECK(cudaMemcpyAsync(sl.h_vdrog3.data(), sl.vdrog3.data(), nvf * n * sizeof(float),
                                        cudaMemcpyDeviceToHost, st));
    WRFGPU_CUDA_CHECK(cudaMemcpyAsync(sl.h_stats.data(), sl.stats.data(), 5 * n * sizeof(int),
                                      cudaMemcpyDeviceToHost, st));
    if (split)
      WRFGPU_CUDA_CHECK(cudaMemcpyAsync(sl.h_retries.reserve(1), sl.next.data() + 1, sizeof(unsigned long long),
                                        cudaMemcpyDeviceToHost, st));
  };

  const StagedTimes t = ctx.pipe.run(plan, steps);
  if (times) {
    times->h2d_ms = t.h2d_ms;
    times->kernel_ms = t.kernel_ms;
    times->d2h_ms = t.d2h_ms;
    times->check_ms = t.check_later_ms;
    times->solver = split ? GpuSolver::Split : lane ? GpuSolver::Lane : GpuSolver::Warp;
    times->split_retries = retries;
  }
}

}  // namespace

void run_gpu(const CellOptions& opt, bool use_float, std::size_t ncell, const CellIO& io,
             const StateMap& map, const CellStatsOut& stats, std::size_t batch, GpuSolver solver,
             const std::uint8_t* expected_steps, const CellCheck* check, GpuTimes* times) {
  // One call at a time per process: the pipeline slots, their staging and the device
  // buffers are shared (a caller's OpenMP threads, e.g. chemistry tiles, queue here).
  Context& ctx = context();
  const auto lock = ctx.pipe.lock();
  if (use_float)
    run_gpu_t<float>(ctx, opt, ncell, io, map, stats, batch, solver, expected_steps, check, times);
  else
    run_gpu_t<double>(ctx, opt, ncell, io, map, stats, batch, solver, expected_steps, check, times);
}

}  // namespace WRFGPU_MODE_NS
}  // namespace radm2sorg
}  // namespace wrfgpu
