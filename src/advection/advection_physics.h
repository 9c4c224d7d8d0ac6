// advection_physics.h - WRF's positive-definite and unlimited scalar advection, one source for
// the OpenMP and the CUDA backends (WRFGPU_HD functions only; no loops over the grid here).
//
// Mirrors dyn_em/module_advect_em.F of WRF v4.7.x:
//   advect_scalar_pd  (h_sca_adv_order=5, v_sca_adv_order=3)  - last Runge-Kutta step
//   advect_scalar     (same orders, no limiter)                - Runge-Kutta steps 1 and 2
// This is a rewrite, not a translation line by line: WRF computes whole flux arrays and then
// sweeps them; here every quantity is a function of its face or cell index, so a cell can be
// computed on its own. Each function says which WRF statement it reproduces. Every expression
// keeps WRF's single-precision operands, literal constants and evaluation order (Fortran
// evaluates a*b*c as (a*b)*c and honours parentheses; gfortran on x86-64 rounds every
// operation to float and, without -march flags, never contracts to FMA), so that in strict
// mode the results are bitwise those of a gfortran-built WRF.
//
// Index conventions (all WRF 1-based): face i of the x direction lies between mass cells i-1
// and i; face j of y between j-1 and j; face k of z between half levels k-1 and k.
#pragma once
#include <math.h>
#include <cstddef>
#include "wrf_dims.h"
#include "wrfgpu_hd.h"

