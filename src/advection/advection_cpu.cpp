// advection_cpu.cpp - OpenMP backend of the scalar advection kernel. Compiled twice
// (-DWRFGPU_MODE_NS=strict|fast). Works directly on the caller's WRF arrays.
//
// pd (advect_scalar_pd) by default as blocks of columns marching up the levels
// (advection_tile.h, cpu_tiles); or, with WRFGPU_ADVECT_CPU_TILE=0, in two stages, as the
// GPU does:
//   1. limiter scale of every cell of the tile plus one ring (the ring cells scale the faces
//      on the tile's edge); geometry of the six faces once per cell, then all tracers;
//   2. tendency of every tile cell: open terms, z, x, y divergence of the limited fluxes.
// unlimited (advect_scalar): one stage.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "config.h"
#include "advection_impl.h"
#include "advection_tile.h"
#include "errors.h"

namespace wrfgpu {
namespace advection {
namespace WRFGPU_MODE_NS {

static void pd_cpu(const Prepared& p) {
  const View v = cpu_view(p);
  const AdvectInputs& in = *p.in;
  const Box& R = p.ring;
  const Box& T = p.tile;
  const int ns = in.nspec;
  const std::size_t rsz = R.size();
  std::vector<float> scale((std::size_t)ns * rsz);
  // ---- stage 1: limiter scales (advect_scalar_pd "positive definite filter") --------------
#pragma omp parallel for collapse(2) schedule(static)
  for (int j = R.j0; j <= R.j1; ++j)
    for (int k = R.k0; k <= R.k1; ++k) {
      for (int i = R.i0; i <= R.i1; ++i) {
        const std::size_t c = (std::size_t)(i - R.i0) + (std::size_t)R.ni() * ((k - R.k0) + (std::size_t)R.nk() * (j - R.j0));
        const bool corner = (i < T.i0 || i > T.i1) && (j < T.j0 || j > T.j1);
        if (corner || !pd_in_limiter(v, i, j)) {
          for (int s = 0; s < ns; ++s) scale[(std::size_t)s * rsz + c] = 1.0f;
          continue;
        }
        const CellFaces cf = pd_cell_faces(v, i, k, j);
        for (int s = 0; s < ns; ++s)
          scale[(std::size_t)s * rsz + c] = pd_cell_scale(v, cf, (std::size_t)s * v.sst, i, k, j);
      }
    }
  // ---- stage 2: limited flux divergence into the tendency ---------------------------------
#pragma omp parallel for collapse(2) schedule(static)
  for (int j = T.j0; j <= T.j1; ++j)
    for (int k = T.k0; k <= T.k1; ++k) {
      for (int i = T.i0; i <= T.i1; ++i) {
        const CellFaces cf = pd_cell_faces(v, i, k, j, xdiv_cell(v, i), ydiv_cell(v, j));
        ScaleLookup sc;
        sc.i0 = R.i0; sc.ni = R.ni(); sc.k0 = R.k0; sc.nk = R.nk(); sc.j0 = R.j0;
        sc.i = i; sc.k = k; sc.j = j;
        for (int s = 0; s < ns; ++s) {
          sc.p = scale.data() + (std::size_t)s * rsz;
          const std::size_t o = (std::size_t)s * v.ost + v.mo.idx3(i, k, j);
          const float t0 = v.accumulate ? v.tend[o] : 0.0f;
          const float h0 = (v.accumulate && v.htend) ? v.htend[o] : 0.0f;
          const PdOut r = pd_cell_tendency(v, cf, (std::size_t)s * v.sst, i, k, j, t0, h0, sc);
          v.tend[o] = r.t;
          if (v.htend) v.htend[o] = r.h;
          if (v.ztend) v.ztend[o] = r.z;
        }
      }
    }
}

// Both schemes as blocks of columns marching up the levels (advection_tile.h), bw x bh
// columns per block and up to 8 species at a time, blocks spread over the threads: pd with
// pd_tile_march, the unlimited scheme with un_tile_march. Same bits as pd_cpu / un_cpu.
static void cpu_tiles(const Prepared& p, int bw, int bh) {
  const View v = cpu_view(p);
  const Box& T = p.tile;
  const int ns = p.in->nspec, gs = ns < 8 ? ns : 8;
  const int nbi = (T.ni() + bw - 1) / bw, nbj = (T.nj() + bh - 1) / bh;
#pragma omp parallel
  {
    std::vector<float> work;
#pragma omp for collapse(2) schedule(dynamic)
    for (int bj = 0; bj < nbj; ++bj)
      for (int bi = 0; bi < nbi; ++bi)
        for (int s0 = 0; s0 < ns; s0 += gs) {
          TileSpec t;
          t.a0 = T.i0 + bi * bw; t.a1 = t.a0 + bw - 1 < T.i1 ? t.a0 + bw - 1 : T.i1;
          t.b0 = T.j0 + bj * bh; t.b1 = t.b0 + bh - 1 < T.j1 ? t.b0 + bh - 1 : T.j1;
          t.ti0 = T.i0; t.ti1 = T.i1; t.tj0 = T.j0; t.tj1 = T.j1;
          t.k0 = T.k0; t.k1 = T.k1;
          t.s0 = s0; t.ns = ns - s0 < gs ? ns - s0 : gs;
          work.resize(p.pd ? tile_work_floats(t) : un_tile_work_floats(t));
          if (p.pd) pd_tile_march(TileSerial{}, v, TileWork{work.data(), t});
          else un_tile_march(TileSerial{}, v, t, work.data());
        }
  }
}

// Both schemes run as blocks of 16x8 columns marching up the levels (pd: twice as fast as
// the two-stage scheme on 81 tracers, its scale array and faces stay in cache). Read at every
// call: WRFGPU_ADVECT_CPU_TILE=WxH another block shape, =0 the per-cell forms (pd_cpu, un_cpu).
static bool cpu_tile_shape(int& bw, int& bh) {
  bw = 16;
  bh = 8;
  const auto v = config::text("WRFGPU_ADVECT_CPU_TILE");
  if (!v) return true;
  const char* e = v->c_str();
  if (*v == "0") return false;
  if (std::sscanf(e, "%dx%d", &bw, &bh) != 2 || bw < 1 || bh < 1)
    throw InputError(std::string("WRFGPU_ADVECT_CPU_TILE='") + e +
                     "': expected WxH with W, H >= 1 columns (e.g. 16x8), or 0 for the two-stage scheme");
  return true;
}

static void un_cpu(const Prepared& p) {
  const View v = cpu_view(p);
  const Box& T = p.tile;
  const int ns = p.in->nspec;
#pragma omp parallel for collapse(2) schedule(static)
  for (int j = T.j0; j <= T.j1; ++j)
    for (int k = T.k0; k <= T.k1; ++k)
      for (int s = 0; s < ns; ++s)
        for (int i = T.i0; i <= T.i1; ++i) {
          const std::size_t o = (std::size_t)s * v.ost + v.mo.idx3(i, k, j);
          const float t0 = v.accumulate ? v.tend[o] : 0.0f;
          v.tend[o] = un_cell_tendency(v, (std::size_t)s * v.sst, i, k, j, t0);
        }
}

void run_cpu(const Prepared& p, AdvectTimings* t) {
  const auto t0 = std::chrono::steady_clock::now();
  int bw, bh;
  if (cpu_tile_shape(bw, bh)) cpu_tiles(p, bw, bh);
  else if (p.pd) pd_cpu(p);
  else un_cpu(p);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (t) {
    t->kernel_ms = t->total_ms = ms;
    t->groups = 1;
    t->species_per_group = p.in->nspec;
  }
}

}  // namespace WRFGPU_MODE_NS
}  // namespace advection
}  // namespace wrfgpu
