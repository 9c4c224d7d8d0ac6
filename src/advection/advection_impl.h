// advection_impl.h - what the dispatcher (advection.cpp) hands to the backends: the validated
// call, its boundary rule and the index boxes the scheme touches. Not part of the public API.
// Shared by the dispatcher and both modes' backends, so it holds no physics (that is
// advection_physics.h, in the mode's namespace): data, and RowCheck's scan, which only the
// dispatcher and the GPU backend's host code (never built with fast math) call.
#pragma once
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>
#include "advection.h"
#include "advection_physics.h"
#include "finite_check.h"

namespace wrfgpu {
namespace advection {

// An index box of WRF indices (inclusive); empty when i1 < i0 etc.
struct Box {
  int i0 = 0, i1 = -1, k0 = 0, k1 = -1, j0 = 0, j1 = -1;
  int ni() const { return i1 - i0 + 1; }
  int nk() const { return k1 - k0 + 1; }
  int nj() const { return j1 - j0 + 1; }
  bool empty() const { return ni() <= 0 || nk() <= 0 || nj() <= 0; }
  std::size_t size() const { return empty() ? 0 : (std::size_t)ni() * nk() * nj(); }
  // Dims of a dense array that holds exactly this box (memory bounds = box).
  WrfDims as_memory(const WrfDims& g) const {
    WrfDims d = g;
    d.ims = i0; d.ime = i1; d.kms = k0; d.kme = k1; d.jms = j0; d.jme = j1;
    return d;
  }
};

// The tile's edge columns, the only ones that can hold open-boundary cells (an open edge of the
// domain is an edge of the tile that holds it: the dispatcher sets bc.open_* only there): the
// rows j0 and j1, then the columns i0 and i1 between them, ne() of them, each once. The GPU
// backend's open-boundary kernels take a thread per edge column, level and species.
struct TileEdge {
  int i0, ni, j0, nj;
  WRFGPU_HD int ne() const { return ni * (nj > 1 ? 2 : 1) + (nj > 2 ? nj - 2 : 0) * (ni > 1 ? 2 : 1); }
  WRFGPU_HD void column(int e, int& i, int& j) const {
    const int rows = ni * (nj > 1 ? 2 : 1);
    if (e < rows) { i = i0 + e % ni; j = e < ni ? j0 : j0 + nj - 1; return; }
    e -= rows;
    const int side = nj - 2;
    i = e < side ? i0 : i0 + ni - 1;
    j = j0 + 1 + e % side;
  }
};

// The finite check of one input array: the values the scheme reads from it are the rows of
// the union of its boxes (a cross for the tracers), i.e. per j of `u`, the i-intervals ivs[j -
// u.j0] over k = k0..k1 (2-D arrays: k0 = k1 = 0), for nsp species. A bad value is coded
// ((s * u.nj() + j - u.j0) * nk + k - k0) * u.ni() + i - u.i0: the smallest code is the first
// bad value in (species, j, k, i) order.
struct RowCheck {
  const char* name = "";
  int kind = 3;  // 2: 2-D, 3: 3-D, 4: tracer (all species)
  const float* p = nullptr;
  Box u;
  int k0 = 0, k1 = -1, nsp = 1;
  // The i-intervals of one row, in increasing i, merged. An array is read in the union of
  // one or two boxes, so a row has at most two: held in place, so that building the rows at
  // every call allocates once per array, not once per row.
  struct Intervals {
    int n = 0;
    std::pair<int, int> iv[2];
    const std::pair<int, int>* begin() const { return iv; }
    const std::pair<int, int>* end() const { return iv + n; }
    std::size_t size() const { return (std::size_t)n; }
  };
  std::vector<Intervals> ivs;
  int nk() const { return k1 - k0 + 1; }
  long code(int s, int i, int k, int j) const {
    return (((long)s * u.nj() + (j - u.j0)) * nk() + (k - k0)) * u.ni() + (i - u.i0);
  }
  // The smallest code of a non-finite value the scheme reads in row (s, k, j), LONG_MAX if
  // none; at_i0 points to the row's value at i = u.i0 (the caller's array or a staging copy).
  long first_in_row(const float* at_i0, int s, int k, int j) const {
    for (const auto& iv : ivs[(std::size_t)(j - u.j0)]) {
      const float* x = at_i0 + (iv.first - u.i0);
      const int len = iv.second - iv.first + 1;
      if (!row_has_bad(x, len)) continue;  // the fast, vectorised test first
      for (int i = 0; i < len; ++i)
        if (!std::isfinite(x[i])) return code(s, iv.first + i, k, j);
    }
    return LONG_MAX;
  }
  // The bad value of `code` named: "field: non-finite value nan in species 2 at (i,k,j)=(5,4,6)",
  // or with WRF's subscripts where the inputs name their 4-D array (AdvectInputs::array_name):
  // "moist(5,4,6,4): non-finite value nan". d and sst: the array's layout, to read the value.
  std::string message(long code, const WrfDims& d, std::size_t sst, const AdvectInputs& in) const;
};

struct Prepared {
  const AdvectInputs* in = nullptr;
  bool pd = true;
  Bc bc;
  int itf = 0, jtf = 0, ktf = 0;
  float ts = 1;             // REAL(SIGN(1,time_step))
  std::size_t sst = 0;      // species stride of the caller's arrays
  Box tile;                 // its..itf, kts..ktf, jts..jtf
  Box ring;                 // tile + 1 in i and j (pd limiter cells that matter)
  Box region;               // bounding box of everything read from 3-D/2-D arrays (k: kts..ktf)
  bool fo_is_f = false;     // field_old == field (RK1/RK2): copied once
  bool empty = false;       // no mass point in the tile (e.g. jts = jde): WRF's loops do nothing
  // The tracers' finite checks (field, then field_old when it is another array), left to the
  // backend when `tracers_unchecked`: the GPU backend checks each row as it packs it into
  // page-locked staging (one pass over the tracers instead of two) and throws before it
  // writes any output.
  std::vector<RowCheck> tracer_checks;
  bool tracers_unchecked = false;
  // With the tracers, the finite checks of the 3-D met fields (ru, rv, rom) are left to the GPU
  // backend: on the device where it copies them straight from page-locked arrays, else on the
  // host before it packs anything (first_bad_met).
  std::vector<RowCheck> met_checks;
};

// The message of the first non-finite value in the tracers of tracer_checks (field, then
// field_old), as validate() names it; "" if there is none. The GPU backend calls it when its
// packing found one, before anything is written.
std::string first_bad_tracer(const Prepared& p);
// The same for met_checks.
std::string first_bad_met(const Prepared& p);

// The checks and the boundary rule of one call (advection.cpp): bad input throws InputError;
// defer_tracers leaves the NaN/Inf scan of the tracers and of ru, rv, rom to the GPU backend
// (tracer_checks, met_checks: on the host as it packs, or on the device). The device tests
// build their Views through it and cpu_view.
Prepared prepare(const AdvectInputs& in, bool pd, bool defer_tracers = false);

// A View of the caller's arrays (CPU backend).
View cpu_view(const Prepared& p);

// PD: the level march or the three kernels, and the march's block rows, by a cost model of
// both, measured on an H200 with the march's inner blocks and its level loop unrolled by 4
// (docs/performance.md, "The size rule and the march's rows by its waves", "The plan refitted
// to the unrolled loop"). The march runs one block per SM and a column's levels in sequence,
// so its time goes by whole waves of blocks: at 35 levels a wave of blocks of 32 x 22 takes
// about 0.08 ms however few blocks it has, one of 32 x R about (R + 4) / 26 of that (the
// block's start, before its level loop, is worth about 4 rows). The three kernels (a thread
// per cell) go by the cells: about 0.02 ms plus 1.95 ns per column and species. So the march
// where
//   41,000 x waves x (rows + 4) / 26 < 10,000 + columns x species
// (0.08 ms / 1.95 ns = 41,000 column-species per wave of 22 rows; 0.02 ms = 10,000), with the
// rows of its fewer waves x (rows + 4) (22 where equal). All measured at 35 levels: both sides
// grow with the levels but for the three kernels' 0.02 ms, so with many more levels the model
// leans a little towards the three kernels. Of 34 cases measured in one run (1 to 130
// tracers, 40 x 30 to 425 x 300 columns) it picks the fastest form in 30 and one at most 1.08x
// slower in the other four (AdvectionRule.PdMarchPlanTakesTheMeasuredFasterForm).
constexpr int kPdWaveRowsExtra = 4;  // a wave's start, in rows
constexpr int kPdMarchRows[2] = {22, 28};
// Blocks of 32 x rows threads cover tiles of 29 x (rows - 3) columns: the launch's grid in i
// and j, and its blocks per species.
inline int pd_march_tiles_i(int ni) { return (ni + 28) / 29; }
inline int pd_march_tiles_j(int nj, int rows) { return (nj + rows - 4) / (rows - 3); }
inline long pd_march_tiles(int ni, int nj, int rows) {
  return (long)pd_march_tiles_i(ni) * pd_march_tiles_j(nj, rows);
}
// The waves of the march's launches for ns species in groups of g, each launch tiles x its
// species blocks, one per SM.
inline long pd_march_waves(int ns, int g, long tiles, int nsm) {
  long w = 0;
  for (int s = 0; s < ns; s += g) w += (tiles * std::min(g, ns - s) + nsm - 1) / nsm;
  return w;
}
// Species per transfer group unless the caller chose: about 6 groups (the copies of one
// overlap the kernels of another), but at least 3 species per group (the three-kernel forms
// compute each cell's face geometry once for all the species of a thread; the level march's
// comes from k_pd_geom, once per call) and at most kMaxGroup (pinned and device buffers); never
// more than the call's ns. docs/performance.md has the measurements.
constexpr int kMaxGroup = 16;
inline int default_group_size(int ns) {
  return std::min({kMaxGroup, std::max((ns + 5) / 6, std::min(ns, 3)), ns});
}
// The level march's groups may hold more species than kMaxGroup where that takes fewer waves
// (below): up to kMaxMarchGroup, and only while a group's buffers (its tracers in and its
// tendencies out, each held on the device and in page-locked memory) stay within
// kMarchGroupBytes, about what 16 species of the 134 x 110 x 35 chemistry patch took before.
// 81 tracers on 106 x 75 x 35 in groups of 21 instead of 15, 8 waves of 32 x 28 blocks instead
// of 11 of 32 x 22: kernels 1.19x faster, 64 x 50 1.33x, 130 tracers on 106 x 75 1.18x, end
// to end the same (H200; docs/performance.md, "The march's groups up to 24 species").
constexpr int kMaxMarchGroup = 24;
constexpr std::size_t kMarchGroupBytes = std::size_t(192) << 20;
inline int pd_march_group_max(std::size_t bytes_per_species) {
  const std::size_t n = kMarchGroupBytes / std::max<std::size_t>(bytes_per_species, 1);
  return (int)std::max<std::size_t>(kMaxGroup, std::min<std::size_t>(kMaxMarchGroup, n));
}
// The species per group for the PD level march: of g0 (the default: about 6 groups) to gmax,
// the size whose groups' launches take the fewest waves in all (the march runs one block per
// SM, so a launch of tiles x G blocks takes ceil(tiles G / nsm) waves and its last wave may
// leave most SMs idle); g0 unless another takes fewer (a group more or less is a
// pipeline stage more or less for the copies). 81 tracers on
// 134 x 110 x 35 (40 tiles, 132 SMs): 16 (26 waves) instead of 14 (29 waves), 1.07x faster;
// measured on an H200, kernel ms: 10 species a group 1.83-1.84 (33 waves), 12 1.75-1.77 (27),
// 13 1.71-1.72 (25, but 7 launches), 14 1.79 (29), 16 1.67 (26) (docs/performance.md,
// "Advection: the unlimited scheme's inner box and open cells in one launch").
// Never one group where g0 makes two or more: the copies of one group overlap the kernels of
// the other, which is worth more end to end than the waves one launch saves (CONUS with 5
// tracers as one group of 5, 7 waves of 32 x 28 blocks: kernels 0.550 ms, end to end 7.43 ms,
// 1.20x its pure transfers; two groups of 32 x 22 blocks before, 0.691 and 6.79 ms, 1.10x).
inline int pd_march_group_size(int ns, int g0, int gmax, long tiles, int nsm) {
  int best = g0;
  for (int g = g0 + 1; g <= std::min(gmax, g0 < ns ? ns - 1 : ns); ++g)
    if (pd_march_waves(ns, g, tiles, nsm) < pd_march_waves(ns, best, tiles, nsm)) best = g;
  return best;
}

// The march of a patch of ni x nj columns and ns species: its rows, tiles, species per group
// and waves. g0: the call's group size (the caller's where g_fixed, else the default, which
// pd_march_group_size may raise to gmax); rows 0: those of kPdMarchRows with the fewer
// waves x (rows + kPdWaveRowsExtra).
struct PdMarchPlan {
  int rows = 0, group = 0;
  long tiles = 0, waves = 0;
};
inline PdMarchPlan pd_march_plan(int ni, int nj, int ns, int g0, int gmax, bool g_fixed, int nsm, int rows = 0) {
  auto plan = [&](int r) {
    PdMarchPlan m;
    m.rows = r;
    m.tiles = pd_march_tiles(ni, nj, r);
    m.group = g_fixed ? g0 : pd_march_group_size(ns, g0, gmax, m.tiles, nsm);
    m.waves = pd_march_waves(ns, m.group, m.tiles, nsm);
    return m;
  };
  if (rows > 0) return plan(rows);
  const PdMarchPlan a = plan(kPdMarchRows[0]), b = plan(kPdMarchRows[1]);
  return b.waves * (b.rows + kPdWaveRowsExtra) < a.waves * (a.rows + kPdWaveRowsExtra) ? b : a;
}
// Is the march m faster than the three kernels for ni x nj columns and ns species (above)?
inline bool pd_march_cheaper(const PdMarchPlan& m, int ni, int nj, int ns) {
  return 41000L * m.waves * (m.rows + kPdWaveRowsExtra) < (22L + kPdWaveRowsExtra) * (10000L + (long)ni * nj * ns);
}

// The unlimited scheme's level march (k_un_march): blocks of bx x by threads over tiles of
// (bx - 1) x (by - 1) columns (a block's last column and row compute only the upper faces of
// the cells before them), two per SM, fitted to the patch: the fewest threads a level, counted
// in whole warps, of bx <= 32 (a warp's lanes in at most two rows), by <= kUnMarchMaxBY (the
// slabs in shared memory), 400 to 512 threads (16 warps or fewer, two blocks per SM, and each
// thread copies at most 2 of a slab's (bx + 5) (by + 5) values); 32 x 16 unless that saves 5%
// of its threads. 81 tracers on 134 x 110: 28 x 17 over 5 x 7 tiles, 16,800 threads a level
// against 32 x 16's 20,480 (1.07x faster); CONUS keeps 32 x 16 (26 x 16 had 1.4% fewer
// threads and was 1.01x slower) (docs/performance.md, "Blocks fitted to the patch").
constexpr int kUnMarchMaxBX = 32, kUnMarchMaxBY = 21;
struct UnMarchBlocks {
  int bx, by;    // threads of a block
  int nbx, nby;  // blocks in i and j
  long tiles() const { return (long)nbx * nby; }
  int warps() const { return (bx * by + 31) / 32; }  // of a block
};
inline UnMarchBlocks un_march_blocks(int ni, int nj) {
  const auto blocks = [&](int bx, int by) { return UnMarchBlocks{bx, by, (ni + bx - 2) / (bx - 1), (nj + by - 2) / (by - 1)}; };
  const auto threads = [](const UnMarchBlocks& b) { return b.tiles() * b.warps() * 32; };
  const UnMarchBlocks b32 = blocks(32, 16);
  UnMarchBlocks best = b32;
  for (int bx = 20; bx <= kUnMarchMaxBX; ++bx)
    for (int by = 8; by <= kUnMarchMaxBY && bx * by <= 512; ++by)
      if (bx * by >= 400 && threads(blocks(bx, by)) < threads(best)) best = blocks(bx, by);
  return 20 * threads(best) <= 19 * threads(b32) ? best : b32;
}
// The march or its two kernels (k_un_faces, k_un_tend_q), by a cost model of both measured on
// an H200 at 35 levels (docs/performance.md, "The unlimited scheme's level march on one code
// path", "Blocks fitted to the patch"):
// - a march launch takes about 43 us with up to one block per SM (one block's 35 levels in
//   sequence) and 21 us more for each further block of 16 warps on the busiest SM (in
//   proportion for blocks of fewer warps);
// - the two kernels about 16 us per group and 0.6 ns per column and species.
// Of 14 cases measured (1 to 81 tracers, 27 x 20 to 425 x 300 columns) the model picks the
// faster form in 13 and one 1.01x slower in the other
// (AdvectionRule.UnMarchTakesTheMeasuredFasterForm).
constexpr double kUnLaunchNs = 43000, kUnSmBlockNs = 21000, kUnGroupNs = 16000, kUnColumnSpeciesNs = 0.6;
// The march's time for ns species in groups of g on nsm SMs, and the two kernels' in groups of
// g2, for ni x nj columns.
inline double un_march_ns(int ni, int nj, int ns, int g, int nsm) {
  const UnMarchBlocks b = un_march_blocks(ni, nj);
  const double block_ns = kUnSmBlockNs * b.warps() / 16.0;
  double t = 0;
  for (int s = 0; s < ns; s += g) {
    const long per_sm = (b.tiles() * std::min(g, ns - s) + nsm - 1) / nsm;
    t += kUnLaunchNs + block_ns * (double)(per_sm - 1);
  }
  return t;
}
inline double un_two_ns(int ni, int nj, int ns, int g2) {
  return kUnGroupNs * ((ns + g2 - 1) / g2) + kUnColumnSpeciesNs * (double)ni * nj * ns;
}
inline bool un_march_cheaper(int ni, int nj, int ns, int g, int g2, int nsm) {
  return un_march_ns(ni, nj, ns, g, nsm) < un_two_ns(ni, nj, ns, g2);
}

// Backends: compiled twice (strict, fast) from advection_cpu.cpp / advection_gpu.cu.
namespace strict {
void run_cpu(const Prepared& p, AdvectTimings* t);
void run_gpu(const Prepared& p, AdvectTimings* t, const GpuOptions& o);
}  // namespace strict
namespace fast {
void run_cpu(const Prepared& p, AdvectTimings* t);
void run_gpu(const Prepared& p, AdvectTimings* t, const GpuOptions& o);
}  // namespace fast

}  // namespace advection
}  // namespace wrfgpu
