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

// PD: the level march where one group's launch has enough blocks per SM, else the three
// kernels, whose one thread per cell fills SMs that the march's 35 levels in sequence leave
// idle. The march runs one block per SM, so its time goes by whole waves: it is faster from
// 0.6 blocks per SM, whatever the species per group, except just past one wave, where its
// second wave is nearly empty and the three kernels, which share a cell's face geometry
// among a thread's species, are faster with 2 or more species per group. Measured on an
// H200 with 29 x 15 tiles (docs/performance.md, "The size rule for blocks of 32 x 18"),
// blocks per SM: three kernels faster at 0.36-0.48 (1.04-1.4x), at 1.09 with 3 species
// (1.13x; equal with 2), at 1.06-1.21 with 4 (1.02-1.08x) and at 1.27 with 14 (1.16x); the
// march faster at 0.61-0.95 (1.0-1.7x; three kernels 1.03x with 4), at 1.17 with 1 species
// (1.31x), from 1.21 with 2 (1.05x), from 1.36 with 3 (1.15-1.26x) and at 2.12 with 14
// (1.25x); equal at 1.23-1.27 with 3 and 1.45 with 4.
// blocks: pd_rule_tiles of the patch times the G species of the group; nsm: the device's SMs.
// The march's tiles are 29 x 19 cells since its blocks grew to 32 x 22 (docs/performance.md,
// "The march's blocks of 32 x 22"), which run a wave in about the time of the 32 x 18 ones'
// and cover 1.27x the cells; the rule is not measured again for them. So it is given the patch
// in the tiles its thresholds were measured with: every patch takes the form it took before,
// and the march only got faster where it runs (counted in 29 x 19 tiles, a 212 x 150 patch
// with one tracer, as TKE on a quarter of CONUS, would fall below 0.6 blocks per SM and take
// the three kernels, 1.2x slower there).
inline long pd_rule_tiles(int ni, int nj) { return (long)((ni + 28) / 29) * ((nj + 14) / 15); }
inline bool pd_march_by_size(long blocks, int nsm, int G) {
  const bool enough = 10 * blocks >= 6 * (long)nsm;  // 0.6 blocks per SM
  // past one wave by less than (G - 1)/8 of a wave, at most half a wave
  const long thin = (long)nsm * std::min(std::max(G, 1) - 1, 4) / 8;
  const bool thin_second_wave = blocks > nsm && blocks - nsm < thin;
  return enough && !thin_second_wave;
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
inline int pd_march_group_size(int ns, int g0, int gmax, long tiles, int nsm) {
  auto waves = [&](int g) {
    long w = 0;
    for (int s = 0; s < ns; s += g) w += (tiles * std::min(g, ns - s) + nsm - 1) / nsm;
    return w;
  };
  int best = g0;
  for (int g = g0 + 1; g <= std::min(gmax, ns); ++g)
    if (waves(g) < waves(best)) best = g;
  return best;
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