namespace wrfgpu {
namespace advection {

// ---- single-precision constants of WRF's statement functions --------------------------------
// gfortran folds (37./60.) etc. in single precision with correct rounding; a float division of
// the two exactly representable operands gives the same value.
struct K {
  static constexpr float c37_60 = 37.0f / 60.0f;  // advect_scalar_pd flux6
  static constexpr float c2_15 = 2.0f / 15.0f;
  static constexpr float c1_60 = 1.0f / 60.0f;
  static constexpr float c7_12 = 7.0f / 12.0f;    // advect_scalar_pd flux4
  static constexpr float c1_12 = 1.0f / 12.0f;
  static constexpr float eps = 1.e-20f;           // advect_scalar_pd: REAL, PARAMETER :: eps
};

// Every function (and the per-face/per-cell structs) lives in the mode's inline namespace
// WRFGPU_PHYS_NS (phys_strict, phys_fast; wrfgpu_hd.h): the backends are compiled twice with
// different floating-point flags, and an inline function shared by both would be one weak
// symbol for the linker, so the fast compilation could replace the strict one. Bc, Pts, Pts32
// and View (data and accessors, built by the dispatcher for both modes) are shared.
inline namespace WRFGPU_PHYS_NS {

// Fortran MIN/MAX of two reals (values; the sign of a zero result may differ from gfortran's
// minss/maxss choice, which never changes a non-zero result).
WRFGPU_HD float wmin(float a, float b) { return b < a ? b : a; }
WRFGPU_HD float wmax(float a, float b) { return b > a ? b : a; }
// Fortran SIGN(1., x): gfortran's default -fsign-zero makes SIGN(1.,-0.) = -1 (copysign).
WRFGPU_HD float sign1(float x) { return copysignf(1.0f, x); }

// ---- flux operators of advect_scalar_pd (statement functions flux3..flux6) ------------------
// ts = REAL(SIGN(1,time_step)), the integer factor converted as Fortran does in integer*real.
WRFGPU_HD float pd_flux6(float q_im3, float q_im2, float q_im1, float q_i, float q_ip1,
                         float q_ip2) {
  return K::c37_60 * (q_i + q_im1) - K::c2_15 * (q_ip1 + q_im2) + K::c1_60 * (q_ip2 + q_im3);
}
WRFGPU_HD float pd_flux5(float q_im3, float q_im2, float q_im1, float q_i, float q_ip1,
                         float q_ip2, float ua, float ts) {
  return pd_flux6(q_im3, q_im2, q_im1, q_i, q_ip1, q_ip2) -
         ts * sign1(ua) * K::c1_60 *
             ((q_ip2 - q_im3) - 5.0f * (q_ip1 - q_im2) + 10.0f * (q_i - q_im1));
}
WRFGPU_HD float pd_flux4(float q_im2, float q_im1, float q_i, float q_ip1) {
  return K::c7_12 * (q_i + q_im1) - K::c1_12 * (q_ip1 + q_im2);
}
WRFGPU_HD float pd_flux3(float q_im2, float q_im1, float q_i, float q_ip1, float ua, float ts) {
  return pd_flux4(q_im2, q_im1, q_i, q_ip1) +
         ts * sign1(ua) * K::c1_12 * ((q_ip1 - q_im2) - 3.0f * (q_i - q_im1));
}
// flux_upwind(q_im1, q_i, cr) of advect_scalar_pd, split in its Courant-number part (shared by
// all tracers of a face) and the tracer part: 0.5*min(1,cr+|cr|)*q_im1 + 0.5*max(-1,cr-|cr|)*q_i.
struct Upwind {
  float a, b;  // 0.5*min(1.0,(cr+abs(cr))), 0.5*max(-1.0,(cr-abs(cr)))
  float coef;  // mu*(dx/dt): fql = coef*flux_upwind(...)
};
WRFGPU_HD Upwind upwind_coef(float cr, float mu, float dxdt) {
  Upwind u;
  u.a = 0.5f * wmin(1.0f, cr + fabsf(cr));
  u.b = 0.5f * wmax(-1.0f, cr - fabsf(cr));
  u.coef = mu * dxdt;
  return u;
}
WRFGPU_HD float flux_upwind(const Upwind& u, float q_im1, float q_i) {
  return u.coef * (u.a * q_im1 + u.b * q_i);
}

// ---- flux operators of advect_scalar (RK1/RK2, unlimited) -----------------------------------
// Note WRF writes these differently from the pd ones (division by 12./60. at the end). Div
// divides by those literals: IeeeDiv (x / b) here and on the CPU; the GPU face kernel passes
// DoubleDiv, the same IEEE quotient from one double product.
struct IeeeDiv {
  WRFGPU_HD float operator()(float x, float b) const { return x / b; }
};
// x / b for b = 60. and 12. as one double product, rounded once to float:
// RN_float(RN_double(x RN_double(1/b))). For every float x this is IEEE float division's result,
// zeros' signs, subnormals, Inf and NaN included (AdvectionRule.DoubleDivIsIeeeDivision checks
// all 2^32 float patterns for both b). The product's error, a double ulp or so, is far smaller
// than the distance of x/60 or x/12 from a float's rounding boundary, which their short
// repeating binary fractions (1/15, 1/3) keep away. On the GPU it is three instructions (two
// conversions and a DMUL) with no branch and no slow path; nvcc's float division is about 11
// with a branch to a slow path for subnormal quotients.
struct DoubleDiv {
  WRFGPU_HD float operator()(float x, float b) const {
    return (float)((double)x * (1.0 / (double)b));  // b a literal: 1/b folded
  }
};
template <class Div = IeeeDiv>
WRFGPU_HD float un_flux6(float q_im3, float q_im2, float q_im1, float q_i, float q_ip1,
                         float q_ip2, Div&& dv = Div()) {
  return dv(37.0f * (q_i + q_im1) - 8.0f * (q_ip1 + q_im2) + (q_ip2 + q_im3), 60.0f);
}
template <class Div = IeeeDiv>
WRFGPU_HD float un_flux5(float q_im3, float q_im2, float q_im1, float q_i, float q_ip1,
                         float q_ip2, float ua, float ts, Div&& dv = Div()) {
  return un_flux6(q_im3, q_im2, q_im1, q_i, q_ip1, q_ip2, dv) -
         dv(ts * sign1(ua) * ((q_ip2 - q_im3) - 5.0f * (q_ip1 - q_im2) + 10.0f * (q_i - q_im1)),
            60.0f);
}
template <class Div = IeeeDiv>
WRFGPU_HD float un_flux4(float q_im2, float q_im1, float q_i, float q_ip1, Div&& dv = Div()) {
  return dv(7.0f * (q_i + q_im1) - (q_ip1 + q_im2), 12.0f);
}
template <class Div = IeeeDiv>
WRFGPU_HD float un_flux3(float q_im2, float q_im1, float q_i, float q_ip1, float ua, float ts,
                         Div&& dv = Div()) {
  return un_flux4(q_im2, q_im1, q_i, q_ip1, dv) +
         dv(ts * sign1(ua) * ((q_ip1 - q_im2) - 3.0f * (q_i - q_im1)), 12.0f);
}

}  // inline namespace phys_<mode>

// ---- boundary rule ---------------------------------------------------------------------------
// WRF's degrade_xs/xe/ys/ye depend on the tile (its > ids+3 ...), but whenever a face near the
// boundary is computed at all, the tile is close enough for the flag to be set; so the order of a
// face is a function of the face index and the boundary type only (tile-independent, as WRF's
// results are). A side is "degradable" unless periodic or symmetric.
struct Bc {
  int dxs = 0, dxe = 0, dys = 0, dye = 0;  // degradable sides
  int lim_i0 = 0, lim_i1 = 0, lim_j0 = 0, lim_j1 = 0;  // cells the pd limiter may scale
  int open_xs = 0, open_xe = 0, open_ys = 0, open_ye = 0;  // radiation terms applied
};

// One species' values of field or field_old around a cell (i,k,j): element (i+di, k+dk, j+dj)
// at p[di + dk*sk + dj*sj], sk and sj the memory layout's k and j strides. The GPU kernels take
// the centre's address once per species; WRF's index arithmetic (View::F, 64-bit) at each of the
// 22 stencil points of a cell, in every species, was most of the face kernel's instructions.
struct Pts {
  const float* p;
  int sk, sj;
  WRFGPU_HD float operator()(int di, int dk, int dj) const { return p[di + dk * sk + dj * sj]; }
};
// The same from a base pointer and the centre's element index, in 32-bit unsigned arithmetic
// (GPU: a group's device buffers hold fewer than 2^32 elements, which run_gpu checks), so that
// each load is one 32-bit add and one wide multiply-add instead of 64-bit pointer arithmetic.
struct Pts32 {
  const float* base;
  unsigned c;
  int sk, sj;
  WRFGPU_HD float operator()(int di, int dk, int dj) const {
    return base[c + (unsigned)(di + dk * sk + dj * sj)];
  }
};

// Everything a cell computation reads. Memory layouts are separate because the GPU holds only a
// region of each array (its own WrfDims with ims.. = the region), the CPU the caller's arrays.
struct View {
  WrfDims g;   // domain and tile bounds as WRF passed them (memory fields unused)
  WrfDims mt;  // layout of field / field_old (species at + n*sst)
  WrfDims mm;  // layout of ru, rv, rom and of the 2-D arrays
  WrfDims mo;  // layout of tendency (and h_/z_tendency)
  const float* f = nullptr;
  const float* fo = nullptr;
  std::size_t sst = 0;  // species stride of f/fo
  float* tend = nullptr;
  float* htend = nullptr;
  float* ztend = nullptr;
  std::size_t ost = 0;  // species stride of the outputs
  const float *ru = nullptr, *rv = nullptr, *rom = nullptr;
  const float *mut = nullptr, *mub = nullptr, *mu_old = nullptr, *msftx = nullptr,
              *msfty = nullptr;
  const float *c1 = nullptr, *c2 = nullptr, *fzm = nullptr, *fzp = nullptr, *rdzw = nullptr;
  int k1d = 1;  // WRF index of element 0 of the 1-D arrays (kms)
  float rdx = 0, rdy = 0, dt = 0, ts = 1;
  int itf = 0, jtf = 0, ktf = 0;
  int accumulate = 0;  // 1: add to tendency (WRF's INTENT(INOUT)); 0: tendency starts at +0.
  Bc bc;

