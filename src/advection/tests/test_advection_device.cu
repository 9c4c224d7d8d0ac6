// test_advection_device.cu - device tests of the scalar advection physics, one per function
// group of src/advection/advection_physics.h (and the block march of advection_tile.h). Each
// runs the group's WRFGPU_HD functions on the GPU, one thread per input (a stencil, a face, a
// cell, a block of columns; bounds-checked, no shared memory, nothing but plain loads and
// stores, so the kernels can be run under compute-sanitizer), and on the host over the same
// inputs, and requires the same bits (memcmp of the results; two NaNs count as equal, zeros of
// opposite sign are counted and printed, see same_bits); the first mismatch is reported with its
// inputs.
// Skipped when no GPU is visible (WRFGPU_REQUIRE_GPU).
//
// Compiled by nvcc with the flags of the strict GPU backends (NVCC_STRICT: no FMA contraction,
// IEEE division and square root, no flush to zero), the host half by g++ without FMA
// contraction or fast math (-Xcompiler -ffp-contract=off,-fno-fast-math, Makefile): both halves
// must perform the same IEEE operations in the same order. The scheme uses + - * / and
// min/max/fabs/copysign only (no libm function that rounds: unlike src/wsm5/tests/
// test_wsm5_device.cu no common libm is needed), so every difference is one of the compiled
// physics: an FMA contraction, a reassociation, another branch or another constant.
// This file's copy of the physics lives in its own physics namespace
// (wrfgpu::advection::phys_strict_devtest, from WRFGPU_MODE_NS strict_devtest): sharing the
// library's phys_strict symbols would let the linker keep either copy of an inline function
// (docs/design.md, "Numerical modes").
//
// Inputs: the WRF reference cases test_data/ref_advect_*.nc (WRF's own Fortran, every boundary
// type: specified, nested, open, periodic, symmetric and their mixes, tiles at the corners and
// inside), three synthetic cases of advection_synth.h (Courant number beyond 1 with a negative
// time step, open boundaries with a corner tile, symmetric boundaries) and, for the tendency
// and block tests, the WRF captures of em_quarter_ss and the 2-D squall line. The View of a
// case is the CPU backend's own (advection.cpp's prepare and cpu_view); the host half of the
// tendency tests reproduces WRF's tendency of every capture.
//
// Run alone:  bin/wrfgpu_tests --gtest_filter='AdvectionDevice.*'
// Under compute-sanitizer (memcheck, racecheck, initcheck, synccheck):
//   compute-sanitizer --tool initcheck bin/wrfgpu_tests --gtest_filter='AdvectionDevice.*'
// Built with -DWRFGPU_DEVICE_TEST_DRY_RUN (by hand; the Makefile never sets it), the "GPU" half
// runs on the host over copies of the inputs and the tests run without a GPU: a check of the
// inputs, the coverage counts and the harness itself, not of the GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "advection.h"
#include "advection_capture.h"
#include "advection_synth.h"
#include "cuda_util.h"
#include "device_harness.h"
#include "errors.h"
#include "test_util.h"

// This file's copy of the physics: its own namespace (see above).
#undef WRFGPU_MODE_NS
#define WRFGPU_MODE_NS strict_devtest
#include "advection_physics.h"
#include "advection_tile.h"
#include "advection_impl.h"  // prepare, cpu_view: the library's own View of a case

#ifdef WRFGPU_DEVICE_TEST_DRY_RUN
#undef WRFGPU_REQUIRE_GPU
#define WRFGPU_REQUIRE_GPU() std::printf("dry run: the GPU half runs on the host\n")
#endif

