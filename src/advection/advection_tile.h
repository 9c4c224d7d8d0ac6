// advection_tile.h - advect_scalar_pd for one block of columns, marching up the levels: the
// face fluxes, limiter scales and tendencies of the block's cells computed in one pass, with
// only a few levels of intermediates alive at a time. One source for both backends, written
// against a Team (rank, size, sync): the CPU runs it with TileSerial (one member); a GPU
// kernel can run it with the threads of a block and the work arrays in shared memory.
//
// The arithmetic is the same as the two-stage scheme of advection_cpu.cpp (and the GPU's
// level march k_pd_fused): every face flux, scale and tendency comes from the
// same functions of advection_physics.h with the same operands, so the results are the same
// bits; only which face is computed where changes. A block of columns (a sub-tile of WRF's
// tile) needs the limiter scales of its cells and of the ring of face neighbours around it,
// and those need the six face fluxes of each of these cells; the faces of the ring are also
// computed by the neighbouring blocks (about 1.6 faces per face for a 32x4 block).
//
// Levels: to write the tendency of level k a cell needs the scales of levels k-1, k, k+1
// (its own column) and of its neighbours at level k, and its faces at level k; so the march
// computes the faces and scales of level k+1, then the tendencies of level k. Rolling buffers:
// x and y faces of two levels, z faces of three (a level's lower and upper face), scales of
// three levels.
#pragma once
#include <cstddef>
#include "advection_physics.h"