  WRFGPU_HD float F(std::size_t s, int i, int k, int j) const { return f[s + mt.idx3(i, k, j)]; }
  WRFGPU_HD float FO(std::size_t s, int i, int k, int j) const {
    return fo[s + mt.idx3(i, k, j)];
  }
  WRFGPU_HD Pts PF(std::size_t s, int i, int k, int j) const {
    return Pts{f + s + mt.idx3(i, k, j), mt.nx(), mt.nx() * mt.nz()};
  }
  WRFGPU_HD Pts PFO(std::size_t s, int i, int k, int j) const {
    return Pts{fo + s + mt.idx3(i, k, j), mt.nx(), mt.nx() * mt.nz()};
  }
  WRFGPU_HD float RU(int i, int k, int j) const { return ru[mm.idx3(i, k, j)]; }
  WRFGPU_HD float RV(int i, int k, int j) const { return rv[mm.idx3(i, k, j)]; }
  WRFGPU_HD float ROM(int i, int k, int j) const { return rom[mm.idx3(i, k, j)]; }
  WRFGPU_HD float A2(const float* a, int i, int j) const { return a[mm.idx2(i, j)]; }
  WRFGPU_HD float A1(const float* a, int k) const { return a[k - k1d]; }
};

inline namespace WRFGPU_PHYS_NS {

// Order of the horizontal flux at x-face i / y-face j (advect_scalar_pd and advect_scalar with
// h order 5): 2nd order next to a degradable boundary (face ids+1, ide-1), 3rd order one further
// in (ids+2, ide-2), 5th order elsewhere.
WRFGPU_HD int xface_order(const View& v, int i) {
  if (v.bc.dxs && i == v.g.ids + 1) return 2;
  if (v.bc.dxs && i == v.g.ids + 2) return 3;
  if (v.bc.dxe && i == v.g.ide - 1) return 2;
  if (v.bc.dxe && i == v.g.ide - 2) return 3;
  return 5;
}
WRFGPU_HD int yface_order(const View& v, int j) {
  if (v.bc.dys && j == v.g.jds + 1) return 2;
  if (v.bc.dys && j == v.g.jds + 2) return 3;
  if (v.bc.dye && j == v.g.jde - 1) return 2;
  if (v.bc.dye && j == v.g.jde - 2) return 3;
  return 5;
}
// Vertical (v order 3): no flux through k=kts and k=kde; 2nd order (fzm/fzp interpolation) at
// kts+1 and ktf; 3rd order between.
WRFGPU_HD int zface_order(const View& v, int k) {
  if (k <= v.g.kts || k > v.ktf) return 0;
  if (k == v.g.kts + 1 || k == v.ktf) return 2;
  return 3;
}

// ---- PD face geometry (species-independent part of each face) ---------------------------------
struct Face {
  float vel;  // ru / rv / rom at the face
  Upwind up;  // low-order flux coefficients
  int order;  // 0 (no flux), 2, 3, 5
};
// advect_scalar_pd, x flux loops: dx = 2./(msfty(i,j)+msfty(i-1,j))/rdx, mu averaged from the two
// cells, cr = vel*dt/dx/mu; in the 2nd-order branch at i == ids+1 WRF writes vel = ru/mu,
// cr = vel*dt/dx instead (a different rounding, reproduced).
WRFGPU_HD Face pd_xface(const View& v, int i, int k, int j) {
  Face fc;
  fc.order = xface_order(v, i);
  const float c1 = v.A1(v.c1, k), c2 = v.A1(v.c2, k);
  const float dx = 2.0f / (v.A2(v.msfty, i, j) + v.A2(v.msfty, i - 1, j)) / v.rdx;
  const float mu = 0.5f * ((c1 * v.A2(v.mut, i, j) + c2) + (c1 * v.A2(v.mut, i - 1, j) + c2));
  fc.vel = v.RU(i, k, j);
  float cr;
  if (v.bc.dxs && i == v.g.ids + 1) {
    const float velmu = fc.vel / mu;
    cr = velmu * v.dt / dx;
  } else {
    cr = fc.vel * v.dt / dx / mu;
  }
  fc.up = upwind_coef(cr, mu, dx / v.dt);
  return fc;
}
// advect_scalar_pd, y flux loop: dy = 2./(msftx(i,j)+msftx(i,j-1))/rdy, cr = vel*dt/dy/mu.
WRFGPU_HD Face pd_yface(const View& v, int i, int k, int j) {
  Face fc;
  fc.order = yface_order(v, j);
  const float c1 = v.A1(v.c1, k), c2 = v.A1(v.c2, k);
  const float dy = 2.0f / (v.A2(v.msftx, i, j) + v.A2(v.msftx, i, j - 1)) / v.rdy;
  const float mu = 0.5f * ((c1 * v.A2(v.mut, i, j) + c2) + (c1 * v.A2(v.mut, i, j - 1) + c2));
  fc.vel = v.RV(i, k, j);
  const float cr = fc.vel * v.dt / dy / mu;
  fc.up = upwind_coef(cr, mu, dy / v.dt);
  return fc;
}
// advect_scalar_pd, vertical loops (v order 3): dz = 2./(rdzw(k)+rdzw(k-1)), mu from c1(k),c2(k)
// of the face's own index (WRF's formula, both halves the same column), cr = vel*dt/dz/mu.
WRFGPU_HD Face pd_zface(const View& v, int i, int k, int j) {
  Face fc;
  fc.order = zface_order(v, k);
  if (fc.order == 0) {
    fc.vel = 0.0f;
    fc.up.a = fc.up.b = fc.up.coef = 0.0f;
    return fc;
  }
  const float c1 = v.A1(v.c1, k), c2 = v.A1(v.c2, k);
  const float dz = 2.0f / (v.A1(v.rdzw, k) + v.A1(v.rdzw, k - 1));
  const float m = v.A2(v.mut, i, j);
  const float mu = 0.5f * ((c1 * m + c2) + (c1 * m + c2));
  fc.vel = v.ROM(i, k, j);
  const float cr = fc.vel * v.dt / dz / mu;
  fc.up = upwind_coef(cr, mu, dz / v.dt);
  return fc;
}

// Antidiffusive (high minus low order) and low-order flux of one face for one species.
struct Flux {
  float hi;  // fqx / fqy / fqz after "fq = fq - fql"
  float lo;  // fqxl / fqyl / fqzl
};
// The fluxes from the stencils F (field) and FO (field_old) centred on the face's upper cell
// (face i: cell i; the same for j and k).
template <class S>
WRFGPU_HD Flux pd_xflux(const Face& fc, const S& F, const S& FO, float ts) {
  Flux r;
  r.lo = flux_upwind(fc.up, FO(-1, 0, 0), FO(0, 0, 0));
  float h;
  if (fc.order == 5)
    h = fc.vel * pd_flux5(F(-3, 0, 0), F(-2, 0, 0), F(-1, 0, 0), F(0, 0, 0), F(1, 0, 0), F(2, 0, 0),
                          fc.vel, ts);
  else if (fc.order == 3)
    h = fc.vel * pd_flux3(F(-2, 0, 0), F(-1, 0, 0), F(0, 0, 0), F(1, 0, 0), fc.vel, ts);
  else
    h = 0.5f * fc.vel * (F(0, 0, 0) + F(-1, 0, 0));
  r.hi = h - r.lo;
  return r;
}
template <class S>
WRFGPU_HD Flux pd_yflux(const Face& fc, const S& F, const S& FO, float ts) {
  Flux r;
  r.lo = flux_upwind(fc.up, FO(0, 0, -1), FO(0, 0, 0));
  float h;
  if (fc.order == 5)
    h = fc.vel * pd_flux5(F(0, 0, -3), F(0, 0, -2), F(0, 0, -1), F(0, 0, 0), F(0, 0, 1), F(0, 0, 2),
                          fc.vel, ts);
  else if (fc.order == 3)
    h = fc.vel * pd_flux3(F(0, 0, -2), F(0, 0, -1), F(0, 0, 0), F(0, 0, 1), fc.vel, ts);
  else
    h = 0.5f * fc.vel * (F(0, 0, 0) + F(0, 0, -1));
  r.hi = h - r.lo;
  return r;
}
// Vertical: flux3 with -vel (the z coordinate decreases upward in WRF's mass coordinate);
// 2nd order: rom*(fzm(k)*f(k)+fzp(k)*f(k-1)).
template <class S>
WRFGPU_HD Flux pd_zflux(const View& v, const Face& fc, const S& F, const S& FO, int k) {
  Flux r;
  if (fc.order == 0) {
    r.hi = 0.0f;
    r.lo = 0.0f;
    return r;
  }
  r.lo = flux_upwind(fc.up, FO(0, -1, 0), FO(0, 0, 0));
  float h;
  if (fc.order == 3)
    h = fc.vel * pd_flux3(F(0, -2, 0), F(0, -1, 0), F(0, 0, 0), F(0, 1, 0), -fc.vel, v.ts);
  else
    h = fc.vel * (v.A1(v.fzm, k) * F(0, 0, 0) + v.A1(v.fzp, k) * F(0, -1, 0));
  r.hi = h - r.lo;
  return r;
}
WRFGPU_HD Flux pd_xflux(const View& v, const Face& fc, std::size_t s, int i, int k, int j) {
  return pd_xflux(fc, v.PF(s, i, k, j), v.PFO(s, i, k, j), v.ts);
}
WRFGPU_HD Flux pd_yflux(const View& v, const Face& fc, std::size_t s, int i, int k, int j) {
  return pd_yflux(fc, v.PF(s, i, k, j), v.PFO(s, i, k, j), v.ts);
}
WRFGPU_HD Flux pd_zflux(const View& v, const Face& fc, std::size_t s, int i, int k, int j) {
  if (fc.order == 0) return Flux{0.0f, 0.0f};
  return pd_zflux(v, fc, v.PF(s, i, k, j), v.PFO(s, i, k, j), k);
}

// The six faces of a cell: x (i, i+1), y (j, j+1), z (k, k+1), geometry only (shared by all
// tracers of the call). need_x/need_y false: those faces are not computed (WRF computes no
// x flux at the outer face of a degradable boundary; reading its geometry could leave memory).
struct CellFaces {
  Face x0, x1, y0, y1, z0, z1;
};
WRFGPU_HD CellFaces pd_cell_faces(const View& v, int i, int k, int j, bool need_x = true,
                                  bool need_y = true) {
  CellFaces c;
  if (need_x) {
    c.x0 = pd_xface(v, i, k, j);
    c.x1 = pd_xface(v, i + 1, k, j);
  }
  if (need_y) {
    c.y0 = pd_yface(v, i, k, j);
    c.y1 = pd_yface(v, i, k, j + 1);
  }
  c.z0 = pd_zface(v, i, k, j);
  c.z1 = pd_zface(v, i, k + 1, j);
  return c;
}
struct CellFlux {
  Flux x0, x1, y0, y1, z0, z1;
};
WRFGPU_HD CellFlux pd_cell_flux(const View& v, const CellFaces& c, std::size_t s, int i, int k,
                                int j) {
  CellFlux q;
  q.x0 = pd_xflux(v, c.x0, s, i, k, j);
  q.x1 = pd_xflux(v, c.x1, s, i + 1, k, j);
  q.y0 = pd_yflux(v, c.y0, s, i, k, j);
  q.y1 = pd_yflux(v, c.y1, s, i, k, j + 1);
  q.z0 = pd_zflux(v, c.z0, s, i, k, j);
  q.z1 = pd_zflux(v, c.z1, s, i, k + 1, j);
  return q;
}

// Is cell (i,j) inside the range WRF's limiter loops over (advect_scalar_pd "positive definite
// filter": one ring beyond the tile, clipped at degradable boundaries)?
WRFGPU_HD bool pd_in_limiter(const View& v, int i, int j) {
  return i >= v.bc.lim_i0 && i <= v.bc.lim_i1 && j >= v.bc.lim_j0 && j <= v.bc.lim_j1;
}

// advect_scalar_pd, limiter: ph_low (mass of the cell after the low-order update), flux_out
// (outgoing antidiffusive fluxes) and the scale WRF applies to the cell's outgoing faces when
// flux_out > ph_low. Returns 1.0f when the cell is not limited (x*1.0f == x exactly).
// The species-independent factors of ph_low and flux_out of cell (i,k,j), as WRF's expressions
// evaluate them first: (c1*mub+c2)+c1*mu_old, msftx*msfty, msfty*rdzw(k).
struct PdCellGeom {
  float mass, mxmy, myrdzw;
};
// From its operands: c1(k), c2(k), mub, mu_old, msftx, msfty at (i,j), rdzw(k).
WRFGPU_HD PdCellGeom pd_cell_geom(float c1, float c2, float mub, float mu_old, float mx, float my,
                                  float rdzw) {
  PdCellGeom g;
  g.mass = (c1 * mub + c2) + (c1 * mu_old);
  g.mxmy = mx * my;
  g.myrdzw = my * rdzw;
  return g;
}
WRFGPU_HD PdCellGeom pd_cell_geom(const View& v, int i, int k, int j) {
  return pd_cell_geom(v.A1(v.c1, k), v.A1(v.c2, k), v.A2(v.mub, i, j), v.A2(v.mu_old, i, j),
                      v.A2(v.msftx, i, j), v.A2(v.msfty, i, j), v.A1(v.rdzw, k));
}
WRFGPU_HD float pd_ph_low(const View& v, const PdCellGeom& g, const CellFlux& q, float fo) {
  return g.mass * fo - v.dt * (g.mxmy * (v.rdx * (q.x1.lo - q.x0.lo) + v.rdy * (q.y1.lo - q.y0.lo)) +
                               g.myrdzw * (q.z1.lo - q.z0.lo));
}
WRFGPU_HD float pd_flux_out(const View& v, const PdCellGeom& g, const CellFlux& q) {
  return v.dt * (g.mxmy * (v.rdx * (wmax(0.0f, q.x1.hi) - wmin(0.0f, q.x0.hi)) +
                           v.rdy * (wmax(0.0f, q.y1.hi) - wmin(0.0f, q.y0.hi))) +
                 g.myrdzw * (wmin(0.0f, q.z1.hi) - wmax(0.0f, q.z0.hi)));
}
WRFGPU_HD float pd_ph_low(const View& v, const CellFlux& q, std::size_t s, int i, int k, int j) {
  return pd_ph_low(v, pd_cell_geom(v, i, k, j), q, v.FO(s, i, k, j));
}
WRFGPU_HD float pd_flux_out(const View& v, const CellFlux& q, int i, int k, int j) {
  return pd_flux_out(v, pd_cell_geom(v, i, k, j), q);
}
WRFGPU_HD float pd_scale(float ph_low, float flux_out) {
  if (flux_out > ph_low) return wmax(0.0f, ph_low / (flux_out + K::eps));
  return 1.0f;
}

// The limited antidiffusive flux of a face, given the scales of the two cells that share it.
// WRF scales in one sweep (j, k, i ascending): the upwind-side cell of an outgoing flux scales
// it; scaling keeps the sign (or gives zero), so the second cell never scales it again.
// x/y faces: a positive flux leaves the lower cell (scale_lo), a negative one the upper cell.
// Both products are formed and one is chosen (the same value as branching on the sign): on
// the GPU the neighbours' scales are then loaded up front, beside the fluxes, instead of one
// after another once each flux's sign is known.
WRFGPU_HD float limited_h(float fq, float scale_lo, float scale_hi) {
  const float lo = scale_lo * fq, hi = scale_hi * fq;
  return fq > 0.0f ? lo : (fq < 0.0f ? hi : fq);
}
// z faces: the sign is opposite (mass coordinate decreases with k): a negative flux leaves the
// lower cell k-1, a positive one the upper cell k.
WRFGPU_HD float limited_z(float fq, float scale_lo, float scale_hi) {
  const float lo = scale_lo * fq, hi = scale_hi * fq;
  return fq < 0.0f ? lo : (fq > 0.0f ? hi : fq);
}

// ---- open (radiation) boundary terms, identical in advect_scalar_pd and advect_scalar --------
// WRF adds them only on the tile that holds the domain edge (its == ids, ite == ide, ...).
// The cells that have them: the tile's cells on an open domain edge (bc.open_* are set only
// for the tile that holds that edge).
WRFGPU_HD bool open_cell(const View& v, int i, int j) {
  return (v.bc.open_xs && i == v.g.ids) || (v.bc.open_xe && i == v.g.ide - 1) ||
         (v.bc.open_ys && j == v.g.jds) || (v.bc.open_ye && j == v.g.jde - 1);
}
WRFGPU_HD float open_terms(const View& v, std::size_t s, int i, int k, int j, float t) {
  if (v.bc.open_xs && i == v.g.ids) {
    const float ub = wmin(0.5f * (v.RU(i, k, j) + v.RU(i + 1, k, j)), 0.0f);
    t = t - v.rdx * (ub * (v.FO(s, i + 1, k, j) - v.FO(s, i, k, j)) +
                     v.F(s, i, k, j) * (v.RU(i + 1, k, j) - v.RU(i, k, j)));
  }
  if (v.bc.open_xe && i == v.g.ide - 1) {
    const float ub = wmax(0.5f * (v.RU(i, k, j) + v.RU(i + 1, k, j)), 0.0f);
    t = t - v.rdx * (ub * (v.FO(s, i, k, j) - v.FO(s, i - 1, k, j)) +
                     v.F(s, i, k, j) * (v.RU(i + 1, k, j) - v.RU(i, k, j)));
  }
  if (v.bc.open_ys && j == v.g.jds) {
    const float vb = wmin(0.5f * (v.RV(i, k, j) + v.RV(i, k, j + 1)), 0.0f);
    t = t - v.rdy * (vb * (v.FO(s, i, k, j + 1) - v.FO(s, i, k, j)) +
                     v.F(s, i, k, j) * (v.RV(i, k, j + 1) - v.RV(i, k, j)));
  }
  if (v.bc.open_ye && j == v.g.jde - 1) {
    const float vb = wmax(0.5f * (v.RV(i, k, j) + v.RV(i, k, j + 1)), 0.0f);
    t = t - v.rdy * (vb * (v.FO(s, i, k, j) - v.FO(s, i, k, j - 1)) +
                     v.F(s, i, k, j) * (v.RV(i, k, j + 1) - v.RV(i, k, j)));
  }
  return t;
}

// Cells whose x / y flux divergence WRF adds: at a degradable boundary the outermost mass cell
// (ids, ide-1) gets none (its boundary value comes from the boundary conditions).
WRFGPU_HD bool xdiv_cell(const View& v, int i) {
  return !(v.bc.dxs && i <= v.g.ids) && !(v.bc.dxe && i >= v.g.ide - 1);
}
WRFGPU_HD bool ydiv_cell(const View& v, int j) {
  return !(v.bc.dys && j <= v.g.jds) && !(v.bc.dye && j >= v.g.jde - 1);
}

// ---- stage 1 of the pd scheme: the limiter scale of one cell for species s ------------------
WRFGPU_HD float pd_cell_scale(const View& v, const CellFaces& c, std::size_t s, int i, int k,
                              int j) {
  const CellFlux q = pd_cell_flux(v, c, s, i, k, j);
  return pd_scale(pd_ph_low(v, q, s, i, k, j), pd_flux_out(v, q, i, k, j));
}

// ---- stage 2 of the pd scheme: tendency of one tile cell for species s ----------------------
// Scale of a neighbour cell from the stage-1 array laid out [species][j][k][i] over the ring
// box (tile plus one cell in i and j). Levels outside kts..ktf border a zero face: 1.
struct ScaleLookup {
  const float* p = nullptr;  // this species' block
  int i0 = 0, ni = 0, k0 = 0, nk = 0, j0 = 0;
  int i = 0, k = 0, j = 0;   // the cell
  WRFGPU_HD float operator()(int di, int dk, int dj) const {
    const int kk = k + dk;
    if (kk < k0 || kk >= k0 + nk) return 1.0f;
    return p[(std::size_t)(i + di - i0) +
             (std::size_t)ni * ((std::size_t)(kk - k0) + (std::size_t)nk * (std::size_t)(j + dj - j0))];
  }
};

// WRF order per cell: open terms, then z, x, y divergence (advect_scalar_pd "add in the
// pd-limited flux divergence"); h (h_tendency) and z (z_tendency) as WRF writes them when
// tenddec. c must hold the x faces when xdiv_cell(i) and the y faces when ydiv_cell(j).
struct PdOut {
  float t, h, z;
};
// The species-independent part of a tile cell's tendency: which divergences WRF adds, whether
// an open-boundary term applies, rdzw(k) and msftx(i,j).
struct PdTendGeom {
  bool xd, yd, open;
  float rdzw, msftx;
};
WRFGPU_HD PdTendGeom pd_tend_geom(const View& v, int i, int k, int j) {
  PdTendGeom g;
  g.xd = xdiv_cell(v, i);
  g.yd = ydiv_cell(v, j);
  g.open = open_cell(v, i, j);
  g.rdzw = v.A1(v.rdzw, k);
  g.msftx = (g.xd || g.yd) ? v.A2(v.msftx, i, j) : 0.0f;
  return g;
}
// From the cell's face fluxes q (z always; x when g.xd, y when g.yd).
template <class ScaleFn>
WRFGPU_HD PdOut pd_cell_tendency_q(const View& v, const PdTendGeom& g, const CellFlux& q,
                                   std::size_t s, int i, int k, int j, float t0, float h0,
                                   const ScaleFn& sc) {
  const float s0 = sc(0, 0, 0);
  PdOut o;
  float t = g.open ? open_terms(v, s, i, k, j, t0) : t0;  // open_terms(t0) == t0 elsewhere
  {
    const float a0 = limited_z(q.z0.hi, sc(0, -1, 0), s0);
    const float a1 = limited_z(q.z1.hi, s0, sc(0, 1, 0));
    const float d = g.rdzw * (a1 - a0 + q.z1.lo - q.z0.lo);
    t = t - d;
    o.z = 0.0f - d;
  }
  float h = h0;
  if (g.xd) {
    const float a0 = limited_h(q.x0.hi, sc(-1, 0, 0), s0);
    const float a1 = limited_h(q.x1.hi, s0, sc(1, 0, 0));
    const float d = g.msftx * (v.rdx * (a1 - a0 + q.x1.lo - q.x0.lo));
    t = t - d;
    h = 0.0f - d;
  }
  if (g.yd) {
    const float a0 = limited_h(q.y0.hi, sc(0, 0, -1), s0);
    const float a1 = limited_h(q.y1.hi, s0, sc(0, 0, 1));
    const float d = g.msftx * (v.rdy * (a1 - a0 + q.y1.lo - q.y0.lo));
    t = t - d;
    h = h - d;
  }
  o.t = t;
  o.h = h;
  return o;
}
template <class ScaleFn>
WRFGPU_HD PdOut pd_cell_tendency_q(const View& v, const CellFlux& q, std::size_t s, int i, int k,
                                   int j, float t0, float h0, const ScaleFn& sc) {
  return pd_cell_tendency_q(v, pd_tend_geom(v, i, k, j), q, s, i, k, j, t0, h0, sc);
}
// From the face geometry c: the fluxes the cell needs, then as above.
template <class ScaleFn>
WRFGPU_HD PdOut pd_cell_tendency(const View& v, const CellFaces& c, std::size_t s, int i, int k,
                                 int j, float t0, float h0, const ScaleFn& sc) {
  CellFlux q{};
  q.z0 = pd_zflux(v, c.z0, s, i, k, j);
  q.z1 = pd_zflux(v, c.z1, s, i, k + 1, j);
  if (xdiv_cell(v, i)) {
    q.x0 = pd_xflux(v, c.x0, s, i, k, j);
    q.x1 = pd_xflux(v, c.x1, s, i + 1, k, j);
  }
  if (ydiv_cell(v, j)) {
    q.y0 = pd_yflux(v, c.y0, s, i, k, j);
    q.y1 = pd_yflux(v, c.y1, s, i, k, j + 1);
  }
  return pd_cell_tendency_q(v, q, s, i, k, j, t0, h0, sc);
}

// ---- advect_scalar (RK1/RK2): tendency of one tile cell, no limiter -------------------------
// WRF order per cell: y divergence (inside the y flux loop), x divergence, open terms, vertical.
// The species-independent part of a face: its order and velocity.
struct UnFace {
  int order;
  float vel;
};
WRFGPU_HD UnFace un_xface(const View& v, int i, int k, int j) { return UnFace{xface_order(v, i), v.RU(i, k, j)}; }
WRFGPU_HD UnFace un_yface(const View& v, int i, int k, int j) { return UnFace{yface_order(v, j), v.RV(i, k, j)}; }
WRFGPU_HD UnFace un_zface(const View& v, int i, int k, int j) {
  const int o = zface_order(v, k);
  return UnFace{o, o == 0 ? 0.0f : v.ROM(i, k, j)};
}
// The cells of the unlimited scheme's face box (the tile plus one face in i, j and k) whose x,
// y and z faces are all read by a tile cell, at orders 5, 5 and 3: all but the boundary
// columns and rows and the lowest and highest two levels. Which faces a tile cell reads are
// products of one test per axis (advect_scalar's loops: the x faces i and i+1 of a cell where
// xdiv_cell(i), the y faces likewise, the z faces k and k+1 always; no x or y face above ktf),
// so these cells are a box, one interval per axis (a count of 0: empty). The GPU face kernel
// gives a warp inside it the orders and faces without working them out per cell.
struct UnInner {
  int i0, ni, k0, nk, j0, nj;
  WRFGPU_HD bool has(int i, int k, int j) const {
    return (unsigned)(i - i0) < (unsigned)ni && (unsigned)(k - k0) < (unsigned)nk && (unsigned)(j - j0) < (unsigned)nj;
  }
};
// The interval of the indices lo..hi where ok holds, as first and count; a count of 0 if there
// is none or they are not one interval.
template <class Ok>
void one_interval(int lo, int hi, const Ok& ok, int& first, int& count) {
  first = lo; count = 0;
  int a = lo;
  while (a <= hi && !ok(a)) ++a;
  int b = a;
  while (b + 1 <= hi && ok(b + 1)) ++b;
  for (int x = b + 1; x <= hi; ++x)
    if (ok(x)) return;
  if (a <= hi) { first = a; count = b - a + 1; }
}
// For the tile its..ite (ti0..ti1), jts..jte (tj0..tj1) from level kts (k0).
inline UnInner un_inner_box(const View& v, int ti0, int ti1, int tj0, int tj1, int k0) {
  UnInner b{};
  one_interval(ti0, ti1, [&](int i) {  // face i read by cell i or i - 1
    return xface_order(v, i) == 5 && (xdiv_cell(v, i) || (i - 1 >= ti0 && xdiv_cell(v, i - 1)));
  }, b.i0, b.ni);
  one_interval(tj0, tj1, [&](int j) {
    return yface_order(v, j) == 5 && (ydiv_cell(v, j) || (j - 1 >= tj0 && ydiv_cell(v, j - 1)));
  }, b.j0, b.nj);
  one_interval(k0, v.ktf, [&](int k) { return zface_order(v, k) == 3; }, b.k0, b.nk);
  if (b.ni == 0 || b.nj == 0 || b.nk == 0) b.ni = b.nj = b.nk = 0;
  return b;
}
// The fluxes from the stencil F centred on the face's upper cell (as pd_xflux).
template <class S, class Div = IeeeDiv>
WRFGPU_HD float un_xflux(const UnFace& fc, const S& F, float ts, Div&& dv = Div()) {
  const float vel = fc.vel;
  if (fc.order == 5)
    return vel * un_flux5(F(-3, 0, 0), F(-2, 0, 0), F(-1, 0, 0), F(0, 0, 0), F(1, 0, 0), F(2, 0, 0), vel, ts, dv);
  if (fc.order == 3) return vel * un_flux3(F(-2, 0, 0), F(-1, 0, 0), F(0, 0, 0), F(1, 0, 0), vel, ts, dv);
  return 0.5f * vel * (F(0, 0, 0) + F(-1, 0, 0));
}
template <class S, class Div = IeeeDiv>
WRFGPU_HD float un_yflux(const UnFace& fc, const S& F, float ts, Div&& dv = Div()) {
  const float vel = fc.vel;
  if (fc.order == 5)
    return vel * un_flux5(F(0, 0, -3), F(0, 0, -2), F(0, 0, -1), F(0, 0, 0), F(0, 0, 1), F(0, 0, 2), vel, ts, dv);
  if (fc.order == 3) return vel * un_flux3(F(0, 0, -2), F(0, 0, -1), F(0, 0, 0), F(0, 0, 1), vel, ts, dv);
  return 0.5f * vel * (F(0, 0, 0) + F(0, 0, -1));
}
template <class S, class Div = IeeeDiv>
WRFGPU_HD float un_zflux(const View& v, const UnFace& fc, const S& F, int k, Div&& dv = Div()) {
  if (fc.order == 0) return 0.0f;
  const float vel = fc.vel;
  if (fc.order == 3) return vel * un_flux3(F(0, -2, 0), F(0, -1, 0), F(0, 0, 0), F(0, 1, 0), -vel, v.ts, dv);
  return vel * (v.A1(v.fzm, k) * F(0, 0, 0) + v.A1(v.fzp, k) * F(0, -1, 0));
}
template <class Div = IeeeDiv>
WRFGPU_HD float un_xflux(const View& v, std::size_t s, int i, int k, int j, Div&& dv = Div()) {
  return un_xflux(un_xface(v, i, k, j), v.PF(s, i, k, j), v.ts, dv);
}
template <class Div = IeeeDiv>
WRFGPU_HD float un_yflux(const View& v, std::size_t s, int i, int k, int j, Div&& dv = Div()) {
  return un_yflux(un_yface(v, i, k, j), v.PF(s, i, k, j), v.ts, dv);
}
template <class Div = IeeeDiv>
WRFGPU_HD float un_zflux(const View& v, std::size_t s, int i, int k, int j, Div&& dv = Div()) {
  const UnFace fc = un_zface(v, i, k, j);
  if (fc.order == 0) return 0.0f;
  return un_zflux(v, fc, v.PF(s, i, k, j), k, dv);
}
// From the cell's face fluxes (y when ydiv_cell(j), x when xdiv_cell(i), z always).
struct UnFlux {
  float x0, x1, y0, y1, z0, z1;
};
// The species-independent part of a cell's tendency (msftx*rdy, msftx*rdx, rdzw(k), ...).
struct UnTendGeom {
  bool xd, yd, open;
  float mrdx, mrdy, rdzw;
};
WRFGPU_HD UnTendGeom un_tend_geom(const View& v, int i, int k, int j) {
  const PdTendGeom p = pd_tend_geom(v, i, k, j);
  UnTendGeom g;
  g.xd = p.xd;
  g.yd = p.yd;
  g.open = p.open;
  g.mrdy = p.yd ? p.msftx * v.rdy : 0.0f;
  g.mrdx = p.xd ? p.msftx * v.rdx : 0.0f;
  g.rdzw = p.rdzw;
  return g;
}
WRFGPU_HD float un_cell_tendency_q(const View& v, const UnTendGeom& g, const UnFlux& q,
                                   std::size_t s, int i, int k, int j, float t) {
  if (g.yd) t = t - g.mrdy * (q.y1 - q.y0);
  if (g.xd) t = t - g.mrdx * (q.x1 - q.x0);
  if (g.open) t = open_terms(v, s, i, k, j, t);
  t = t - g.rdzw * (q.z1 - q.z0);
  return t;
}
WRFGPU_HD float un_cell_tendency_q(const View& v, const UnFlux& q, std::size_t s, int i, int k,
                                   int j, float t) {
  return un_cell_tendency_q(v, un_tend_geom(v, i, k, j), q, s, i, k, j, t);
}
// (Div: as un_flux5's; the GPU's open-boundary cells of the unlimited march pass DoubleDiv,
// the quotients of the kernels beside them.)
template <class Div = IeeeDiv>
WRFGPU_HD float un_cell_tendency(const View& v, std::size_t s, int i, int k, int j, float t, Div&& dv = Div()) {
  UnFlux q{};
  if (ydiv_cell(v, j)) {
    q.y0 = un_yflux(v, s, i, k, j, dv);
    q.y1 = un_yflux(v, s, i, k, j + 1, dv);
  }
  if (xdiv_cell(v, i)) {
    q.x0 = un_xflux(v, s, i, k, j, dv);
    q.x1 = un_xflux(v, s, i + 1, k, j, dv);
  }
  q.z0 = un_zflux(v, s, i, k, j, dv);
  q.z1 = un_zflux(v, s, i, k + 1, j, dv);
  return un_cell_tendency_q(v, q, s, i, k, j, t);
}

}  // inline namespace phys_<mode>
}  // namespace advection
}  // namespace wrfgpu
