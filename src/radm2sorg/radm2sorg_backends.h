// radm2sorg_backends.h - entry points of the CPU and GPU backends (compiled twice, strict
// and fast, into namespaces wrfgpu::radm2sorg::strict / ::fast) used by radm2sorg.cpp.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>
#include "finite_check.h"
#include "radm2sorg.h"
#include "radm2sorg_interface.h"

namespace wrfgpu {
namespace radm2sorg {

// GPU phase times of one run_gpu call, summed over its batches (CUDA events).
struct GpuTimes {
  double h2d_ms = 0, kernel_ms = 0, d2h_ms = 0;
  double check_ms = 0;  // host: the input checks run during the call (CellCheck), wall time
  GpuSolver solver = GpuSolver::Auto;  // the one that ran
  // the split kernel: block passes whose step attempt ran again with the plain division
  unsigned long long split_retries = 0;
};

// The warp kernel's hand-out order for n cells: their indices by descending expected step
// count (stable: equal counts keep index order). A counting sort, O(n).
inline void longest_first_order(const std::uint8_t* expected_steps, std::size_t n,
                                unsigned* order) {
  std::size_t start[257] = {};  // start[b]: first slot of bucket b = 255 - steps
  for (std::size_t c = 0; c < n; ++c) ++start[256 - expected_steps[c]];
  for (int b = 1; b <= 256; ++b) start[b] += start[b - 1];
  for (std::size_t c = 0; c < n; ++c) order[start[255 - expected_steps[c]]++] = (unsigned)c;
}

// GpuSolver::Auto's choice for chunks of `chunk` cells on a device of `nsm` SMs: the lane kernel
// (true) or the warp kernel. narrow: the previous call's step counts were narrow (step_counts;
// not on a tile's first call, which has none). A lane kernel cannot end before its lane with the most
// steps (a lane takes about 1 ms per step attempt, a warp about 0.2), so below a few cells per
// lane the crossover follows the longest cells, not the mean. Measured on an H200, 132 SMs, 3
// lane blocks per SM (docs/radm2sorg.md, "The crossover by step counts"):
// - narrow counts (the longest at most twice the mean: WRF's own em_quarter_ss chemistry, mean
//   5.7 and at most 9 steps; a cold start, mean 42 and at most 70): the warp kernel 1.14-1.18x
//   faster at 219 cells per SM, the lane kernel 1.13-1.21x faster from 364, up to 1.70x at 1,091;
// - a long tail (a synthetic warm case, mean 7.8 and up to 48 steps): the warp kernel faster up
//   to 644 cells per SM, the two within 3% at 682-720, the lane kernel 1.05-1.11x faster at
//   758-909; cells alternating 43 and 4 steps (H100, index order) were 1.24x faster on the warp
//   kernel at 909. So a tail, or no counts to judge by, keeps 1,024 cells per SM.
constexpr int kLaneMinCellsPerSm = 1024;       // any step counts
constexpr int kLaneMinCellsPerSmNarrow = 300;  // the previous call's longest <= 2x its mean
constexpr int kTailChunkCellsPerSm = 1152;     // chunk_cells, a tail of long cells

// What the previous call's step counts say of a call's cells: none (a tile's first call), a
// tail (the longest more than twice the mean), or narrow (the longest at most twice the mean).
enum class StepCounts { None, Tail, Narrow };
// Over the host's threads: one thread took 5 ms of a CONUS call.
inline StepCounts step_counts(const std::uint8_t* expected_steps, std::size_t n) {
  if (!expected_steps || n == 0) return StepCounts::None;
  std::uint64_t sum = 0;
  unsigned longest = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum) reduction(max : longest)
  for (long c = 0; c < (long)n; ++c) {
    const unsigned e = expected_steps[c];
    sum += e;
    longest = e > longest ? e : longest;
  }
  return (std::uint64_t)longest * n <= 2 * sum ? StepCounts::Narrow : StepCounts::Tail;
}
inline bool lane_by_size(std::size_t chunk, int nsm, bool narrow) {
  if (chunk >= (std::size_t)kLaneMinCellsPerSm * (std::size_t)nsm) return true;
  return narrow && chunk >= (std::size_t)kLaneMinCellsPerSmNarrow * (std::size_t)nsm;
}

// Cells per chunk of a call of n cells: at most `batch` (the device scratch), as few chunks as
// that allows, and with the previous call's step counts smaller chunks (measured on an H200,
// 132 SMs; docs/radm2sorg.md, "Smaller chunks for narrow step counts" and "Chunks for a tail,
// and the lane kernel's L1"):
// - narrow counts: at most kLaneMinCellsPerSm per SM, and at least two chunks where each still
//   takes the lane kernel. WRF's own em_quarter_ss cells: CONUS in chunks of 131,072 cells
//   instead of 262,144 1.04x faster, 446,250 cells in 4 chunks instead of 2 1.05-1.10x, 120,000
//   cells in 2 instead of 1 1.07x; 87,382 and 65,536 cells per chunk no faster at CONUS.
// - a tail: about kTailChunkCellsPerSm per SM where every chunk keeps at least
//   kLaneMinCellsPerSm (under it a tail takes the warp kernel, 1.42x slower at CONUS). The
//   benchmark's synthetic warm cells at CONUS: 1.04x faster in chunks of 148,750 cells (1,127
//   per SM) than of 247,917, 1.03-1.04x in chunks of 1,024 per SM; 1,300 and 1,470 in between.
// - none (a tile's first call: no order, cells in index order): as large as `batch` allows.
//   A cold start at CONUS was 1.04x slower in chunks of 171,635 cells than of 247,917.
// These sizes were measured with the lane kernel. For the split kernel on a tail, chunk_starts
// keeps them for the first and last chunks only (below).
inline std::size_t chunk_cells(std::size_t n, std::size_t batch, int nsm, StepCounts counts) {
  if (n == 0) return 0;
  if (batch == 0 || batch > n) batch = n;
  std::size_t nchunk = (n + batch - 1) / batch;
  if (counts == StepCounts::Narrow) {
    const std::size_t most = (std::size_t)kLaneMinCellsPerSm * (std::size_t)nsm;
    const std::size_t least = (std::size_t)kLaneMinCellsPerSmNarrow * (std::size_t)nsm;
    if (batch > most) batch = most;
    if (batch == n && (n + 1) / 2 >= least) batch = (n + 1) / 2;
    nchunk = (n + batch - 1) / batch;
  } else if (counts == StepCounts::Tail) {
    const std::size_t want = (std::size_t)kTailChunkCellsPerSm * (std::size_t)nsm;
    const std::size_t least = (std::size_t)kLaneMinCellsPerSm * (std::size_t)nsm;
    const std::size_t k = std::min((n + want - 1) / want, n / least);  // chunks >= least each
    if (k > nchunk) nchunk = k;
  }
  return (n + nchunk - 1) / nchunk;
}

// The first cells of a call's chunks, then n: chunk q holds [first[q], first[q + 1]). Chunks of
// `edge` cells (chunk_cells), or with `ramp` chunks that grow from `edge` by doubling to at most
// `most` and shrink again at the end in the reverse order (the first chunk small, so that the
// device starts early; the last small, so that little is copied out and unpacked after the last
// kernel; the middle large, so that fewer kernels end with a tail).
inline std::vector<std::size_t> chunk_starts(std::size_t n, std::size_t edge, std::size_t most, bool ramp) {
  std::vector<std::size_t> sizes;
  if (n > 0 && edge > 0) {
    std::vector<std::size_t> front;
    std::size_t sum = 0;
    if (ramp && most > edge)
      for (std::size_t s = edge; s < most && 2 * (sum + s) <= n; s = std::min(2 * s, most)) {
        front.push_back(s);
        sum += s;
      }
    if (front.empty()) {
      for (std::size_t c = 0; c < n; c += edge) sizes.push_back(std::min(edge, n - c));
    } else {
      sizes = front;
      const std::size_t mid = n - 2 * sum;
      if (mid > 0) {
        const std::size_t k = (mid + most - 1) / most;
        for (std::size_t j = 0; j < k; ++j) sizes.push_back(mid / k + (j < mid % k ? 1 : 0));
      }
      sizes.insert(sizes.end(), front.rbegin(), front.rend());
    }
  }
  std::vector<std::size_t> first(1, 0);
  for (std::size_t s : sizes) first.push_back(first.back() + s);
  return first;
}

// Where the GPU backend reads a call's inputs and writes its results, chunk by chunk, straight
// from and into its page-locked staging: field f of cells [c0, c0 + n). get: state fields
// 0..kNState-1, then met kNState..kNState+kNMet-1; put: state fields, then vdrog3
// kNState..kNState+kLdrog-1. Calls for different fields may run at once (OpenMP threads).
struct CellIO {
  virtual ~CellIO() = default;
  virtual void get(int f, std::size_t c0, std::size_t n, float* dst) const = 0;
  virtual void put(int f, std::size_t c0, std::size_t n, const float* src) const = 0;
};
// The dense batch: field f of cell c at f*ncell + c of state, met and vdrog3.
struct DenseIO : CellIO {
  float* state;
  const float* met;
  float* vdrog3;
  std::size_t ncell;
  DenseIO(float* s, const float* m, float* v, std::size_t n) : state(s), met(m), vdrog3(v), ncell(n) {}
  void get(int f, std::size_t c0, std::size_t n, float* dst) const override;
  void put(int f, std::size_t c0, std::size_t n, const float* src) const override;
};

// Where a call's per-cell counts go (host memory, ncell ints each): ISTATUS's nstp, nacc,
// nrej, nsng, and IERR. The backends write every cell's.
struct CellStatsOut {
  int* field[5];  // nstp, nacc, nrej, nsng, status
};

// The input checks of a call (radm2sorg.cpp): NaN or Inf in any input field (state 0..
// kNState-1, then met), and t_phy, p_phy and rho not > 0. Input field f of n consecutive cells:
inline bool positive_field(int f) {
  const int m = f - kNState;
  return m == kTphy || m == kPphy || m == kRho;
}
inline bool field_has_bad(int f, const float* x, std::size_t n) {
  return positive_field(f) ? row_has_bad<true>(x, (int)n) : row_has_bad<false>(x, (int)n);
}
// The GPU backend checks a call's inputs as it goes, so that the host's scan of the whole call
// runs while the device integrates the first chunks (docs/radm2sorg.md, "The call's host side
// at scale"); nothing is written to the caller's arrays before every cell has passed.
struct CellCheck {
  virtual ~CellCheck() = default;
  // true when every input value of cells [from, ncell) is good (memory pieces that straddle
  // `from` are checked whole)
  virtual bool good_from(std::size_t from) const = 0;
  // throws the InputError that names the first bad value of the call (field, value, cell)
  virtual void report() const = 0;
};

// stats: the cells' counts (CellStatsOut). check (GPU; null: the inputs were checked before
// the call): the checks run as the call goes (CellCheck). expected_steps (GPU;
// may be null): per cell the steps it is expected to take (capped at 255); the
// cells are handed out to the warps in descending order of it. Results do not depend on it.
#define WRFGPU_RADM2SORG_DECLARE(NS)                                                           \
  namespace NS {                                                                               \
  void run_cpu(const CellOptions& opt, bool use_float, std::size_t ncell, float* state,        \
               const float* met, float* vdrog3, const StateMap& map,                           \
               const CellStatsOut& stats);                                                     \
  void run_gpu(const CellOptions& opt, bool use_float, std::size_t ncell, const CellIO& io,    \
               const StateMap& map, const CellStatsOut& stats, std::size_t batch,              \
               GpuSolver solver, const std::uint8_t* expected_steps, const CellCheck* check,  \
               GpuTimes* times);                                                               \
  }
WRFGPU_RADM2SORG_DECLARE(strict)
WRFGPU_RADM2SORG_DECLARE(fast)
#undef WRFGPU_RADM2SORG_DECLARE

}  // namespace radm2sorg
}  // namespace wrfgpu