namespace wrfgpu {
namespace advection {
inline namespace WRFGPU_PHYS_NS {

struct TileSerial {
  WRFGPU_HD int rank() const { return 0; }
  WRFGPU_HD int size() const { return 1; }
  WRFGPU_HD void sync() const {}
};

// A block of columns a0..a1 x b0..b1 of WRF's tile ti0..ti1 x tj0..tj1, levels k0..k1
// (kts..ktf), species s0 .. s0+ns-1 of the call.
struct TileSpec {
  int a0, a1, b0, b1;
  int ti0, ti1, tj0, tj1;
  int k0, k1;
  int s0, ns;
  WRFGPU_HD int w() const { return a1 - a0 + 1; }
  WRFGPU_HD int h() const { return b1 - b0 + 1; }
  // Sizes of the three index boxes (x faces i in a0-1..a1+2, j in b0-1..b1+1; y faces i in
  // a0-1..a1+1, j in b0-1..b1+2; cells and z faces i in a0-1..a1+1, j in b0-1..b1+1).
  WRFGPU_HD int nx() const { return (w() + 3) * (h() + 2); }
  WRFGPU_HD int ny() const { return (w() + 2) * (h() + 3); }
  WRFGPU_HD int nc() const { return (w() + 2) * (h() + 2); }
  // Floats of work per species: x and y faces (hi, lo) of 2 levels, z faces (hi, lo) of 3
  // levels, scales of 3 levels.
  WRFGPU_HD int per_species() const { return 4 * nx() + 4 * ny() + 9 * nc(); }
};
WRFGPU_HD std::size_t tile_work_floats(const TileSpec& t) {
  return (std::size_t)t.per_species() * (std::size_t)t.ns;
}

// Addressing of the work arrays of species g (0-based within the group).
struct TileWork {
  float* p;
  TileSpec t;
  WRFGPU_HD float* base(int g) const { return p + (std::size_t)g * t.per_species(); }
  WRFGPU_HD float* xhi(int g, int b) const { return base(g) + b * t.nx(); }
  WRFGPU_HD float* xlo(int g, int b) const { return base(g) + (2 + b) * t.nx(); }
  WRFGPU_HD float* yhi(int g, int b) const { return base(g) + 4 * t.nx() + b * t.ny(); }
  WRFGPU_HD float* ylo(int g, int b) const { return base(g) + 4 * t.nx() + (2 + b) * t.ny(); }
  WRFGPU_HD float* zhi(int g, int pl) const { return base(g) + 4 * t.nx() + 4 * t.ny() + pl * t.nc(); }
  WRFGPU_HD float* zlo(int g, int pl) const {
    return base(g) + 4 * t.nx() + 4 * t.ny() + (3 + pl) * t.nc();
  }
  WRFGPU_HD float* sc(int g, int pl) const {
    return base(g) + 4 * t.nx() + 4 * t.ny() + (6 + pl) * t.nc();
  }
  // index of x face (i,j), y face (i,j), cell (i,j) in their boxes
  WRFGPU_HD int ix(int i, int j) const { return (i - (t.a0 - 1)) + (t.w() + 3) * (j - (t.b0 - 1)); }
  WRFGPU_HD int iy(int i, int j) const { return (i - (t.a0 - 1)) + (t.w() + 2) * (j - (t.b0 - 1)); }
  WRFGPU_HD int ic(int i, int j) const { return (i - (t.a0 - 1)) + (t.w() + 2) * (j - (t.b0 - 1)); }
  // rolling buffers: x/y faces of level k, z faces of level k, scales of level k (k0-1 .. k1+1)
  WRFGPU_HD int bxy(int k) const { return (k - t.k0) & 1; }
  WRFGPU_HD int pz(int k) const { return (k - t.k0) % 3; }
  WRFGPU_HD int ps(int k) const { return (k - t.k0 + 1) % 3; }
};

// Which cells of the block's neighbourhood need what (the GPU's FaceUse, for one block):
// a limiter cell (one whose scale WRF computes: inside the tile plus ring, not a corner of it,
// inside the limiter's range) needs all six faces; a cell of the block needs its z faces, and
// its x (y) faces where WRF adds the x (y) flux divergence.
struct TileCells {
  const View* v;
  TileSpec t;
  WRFGPU_HD bool in_block(int i, int j) const { return i >= t.a0 && i <= t.a1 && j >= t.b0 && j <= t.b1; }
  // the block and its face neighbours (the corners of the ring are not read)
  WRFGPU_HD bool near(int i, int j) const {
    const bool in_i = i >= t.a0 && i <= t.a1, in_j = j >= t.b0 && j <= t.b1;
    const bool ri = i >= t.a0 - 1 && i <= t.a1 + 1, rj = j >= t.b0 - 1 && j <= t.b1 + 1;
    return (in_i && rj) || (ri && in_j);
  }
  WRFGPU_HD bool limiter(int i, int j) const {
    if (!near(i, j)) return false;
    if (i < t.ti0 - 1 || i > t.ti1 + 1 || j < t.tj0 - 1 || j > t.tj1 + 1) return false;
    const bool corner = (i < t.ti0 || i > t.ti1) && (j < t.tj0 || j > t.tj1);
    return !corner && pd_in_limiter(*v, i, j);
  }
  WRFGPU_HD bool x(int i, int j) const { return limiter(i, j) || (in_block(i, j) && xdiv_cell(*v, i)); }
  WRFGPU_HD bool y(int i, int j) const { return limiter(i, j) || (in_block(i, j) && ydiv_cell(*v, j)); }
  WRFGPU_HD bool z(int i, int j) const { return limiter(i, j) || in_block(i, j); }
};

// Faces of level k: x and y faces, and the z faces at k+1 (with lower too: also those at k).
template <class Team>
WRFGPU_HD void tile_faces(const Team& tm, const View& v, const TileWork& w, const TileCells& cl,
                          int k, bool lower) {
  const TileSpec& t = w.t;
  const int b = w.bxy(k);
  const int wx = t.w() + 3, wy = t.w() + 2, wc = t.w() + 2;
  for (int n = tm.rank(); n < t.nx(); n += tm.size()) {
    const int i = t.a0 - 1 + n % wx, j = t.b0 - 1 + n / wx;
    if (!(cl.x(i, j) || cl.x(i - 1, j))) continue;
    const Face f = pd_xface(v, i, k, j);
    for (int g = 0; g < t.ns; ++g) {
      const Flux q = pd_xflux(v, f, (std::size_t)(t.s0 + g) * v.sst, i, k, j);
      w.xhi(g, b)[n] = q.hi;
      w.xlo(g, b)[n] = q.lo;
    }
  }
  for (int n = tm.rank(); n < t.ny(); n += tm.size()) {
    const int i = t.a0 - 1 + n % wy, j = t.b0 - 1 + n / wy;
    if (!(cl.y(i, j) || cl.y(i, j - 1))) continue;
    const Face f = pd_yface(v, i, k, j);
    for (int g = 0; g < t.ns; ++g) {
      const Flux q = pd_yflux(v, f, (std::size_t)(t.s0 + g) * v.sst, i, k, j);
      w.yhi(g, b)[n] = q.hi;
      w.ylo(g, b)[n] = q.lo;
    }
  }
  for (int kk = lower ? k : k + 1; kk <= k + 1; ++kk) {
    const int pl = w.pz(kk);
    for (int n = tm.rank(); n < t.nc(); n += tm.size()) {
      const int i = t.a0 - 1 + n % wc, j = t.b0 - 1 + n / wc;
      if (!cl.z(i, j)) continue;
      const Face f = pd_zface(v, i, kk, j);
      for (int g = 0; g < t.ns; ++g) {
        const Flux q = pd_zflux(v, f, (std::size_t)(t.s0 + g) * v.sst, i, kk, j);
        w.zhi(g, pl)[n] = q.hi;
        w.zlo(g, pl)[n] = q.lo;
      }
    }
  }
}

// The six face fluxes of cell (i,k,j), species g, from the work arrays.
WRFGPU_HD CellFlux tile_cell_flux(const TileWork& w, int g, int i, int k, int j, bool xs, bool ys) {
  CellFlux q{};
  const int pz0 = w.pz(k), pz1 = w.pz(k + 1), c = w.ic(i, j);
  q.z0 = Flux{w.zhi(g, pz0)[c], w.zlo(g, pz0)[c]};
  q.z1 = Flux{w.zhi(g, pz1)[c], w.zlo(g, pz1)[c]};
  const int b = w.bxy(k);
  if (xs) {
    const int x0 = w.ix(i, j), x1 = w.ix(i + 1, j);
    q.x0 = Flux{w.xhi(g, b)[x0], w.xlo(g, b)[x0]};
    q.x1 = Flux{w.xhi(g, b)[x1], w.xlo(g, b)[x1]};
  }
  if (ys) {
    const int y0 = w.iy(i, j), y1 = w.iy(i, j + 1);
    q.y0 = Flux{w.yhi(g, b)[y0], w.ylo(g, b)[y0]};
    q.y1 = Flux{w.yhi(g, b)[y1], w.ylo(g, b)[y1]};
  }
  return q;
}

// Limiter scales of level k (pd_cell_scale's arithmetic); 1 where WRF computes none.
template <class Team>
WRFGPU_HD void tile_scales(const Team& tm, const View& v, const TileWork& w, const TileCells& cl,
                           int k) {
  const TileSpec& t = w.t;
  const int pl = w.ps(k), wc = t.w() + 2;
  for (int n = tm.rank(); n < t.nc(); n += tm.size()) {
    const int i = t.a0 - 1 + n % wc, j = t.b0 - 1 + n / wc;
    if (!cl.limiter(i, j)) {
      for (int g = 0; g < t.ns; ++g) w.sc(g, pl)[n] = 1.0f;
      continue;
    }
    for (int g = 0; g < t.ns; ++g) {
      const CellFlux q = tile_cell_flux(w, g, i, k, j, true, true);
      const std::size_t so = (std::size_t)(t.s0 + g) * v.sst;
      w.sc(g, pl)[n] = pd_scale(pd_ph_low(v, q, so, i, k, j), pd_flux_out(v, q, i, k, j));
    }
  }
}

template <class Team>
WRFGPU_HD void tile_scales_one(const Team& tm, const TileWork& w, int k) {
  const int pl = w.ps(k);
  for (int n = tm.rank(); n < w.t.nc(); n += tm.size())
    for (int g = 0; g < w.t.ns; ++g) w.sc(g, pl)[n] = 1.0f;
}

// Tendencies of level k of the block's cells (pd_cell_tendency_q).
template <class Team>
WRFGPU_HD void tile_tendencies(const Team& tm, const View& v, const TileWork& w, int k) {
  const TileSpec& t = w.t;
  const int wb = t.w();
  for (int n = tm.rank(); n < t.w() * t.h(); n += tm.size()) {
    const int i = t.a0 + n % wb, j = t.b0 + n / wb;
    const bool xd = xdiv_cell(v, i), yd = ydiv_cell(v, j);
    for (int g = 0; g < t.ns; ++g) {
      const CellFlux q = tile_cell_flux(w, g, i, k, j, xd, yd);
      // scale of neighbour (di,dk,dj): levels outside kts..ktf border a zero face (1)
      auto sc = [&](int di, int dk, int dj) -> float {
        const int kk = k + dk;
        if (kk < t.k0 || kk > t.k1) return 1.0f;
        return w.sc(g, w.ps(kk))[w.ic(i + di, j + dj)];
      };
      const std::size_t s = (std::size_t)(t.s0 + g);
      const std::size_t o = s * v.ost + v.mo.idx3(i, k, j);
      const float t0 = v.accumulate ? v.tend[o] : 0.0f;
      const float h0 = (v.accumulate && v.htend) ? v.htend[o] : 0.0f;
      const PdOut r = pd_cell_tendency_q(v, q, s * v.sst, i, k, j, t0, h0, sc);
      v.tend[o] = r.t;
      if (v.htend) v.htend[o] = r.h;
      if (v.ztend) v.ztend[o] = r.z;
    }
  }
}

// The whole march for one block of columns and one group of species.
template <class Team>
WRFGPU_HD void pd_tile_march(const Team& tm, const View& v, const TileWork& w) {
  const TileSpec& t = w.t;
  const TileCells cl{&v, t};
  if (t.k1 < t.k0 || t.w() <= 0 || t.h() <= 0) return;
  tile_scales_one(tm, w, t.k0 - 1);
  tile_faces(tm, v, w, cl, t.k0, true);
  tm.sync();
  tile_scales(tm, v, w, cl, t.k0);
  tm.sync();
  for (int k = t.k0; k <= t.k1; ++k) {
    if (k + 1 <= t.k1) {
      tile_faces(tm, v, w, cl, k + 1, false);
      tm.sync();
      tile_scales(tm, v, w, cl, k + 1);
    } else {
      tile_scales_one(tm, w, k + 1);
    }
    tm.sync();
    tile_tendencies(tm, v, w, k);
    tm.sync();  // the next level overwrites the buffers of level k-1 / k
  }
}

// ---- advect_scalar (RK1/RK2, unlimited): the same march without limiter --------------------
// Each face flux once per block (the per-cell form computes every face for both its cells):
// x faces a0..a1+1 of the block's rows, y faces b0..b1+1 of its columns, z faces of two levels.
// The work holds, per species, (w+1)*h x fluxes, w*(h+1) y fluxes and 2*w*h z fluxes.
WRFGPU_HD std::size_t un_tile_work_floats(const TileSpec& t) {
  return (std::size_t)t.ns * (std::size_t)((t.w() + 1) * t.h() + t.w() * (t.h() + 1) + 2 * t.w() * t.h());
}
template <class Team>
WRFGPU_HD void un_tile_march(const Team& tm, const View& v, const TileSpec& t, float* work) {
  const int w = t.w(), h = t.h();
  if (t.k1 < t.k0 || w <= 0 || h <= 0) return;
  const int nxf = (w + 1) * h, nyf = w * (h + 1), nc = w * h, per = nxf + nyf + 2 * nc;
  auto X = [&](int g) { return work + (std::size_t)g * per; };
  auto Y = [&](int g) { return work + (std::size_t)g * per + nxf; };
  auto Z = [&](int g, int k) { return work + (std::size_t)g * per + nxf + nyf + ((k - t.k0) & 1) * nc; };
  auto zfaces = [&](int k) {
    for (int n = tm.rank(); n < nc; n += tm.size()) {
      const int i = t.a0 + n % w, j = t.b0 + n / w;
      for (int g = 0; g < t.ns; ++g) Z(g, k)[n] = un_zflux(v, (std::size_t)(t.s0 + g) * v.sst, i, k, j);
    }
  };
  zfaces(t.k0);
  for (int k = t.k0; k <= t.k1; ++k) {
    // the faces of level k (x, y) and the upper z faces (k+1) of its cells
    for (int n = tm.rank(); n < nxf; n += tm.size()) {
      const int i = t.a0 + n % (w + 1), j = t.b0 + n / (w + 1);
      // face i is the lower face of cell i and the upper face of cell i-1
      if (!(i <= t.a1 && xdiv_cell(v, i)) && !(i > t.a0 && xdiv_cell(v, i - 1))) continue;
      for (int g = 0; g < t.ns; ++g) X(g)[n] = un_xflux(v, (std::size_t)(t.s0 + g) * v.sst, i, k, j);
    }
    for (int n = tm.rank(); n < nyf; n += tm.size()) {
      const int i = t.a0 + n % w, j = t.b0 + n / w;
      if (!(j <= t.b1 && ydiv_cell(v, j)) && !(j > t.b0 && ydiv_cell(v, j - 1))) continue;
      for (int g = 0; g < t.ns; ++g) Y(g)[n] = un_yflux(v, (std::size_t)(t.s0 + g) * v.sst, i, k, j);
    }
    zfaces(k + 1);
    tm.sync();
    for (int n = tm.rank(); n < nc; n += tm.size()) {
      const int i = t.a0 + n % w, j = t.b0 + n / w;
      const bool xd = xdiv_cell(v, i), yd = ydiv_cell(v, j);
      for (int g = 0; g < t.ns; ++g) {
        UnFlux q{};
        if (xd) { q.x0 = X(g)[(i - t.a0) + (w + 1) * (j - t.b0)]; q.x1 = X(g)[(i + 1 - t.a0) + (w + 1) * (j - t.b0)]; }
        if (yd) { q.y0 = Y(g)[(i - t.a0) + w * (j - t.b0)]; q.y1 = Y(g)[(i - t.a0) + w * (j + 1 - t.b0)]; }
        q.z0 = Z(g, k)[n];
        q.z1 = Z(g, k + 1)[n];
        const std::size_t s = (std::size_t)(t.s0 + g);
        const std::size_t o = s * v.ost + v.mo.idx3(i, k, j);
        const float t0 = v.accumulate ? v.tend[o] : 0.0f;
        v.tend[o] = un_cell_tendency_q(v, q, s * v.sst, i, k, j, t0);
      }
    }
    tm.sync();  // the next level overwrites the x, y faces and the z faces of level k
  }
}

}  // inline namespace phys_<mode>
}  // namespace advection
}  // namespace wrfgpu