namespace {

using namespace wrfgpu;
using advection::AdvectCapture;
using advection::AdvectInputs;
using advection::View;
namespace P = wrfgpu::advection::WRFGPU_PHYS_NS;

// ---------------------------------------------------------------------------------------
// The harness (tests/device_harness.h), for float results, 128 threads a block.
using wrfgpu_devtest::DevArena;
using wrfgpu_devtest::Describe;
using wrfgpu_devtest::hexbits;
using Both = wrfgpu_devtest::Both<float>;
template <class F>
void launch(const F& f, int n, float* out, int nout) { wrfgpu_devtest::launch(f, n, out, nout, 128); }
template <class F>
Both run_both(const F& fh, const F& fd, int n, int nout) {
  return wrfgpu_devtest::run_both<float>(fh, fd, n, nout, 128);
}
std::string num(double x) { return wrfgpu_devtest::num(x, 9); }
using wrfgpu_devtest::same_bits;
using wrfgpu_devtest::count_if_out;

// ---------------------------------------------------------------------------------------
// The cases: a View over a capture's or a synthetic case's arrays, as the CPU backend builds it.

struct Box3 {
  int i0 = 0, i1 = -1, k0 = 0, k1 = -1, j0 = 0, j1 = -1;
  bool has(int i, int j) const { return i >= i0 && i <= i1 && j >= j0 && j <= j1; }
};

struct AdvCase {
  std::string name;
  std::shared_ptr<AdvectCapture> cap;            // or
  std::shared_ptr<advection::SynthCase> syn;
  std::shared_ptr<std::vector<float>> tend;      // a tendency array for validate()
  AdvectInputs in;
  const std::vector<float>* tend_ref = nullptr;  // WRF's tendency of the capture (its scheme)
  bool capture_pd = true;                        // the scheme the capture was taken with
  bool pd_ok = false, un_ok = false;             // validate() accepts the inputs for the scheme
  bool real = false;                             // a WRF capture (large): 2 species per test
  int nspec = 0;
  std::size_t sst = 0;
  View v;           // host arrays
  Box3 tile, ring;  // its..itf x jts..jtf (kts..ktf), and one more cell around in i and j
};

// The CPU backend's View of the case's arrays (advection.cpp: prepare, cpu_view; pd picks the
// scheme whose checks the case passes), without the output arrays: the tests write their own.
View view_of(const AdvectInputs& in, bool pd) {
  View v = advection::cpu_view(advection::prepare(in, pd));
  v.tend = v.htend = v.ztend = nullptr;
  v.accumulate = 0;
  return v;
}

bool accepted(const AdvectInputs& in, bool pd) {
  try {
    advection::validate(in, pd);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

void finish(AdvCase& c) {
  c.nspec = c.in.nspec;
  c.sst = c.in.spec_stride ? c.in.spec_stride : c.in.dims.size3();
  c.pd_ok = accepted(c.in, true);
  c.un_ok = accepted(c.in, false);
  c.v = view_of(c.in, c.pd_ok);
  const WrfDims& d = c.in.dims;
  c.tile = Box3{d.its, c.v.itf, d.kts, c.v.ktf, d.jts, c.v.jtf};
  c.ring = Box3{d.its - 1, c.v.itf + 1, d.kts, c.v.ktf, d.jts - 1, c.v.jtf + 1};
}

AdvCase capture_case(const std::string& path) {
  AdvCase c;
  c.cap = std::make_shared<AdvectCapture>(advection::load_capture(path));
  c.name = path.substr(path.find_last_of('/') + 1);
  c.tend = std::make_shared<std::vector<float>>((std::size_t)c.cap->nspec * c.cap->d.size3(), 0.f);
  c.in = c.cap->inputs(c.tend->data());
  c.capture_pd = c.cap->pd;
  c.tend_ref = &c.cap->tendency_ref;
  finish(c);
  return c;
}

AdvCase synth_case(const std::string& name, const advection::SynthSpec& sp) {
  AdvCase c;
  c.syn = std::make_shared<advection::SynthCase>(advection::make_synth(sp));
  c.name = name;
  c.in = c.syn->inputs();
  finish(c);
  return c;
}

// The reference cases and the synthetic ones; with `real`, the WRF captures too.
std::vector<AdvCase> cases(bool real) {
  std::vector<AdvCase> v;
  for (const auto& f : wrfgpu_test::data_files("advect", "ref_advect_")) v.push_back(capture_case(f));
  {  // Courant number beyond 1 (the upwind coefficients clip), negative time step (ts = -1)
    advection::SynthSpec sp;
    sp.nx = 14; sp.ny = 12; sp.nz = 9; sp.nspec = 4; sp.seed = 31;
    sp.courant = 1.3f; sp.dt = -18.f; sp.time_step = -18;
    sp.flags.specified = true;
    sp.its = 4; sp.ite = 10; sp.jts = 3; sp.jte = 13;  // jte = jde: north edge in the tile
    v.push_back(synth_case("synth_specified_cfl13_negative_dt", sp));
  }
  {  // open on every side, a tile in the south-west corner
    advection::SynthSpec sp;
    sp.nx = 12; sp.ny = 11; sp.nz = 7; sp.nspec = 3; sp.seed = 32; sp.courant = 0.7f;
    sp.flags.open_xs = sp.flags.open_xe = sp.flags.open_ys = sp.flags.open_ye = true;
    sp.its = 1; sp.ite = 6; sp.jts = 1; sp.jte = 5;
    v.push_back(synth_case("synth_open_sw_tile", sp));
  }
  {  // symmetric on every side, whole domain
    advection::SynthSpec sp;
    sp.nx = 10; sp.ny = 9; sp.nz = 6; sp.nspec = 3; sp.seed = 33; sp.courant = 0.5f;
    sp.flags.symmetric_xs = sp.flags.symmetric_xe = sp.flags.symmetric_ys = sp.flags.symmetric_ye = true;
    v.push_back(synth_case("synth_symmetric", sp));
  }
  if (real)
    for (const char* pre : {"quarter_ss_", "squall2d_"})
      for (const auto& f : wrfgpu_test::data_files("advect", pre)) {
        v.push_back(capture_case(f));
        v.back().real = true;
      }
  return v;
}
// Species the per-species tests take: all, or the first two of a WRF capture.
int species(const AdvCase& c) { return c.real ? std::min(c.nspec, 2) : c.nspec; }

// A View of the case's arrays copied to the device (arrays the case lacks stay null).
View device_view(const AdvCase& c, DevArena& a) {
  const WrfDims& d = c.in.dims;
  const std::size_t n4 = (std::size_t)(c.nspec - 1) * c.sst + d.size3(), n3 = d.size3(), n2 = d.size2();
  const std::size_t n1 = (std::size_t)d.nz();
  View v = c.v;
  v.f = a.copy(c.v.f, n4);
  v.fo = c.v.fo == c.v.f ? v.f : a.copy(c.v.fo, n4);
  v.ru = a.copy(c.v.ru, n3); v.rv = a.copy(c.v.rv, n3); v.rom = a.copy(c.v.rom, n3);
  v.mut = a.copy(c.v.mut, n2); v.mub = a.copy(c.v.mub, n2); v.mu_old = a.copy(c.v.mu_old, n2);
  v.msftx = a.copy(c.v.msftx, n2); v.msfty = a.copy(c.v.msfty, n2);
  v.c1 = a.copy(c.v.c1, n1); v.c2 = a.copy(c.v.c2, n1); v.fzm = a.copy(c.v.fzm, n1);
  v.fzp = a.copy(c.v.fzp, n1); v.rdzw = a.copy(c.v.rdzw, n1);
  v.tend = v.htend = v.ztend = nullptr;
  return v;
}

// One item: a face, a cell or an index (d: direction 0 x, 1 y, 2 z, or flags), species s.
struct Pt {
  int d, i, k, j, s;
};

// Which cells need what in the pd scheme (advection_tile.h's TileCells for the whole tile): a
// limiter cell (tile plus ring, not a corner of the ring, inside the limiter's range) needs its
// six faces; a tile cell its z faces, and its x (y) faces where WRF adds that divergence.
struct Needs {
  const AdvCase* c;
  bool limiter(int i, int j) const {
    if (!c->ring.has(i, j)) return false;
    const Box3& t = c->tile;
    const bool corner = (i < t.i0 || i > t.i1) && (j < t.j0 || j > t.j1);
    return !corner && P::pd_in_limiter(c->v, i, j);
  }
  bool x(int i, int j) const { return limiter(i, j) || (c->tile.has(i, j) && P::xdiv_cell(c->v, i)); }
  bool y(int i, int j) const { return limiter(i, j) || (c->tile.has(i, j) && P::ydiv_cell(c->v, j)); }
  bool z(int i, int j) const { return limiter(i, j) || c->tile.has(i, j); }
};

// The faces the pd scheme computes (d = 0, 1, 2), every level, species 0..ns-1.
std::vector<Pt> pd_faces(const AdvCase& c, int ns) {
  const Needs nd{&c};
  std::vector<Pt> v;
  for (int s = 0; s < ns; ++s)
    for (int j = c.ring.j0; j <= c.ring.j1 + 1; ++j)
      for (int k = c.tile.k0; k <= c.tile.k1 + 1; ++k)
        for (int i = c.ring.i0; i <= c.ring.i1 + 1; ++i) {
          if (k <= c.tile.k1 && (nd.x(i, j) || nd.x(i - 1, j))) v.push_back(Pt{0, i, k, j, s});
          if (k <= c.tile.k1 && (nd.y(i, j) || nd.y(i, j - 1))) v.push_back(Pt{1, i, k, j, s});
          if (nd.z(i, j)) v.push_back(Pt{2, i, k, j, s});
        }
  return v;
}
// The faces the unlimited scheme computes (the tile cells' faces where WRF adds the divergence).
std::vector<Pt> un_faces(const AdvCase& c, int ns) {
  const Box3& t = c.tile;
  std::vector<Pt> v;
  for (int s = 0; s < ns; ++s)
    for (int j = t.j0; j <= t.j1 + 1; ++j)
      for (int k = t.k0; k <= t.k1 + 1; ++k)
        for (int i = t.i0; i <= t.i1 + 1; ++i) {
          const bool xd = (t.has(i, j) && P::xdiv_cell(c.v, i)) || (t.has(i - 1, j) && P::xdiv_cell(c.v, i - 1));
          const bool yd = (t.has(i, j) && P::ydiv_cell(c.v, j)) || (t.has(i, j - 1) && P::ydiv_cell(c.v, j - 1));
          if (k <= t.k1 && xd) v.push_back(Pt{0, i, k, j, s});
          if (k <= t.k1 && yd) v.push_back(Pt{1, i, k, j, s});
          if (t.has(i, j)) v.push_back(Pt{2, i, k, j, s});
        }
  return v;
}
// Cells of the pd scheme: limiter cells (d = 3: all six faces) and the other tile cells (d:
// bit 0 x faces, bit 1 y faces), every level, species 0..ns-1.
std::vector<Pt> pd_cells(const AdvCase& c, int ns) {
  const Needs nd{&c};
  std::vector<Pt> v;
  for (int s = 0; s < ns; ++s)
    for (int j = c.ring.j0; j <= c.ring.j1; ++j)
      for (int k = c.tile.k0; k <= c.tile.k1; ++k)
        for (int i = c.ring.i0; i <= c.ring.i1; ++i) {
          if (nd.limiter(i, j)) v.push_back(Pt{3, i, k, j, s});
          else if (c.tile.has(i, j))
            v.push_back(Pt{(P::xdiv_cell(c.v, i) ? 1 : 0) | (P::ydiv_cell(c.v, j) ? 2 : 0), i, k, j, s});
        }
  return v;
}
std::vector<Pt> tile_cells(const AdvCase& c, int ns) {
  std::vector<Pt> v;
  for (int s = 0; s < ns; ++s)
    for (int j = c.tile.j0; j <= c.tile.j1; ++j)
      for (int k = c.tile.k0; k <= c.tile.k1; ++k)
        for (int i = c.tile.i0; i <= c.tile.i1; ++i) v.push_back(Pt{0, i, k, j, s});
  return v;
}

const char* kDir[] = {"x", "y", "z"};
std::string where(const AdvCase& c, const Pt& p, const char* what) {
  return c.name + ": " + what + " (i=" + std::to_string(p.i) + ", k=" + std::to_string(p.k) +
         ", j=" + std::to_string(p.j) + ") species " + std::to_string(p.s);
}
Describe pt_describe(const AdvCase& c, const std::vector<Pt>& pts, const char* what,
                     const std::vector<const char*>& outs) {
  return [&c, &pts, what, outs](int item, int j) {
    const Pt& p = pts[item];
    std::string w = what;
    if (w == "face") w = std::string(kDir[p.d]) + " face";
    return std::string(outs.at(j)) + " of " + where(c, p, w.c_str());
  };
}

// Pts32 of species s around (i,k,j) (the GPU kernels' stencil form).
WRFGPU_HD advection::Pts32 pts32(const View& v, const float* base, int s, int i, int k, int j) {
  return advection::Pts32{base, (unsigned)((std::size_t)s * v.sst + v.mt.idx3(i, k, j)), v.mt.nx(),
                  v.mt.nx() * v.mt.nz()};
}

// ---------------------------------------------------------------------------------------
// The functors: one item each, the same code on both sides.

// (a) The flux operators (pd_flux3..6, un_flux3..6), the upwind flux and WRF's MIN/MAX/SIGN.
// In: q(i-3) .. q(i+2), ua, ts, cr, mu, dx/dt.
struct FluxOpsF {
  const float* in;
  static constexpr int nin = 11, nout = 15;
  WRFGPU_HD void operator()(int n, float* o) const {
    const float* x = in + (std::size_t)n * nin;
    const float ua = x[6], ts = x[7];
    o[0] = P::pd_flux6(x[0], x[1], x[2], x[3], x[4], x[5]);
    o[1] = P::pd_flux5(x[0], x[1], x[2], x[3], x[4], x[5], ua, ts);
    o[2] = P::pd_flux4(x[1], x[2], x[3], x[4]);
    o[3] = P::pd_flux3(x[1], x[2], x[3], x[4], ua, ts);
    o[4] = P::un_flux6(x[0], x[1], x[2], x[3], x[4], x[5]);
    o[5] = P::un_flux5(x[0], x[1], x[2], x[3], x[4], x[5], ua, ts);
    o[6] = P::un_flux4(x[1], x[2], x[3], x[4]);
    o[7] = P::un_flux3(x[1], x[2], x[3], x[4], ua, ts);
    const P::Upwind u = P::upwind_coef(x[8], x[9], x[10]);
    o[8] = u.a;
    o[9] = u.b;
    o[10] = u.coef;
    o[11] = P::flux_upwind(u, x[2], x[3]);
    o[12] = P::wmin(x[2], x[3]);
    o[13] = P::wmax(x[2], x[3]);
    o[14] = P::sign1(ua);
  }
};
const std::vector<const char*> kFluxOpsOut = {
    "pd_flux6", "pd_flux5", "pd_flux4", "pd_flux3", "un_flux6", "un_flux5", "un_flux4", "un_flux3",
    "upwind a", "upwind b", "upwind coef", "flux_upwind", "wmin(q(i-1), q(i))", "wmax(q(i-1), q(i))",
    "sign1(ua)"};

// (b) Face geometry of the pd scheme (pd_xface/pd_yface/pd_zface) and of the unlimited one
// (un_xface/un_yface/un_zface). Out: order, vel, upwind a, b, coef; un order, un vel.
struct FaceGeomF {
  View v;
  const Pt* pts;
  bool pd;
  static constexpr int nout = 7;
  WRFGPU_HD void operator()(int n, float* o) const {
    const Pt p = pts[n];
    if (pd) {
      const P::Face f = p.d == 0 ? P::pd_xface(v, p.i, p.k, p.j)
                      : p.d == 1 ? P::pd_yface(v, p.i, p.k, p.j)
                                 : P::pd_zface(v, p.i, p.k, p.j);
      o[0] = (float)f.order;
      o[1] = f.vel;
      o[2] = f.up.a;
      o[3] = f.up.b;
      o[4] = f.up.coef;
    }
    const P::UnFace u = p.d == 0 ? P::un_xface(v, p.i, p.k, p.j)
                      : p.d == 1 ? P::un_yface(v, p.i, p.k, p.j)
                                 : P::un_zface(v, p.i, p.k, p.j);
    o[5] = (float)u.order;
    o[6] = u.vel;
  }
};
const std::vector<const char*> kFaceGeomOut = {"order", "vel", "upwind a", "upwind b", "upwind coef",
                                               "un order", "un vel"};
// The order and divergence rules over an index range (x, y and z alike): xface_order,
// yface_order, zface_order, xdiv_cell, ydiv_cell of index lo + n.
struct OrdersF {
  View v;
  int lo;
  static constexpr int nout = 5;
  WRFGPU_HD void operator()(int n, float* o) const {
    const int x = lo + n;
    o[0] = (float)P::xface_order(v, x);
    o[1] = (float)P::yface_order(v, x);
    o[2] = (float)P::zface_order(v, x);
    o[3] = P::xdiv_cell(v, x) ? 1.f : 0.f;
    o[4] = P::ydiv_cell(v, x) ? 1.f : 0.f;
  }
};

// (c) The fluxes of one face and species: pd (hi, lo) from the View's stencils (Pts) and from
// the GPU kernels' 32-bit stencils (Pts32); the unlimited flux from both.
struct FaceFluxF {
  View v;
  const Pt* pts;
  bool pd;
  static constexpr int nout = 6;
  WRFGPU_HD void operator()(int n, float* o) const {
    const Pt p = pts[n];
    const std::size_t so = (std::size_t)p.s * v.sst;
    const advection::Pts32 F = pts32(v, v.f, p.s, p.i, p.k, p.j), FO = pts32(v, v.fo, p.s, p.i, p.k, p.j);
    if (pd) {
      P::Flux a, b;
      if (p.d == 0) {
        const P::Face f = P::pd_xface(v, p.i, p.k, p.j);
        a = P::pd_xflux(v, f, so, p.i, p.k, p.j);
        b = P::pd_xflux(f, F, FO, v.ts);
      } else if (p.d == 1) {
        const P::Face f = P::pd_yface(v, p.i, p.k, p.j);
        a = P::pd_yflux(v, f, so, p.i, p.k, p.j);
        b = P::pd_yflux(f, F, FO, v.ts);
      } else {
        const P::Face f = P::pd_zface(v, p.i, p.k, p.j);
        a = P::pd_zflux(v, f, so, p.i, p.k, p.j);
        b = f.order == 0 ? P::Flux{0.0f, 0.0f} : P::pd_zflux(v, f, F, FO, p.k);  // as k_pd_fused
      }
      o[0] = a.hi;
      o[1] = a.lo;
      o[2] = b.hi;
      o[3] = b.lo;
    }
    if (p.d == 0) {
      o[4] = P::un_xflux(v, so, p.i, p.k, p.j);
      o[5] = P::un_xflux(P::un_xface(v, p.i, p.k, p.j), F, v.ts);
    } else if (p.d == 1) {
      o[4] = P::un_yflux(v, so, p.i, p.k, p.j);
      o[5] = P::un_yflux(P::un_yface(v, p.i, p.k, p.j), F, v.ts);
    } else {
      o[4] = P::un_zflux(v, so, p.i, p.k, p.j);
      o[5] = P::un_zflux(v, P::un_zface(v, p.i, p.k, p.j), F, p.k);
    }
  }
};
const std::vector<const char*> kFaceFluxOut = {"pd hi (Pts)", "pd lo (Pts)", "pd hi (Pts32)",
                                               "pd lo (Pts32)", "un flux (Pts)", "un flux (Pts32)"};

// (c) The faces and fluxes of one cell: pd_cell_faces (x faces when d & 1, y faces when d & 2,
// as the backends call it; the faces not computed are left 0) and, for a limiter cell (d = 3),
// pd_cell_flux. Out: 6 faces x (order, vel, a, b, coef), then 6 fluxes x (hi, lo).
struct CellFluxF {
  View v;
  const Pt* pts;
  static constexpr int nout = 42;
  WRFGPU_HD static void face_out(const P::Face& f, float* o) {
    o[0] = (float)f.order;
    o[1] = f.vel;
    o[2] = f.up.a;
    o[3] = f.up.b;
    o[4] = f.up.coef;
  }
  WRFGPU_HD void operator()(int n, float* o) const {
    const Pt p = pts[n];
    const bool nx = p.d & 1, ny = p.d & 2;
    const P::CellFaces c = P::pd_cell_faces(v, p.i, p.k, p.j, nx, ny);
    if (nx) {
      face_out(c.x0, o);
      face_out(c.x1, o + 5);
    }
    if (ny) {
      face_out(c.y0, o + 10);
      face_out(c.y1, o + 15);
    }
    face_out(c.z0, o + 20);
    face_out(c.z1, o + 25);
    if (nx && ny) {
      const P::CellFlux q = P::pd_cell_flux(v, c, (std::size_t)p.s * v.sst, p.i, p.k, p.j);
      const P::Flux* f[6] = {&q.x0, &q.x1, &q.y0, &q.y1, &q.z0, &q.z1};
      for (int m = 0; m < 6; ++m) {
        o[30 + 2 * m] = f[m]->hi;
        o[31 + 2 * m] = f[m]->lo;
      }
    }
  }
};
std::vector<const char*> cell_flux_names() {
  static std::vector<std::string> s;
  if (s.empty()) {
    for (const char* f : {"x0", "x1", "y0", "y1", "z0", "z1"})
      for (const char* q : {"order", "vel", "a", "b", "coef"}) s.push_back(std::string("face ") + f + " " + q);
    for (const char* f : {"x0", "x1", "y0", "y1", "z0", "z1"})
      for (const char* q : {"hi", "lo"}) s.push_back(std::string("flux ") + f + " " + q);
  }
  std::vector<const char*> r;
  for (const auto& x : s) r.push_back(x.c_str());
  return r;
}

// (d) The limiter of one cell and species: pd_in_limiter, pd_cell_geom (mass, mxmy, myrdzw),
// pd_ph_low and pd_flux_out (both forms), pd_scale, pd_cell_scale. Limiter cells only (the
// others have no six faces to read), plus pd_in_limiter of every ring cell (d = 0).
struct LimiterF {
  View v;
  const Pt* pts;
  static constexpr int nout = 10;
  WRFGPU_HD void operator()(int n, float* o) const {
    const Pt p = pts[n];
    o[0] = P::pd_in_limiter(v, p.i, p.j) ? 1.f : 0.f;
    if (p.d != 3) return;
    const std::size_t so = (std::size_t)p.s * v.sst;
    const P::CellFaces c = P::pd_cell_faces(v, p.i, p.k, p.j);
    const P::CellFlux q = P::pd_cell_flux(v, c, so, p.i, p.k, p.j);
    const P::PdCellGeom g = P::pd_cell_geom(v, p.i, p.k, p.j);
    o[1] = g.mass;
    o[2] = g.mxmy;
    o[3] = g.myrdzw;
    o[4] = P::pd_ph_low(v, g, q, v.FO(so, p.i, p.k, p.j));
    o[5] = P::pd_flux_out(v, g, q);
    o[6] = P::pd_ph_low(v, q, so, p.i, p.k, p.j);
    o[7] = P::pd_flux_out(v, q, p.i, p.k, p.j);
    o[8] = P::pd_scale(o[6], o[7]);
    o[9] = P::pd_cell_scale(v, c, so, p.i, p.k, p.j);
  }
};
const std::vector<const char*> kLimiterOut = {"pd_in_limiter", "mass", "mxmy", "myrdzw", "ph_low (geom)",
                                              "flux_out (geom)", "ph_low", "flux_out", "pd_scale",
                                              "pd_cell_scale"};
// (d) The scalar limiter pieces: pd_scale(ph_low, flux_out), limited_h and limited_z(fq,
// scale_lo, scale_hi). In: ph_low, flux_out, fq, scale_lo, scale_hi.
struct ScaleOpsF {
  const float* in;
  static constexpr int nin = 5, nout = 3;
  WRFGPU_HD void operator()(int n, float* o) const {
    const float* x = in + (std::size_t)n * nin;
    o[0] = P::pd_scale(x[0], x[1]);
    o[1] = P::limited_h(x[2], x[3], x[4]);
    o[2] = P::limited_z(x[2], x[3], x[4]);
  }
};

// (e) The pd tendency of one tile cell and species (stage 2): pd_tend_geom, open_terms and
// pd_cell_tendency with the neighbours' scales of stage 1 (ScaleLookup over `scale`, laid out
// [species][j][k][i] over the ring box), from zero and from given t0, h0 (accumulate).
struct PdTendF {
  View v;
  const Pt* pts;
  const float* scale;  // stage-1 scales
  const float* t0h0;   // 2 per item
  int i0, ni, k0, nk, j0;
  std::size_t rsz;
  static constexpr int nout = 12;
  WRFGPU_HD void operator()(int n, float* o) const {
    const Pt p = pts[n];
    const std::size_t so = (std::size_t)p.s * v.sst;
    const P::PdTendGeom g = P::pd_tend_geom(v, p.i, p.k, p.j);
    o[0] = g.xd ? 1.f : 0.f;
    o[1] = g.yd ? 1.f : 0.f;
    o[2] = g.open ? 1.f : 0.f;
    o[3] = g.rdzw;
    o[4] = g.msftx;
    const float t0 = t0h0[2 * n], h0 = t0h0[2 * n + 1];
    o[5] = g.open ? P::open_terms(v, p.s * v.sst, p.i, p.k, p.j, t0) : t0;
    P::ScaleLookup sc;
    sc.p = scale + (std::size_t)p.s * rsz;
    sc.i0 = i0; sc.ni = ni; sc.k0 = k0; sc.nk = nk; sc.j0 = j0;
    sc.i = p.i; sc.k = p.k; sc.j = p.j;
    const P::CellFaces c = P::pd_cell_faces(v, p.i, p.k, p.j, g.xd, g.yd);
    const P::PdOut a = P::pd_cell_tendency(v, c, so, p.i, p.k, p.j, 0.0f, 0.0f, sc);
    const P::PdOut b = P::pd_cell_tendency(v, c, so, p.i, p.k, p.j, t0, h0, sc);
    o[6] = a.t; o[7] = a.h; o[8] = a.z;
    o[9] = b.t; o[10] = b.h; o[11] = b.z;
  }
};
const std::vector<const char*> kPdTendOut = {"xd", "yd", "open", "rdzw", "msftx", "open_terms(t0)",
                                             "t", "h", "z", "t (from t0)", "h (from h0)", "z (from t0)"};

// (e) The unlimited tendency of one tile cell and species: un_tend_geom and un_cell_tendency
// from zero and from a given t0.
struct UnTendF {
  View v;
  const Pt* pts;
  const float* t0h0;  // 2 per item (t0 used)
  static constexpr int nout = 8;
  WRFGPU_HD void operator()(int n, float* o) const {
    const Pt p = pts[n];
    const P::UnTendGeom g = P::un_tend_geom(v, p.i, p.k, p.j);
    o[0] = g.xd ? 1.f : 0.f;
    o[1] = g.yd ? 1.f : 0.f;
    o[2] = g.open ? 1.f : 0.f;
    o[3] = g.mrdx;
    o[4] = g.mrdy;
    o[5] = g.rdzw;
    const std::size_t so = (std::size_t)p.s * v.sst;
    o[6] = P::un_cell_tendency(v, so, p.i, p.k, p.j, 0.0f);
    o[7] = P::un_cell_tendency(v, so, p.i, p.k, p.j, t0h0[2 * n]);
  }
};
const std::vector<const char*> kUnTendOut = {"xd", "yd", "open", "mrdx", "mrdy", "rdzw", "t", "t (from t0)"};

// (f) advection_tile.h: one block of columns and species group per thread (TileSerial), its
// work arrays in global memory; writes v.tend (and htend, ztend for pd).
struct MarchF {
  View v;
  const P::TileSpec* blocks;
  float* work;
  std::size_t per_thread;
  bool pd;
  WRFGPU_HD void operator()(int n, float*) const {
    float* w = work + (std::size_t)n * per_thread;
    if (pd) P::pd_tile_march(P::TileSerial{}, v, P::TileWork{w, blocks[n]});
    else P::un_tile_march(P::TileSerial{}, v, blocks[n], w);
  }
};

// Random values of every magnitude a float holds (zeros of both signs, subnormals, 1e38).
struct Rand {
  std::mt19937 g;
  explicit Rand(unsigned seed) : g(seed) {}
  float u() { return std::uniform_real_distribution<float>(0.f, 1.f)(g); }
  int pick(int n) { return (int)(g() % (unsigned)n); }
  float sgn() { return pick(2) ? 1.f : -1.f; }
  float any() {
    static const float mags[] = {0.f, 1e-42f, 1e-38f, 1e-30f, 1e-20f, 1e-12f, 1e-7f, 1e-3f,
                                 1.f, 300.f, 1e5f, 1e12f, 1e20f, 1e30f, 1e37f};
    const float m = mags[pick(15)];
    return sgn() * (m == 0.f ? 0.f : m * (0.5f + u()));
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------
// (a) advection_physics.h, flux operators: random stencils of every magnitude and sign, WRF-like
// stencils (constants, steps, one spike, tracer rows of the reference captures along x and z),
// Courant numbers of both signs across the upwind clipping at |cr| = 0.5, zeros of both signs.
TEST(AdvectionDevice, FluxOperators) {
  WRFGPU_REQUIRE_GPU();
  Rand r(17);
  std::vector<float> in;
  const float crs[] = {0.f, -0.f, 0.25f, -0.25f, 0.5f, -0.5f, std::nextafter(0.5f, 1.f), std::nextafter(-0.5f, -1.f),
                       1.f, -1.f, 2.f, -2.f, 1e-30f, -1e-30f};
  auto push = [&](const float q[6]) {
    const float uas[] = {0.f, -0.f, 1e-30f, -1e-30f, 1.f, -1.f, 3e5f, -3e5f, r.any()};
    const float ua = uas[r.pick(9)], ts = r.pick(4) ? 1.f : -1.f;
    const float cr = r.pick(2) ? crs[r.pick(14)] : 2.6f * (r.u() - 0.5f);
    const float mu = r.pick(8) ? 2e4f + 8e4f * r.u() : r.any(), dxdt = r.pick(8) ? 3000.f / 18.f * (0.5f + r.u()) : r.any();
    in.insert(in.end(), {q[0], q[1], q[2], q[3], q[4], q[5], ua, ts, cr, mu, dxdt});
  };
  for (int n = 0; n < 60000; ++n) {  // random
    float q[6];
    const float scale = r.any();
    for (float& x : q) x = r.pick(3) ? r.any() : scale * (r.pick(5) ? r.u() : 0.f);
    push(q);
  }
  for (float c : {0.f, -0.f, 1e-12f, 1e-3f, 5e-3f, 1.f, -1e-3f})  // constants, steps, a spike
    for (int pos = 0; pos <= 6; ++pos)
      for (int rep = 0; rep < 8; ++rep) {
        float q[6], s[6];
        for (int m = 0; m < 6; ++m) {
          q[m] = m < pos ? 0.f : c;
          s[m] = m == pos ? c : 0.f;
        }
        push(q);
        push(s);
      }
  std::size_t from_captures = 0;
  for (const auto& f : wrfgpu_test::data_files("advect", "ref_advect_pd_")) {  // tracer rows of WRF's inputs
    const AdvectCapture cap = advection::load_capture(f);
    const WrfDims& d = cap.d;
    for (int s = 0; s < cap.nspec; ++s)
      for (int j = d.jms; j <= d.jme; j += 3)
        for (int k = d.kms; k <= d.kme - 6; k += 2)
          for (int i = d.ims; i <= d.ime - 6; ++i) {
            float qx[6], qz[6];
            for (int m = 0; m < 6; ++m) {
              qx[m] = cap.field[(std::size_t)s * d.size3() + d.idx3(i + m, k, j)];
              qz[m] = cap.field[(std::size_t)s * d.size3() + d.idx3(i, k + m, j)];
            }
            push(qx);
            push(qz);
            from_captures += 2;
          }
  }
  ASSERT_GT(from_captures, 0u) << "no ref_advect_pd_*.nc in " << wrfgpu_test::data_dir();
  DevArena a;
  const FluxOpsF fh{in.data()}, fd{a.copy(in)};
  const int n = (int)(in.size() / FluxOpsF::nin);
  const Both res = run_both(fh, fd, n, FluxOpsF::nout);
  EXPECT_TRUE(same_bits(res, [&in](int i, int j) {
    const float* x = &in[(std::size_t)i * FluxOpsF::nin];
    std::string s = std::string(kFluxOpsOut.at(j)) + " of stencil " + std::to_string(i) + " (q(i-3..i+2) =";
    for (int m = 0; m < 6; ++m) s += " " + num(x[m]);
    return s + ", ua = " + num(x[6]) + ", ts = " + num(x[7]) + ", cr = " + num(x[8]) + ", mu = " + num(x[9]) +
           ", dx/dt = " + num(x[10]) + ")";
  }));
  // the branches: upwind a and b clipped and not, both signs of SIGN(1., ua) (also for -0)
  EXPECT_GT(count_if_out(res, 8, [](float x) { return x == 0.5f; }), 0);
  EXPECT_GT(count_if_out(res, 8, [](float x) { return x > 0.f && x < 0.5f; }), 0);
  EXPECT_GT(count_if_out(res, 9, [](float x) { return x == -0.5f; }), 0);
  EXPECT_GT(count_if_out(res, 9, [](float x) { return x < 0.f && x > -0.5f; }), 0);
  int minus_zero_sign = 0;
  for (int i = 0; i < n; ++i) {
    const float ua = in[(std::size_t)i * FluxOpsF::nin + 6];
    minus_zero_sign += ua == 0.f && std::signbit(ua) && res.host[(std::size_t)i * FluxOpsF::nout + 14] == -1.f;
  }
  EXPECT_GT(minus_zero_sign, 0) << "SIGN(1., -0.) = -1 (gfortran -fsign-zero)";
  std::printf("%d stencils (%zu from the reference captures)\n", n, from_captures);
}

// (b) advection_physics.h, face geometry: every face either scheme computes, on every boundary
// type (the order degrading next to degradable boundaries, the velmu form at ids+1), and the
// order/divergence rules over every index of the domain and beyond.
TEST(AdvectionDevice, FaceGeometry) {
  WRFGPU_REQUIRE_GPU();
  const auto cs = cases(true);
  ASSERT_TRUE(wrfgpu_test::data_present("ref_advect_*.nc", cs.size() > 4));
  int orders[3][6] = {}, npd = 0, nun = 0;  // [direction][order]
  for (const auto& c : cs) {
    npd += c.pd_ok;
    nun += c.un_ok;
    ASSERT_TRUE(c.pd_ok || c.un_ok) << c.name;
    const std::vector<Pt> pts = c.pd_ok ? pd_faces(c, 1) : un_faces(c, 1);
    DevArena a;
    const FaceGeomF fh{c.v, pts.data(), c.pd_ok}, fd{device_view(c, a), a.copy(pts), c.pd_ok};
    const Both r = run_both(fh, fd, (int)pts.size(), FaceGeomF::nout);
    EXPECT_TRUE(same_bits(r, pt_describe(c, pts, "face", kFaceGeomOut)));
    for (std::size_t q = 0; q < pts.size(); ++q) {
      const int o = (int)r.host[q * FaceGeomF::nout + 5];
      if (o >= 0 && o <= 5) orders[pts[q].d][o]++;
    }
    const WrfDims& d = c.in.dims;
    const int lo = std::min(d.ids, d.kds) - 3, hi = std::max({d.ide, d.jde, d.kde}) + 3;
    const OrdersF oh{c.v, lo}, od{c.v, lo};
    const Both ro = run_both(oh, od, hi - lo + 1, OrdersF::nout);
    EXPECT_TRUE(same_bits(ro, [&c, lo](int i, int j) {
      const char* w[] = {"xface_order", "yface_order", "zface_order", "xdiv_cell", "ydiv_cell"};
      return c.name + ": " + w[j] + " of index " + std::to_string(lo + i);
    }));
  }
  std::printf("%zu cases: %d valid for the pd scheme, %d for the unlimited one\n", cs.size(), npd, nun);
  for (int dir = 0; dir < 2; ++dir)
    for (int o : {2, 3, 5}) EXPECT_GT(orders[dir][o], 0) << kDir[dir] << " faces of order " << o;
  for (int o : {0, 2, 3}) EXPECT_GT(orders[2][o], 0) << "z faces of order " << o;
}

// (c) advection_physics.h, fluxes per face: pd (hi, lo) and unlimited, from the View's
// stencils and the GPU kernels' 32-bit ones, every face and species.
TEST(AdvectionDevice, FaceFluxes) {
  WRFGPU_REQUIRE_GPU();
  const auto cs = cases(true);
  ASSERT_TRUE(wrfgpu_test::data_present("ref_advect_*.nc", cs.size() > 4));
  std::size_t faces = 0, nonzero_hi = 0;
  for (const auto& c : cs) {
    const std::vector<Pt> pts = c.pd_ok ? pd_faces(c, species(c)) : un_faces(c, species(c));
    DevArena a;
    const FaceFluxF fh{c.v, pts.data(), c.pd_ok}, fd{device_view(c, a), a.copy(pts), c.pd_ok};
    const Both r = run_both(fh, fd, (int)pts.size(), FaceFluxF::nout);
    EXPECT_TRUE(same_bits(r, pt_describe(c, pts, "face", kFaceFluxOut)));
    // the two stencil forms are one computation
    for (std::size_t q = 0; q < pts.size(); ++q) {
      const float* o = &r.host[q * FaceFluxF::nout];
      ASSERT_TRUE(std::memcmp(o, o + 2, 2 * sizeof(float)) == 0 && std::memcmp(o + 4, o + 5, sizeof(float)) == 0)
          << where(c, pts[q], "face (Pts and Pts32 differ on the host)");
      nonzero_hi += o[0] != 0.f;
    }
    faces += pts.size();
  }
  EXPECT_GT(nonzero_hi, 0u);
  std::printf("%zu faces x species\n", faces);
}

// (c) advection_physics.h, fluxes per cell: pd_cell_faces (all six faces for a limiter cell,
// the ones WRF needs for a tile cell at a degradable boundary) and pd_cell_flux.
TEST(AdvectionDevice, CellFluxes) {
  WRFGPU_REQUIRE_GPU();
  const auto cs = cases(true);
  ASSERT_TRUE(wrfgpu_test::data_present("ref_advect_*.nc", cs.size() > 4));
  int partial = 0;
  const auto names = cell_flux_names();
  for (const auto& c : cs) {
    if (!c.pd_ok) continue;
    const std::vector<Pt> pts = pd_cells(c, species(c));
    DevArena a;
    const CellFluxF fh{c.v, pts.data()}, fd{device_view(c, a), a.copy(pts)};
    const Both r = run_both(fh, fd, (int)pts.size(), CellFluxF::nout);
    EXPECT_TRUE(same_bits(r, pt_describe(c, pts, "cell", names)));
    for (const Pt& p : pts) partial += p.d != 3;
  }
  EXPECT_GT(partial, 0) << "tile cells without all six faces (degradable boundaries)";
}

// (d) advection_physics.h, the limiter: every ring cell and species (ph_low, flux_out, the
// scale), and pd_scale / limited_h / limited_z on random and edge-case values.
TEST(AdvectionDevice, Limiter) {
  WRFGPU_REQUIRE_GPU();
  const auto cs = cases(true);
  ASSERT_TRUE(wrfgpu_test::data_present("ref_advect_*.nc", cs.size() > 4));
  int limited = 0, zeroed = 0, unlimited = 0, outside = 0;
  for (const auto& c : cs) {
    if (!c.pd_ok) continue;
    std::vector<Pt> pts;
    const Needs nd{&c};
    for (int s = 0; s < species(c); ++s)
      for (int j = c.ring.j0; j <= c.ring.j1; ++j)
        for (int k = c.tile.k0; k <= c.tile.k1; ++k)
          for (int i = c.ring.i0; i <= c.ring.i1; ++i) pts.push_back(Pt{nd.limiter(i, j) ? 3 : 0, i, k, j, s});
    DevArena a;
    const LimiterF fh{c.v, pts.data()}, fd{device_view(c, a), a.copy(pts)};
    const Both r = run_both(fh, fd, (int)pts.size(), LimiterF::nout);
    EXPECT_TRUE(same_bits(r, pt_describe(c, pts, "cell", kLimiterOut)));
    for (std::size_t q = 0; q < pts.size(); ++q) {
      const float* o = &r.host[q * LimiterF::nout];
      if (pts[q].d != 3) {
        outside += o[0] == 0.f;
        continue;
      }
      ASSERT_TRUE(std::memcmp(o + 4, o + 6, 2 * sizeof(float)) == 0 && std::memcmp(o + 8, o + 9, sizeof(float)) == 0)
          << where(c, pts[q], "cell (the forms of ph_low, flux_out, scale differ on the host)");
      limited += o[9] < 1.f && o[9] > 0.f;
      zeroed += o[9] == 0.f;
      unlimited += o[9] == 1.f;
    }
  }
  EXPECT_GT(limited, 0);
  EXPECT_GT(zeroed, 0);
  EXPECT_GT(unlimited, 0);
  EXPECT_GT(outside, 0) << "ring cells outside the limiter's range";
  // the scalar pieces
  Rand r(23);
  std::vector<float> in;
  const float edge[] = {0.f, -0.f, 1e-20f, -1e-20f, std::nextafter(-1e-20f, 0.f), 1e-30f, 1.f, -1.f, 0.5f};
  for (int n = 0; n < 40000; ++n) {
    float ph = r.pick(4) ? r.any() : edge[r.pick(9)];
    float fo = r.pick(4) ? r.any() : edge[r.pick(9)];
    if (n % 11 == 0) fo = ph;  // flux_out == ph_low: not limited
    if (n % 13 == 0) fo = std::nextafter(ph, INFINITY);
    const float fq = r.pick(5) ? r.any() : edge[r.pick(9)];
    const float sl = r.pick(3) ? r.u() : (float)r.pick(2), sh = r.pick(3) ? r.u() : (float)r.pick(2);
    in.insert(in.end(), {ph, fo, fq, sl, sh});
  }
  DevArena a;
  const ScaleOpsF sh{in.data()}, sd{a.copy(in)};
  const Both rs = run_both(sh, sd, (int)(in.size() / ScaleOpsF::nin), ScaleOpsF::nout);
  EXPECT_TRUE(same_bits(rs, [&in](int i, int j) {
    const float* x = &in[(std::size_t)i * ScaleOpsF::nin];
    const char* w[] = {"pd_scale(ph_low, flux_out)", "limited_h(fq, lo, hi)", "limited_z(fq, lo, hi)"};
    return std::string(w[j]) + " of ph_low = " + num(x[0]) + ", flux_out = " + num(x[1]) + ", fq = " + num(x[2]) +
           ", lo = " + num(x[3]) + ", hi = " + num(x[4]);
  }));
  EXPECT_GT(count_if_out(rs, 0, [](float x) { return x == 0.f; }), 0);
  EXPECT_GT(count_if_out(rs, 0, [](float x) { return x == 1.f; }), 0);
}

// (e) advection_physics.h, the pd tendency (stage 2): every tile cell and species, from zero
// (as WRF after zero_tend) and from given tendencies; the host half also reproduces WRF's
// tendency of every capture (a check of this file's View and stage 1).
TEST(AdvectionDevice, PdTendency) {
  WRFGPU_REQUIRE_GPU();
  const auto cs = cases(true);
  ASSERT_TRUE(wrfgpu_test::data_present("ref_advect_*.nc", cs.size() > 4));
  int open_cells = 0, wrf_checked = 0;
  for (const auto& c : cs) {
    if (!c.pd_ok) continue;
    // stage 1 on the host (pd_cpu of advection_cpu.cpp), the same array for both halves
    const Box3& R = c.ring;
    const int ni = R.i1 - R.i0 + 1, nk = R.k1 - R.k0 + 1, nj = R.j1 - R.j0 + 1;
    const std::size_t rsz = (std::size_t)ni * nk * nj;
    std::vector<float> scale((std::size_t)c.nspec * rsz, 1.0f);
    const Needs nd{&c};
    for (int j = R.j0; j <= R.j1; ++j)
      for (int k = R.k0; k <= R.k1; ++k)
        for (int i = R.i0; i <= R.i1; ++i) {
          if (!nd.limiter(i, j)) continue;
          const P::CellFaces cf = P::pd_cell_faces(c.v, i, k, j);
          for (int s = 0; s < c.nspec; ++s)
            scale[(std::size_t)s * rsz + (i - R.i0) + (std::size_t)ni * ((k - R.k0) + (std::size_t)nk * (j - R.j0))] =
                P::pd_cell_scale(c.v, cf, (std::size_t)s * c.v.sst, i, k, j);
        }
    const std::vector<Pt> pts = tile_cells(c, species(c));
    Rand r(41);
    std::vector<float> t0h0;
    for (std::size_t q = 0; q < pts.size(); ++q) t0h0.insert(t0h0.end(), {1e-3f * r.any(), 1e-3f * r.any()});
    DevArena a;
    const PdTendF fh{c.v, pts.data(), scale.data(), t0h0.data(), R.i0, ni, R.k0, nk, R.j0, rsz};
    const PdTendF fd{device_view(c, a), a.copy(pts), a.copy(scale), a.copy(t0h0), R.i0, ni, R.k0, nk, R.j0, rsz};
    const Both res = run_both(fh, fd, (int)pts.size(), PdTendF::nout);
    EXPECT_TRUE(same_bits(res, pt_describe(c, pts, "cell", kPdTendOut)));
    open_cells += count_if_out(res, 2, [](float x) { return x == 1.f; });
    if (c.capture_pd && c.tend_ref && !c.tend_ref->empty()) {  // WRF's own tendency
      std::size_t differ = 0, first = 0;
      for (std::size_t q = 0; q < pts.size(); ++q) {
        const Pt& p = pts[q];
        const float ref = (*c.tend_ref)[(std::size_t)p.s * c.in.dims.size3() + c.in.dims.idx3(p.i, p.k, p.j)];
        if (!(res.host[q * PdTendF::nout + 6] == ref) && differ++ == 0) first = q;
      }
      EXPECT_EQ(differ, 0u) << c.name << ": the host half differs from WRF's tendency in " << differ
                            << " cells; first " << where(c, pts[first], "cell");
      ++wrf_checked;
    }
  }
  EXPECT_GT(open_cells, 0);
  EXPECT_GT(wrf_checked, 10);
}

// (e) advection_physics.h, the unlimited tendency (RK steps 1 and 2): every tile cell and
// species; the host half reproduces WRF's tendency of the unlimited captures.
TEST(AdvectionDevice, UnlimitedTendency) {
  WRFGPU_REQUIRE_GPU();
  const auto cs = cases(true);
  ASSERT_TRUE(wrfgpu_test::data_present("ref_advect_*.nc", cs.size() > 4));
  int open_cells = 0, wrf_checked = 0;
  for (const auto& c : cs) {
    if (!c.un_ok) continue;
    const std::vector<Pt> pts = tile_cells(c, species(c));
    Rand r(43);
    std::vector<float> t0h0;
    for (std::size_t q = 0; q < pts.size(); ++q) t0h0.insert(t0h0.end(), {1e-3f * r.any(), 0.f});
    DevArena a;
    const UnTendF fh{c.v, pts.data(), t0h0.data()}, fd{device_view(c, a), a.copy(pts), a.copy(t0h0)};
    const Both res = run_both(fh, fd, (int)pts.size(), UnTendF::nout);
    EXPECT_TRUE(same_bits(res, pt_describe(c, pts, "cell", kUnTendOut)));
    open_cells += count_if_out(res, 2, [](float x) { return x == 1.f; });
    if (!c.capture_pd && c.tend_ref && !c.tend_ref->empty()) {
      std::size_t differ = 0, first = 0;
      for (std::size_t q = 0; q < pts.size(); ++q) {
        const Pt& p = pts[q];
        const float ref = (*c.tend_ref)[(std::size_t)p.s * c.in.dims.size3() + c.in.dims.idx3(p.i, p.k, p.j)];
        if (!(res.host[q * UnTendF::nout + 6] == ref) && differ++ == 0) first = q;
      }
      EXPECT_EQ(differ, 0u) << c.name << ": the host half differs from WRF's tendency in " << differ
                            << " cells; first " << where(c, pts[first], "cell");
      ++wrf_checked;
    }
  }
  EXPECT_GT(open_cells, 0);
  EXPECT_GT(wrf_checked, 3);
}

// (f) advection_tile.h: pd_tile_march and un_tile_march, one block of columns and species
// group per thread (blocks of 1x1 to 5x3 columns, groups of up to 2 species), adding to given
// tendencies (accumulate) and writing h_ and z_tendency (pd).
TEST(AdvectionDevice, TileMarch) {
  WRFGPU_REQUIRE_GPU();
  const auto cs = cases(true);
  ASSERT_TRUE(wrfgpu_test::data_present("ref_advect_*.nc", cs.size() > 4));
  int runs = 0;
  for (const auto& c : cs) {
    for (int pd = 1; pd >= 0; --pd) {
      if (pd ? !c.pd_ok : !c.un_ok) continue;
      const Box3& T = c.tile;
      const int bw = 1 + runs % 5, bh = 1 + runs % 3, gs = runs % 2 ? 2 : 1;
      std::vector<P::TileSpec> blocks;
      std::size_t per = 0;
      for (int b0 = T.j0; b0 <= T.j1; b0 += bh)
        for (int a0 = T.i0; a0 <= T.i1; a0 += bw)
          for (int s0 = 0; s0 < c.nspec; s0 += gs) {
            P::TileSpec t;
            t.a0 = a0; t.a1 = std::min(a0 + bw - 1, T.i1);
            t.b0 = b0; t.b1 = std::min(b0 + bh - 1, T.j1);
            t.ti0 = T.i0; t.ti1 = T.i1; t.tj0 = T.j0; t.tj1 = T.j1;
            t.k0 = T.k0; t.k1 = T.k1;
            t.s0 = s0; t.ns = std::min(gs, c.nspec - s0);
            blocks.push_back(t);
            per = std::max(per, pd ? P::tile_work_floats(t) : P::un_tile_work_floats(t));
          }
      const std::size_t nout = (std::size_t)(c.nspec - 1) * c.sst + c.in.dims.size3();
      Rand r(47 + runs);
      std::vector<float> t0(nout), h0(nout), z0(nout);
      for (std::size_t q = 0; q < nout; ++q) {
        t0[q] = 1e-3f * r.any();
        h0[q] = 1e-3f * r.any();
        z0[q] = 1e-3f * r.any();
      }
      std::vector<float> th = t0, hh = h0, zh = z0, work(per * blocks.size(), NAN);  // written before read
      View vh = c.v;
      vh.accumulate = 1;
      vh.tend = th.data();
      vh.htend = pd ? hh.data() : nullptr;
      vh.ztend = pd ? zh.data() : nullptr;
      const MarchF fh{vh, blocks.data(), work.data(), per, pd != 0};
      for (int n = 0; n < (int)blocks.size(); ++n) fh(n, nullptr);
      DevArena a;
      View vd = device_view(c, a);
      vd.accumulate = 1;
      vd.tend = a.copy(t0);
      vd.htend = pd ? a.copy(h0) : nullptr;
      vd.ztend = pd ? a.copy(z0) : nullptr;
      const MarchF fd{vd, a.copy(blocks), a.alloc<float>(per * blocks.size(), false), per, pd != 0};
      launch(fd, (int)blocks.size(), nullptr, 0);
      std::vector<float> td(nout), hd(nout), zd(nout);
      a.back(td.data(), vd.tend, nout);
      if (pd) {
        a.back(hd.data(), vd.htend, nout);
        a.back(zd.data(), vd.ztend, nout);
      }
      // compare the tile of every species (the rest is not written: compared too, unchanged)
      const std::vector<Pt> pts = tile_cells(c, c.nspec);
      Both res;
      res.nout = 3;
      for (const Pt& p : pts) {
        const std::size_t o = (std::size_t)p.s * c.sst + c.in.dims.idx3(p.i, p.k, p.j);
        res.host.insert(res.host.end(), {th[o], pd ? hh[o] : 0.f, pd ? zh[o] : 0.f});
        res.dev.insert(res.dev.end(), {td[o], pd ? hd[o] : 0.f, pd ? zd[o] : 0.f});
      }
      EXPECT_TRUE(same_bits(res, pt_describe(c, pts, pd ? "cell (pd_tile_march)" : "cell (un_tile_march)",
                                             {"tendency", "h_tendency", "z_tendency"})))
          << "blocks of " << bw << "x" << bh << " columns, " << gs << " species per group";
      std::size_t changed = 0, nonfinite = 0;
      for (std::size_t q = 0; q < nout; ++q) changed += std::memcmp(&td[q], &t0[q], sizeof(float)) != 0;
      for (float x : res.host) nonfinite += !std::isfinite(x);  // the work's NaN fill read, on the host
      EXPECT_GT(changed, 0u);
      EXPECT_EQ(nonfinite, 0u) << c.name << ": the march read work it had not written";
      ++runs;
    }
  }
  EXPECT_GT(runs, 20);
}
