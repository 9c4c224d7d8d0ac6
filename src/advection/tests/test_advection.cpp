// test_advection.cpp - scalar advection (advect_scalar_pd, advect_scalar) against WRF's Fortran,
// CPU vs GPU, positivity, conservation, tiling and bad input.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include "advection.h"
#include "advection_capture.h"
#include "advection_impl.h"
#include "advection_physics.h"
#include "advection_synth.h"
#include "device.h"
#include "errors.h"
#include "test_util.h"
#include "verify.h"

using namespace wrfgpu;
using namespace wrfgpu::advection;

namespace {

using wrfgpu_test::data_files;

// Tile of species s of a WRF-layout 4-D array as a dense (i fastest, k, j) array.
std::vector<float> tile_of(const std::vector<float>& a, const WrfDims& d, int s) {
  const int itf = std::min(d.ite, d.ide - 1), jtf = std::min(d.jte, d.jde - 1), ktf = d.kde - 1;
  std::vector<float> o;
  for (int j = d.jts; j <= jtf; ++j)
    for (int k = d.kts; k <= ktf; ++k)
      for (int i = d.its; i <= itf; ++i) o.push_back(a[(std::size_t)s * d.size3() + d.idx3(i, k, j)]);
  return o;
}

struct Cmp {
  std::size_t differing = 0, cells = 0;
  double max_abs = 0, max_plmv = 0, max_ref = 0;
};
Cmp compare_tiles(const std::vector<float>& ref, const std::vector<float>& x, const WrfDims& d, int ns,
                  const std::string& what) {
  Cmp c;
  const int ni = std::min(d.ite, d.ide - 1) - d.its + 1, nj = std::min(d.jte, d.jde - 1) - d.jts + 1,
            nk = d.kde - d.kts;
  for (int s = 0; s < ns; ++s) {
    std::vector<float> a = tile_of(ref, d, s), b = tile_of(x, d, s);
    FieldStats st = compare_field(what + "[" + std::to_string(s) + "]", a.data(), b.data(), ni, nk, nj);
    c.max_abs = std::max(c.max_abs, st.max_abs);
    c.max_plmv = std::max(c.max_plmv, st.plmv);
    EXPECT_EQ(st.nonfinite, 0u) << what << " species " << s;
    for (std::size_t q = 0; q < a.size(); ++q) {
      c.max_ref = std::max(c.max_ref, (double)std::fabs(a[q]));
      if (!(a[q] == b[q])) ++c.differing;  // +0 == -0: the sign of a zero is not compared
    }
    c.cells += a.size();
  }
  return c;
}

void run_capture(const AdvectCapture& cap, Backend b, std::vector<float>& t, std::vector<float>& h,
                 std::vector<float>& z) {
  const std::size_t n = (std::size_t)cap.nspec * cap.d.size3();
  t.assign(n, 0.f);
  h.assign(cap.tenddec ? n : 0, 0.f);
  z.assign(cap.tenddec ? n : 0, 0.f);
  AdvectInputs in = cap.inputs(t.data(), cap.tenddec ? h.data() : nullptr, cap.tenddec ? z.data() : nullptr);
  if (cap.pd) run_pd(b, Mode::Strict, in); else run_unlimited(b, Mode::Strict, in);
}

// The mass-weighted update WRF applies (rk_update_scalar): M_old*q_old + dt*msfty*tendency.
double updated_mass(const SynthCase& c, int s, int i, int k, int j) {
  const WrfDims& d = c.d;
  const std::size_t o3 = (std::size_t)s * d.size3() + d.idx3(i, k, j), o2 = d.idx2(i, j), o1 = k - d.kms;
  const float M = (c.c1[o1] * c.mub[o2] + c.c2[o1]) + c.c1[o1] * c.mu_old[o2];
  return (double)M * c.field_old[o3] + (double)c.spec.dt * c.msfty[o2] * c.tendency[o3];
}

}  // namespace

// ---- against WRF's own Fortran (reference data made by advect_ref, every boundary type) -------
TEST(AdvectionWrfRef, CpuBitwiseOnEveryBoundaryCase) {
  auto files = data_files("advect", "ref_advect_");
  ASSERT_TRUE(wrfgpu_test::data_present("ref_advect_*.nc", !files.empty()));
  for (const auto& f : files) {
    AdvectCapture cap = load_capture(f);
    std::vector<float> t, h, z;
    run_capture(cap, Backend::Cpu, t, h, z);
    Cmp c = compare_tiles(cap.tendency_ref, t, cap.d, cap.nspec, "tendency");
    EXPECT_EQ(c.differing, 0u) << f << ": max abs diff " << c.max_abs << " plmv " << c.max_plmv;
    if (cap.tenddec && !cap.h_ref.empty()) {
      EXPECT_EQ(compare_tiles(cap.h_ref, h, cap.d, cap.nspec, "h_tendency").differing, 0u) << f;
      EXPECT_EQ(compare_tiles(cap.z_ref, z, cap.d, cap.nspec, "z_tendency").differing, 0u) << f;
    }
    std::printf("[ wrf-ref  ] %-44s %s cells=%zu differing=%zu max_abs=%.3g plmv=%.3g\n",
                f.substr(f.find_last_of('/') + 1).c_str(), cap.pd ? "pd" : "un", c.cells, c.differing,
                c.max_abs, c.max_plmv);
  }
}

TEST(AdvectionWrfRef, GpuBitwiseOnEveryBoundaryCase) {
  WRFGPU_REQUIRE_GPU();
  auto files = data_files("advect", "ref_advect_");
  ASSERT_TRUE(wrfgpu_test::data_present("ref_advect_*.nc", !files.empty()));
  for (const auto& f : files) {
    AdvectCapture cap = load_capture(f);
    std::vector<float> t, h, z;
    run_capture(cap, Backend::Gpu, t, h, z);
    Cmp c = compare_tiles(cap.tendency_ref, t, cap.d, cap.nspec, "tendency");
    EXPECT_EQ(c.differing, 0u) << f << ": max abs diff " << c.max_abs;
    if (cap.tenddec && !cap.h_ref.empty()) {
      EXPECT_EQ(compare_tiles(cap.h_ref, h, cap.d, cap.nspec, "h").differing, 0u) << f;
      EXPECT_EQ(compare_tiles(cap.z_ref, z, cap.d, cap.nspec, "z").differing, 0u) << f;
    }
  }
}

// ---- the block march (advection_tile.h, the CPU default) and the per-cell forms ------------
// Every reference case and capture (pd and unlimited), blocks from one column to the whole
// tile: the faces (and pd scales) and tendencies of a block of columns marching up the levels,
// with rolling buffers; and the per-cell forms (WRFGPU_ADVECT_CPU_TILE=0) the GPU's kernels
// mirror.
TEST(AdvectionTileMarch, CpuBlocksBitwiseOnEveryCase) {
  std::vector<std::string> files = data_files("advect", "ref_advect_");
  for (const char* pre : {"quarter_ss_", "squall2d_"})
    for (const auto& f : data_files("advect", pre)) files.push_back(f);
  ASSERT_TRUE(wrfgpu_test::data_present("ref_advect_*.nc", !files.empty()));
  int npd = 0, nun = 0;
  for (const auto& f : files) {
    AdvectCapture cap = load_capture(f);
    if (cap.pd) ++npd; else ++nun;
    for (const char* shape : {"0", "1x1", "2x3", "5x2", "32x4", "1000x1000"}) {  // 0: per cell
      setenv("WRFGPU_ADVECT_CPU_TILE", shape, 1);
      std::vector<float> t, h, z;
      run_capture(cap, Backend::Cpu, t, h, z);
      unsetenv("WRFGPU_ADVECT_CPU_TILE");
      Cmp c = compare_tiles(cap.tendency_ref, t, cap.d, cap.nspec, "tendency");
      EXPECT_EQ(c.differing, 0u) << f << " blocks " << shape << ": max abs diff " << c.max_abs;
      if (cap.tenddec && !cap.h_ref.empty()) {
        EXPECT_EQ(compare_tiles(cap.h_ref, h, cap.d, cap.nspec, "h").differing, 0u) << f << " " << shape;
        EXPECT_EQ(compare_tiles(cap.z_ref, z, cap.d, cap.nspec, "z").differing, 0u) << f << " " << shape;
      }
    }
  }
  EXPECT_GE(npd, 10) << "pd cases found";
  EXPECT_GE(nun, 5) << "unlimited cases found";
  std::printf("[ blocks   ] %d pd and %d unlimited cases, per-cell form and 5 block shapes each: bitwise equal to WRF\n",
              npd, nun);
  // a shape that is not WxH is refused with the variable's name
  setenv("WRFGPU_ADVECT_CPU_TILE", "32by4", 1);
  AdvectCapture cap = load_capture(data_files("advect", "ref_advect_pd_")[0]);
  std::vector<float> t, h, z;
  try {
    run_capture(cap, Backend::Cpu, t, h, z);
    ADD_FAILURE() << "a bad WRFGPU_ADVECT_CPU_TILE was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("WRFGPU_ADVECT_CPU_TILE"), std::string::npos) << e.what();
  }
  unsetenv("WRFGPU_ADVECT_CPU_TILE");
}

// ---- real captures from WRF em_quarter_ss (when present) -----------------------------------
TEST(AdvectionWrfCapture, QuarterSsMoist) {
  auto files = data_files("advect", "quarter_ss_");
  ASSERT_TRUE(wrfgpu_test::data_present("quarter_ss_*advect*.nc", !files.empty()));
  for (const auto& f : files) {
    AdvectCapture cap = load_capture(f);
    for (Backend b : {Backend::Cpu, Backend::Gpu}) {
      if (b == Backend::Gpu && gpu_count() == 0) continue;
      std::vector<float> t, h, z;
      run_capture(cap, b, t, h, z);
      Cmp c = compare_tiles(cap.tendency_ref, t, cap.d, cap.nspec, "tendency");
      std::printf("[ capture  ] %s %s species=%d cells=%zu differing=%zu max_abs=%.3g (max|ref| %.3g) plmv=%.3g\n",
                  f.c_str(), b == Backend::Cpu ? "cpu" : "gpu", cap.nspec, c.cells, c.differing,
                  c.max_abs, c.max_ref, c.max_plmv);
      EXPECT_EQ(c.differing, 0u) << f << " max abs " << c.max_abs;
      EXPECT_LT(c.max_plmv, 1e-6) << f;
    }
  }
}

// ---- the limiter is exercised by the reference cases ---------------------------------------
TEST(AdvectionPhysics, LimiterActiveInReferenceCases) {
  SynthSpec sp;
  sp.nx = 16; sp.ny = 14; sp.nz = 8; sp.nspec = 3; sp.seed = 12; sp.flags.specified = true;
  SynthCase c = make_synth(sp);
  AdvectInputs in = c.inputs();
  // Count limited cells with the same functions the backends use.
  View v;
  v.g = v.mt = v.mm = v.mo = c.d;
  v.f = in.field; v.fo = in.field_old; v.sst = c.d.size3();
  v.ru = in.ru; v.rv = in.rv; v.rom = in.rom; v.mut = in.mut; v.mub = in.mub; v.mu_old = in.mu_old;
  v.msftx = in.msftx; v.msfty = in.msfty; v.c1 = in.c1; v.c2 = in.c2; v.fzm = in.fzm; v.fzp = in.fzp;
  v.rdzw = in.rdzw; v.k1d = c.d.kms; v.rdx = in.rdx; v.rdy = in.rdy; v.dt = in.dt; v.ts = 1;
  v.itf = c.d.ide - 1; v.jtf = c.d.jde - 1; v.ktf = c.d.kde - 1;
  v.bc.dxs = v.bc.dxe = v.bc.dys = v.bc.dye = 1;
  int limited = 0, total = 0;
  for (int s = 0; s < 3; ++s)
    for (int j = c.d.jds + 1; j <= c.d.jde - 2; ++j)
      for (int k = 1; k <= v.ktf; ++k)
        for (int i = c.d.ids + 1; i <= c.d.ide - 2; ++i) {
          CellFaces cf = pd_cell_faces(v, i, k, j);
          float sc = pd_cell_scale(v, cf, (std::size_t)s * v.sst, i, k, j);
          limited += sc != 1.0f;
          ++total;
        }
  std::printf("[ limiter  ] %d of %d cell-species limited\n", limited, total);
  EXPECT_GT(limited, total / 50);
}

// ---- positivity: non-negative inputs give a non-negative mass-weighted update --------------
TEST(AdvectionPhysics, PositiveDefiniteOnRandomFields) {
  int cases = 0;
  double worst = 0;
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    SynthSpec sp;
    sp.nx = 20; sp.ny = 18; sp.nz = 10; sp.nspec = 4; sp.seed = 1000 + seed;
    sp.courant = 0.15f + 0.03f * (seed % 6);  // up to 0.3 per direction (sum of outflow < 1)
    if (seed % 3 == 0) sp.flags.periodic_x = sp.flags.periodic_y = true;
    else if (seed % 3 == 1) sp.flags.specified = true;
    else sp.flags.open_xs = sp.flags.open_xe = sp.flags.open_ys = sp.flags.open_ye = true;
    SynthCase c = make_synth(sp);
    AdvectInputs in = c.inputs();
    run_pd(Backend::Cpu, Mode::Strict, in);
    const WrfDims& d = c.d;
    const bool deg = !sp.flags.periodic_x;
    for (int s = 0; s < sp.nspec; ++s)
      for (int j = d.jds + (deg ? 1 : 0); j <= d.jde - (deg ? 2 : 1); ++j)
        for (int k = 1; k <= d.kde - 1; ++k)
          for (int i = d.ids + (deg ? 1 : 0); i <= d.ide - (deg ? 2 : 1); ++i) {
            const std::size_t o2 = d.idx2(i, j), o1 = k - d.kms;
            const double M = (c.c1[o1] * c.mub[o2] + c.c2[o1]) + c.c1[o1] * c.mu_old[o2];
            // Round-off scale: the local tracer mass (largest value of field/field_old in the
            // cell and its six neighbours); float sums in ph_low/flux_out err by ~1e-7 of it.
            double qmax = 0;
            const int nb[7][3] = {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
            for (auto& n : nb) {
              const int kk = std::min(std::max(k + n[1], 1), d.kde - 1);
              const std::size_t o = (std::size_t)s * d.size3() + d.idx3(i + n[0], kk, j + n[2]);
              qmax = std::max(qmax, (double)std::max(c.field[o], c.field_old[o]));
            }
            const double ref = M * qmax + 1e-30;
            const double q = updated_mass(c, s, i, k, j);
            worst = std::min(worst, q / ref);
            // observed down to -7.5e-8 of the local mass over these cases: float round-off
            ASSERT_GE(q, -1e-6 * ref) << "seed " << seed << " s " << s << " (i,k,j)=(" << i << "," << k << "," << j << ")";
          }
    ++cases;
  }
  std::printf("[ positivity] %d random cases, most negative update / (M*local max q) = %.3g\n", cases, worst);
}

// ---- conservation: periodic and symmetric domains have no net flux -------------------------
TEST(AdvectionPhysics, ConservesMassPeriodicAndSymmetric) {
  for (int pd = 0; pd <= 1; ++pd)
    for (int bc = 0; bc < 2; ++bc) {
      SynthSpec sp;
      sp.nx = 18; sp.ny = 16; sp.nz = 9; sp.nspec = 3; sp.seed = 77 + bc + 10 * pd;
      if (bc == 0) sp.flags.periodic_x = sp.flags.periodic_y = true;
      else sp.flags.symmetric_xs = sp.flags.symmetric_xe = sp.flags.symmetric_ys = sp.flags.symmetric_ye = true;
      SynthCase c = make_synth(sp);
      AdvectInputs in = c.inputs();
      if (pd) run_pd(Backend::Cpu, Mode::Strict, in); else run_unlimited(Backend::Cpu, Mode::Strict, in);
      const WrfDims& d = c.d;
      for (int s = 0; s < sp.nspec; ++s) {
        // volume of a cell in (x, y, eta): dx dy / (msftx msfty) |deta|; rk_update applies msfty*tend.
        double sum = 0, sabs = 0;
        for (int j = d.jds; j <= d.jde - 1; ++j)
          for (int k = 1; k <= d.kde - 1; ++k)
            for (int i = d.ids; i <= d.ide - 1; ++i) {
              const double w = 1.0 / (c.msftx[d.idx2(i, j)] * std::fabs(c.rdzw[k - d.kms]));
              const double x = c.tendency[(std::size_t)s * d.size3() + d.idx3(i, k, j)] * w;
              sum += x;
              sabs += std::fabs(x);
            }
        EXPECT_LT(std::fabs(sum), 2e-6 * sabs) << (pd ? "pd" : "unlimited") << (bc ? " symmetric" : " periodic")
                                               << " species " << s << " sum " << sum << " sum|.| " << sabs;
      }
    }
}

// ---- tiling: four tiles give bitwise the whole-domain result --------------------------------
TEST(AdvectionPhysics, TilesGiveTheSameResult) {
  for (int pd = 0; pd <= 1; ++pd)
    for (int bc = 0; bc < 2; ++bc) {
      SynthSpec sp;
      sp.nx = 20; sp.ny = 17; sp.nz = 8; sp.nspec = 2; sp.seed = 5 + bc;
      if (bc) sp.flags.specified = true; else sp.flags.periodic_x = sp.flags.periodic_y = true;
      SynthCase whole = make_synth(sp);
      AdvectInputs in = whole.inputs();
      if (pd) run_pd(Backend::Cpu, Mode::Strict, in); else run_unlimited(Backend::Cpu, Mode::Strict, in);
      SynthCase tiled = make_synth(sp);
      const WrfDims d0 = tiled.d;
      const int is[3] = {d0.ids, 8, d0.ide}, js[3] = {d0.jds, 10, d0.jde};
      for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b) {
          AdvectInputs t = tiled.inputs();
          t.dims.its = is[a] + (a ? 1 : 0); t.dims.ite = a ? is[2] : is[1];
          t.dims.jts = js[b] + (b ? 1 : 0); t.dims.jte = b ? js[2] : js[1];
          if (pd) run_pd(Backend::Cpu, Mode::Strict, t); else run_unlimited(Backend::Cpu, Mode::Strict, t);
        }
      std::size_t diff = 0;
      for (std::size_t q = 0; q < whole.tendency.size(); ++q) diff += !(whole.tendency[q] == tiled.tendency[q]);
      EXPECT_EQ(diff, 0u) << (pd ? "pd" : "unlimited") << " bc " << bc;
    }
}

// ---- fast mode stays close to strict -------------------------------------------------------
TEST(AdvectionModes, FastCloseToStrict) {
  SynthSpec sp;
  sp.nx = 20; sp.ny = 18; sp.nz = 10; sp.nspec = 3; sp.seed = 9; sp.flags.specified = true;
  SynthCase a = make_synth(sp), b = make_synth(sp);
  AdvectInputs ia = a.inputs(), ib = b.inputs();
  run_pd(Backend::Cpu, Mode::Strict, ia);
  run_pd(Backend::Cpu, Mode::Fast, ib);
  Cmp c = compare_tiles(a.tendency, b.tendency, a.d, 3, "fast");
  std::printf("[ fast     ] cpu fast vs strict: %zu of %zu cells differ, max abs %.3g (max |t| %.3g), plmv %.3g\n",
              c.differing, c.cells, c.max_abs, c.max_ref, c.max_plmv);
  // observed: 2.15e-6 at max |t| 14.1 (1.5e-7 relative): single-precision rounding only
  EXPECT_LT(c.max_abs, 1e-6 * c.max_ref);
}

// ---- accumulate: WRF's INTENT(INOUT) tendency ------------------------------------------------
TEST(AdvectionApi, AccumulateAddsToTendency) {
  SynthSpec sp;
  sp.nspec = 2; sp.seed = 3; sp.flags.periodic_x = sp.flags.periodic_y = true;
  SynthCase a = make_synth(sp), b = make_synth(sp);
  for (auto& x : b.tendency) x = 1.0f;
  AdvectInputs ia = a.inputs(), ib = b.inputs();
  ib.accumulate = true;
  run_pd(Backend::Cpu, Mode::Strict, ia);
  run_pd(Backend::Cpu, Mode::Strict, ib);
  const WrfDims& d = a.d;
  for (int j = d.jts; j <= d.jde - 1; ++j)
    for (int i = d.its; i <= d.ide - 1; ++i) {
      const std::size_t o = d.idx3(i, 3, j);
      EXPECT_NEAR(b.tendency[o], 1.0f + a.tendency[o], 1e-5 * (1 + std::fabs(a.tendency[o])));
    }
  // outside the tile nothing is written
  EXPECT_EQ(a.tendency[d.idx3(d.ims, 1, d.jms)], 0.0f);
}

// A tile holding only the staggered end row (jts = jte = jde), as WRF's OpenMP tiling of a
// narrow patch can make: WRF's loops run zero times; the call must succeed and write nothing.
TEST(AdvectionApi, TileOnStaggeredEndRowWritesNothing) {
  SynthSpec sp;
  sp.nspec = 2; sp.seed = 5;
  SynthCase c = make_synth(sp);
  for (auto& x : c.tendency) x = -7.0f;
  AdvectInputs in = c.inputs();
  in.dims.jts = in.dims.jte = in.dims.jde;
  for (Backend b : {Backend::Cpu, Backend::Gpu}) {
    if (b == Backend::Gpu && gpu_count() == 0) continue;
    for (bool pd : {true, false}) {
      AdvectTimings t;
      if (pd) run_pd(b, Mode::Strict, in, &t); else run_unlimited(b, Mode::Strict, in, &t);
      EXPECT_STREQ(t.backend, "none");
      for (float x : c.tendency) ASSERT_EQ(x, -7.0f);
    }
  }
}

// ---- bad input --------------------------------------------------------------------------------
TEST(AdvectionApi, RejectsBadInput) {
  SynthSpec sp;
  sp.nspec = 3; sp.flags.specified = true;
  SynthCase c = make_synth(sp);
  auto expect_input_error = [&](AdvectInputs in, const std::string& needle, bool pd = true) {
    try {
      if (pd) run_pd(Backend::Cpu, Mode::Strict, in); else run_unlimited(Backend::Cpu, Mode::Strict, in);
      ADD_FAILURE() << "no InputError for " << needle;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  { AdvectInputs in = c.inputs(); in.flags.polar = true; expect_input_error(in, "polar not supported"); }
  { AdvectInputs in = c.inputs(); in.flags.h_order = 6; expect_input_error(in, "h_sca_adv_order=6"); }
  { AdvectInputs in = c.inputs(); in.flags.v_order = 5; expect_input_error(in, "v_sca_adv_order=5"); }
  { AdvectInputs in = c.inputs(); in.dims.kte = in.dims.kde - 1; expect_input_error(in, "kte="); }
  { AdvectInputs in = c.inputs(); in.mub = nullptr; expect_input_error(in, "mub is a null pointer"); }
  { AdvectInputs in = c.inputs(); in.flags.specified = false; expect_input_error(in, "west boundary"); }
  // halo narrower than the scheme needs: a tile in the interior with memory only 3 wide
  {
    SynthSpec s2 = sp;
    s2.halo = 3; s2.its = 8; s2.ite = 15; s2.jts = 7; s2.jte = 12;
    SynthCase c2 = make_synth(s2);
    expect_input_error(c2.inputs(), "field: halo too narrow");
    // the unlimited scheme needs only 3
    AdvectInputs un = c2.inputs();
    EXPECT_NO_THROW(run_unlimited(Backend::Cpu, Mode::Strict, un));
  }
  // NaN in one species of field_old: named with species and index
  {
    SynthCase c3 = make_synth(sp);
    c3.field_old[2 * c3.d.size3() + c3.d.idx3(5, 4, 6)] = std::nanf("");
    expect_input_error(c3.inputs(), "field_old: non-finite value nan in species 2 at (i,k,j)=(5,4,6)");
    // named with WRF's own subscripts where the caller names the 4-D array (the batch of
    // moist(:,:,:,2:) in WRF: species 2 of the call is moist_old(:,:,:,4))
    AdvectInputs named = c3.inputs();
    named.array_name = "moist";
    named.first_index = 2;
    expect_input_error(named, "moist_old(5,4,6,4): non-finite value nan");
    // a 3-D pair that is not array/array_old: WRF's TKE, tke_2 advected from tke_1
    SynthSpec one = sp;
    one.nspec = 1;
    SynthCase c3t = make_synth(one);
    c3t.field_old[c3t.d.idx3(5, 4, 6)] = std::nanf("");
    AdvectInputs tke = c3t.inputs();
    tke.array_name = "tke_2";
    tke.array_name_old = "tke_1";
    tke.first_index = 0;
    expect_input_error(tke, "tke_1(5,4,6): non-finite value nan");
    c3t.field_old[c3t.d.idx3(5, 4, 6)] = 1.f;
    c3t.field[c3t.d.idx3(7, 2, 3)] = INFINITY;
    expect_input_error(c3t.inputs(), "field: non-finite value inf in species 0 at (i,k,j)=(7,2,3)");
    AdvectInputs tke2 = c3t.inputs();
    tke2.array_name = "tke_2";
    tke2.array_name_old = "tke_1";
    tke2.first_index = 0;
    expect_input_error(tke2, "tke_2(7,2,3): non-finite value inf");
  }
  {
    SynthCase c4 = make_synth(sp);
    c4.mut[c4.d.idx2(3, 3)] = INFINITY;
    expect_input_error(c4.inputs(), "mut: non-finite value inf at (i,j)=(3,3)");
    SynthCase c4z = make_synth(sp);
    c4z.rdzw[3 - c4z.d.kms] = -INFINITY;  // a 1-D column array
    expect_input_error(c4z.inputs(), "rdzw: non-finite value -inf at k=3");
  }
  // a column without dry-air mass, a zero or negative map factor: named with the value
  {
    SynthCase c8 = make_synth(sp);
    c8.mut[c8.d.idx2(4, 5)] = 0.f;
    expect_input_error(c8.inputs(), "mut: value 0.000000 at (i,j)=(4,5) is not positive");
    SynthCase c9 = make_synth(sp);
    c9.msfty[c9.d.idx2(6, 3)] = -1.f;
    expect_input_error(c9.inputs(), "msfty: value -1.000000 at (i,j)=(6,3) is not positive");
    SynthCase c10 = make_synth(sp);
    c10.msftx[c10.d.idx2(5, 5)] = 0.f;
    expect_input_error(c10.inputs(), "msftx: value 0.000000 at (i,j)=(5,5)", false);
    // a patch large enough for the rows to be checked in parallel: of three bad values the
    // first in (j, i) order is named
    SynthSpec big = sp;
    big.nx = 300; big.ny = 240; big.nz = 4; big.nspec = 1;
    SynthCase c11 = make_synth(big);
    c11.mut[c11.d.idx2(250, 150)] = -2.f;
    c11.mut[c11.d.idx2(200, 150)] = 0.f;
    c11.mut[c11.d.idx2(10, 230)] = -1.f;
    expect_input_error(c11.inputs(), "mut: value 0.000000 at (i,j)=(200,150) is not positive");
  }
  // An interior tile: the pd scheme reads field 4 rows beyond the tile in j only over the
  // tile's i range +-1 (the second box of the cross). A NaN there is found; with NaNs in
  // species 2 and 1, species 1 is named (the first in species order); a NaN at the tile's
  // corner + (4, 4) is read by neither box and is no error.
  {
    SynthSpec s6 = sp;
    s6.halo = 5; s6.its = 8; s6.ite = 15; s6.jts = 7; s6.jte = 12;
    SynthCase c6 = make_synth(s6);
    const WrfDims& d6 = c6.d;
    c6.field[2 * d6.size3() + d6.idx3(9, 3, 3)] = std::nanf("");
    c6.field[1 * d6.size3() + d6.idx3(16, 5, 3)] = INFINITY;
    expect_input_error(c6.inputs(), "field: non-finite value inf in species 1 at (i,k,j)=(16,5,3)");
    SynthCase c7 = make_synth(s6);
    c7.field[c7.d.idx3(19, 2, 16)] = std::nanf("");
    EXPECT_NO_THROW(run_pd(Backend::Cpu, Mode::Strict, c7.inputs()));
    c7.field[c7.d.idx3(19, 2, 12)] = std::nanf("");  // i = ite + 4, in the first box
    expect_input_error(c7.inputs(), "field: non-finite value nan in species 0 at (i,k,j)=(19,2,12)");
  }
  // NaN outside what the scheme reads is not an error (WRF never reads it either)
  {
    SynthCase c5 = make_synth(sp);
    c5.field[c5.d.idx3(c5.d.ims, 2, c5.d.jms)] = std::nanf("");  // corner of the halo
    AdvectInputs in = c5.inputs();
    EXPECT_NO_THROW(run_pd(Backend::Cpu, Mode::Strict, in));
  }
}

TEST(AdvectionApi, GpuWithoutCudaOrGpuIsARuntimeError) {
  if (gpu_count() > 0) GTEST_SKIP() << "a GPU is visible";
  SynthSpec sp;
  sp.flags.periodic_x = sp.flags.periodic_y = true;
  SynthCase c = make_synth(sp);
  AdvectInputs in = c.inputs();
  EXPECT_THROW(run_pd(Backend::Gpu, Mode::Strict, in), RuntimeError);
}

// The PD level march forced where its block's shared memory cannot hold the call's levels (its
// 1-D columns, 16 bytes a level: 16,000 levels are 256 KB, more than any device's 227 KB): a
// RuntimeError naming the option, not the three kernels in its place.
TEST(AdvectionGpu, ForcedPdMarchThatDoesNotFitIsARuntimeError) {
  WRFGPU_REQUIRE_GPU();
  SynthSpec sp;
  sp.nx = 6; sp.ny = 5; sp.nz = 16000; sp.nspec = 1; sp.seed = 71; sp.courant = 0.5f;
  sp.flags.periodic_x = sp.flags.periodic_y = true;
  SynthCase c = make_synth(sp);
  AdvectInputs in = c.inputs();
  GpuOptions o;
  o.pd_kernel = GpuOptions::PdKernel::March;
  try {
    run_pd(Backend::Gpu, Mode::Strict, in, nullptr, o);
    ADD_FAILURE() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("WRFGPU_ADVECT_PD_KERNEL=march"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bytes of shared memory a block"), std::string::npos) << e.what();
  }
  o.pd_kernel = GpuOptions::PdKernel::Auto;  // the library's choice: the three kernels
  EXPECT_NO_THROW(run_pd(Backend::Gpu, Mode::Strict, in, nullptr, o));
}

// ---- bad tracers on the GPU: checked while packed, named as the CPU names them ----------------
// The GPU backend checks field/field_old for NaN/Inf as it packs them into staging, group by
// group; it must name the same value as validate() and write nothing, even when the bad value
// is in the last group and the earlier groups' kernels have run.
TEST(AdvectionGpu, BadTracerNamedAndNothingWritten) {
  WRFGPU_REQUIRE_GPU();
  SynthSpec sp;
  sp.nspec = 9; sp.halo = 5; sp.its = 8; sp.ite = 15; sp.jts = 7; sp.jte = 12;
  sp.flags.specified = true;
  GpuOptions go;
  go.species_per_group = 2;  // 5 groups
  struct Bad { bool old; int s, i, k, j; };
  const std::vector<std::vector<Bad>> cases = {
      {{false, 7, 16, 5, 3}},                         // field, last group, read by the j-box only
      {{true, 1, 9, 2, 8}, {false, 6, 4, 3, 9}},      // field is named before field_old
      {{true, 8, 13, 4, 10}},                         // field_old only
      {{false, 3, 17, 2, 9}},                         // read by both schemes
  };
  int nbad = 0;
  for (const auto& bads : cases)
    for (bool pd : {true, false}) {
      SynthCase c = make_synth(sp);
      for (const Bad& b : bads)
        (b.old ? c.field_old : c.field)[(std::size_t)b.s * c.d.size3() + c.d.idx3(b.i, b.k, b.j)] = std::nanf("");
      for (auto& x : c.tendency) x = -7.0f;
      AdvectInputs in = c.inputs();
      if (!pd) in.field_old = in.field;  // RK1/2: WRF passes field twice (field_old unread)
      std::string cpu_msg;
      try {
        validate(in, pd);
      } catch (const InputError& e) {
        cpu_msg = e.what();
      }
      if (cpu_msg.empty()) {  // the unlimited scheme reads none of these values
        EXPECT_FALSE(pd) << "validate accepted a NaN the pd scheme reads";
        EXPECT_NO_THROW(run_unlimited(Backend::Gpu, Mode::Strict, in, nullptr, go));
        continue;
      }
      ++nbad;
      try {
        if (pd) run_pd(Backend::Gpu, Mode::Strict, in, nullptr, go);
        else run_unlimited(Backend::Gpu, Mode::Strict, in, nullptr, go);
        ADD_FAILURE() << "the GPU backend accepted: " << cpu_msg;
      } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), cpu_msg);
      }
      for (float x : c.tendency) ASSERT_EQ(x, -7.0f) << "written before the error";
    }
  EXPECT_EQ(nbad, 5);  // 4 pd cases and 1 unlimited
  // a NaN the scheme does not read: the GPU result is the CPU's, bit for bit
  SynthCase c = make_synth(sp);
  c.field[5 * c.d.size3() + c.d.idx3(19, 2, 16)] = std::nanf("");
  std::vector<float> ref = c.tendency;
  AdvectInputs in = c.inputs();
  AdvectInputs ci = in;
  ci.tendency = ref.data();
  run_pd(Backend::Cpu, Mode::Strict, ci);
  run_pd(Backend::Gpu, Mode::Strict, in, nullptr, go);
  std::size_t differ = 0;
  for (std::size_t q = 0; q < ref.size(); ++q)
    if (std::memcmp(&ref[q], &c.tendency[q], sizeof(float)) != 0) ++differ;
  EXPECT_EQ(differ, 0u);
}

// ---- page-locked caller arrays: copied straight, checked on the device -------------------------
// A model that keeps its tracers and tendencies page-locked (cudaHostAlloc, cudaHostRegister)
// gets the direct path (GpuOptions::direct_locked): each group copied straight from and to the
// caller's arrays, the tracers' NaN/Inf check on the device. It must give the CPU's bits,
// write nothing outside the tile, name a bad value as validate() does and then write nothing;
// direct_locked = false stages the same arrays through pinned buffers, with the same bits.

TEST(AdvectionGpu, PageLockedArraysCopiedStraight) {
  WRFGPU_REQUIRE_GPU();
  SynthSpec sp;
  sp.nspec = 9; sp.halo = 5; sp.its = 8; sp.ite = 15; sp.jts = 7; sp.jte = 12; sp.nz = 11;
  sp.flags.specified = true; sp.courant = 0.6f;
  GpuOptions go;
  go.species_per_group = 2;  // 5 groups
  // good calls: pd with h/z tendencies accumulating, and the unlimited scheme (field twice);
  // the winds page-locked too (variant 0: copied straight as well) or not (1), or the
  // page-locked path off (2)
  // variant 3 (pd): everything page-locked but field_old, as inside WRF (moist registered,
  // solve_em's moist_old not): field_old staged, the rest straight
  for (bool pd : {true, false})
    for (int variant = 0; variant < (pd ? 4 : 3); ++variant) {
      const bool direct = variant != 2;
      SynthCase c = make_synth(sp);
      AdvectInputs in = c.inputs(pd);
      in.accumulate = pd;
      std::uint64_t r = 5;
      auto fill = [&](std::vector<float>& v) {
        for (auto& x : v) { r = r * 6364136223846793005ull + 1442695040888963407ull; x = 1e-4f * (float)((r >> 40) % 2001) - 0.1f; }
      };
      fill(c.tendency);
      if (pd) { fill(c.h_tendency); fill(c.z_tendency); }
      if (!pd) in.field_old = in.field;
      LockedArray f(c.field), fo(c.field_old), t(c.tendency), h(c.h_tendency), z(c.z_tendency);
      LockedArray ru(c.ru), rv(c.rv), rom(c.rom);
      AdvectInputs li = in;
      if (variant == 0) { li.ru = ru.p; li.rv = rv.p; li.rom = rom.p; }
      li.field = f.p;
      li.field_old = pd ? (variant == 3 ? in.field_old : fo.p) : f.p;
      li.tendency = t.p;
      li.h_tendency = pd ? h.p : nullptr;
      li.z_tendency = pd ? z.p : nullptr;
      if (pd) run_pd(Backend::Cpu, Mode::Strict, in); else run_unlimited(Backend::Cpu, Mode::Strict, in);
      GpuOptions o = go;
      o.direct_locked = direct;
      AdvectTimings tm;
      if (pd) run_pd(Backend::Gpu, Mode::Strict, li, &tm, o); else run_unlimited(Backend::Gpu, Mode::Strict, li, &tm, o);
      EXPECT_EQ(tm.direct, direct) << "pd " << pd;
      EXPECT_EQ(tm.field_old_staged, variant == 3) << "pd " << pd;
      // every value of the arrays: the tile's bitwise the CPU's, the rest untouched by both
      const std::vector<std::pair<const std::vector<float>*, const LockedArray*>> outs = {
          {&c.tendency, &t}, {&c.h_tendency, &h}, {&c.z_tendency, &z}};
      for (const auto& q : outs) {
        if (!pd && q.second != &t) continue;
        const std::vector<float> g = q.second->values();
        std::size_t differ = 0;
        for (std::size_t x = 0; x < g.size(); ++x)
          if (std::memcmp(&g[x], &(*q.first)[x], sizeof(float)) != 0) ++differ;
        EXPECT_EQ(differ, 0u) << "pd " << pd << " variant " << variant;
      }
    }
  // A call with a bad value somewhere (in: the pageable arrays; li: the same values, some of
  // them page-locked, t its tendency, set to -7): where validate() refuses `in`, the GPU must
  // refuse `li` with validate()'s message and leave t untouched (++*refused); else it runs,
  // on the page-locked path where want_direct.
  auto same_refusal = [&](const AdvectInputs& in, const AdvectInputs& li, const LockedArray& t, bool want_direct,
                          const std::string& what, int* refused) {
    std::string cpu_msg;
    try {
      validate(in, true);
    } catch (const InputError& e) {
      cpu_msg = e.what();
    }
    AdvectTimings tm;
    if (cpu_msg.empty()) {
      EXPECT_NO_THROW(run_pd(Backend::Gpu, Mode::Strict, li, &tm, go)) << what;
      if (want_direct) {
        EXPECT_TRUE(tm.direct) << what;
      }
      return;
    }
    ++*refused;
    try {
      run_pd(Backend::Gpu, Mode::Strict, li, &tm, go);
      ADD_FAILURE() << "the GPU backend accepted: " << cpu_msg;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), cpu_msg) << what;
    }
    for (float x : t.values()) ASSERT_EQ(x, -7.0f) << "written before the error";
  };
  // bad tracers (the cases of BadTracerNamedAndNothingWritten): the device check names the
  // value validate() names, and nothing is written
  struct Bad { bool old; int s, i, k, j; };
  const std::vector<std::vector<Bad>> cases = {
      {{false, 7, 16, 5, 3}}, {{true, 1, 9, 2, 8}, {false, 6, 4, 3, 9}}, {{true, 8, 13, 4, 10}}, {{false, 3, 17, 2, 9}},
      {{false, 2, 3, 4, 2}},  // a corner of the halo: read by neither scheme
  };
  // (field_old page-locked too, or pageable: then checked on the host as it is packed)
  int nbad = 0;
  for (bool fo_locked : {true, false})
    for (const auto& bads : cases) {
      SynthCase c = make_synth(sp);
      for (const Bad& b : bads)
        (b.old ? c.field_old : c.field)[(std::size_t)b.s * c.d.size3() + c.d.idx3(b.i, b.k, b.j)] = std::nanf("");
      for (auto& x : c.tendency) x = -7.0f;
      AdvectInputs in = c.inputs();
      LockedArray f(c.field), fo(c.field_old), t(c.tendency);
      AdvectInputs li = in;
      li.field = f.p; li.tendency = t.p;
      if (fo_locked) li.field_old = fo.p;
      same_refusal(in, li, t, true, fo_locked ? "bad tracers" : "bad tracers, field_old pageable", &nbad);
    }
  EXPECT_EQ(nbad, 8);
  // bad winds, page-locked too (checked on the device with the tracers) or not (on the host):
  // validate()'s message (the tracers come first in its order), nothing written; rom at kts is
  // not read (its flux is zero)
  struct BadMet { int which; int i, k, j; bool also_field; };
  const BadMet mets[] = {{0, 8, 3, 7, false}, {1, 15, 9, 13, true}, {2, 12, 5, 10, false}, {2, 12, 1, 10, false}};
  int nmet = 0;
  for (const BadMet& b : mets)
    for (bool met_locked : {true, false}) {
      SynthCase c = make_synth(sp);
      std::vector<float>* m[3] = {&c.ru, &c.rv, &c.rom};
      (*m[b.which])[c.d.idx3(b.i, b.k, b.j)] = std::nanf("");
      if (b.also_field) c.field[(std::size_t)4 * c.d.size3() + c.d.idx3(10, 2, 9)] = std::nanf("");
      for (auto& x : c.tendency) x = -7.0f;
      AdvectInputs in = c.inputs();
      LockedArray f(c.field), fo(c.field_old), t(c.tendency), ru(c.ru), rv(c.rv), rom(c.rom);
      AdvectInputs li = in;
      li.field = f.p; li.field_old = fo.p; li.tendency = t.p;
      if (met_locked) { li.ru = ru.p; li.rv = rv.p; li.rom = rom.p; }
      same_refusal(in, li, t, false, met_locked ? "met locked 1" : "met locked 0", &nmet);
    }
  EXPECT_EQ(nmet, 6);
}

namespace {
// A PD call whose tendency (c.tendency, filled with -7 first) the GPU backend writes, and the
// same call on the CPU backend into a copy: the GPU's path (tm.direct) is want_direct and every
// tendency value is the CPU's, bit for bit. `in` points at c's arrays, or some in their place.
void expect_gpu_path_and_cpu_bits(SynthCase& c, const AdvectInputs& in, bool want_direct,
                                  const std::string& what) {
  std::vector<float> cpu_t(c.tendency.size(), -7.0f);
  c.tendency.assign(c.tendency.size(), -7.0f);
  AdvectInputs ci = in;
  ci.tendency = cpu_t.data();
  run_pd(Backend::Cpu, Mode::Strict, ci);
  AdvectTimings tm;
  run_pd(Backend::Gpu, Mode::Strict, in, &tm);
  EXPECT_EQ(tm.direct, want_direct) << what;
  EXPECT_EQ(std::memcmp(c.tendency.data(), cpu_t.data(), cpu_t.size() * sizeof(float)), 0) << what;
}
// The registration tests' case: a tile inside a larger patch, specified boundaries.
SynthSpec registration_spec(int nspec) {
  SynthSpec sp;
  sp.nspec = nspec; sp.halo = 5; sp.its = 6; sp.ite = 19; sp.jts = 5; sp.jte = 15; sp.nz = 10;
  sp.flags.specified = true; sp.courant = 0.6f;
  return sp;
}
// host_register of a whole vector
bool register_vector(std::vector<float>& v, const char* name) {
  return host_register(v.data(), v.size() * sizeof(float), name);
}
}  // namespace

// WRF's own arrays registered in place (host_register, as wrf_patch does for the grid state):
// the call takes the page-locked path and gives the CPU's bits; released, the same arrays are
// staged again; a second call with other arrays, including one allocated again where a
// released one was, gets no stale mapping.
TEST(AdvectionGpu, RegisteredArraysCopiedStraight) {
  WRFGPU_REQUIRE_GPU();
  host_unregister_all();
  SynthSpec sp = registration_spec(6);
  auto run = [&](SynthCase& c, std::uint64_t seed, bool want_direct, const char* what) {
    for (auto& x : c.field) { seed = seed * 6364136223846793005ull + 1442695040888963407ull; x *= 1.0f + 1e-3f * (float)((seed >> 40) % 100); }
    expect_gpu_path_and_cpu_bits(c, c.inputs(), want_direct, what);
  };
  auto& reg = register_vector;
  {
    SynthCase c = make_synth(sp);
    for (auto* v : {&c.field, &c.field_old, &c.tendency, &c.ru, &c.rv, &c.rom}) EXPECT_TRUE(reg(*v, "a"));
    EXPECT_EQ(host_registered_count(), 6u);
    run(c, 1, true, "registered");
    EXPECT_TRUE(reg(c.field, "again"));  // a lookup
    EXPECT_TRUE(host_register(c.field.data() + 10, 40, "a part"));
    EXPECT_EQ(host_registered_count(), 6u);
    run(c, 2, true, "registered, second call");
    for (auto* v : {&c.field, &c.field_old, &c.tendency, &c.ru, &c.rv, &c.rom}) host_unregister(v->data());
    EXPECT_EQ(host_registered_count(), 0u);
    run(c, 3, false, "released: staged");
  }
  {  // other arrays (some allocated where the released ones were), other species count
    sp.nspec = 11;
    SynthCase c = make_synth(sp);
    for (auto* v : {&c.field, &c.field_old, &c.tendency, &c.ru, &c.rv, &c.rom}) EXPECT_TRUE(reg(*v, "b"));
    run(c, 4, true, "other arrays");
    // the tendency array is released and allocated again, larger (maybe where the old one
    // was): the new one is registered, the old registration is gone
    host_unregister(c.tendency.data());
    c.tendency = std::vector<float>();
    c.tendency = std::vector<float>(c.field.size() + 4096, 0.0f);
    c.tendency.resize(c.field.size());
    EXPECT_TRUE(reg(c.tendency, "grown"));
    EXPECT_EQ(host_registered_count(), 6u);
    run(c, 5, true, "grown tendency");
    host_unregister_all();
    EXPECT_EQ(host_registered_count(), 0u);
  }
}

// A range that cannot be page-locked is said once (naming it) and not tried again, and a call
// on such an array goes through the staging with the same bits. (Its own test: the failed
// cudaHostRegister calls are what compute-sanitizer reports for it.)
TEST(AdvectionGpu, FailedRegistrationSaidOnceAndStaged) {
  WRFGPU_REQUIRE_GPU();
  host_unregister_all();
  const SynthSpec sp = registration_spec(11);
  auto& reg = register_vector;
  {  // a range that cannot be registered: said once, then not tried again
    const std::size_t bytes = 1 << 20;
    void* none = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(none, MAP_FAILED);
    testing::internal::CaptureStderr();
    EXPECT_FALSE(host_register(none, bytes, "the unmapped array"));
    EXPECT_FALSE(host_register(none, bytes, "the unmapped array"));
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("wrfgpu: cannot page-lock the unmapped array (1048576 bytes"), std::string::npos) << err;
    EXPECT_NE(err.find("staging"), std::string::npos) << err;
    EXPECT_EQ(err.find("cannot page-lock", err.find("cannot page-lock") + 1), std::string::npos) << err;
    EXPECT_EQ(host_registered_count(), 0u);
    host_unregister_all();
    munmap(none, bytes);
  }
  {  // the tracers on read-only pages: registered or not, the call gives the CPU's bits
    SynthCase c = make_synth(sp);
    const std::size_t bytes = ((c.field.size() * sizeof(float)) + 4095) / 4096 * 4096;
    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(m, MAP_FAILED);
    float* ro = static_cast<float*>(m);
    std::copy(c.field.begin(), c.field.end(), ro);
    ASSERT_EQ(mprotect(m, bytes, PROT_READ), 0);
    for (auto* v : {&c.field_old, &c.tendency, &c.ru, &c.rv, &c.rom}) EXPECT_TRUE(reg(*v, "c"));
    testing::internal::CaptureStderr();
    const bool locked = host_register(ro, c.field.size() * sizeof(float), "read-only tracers");
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(locked, err.empty()) << err;
    AdvectInputs in = c.inputs();
    in.field = ro;
    expect_gpu_path_and_cpu_bits(c, in, locked, "read-only tracers");
    host_unregister_all();
    munmap(m, bytes);
  }
}

// The lateral boundaries of a synthetic case by kind: 0 periodic, 1 specified, 2 open,
// 3 symmetric.
static void set_boundary(SynthSpec& sp, int kind) {
  AdvectFlags& f = sp.flags;
  if (kind == 0) f.periodic_x = f.periodic_y = true;
  else if (kind == 1) f.specified = true;
  else if (kind == 2) f.open_xs = f.open_xe = f.open_ys = f.open_ye = true;
  else f.symmetric_xs = f.symmetric_xe = f.symmetric_ys = f.symmetric_ye = true;
}

// The GPU backend's open-boundary kernels take a thread per edge column of the tile
// (TileEdge): every cell of the tile's edge once and nothing else, whatever the tile's shape.
TEST(AdvectionGpu, OpenEdgeColumnsAreEachEdgeCellOnce) {
  for (int ni = 1; ni <= 9; ++ni)
    for (int nj = 1; nj <= 9; ++nj) {
      const TileEdge te{3, ni, -2, nj};
      const int i1 = te.i0 + ni - 1, j1 = te.j0 + nj - 1;
      std::vector<int> hits((std::size_t)ni * nj, 0);
      for (int e = 0; e < te.ne(); ++e) {
        int i = 0, j = 0;
        te.column(e, i, j);
        ASSERT_TRUE(i >= te.i0 && i <= i1 && j >= te.j0 && j <= j1) << ni << "x" << nj << " column " << e;
        ++hits[(std::size_t)(i - te.i0) + (std::size_t)ni * (j - te.j0)];
      }
      for (int j = te.j0; j <= j1; ++j)
        for (int i = te.i0; i <= i1; ++i) {
          const bool edge = i == te.i0 || i == i1 || j == te.j0 || j == j1;
          EXPECT_EQ(hits[(std::size_t)(i - te.i0) + (std::size_t)ni * (j - te.j0)], edge ? 1 : 0)
              << ni << "x" << nj << " cell (" << i << "," << j << ")";
        }
    }
}

// The unlimited scheme's inner box (un_inner_box; the GPU face kernel's warps inside it take the
// orders 5, 5, 3 and every face without working them out) against advect_scalar's loops
// cell by cell over the face box: a tile cell reads its x faces i and i+1 where xdiv_cell(i),
// its y faces likewise, its z faces k and k+1 always, and no x or y face lies above ktf.
TEST(AdvectionGpu, UnlimitedInnerBoxIsTheCellsWithEveryFaceAtInnerOrders) {
  struct Tile { int its, ite, jts, jte; };  // 0: the whole domain (ide = nx + 1, jde = ny + 1)
  const Tile tiles[] = {{0, 0, 0, 0}, {1, 5, 1, 4}, {16, 21, 14, 17}, {7, 14, 6, 10}, {10, 10, 8, 8},
                        {20, 21, 16, 17}, {1, 2, 16, 17}, {3, 3, 1, 17}, {2, 20, 9, 9}};
  long inner_cells = 0;
  for (int bc = 0; bc < 4; ++bc)
    for (const Tile& tl : tiles) {
      SynthSpec sp;
      sp.nx = 21; sp.ny = 17; sp.nz = 9; sp.nspec = 1;
      set_boundary(sp, bc);
      sp.its = tl.its; sp.ite = tl.ite; sp.jts = tl.jts; sp.jte = tl.jte;
      SynthCase c = make_synth(sp);
      const Prepared p = prepare(c.inputs(), false);
      const View v = cpu_view(p);
      const Box& T = p.tile;
      const UnInner b = un_inner_box(v, T.i0, T.i1, T.j0, T.j1, T.k0);
      auto tile = [&](int i, int j) { return i >= T.i0 && i <= T.i1 && j >= T.j0 && j <= T.j1; };
      for (int j = T.j0; j <= T.j1 + 1; ++j)
        for (int k = T.k0; k <= T.k1 + 1; ++k)
          for (int i = T.i0; i <= T.i1 + 1; ++i) {
            const bool x = k <= v.ktf && ((tile(i, j) && xdiv_cell(v, i)) || (tile(i - 1, j) && xdiv_cell(v, i - 1)));
            const bool y = k <= v.ktf && ((tile(i, j) && ydiv_cell(v, j)) || (tile(i, j - 1) && ydiv_cell(v, j - 1)));
            const bool inner = x && y && tile(i, j) && xface_order(v, i) == 5 && yface_order(v, j) == 5 &&
                               zface_order(v, k) == 3;
            inner_cells += inner;
            ASSERT_EQ(b.has(i, k, j), inner) << "bc " << bc << ", tile " << T.i0 << ".." << T.i1 << " x " << T.j0
                                             << ".." << T.j1 << ", cell (" << i << "," << k << "," << j << ")";
          }
    }
  EXPECT_GT(inner_cells, 0);  // not a test of empty boxes only
}

// The PD level march's species per group (pd_march_group_size) where it was measured on an
// H200 (132 SMs): 81 tracers on 134 x 110 x 35 (40 tiles of 29 x 15) took 1.79 ms in groups of
// 14 (5 x 5 + 4 = 29 waves) and 1.67 ms in groups of 16 (5 x 5 + 1 = 26 waves), the fastest of
// 10, 12, 13, 14 and 16. CONUS with 5 tracers (300 tiles) keeps its groups of 3 and 2 (7 + 5
// waves; one group of 5 would take as many, without a second copy to overlap). With tiles of
// 29 x 19 the 81-tracer case has 30 tiles: groups of 16 take 5 x 4 + 1 = 21 waves, 14 take
// 5 x 4 + 3 = 23. Host logic only.
TEST(AdvectionRule, PdMarchGroupSizeTakesTheFewestWaves) {
  EXPECT_EQ(pd_march_group_size(81, 14, 16, 40, 132), 16);
  EXPECT_EQ(pd_march_group_size(81, 14, 16, 30, 132), 16);
  EXPECT_EQ(pd_march_group_size(81, 14, 14, 40, 132), 14);  // capped (32-bit offsets)
  EXPECT_EQ(pd_march_group_size(5, 3, 16, 300, 132), 3);
  // never one group where the default makes two: CONUS with 5 in 32 x 28 blocks (180 tiles)
  // would take 7 waves as one group of 5, 8 as 3 + 2 or 4 + 1; a small patch, 1 wave
  EXPECT_EQ(pd_march_group_size(5, 3, 16, 180, 132), 3);
  EXPECT_EQ(pd_march_group_size(5, 3, 16, 9, 132), 3);
  EXPECT_EQ(pd_march_group_size(14, 3, 16, 9, 132), 7);  // 2 waves, not 14 in one
  EXPECT_EQ(pd_march_group_size(1, 1, 16, 40, 132), 1);
}

// DoubleDiv, the unlimited face kernel's division, is IEEE float division by WRF's 60. and 12.
// for every one of the 2^32 float patterns (NaN for NaN): 5-16 s on 2 cores. Host arithmetic;
// the GPU runs the same function (advection_physics.h), and the GPU tests compare its fluxes
// with the CPU's IEEE quotients.
TEST(AdvectionRule, DoubleDivIsIeeeDivision) {
  const DoubleDiv dd;
  for (const float b : {60.0f, 12.0f}) {
    long long differ = 0, first = -1;
#pragma omp parallel for reduction(+ : differ) schedule(static)
    for (long long w = 0; w < (1LL << 32); ++w) {
      const std::uint32_t u = (std::uint32_t)w;
      float x;
      std::memcpy(&x, &u, 4);
      const float a = x / b, c = dd(x, b);
      std::uint32_t ua, uc;
      std::memcpy(&ua, &a, 4);
      std::memcpy(&uc, &c, 4);
      if (std::isnan(a) ? !std::isnan(c) : ua != uc) {
        ++differ;
#pragma omp critical
        if (first < 0 || w < first) first = w;
      }
    }
    EXPECT_EQ(differ, 0) << "b = " << b << ": " << differ << " of 2^32 floats differ, the first x = 0x" << std::hex
                         << first;
  }
}

// ---- GPU against CPU: bitwise in strict mode, every group size --------------------------------
TEST(AdvectionGpu, StrictBitwiseEqualsCpu) {
  WRFGPU_REQUIRE_GPU();
  for (int pd = 0; pd <= 1; ++pd)
    for (int bc = 0; bc < 3; ++bc)
      for (int g : {0, 1, 3, 7}) {
        SynthSpec sp;
        sp.nx = 37; sp.ny = 29; sp.nz = 12; sp.nspec = 7; sp.seed = 40 + bc; sp.courant = 0.6f;
        set_boundary(sp, bc);
        SynthCase c = make_synth(sp);
        AdvectInputs in = c.inputs(pd == 1 && bc == 1);
        GpuOptions o;
        o.species_per_group = g;
        o.species_per_thread = 1 + (g % 3);
        AdvectTimings t;
        if (pd) run_pd(Backend::Both, Mode::Strict, in, &t, o);
        else run_unlimited(Backend::Both, Mode::Strict, in, &t, o);
        EXPECT_EQ(t.both_cells_differing, 0u) << "pd " << pd << " bc " << bc << " group " << g;
      }
}

// The PD plan (pd_march_plan, pd_march_cheaper) against 34 PD calls measured in one run on
// one H200 (132 SMs) with the kernels of this library (run91; docs/performance.md, "The plan
// refitted to the unrolled loop"), kernel ms with each form forced: the three kernels, the march
// in blocks of 32 x 22 and of 32 x 28, with the groups pd_march_group_size gives each. The plan
// must take the fastest form in 30 of them, and one within 1.08x of it in the other four (14
// tracers on 64 x 50 and 81 on 40 x 30 take the three kernels, 1.06x and 1.08x the 22 rows'
// march; CONUS with 5 and 134 x 110 with 81 take the rows that were 1.01x and 1.04x slower).
// Earlier tables, measured with the kernels before, are in the docs. Host logic only: it runs
// without a GPU.
TEST(AdvectionRule, PdMarchPlanTakesTheMeasuredFasterForm) {
  struct Case { int ni, nj, ns; double three, m22, m28; };
  const Case measured[] = {
      {64, 50, 1, .028, .075, .084}, {106, 75, 1, .040, .074, .088}, {150, 110, 1, .062, .080, .090},
      {180, 130, 1, .079, .081, .090}, {212, 150, 1, .101, .080, .091}, {300, 200, 1, .175, .087, .095},
      {425, 300, 1, .343, .146, .168}, {106, 75, 2, .048, .078, .091}, {150, 110, 2, .081, .081, .091},
      {180, 130, 2, .110, .085, .095}, {212, 150, 2, .139, .083, .093}, {425, 300, 2, .477, .252, .244},
      {106, 75, 3, .057, .081, .093}, {150, 110, 3, .107, .081, .095}, {64, 50, 5, .067, .164, .174},
      {80, 60, 5, .088, .165, .186}, {106, 75, 5, .114, .162, .188}, {150, 110, 5, .191, .167, .190},
      {180, 130, 5, .251, .221, .192}, {212, 150, 5, .321, .225, .258}, {250, 180, 5, .433, .308, .326},
      {300, 200, 5, .555, .356, .348}, {425, 300, 5, 1.105, .620, .627}, {64, 50, 14, .171, .161, .181},
      {106, 75, 14, .294, .177, .194}, {150, 110, 14, .511, .309, .382}, {106, 75, 40, .652, .439, .397},
      {150, 110, 40, 1.158, .820, .857}, {40, 30, 81, .333, .309, .364}, {64, 50, 81, .581, .515, .394},
      {80, 60, 81, .814, .629, .590}, {106, 75, 81, 1.168, .879, .723}, {134, 110, 81, 1.985, 1.344, 1.296},
      {106, 75, 130, 1.827, 1.312, 1.110},
  };
  // a group's bytes per species as run_gpu counts them for these whole-domain patches of 35
  // levels (36 with the top face): field and field_old over the tile and 4 columns around it,
  // three outputs over the tile and its upper faces
  const auto group_max = [](int ni, int nj) {
    return pd_march_group_max(sizeof(float) * 36 * ((std::size_t)(ni + 8) * (nj + 8) * 2 + (std::size_t)(ni + 1) * (nj + 1) * 3));
  };
  int fastest = 0;
  for (const Case& c : measured) {
    const PdMarchPlan m = pd_march_plan(c.ni, c.nj, c.ns, default_group_size(c.ns), group_max(c.ni, c.nj), false, 132);
    const bool march = pd_march_cheaper(m, c.ni, c.nj, c.ns);
    const double chosen = !march ? c.three : m.rows == 22 ? c.m22 : c.m28;
    const double best = std::min({c.three, c.m22, c.m28});
    EXPECT_LE(chosen, 1.08 * best) << c.ni << "x" << c.nj << ", " << c.ns << " species: took "
                                   << (march ? "the march of " + std::to_string(m.rows) + " rows" : "the three kernels")
                                   << ", " << chosen << " ms against " << best;
    fastest += chosen == best;
  }
  EXPECT_EQ(fastest, 30);
  // the cases: 81 tracers on 134 x 110 in 32 x 22 blocks, groups of 17 (the byte cap
  // there): 19 waves, against 28 rows' 17 waves of 32/26 the time; CONUS with 5 in 32 x 28
  // (two groups, 8 waves, against 22 rows' 10 of 26/32 the time); 81 tracers on 80 x 60 in
  // 32 x 28 (6 waves against 11)
  const PdMarchPlan p81 = pd_march_plan(134, 110, 81, 14, group_max(134, 110), false, 132);
  EXPECT_EQ(p81.rows, 22);
  EXPECT_EQ(p81.group, 17);
  EXPECT_EQ(p81.waves, 19);
  EXPECT_EQ(pd_march_plan(134, 110, 81, 14, group_max(134, 110), false, 132, 28).waves, 17);
  const PdMarchPlan c5 = pd_march_plan(425, 300, 5, 3, group_max(425, 300), false, 132);
  EXPECT_EQ(c5.rows, 28);
  EXPECT_EQ(c5.group, 3);
  EXPECT_EQ(c5.waves, 8);
  EXPECT_EQ(pd_march_plan(425, 300, 5, 3, 16, false, 132, 22).waves, 10);
  EXPECT_EQ(pd_march_plan(80, 60, 81, 14, 16, false, 132).rows, 28);
  // a group size the caller chose is kept
  EXPECT_EQ(pd_march_plan(134, 110, 81, 14, 16, true, 132, 22).group, 14);
  // groups beyond kMaxGroup where a group's buffers stay within kMarchGroupBytes: 81 tracers on
  // 106 x 75 in 4 groups of 21 and 32 x 28 blocks (8 waves against 11 in groups of 16 and 32 x
  // 22 blocks)
  EXPECT_EQ(group_max(106, 75), kMaxMarchGroup);
  EXPECT_EQ(group_max(134, 110), 17);
  EXPECT_EQ(group_max(425, 300), kMaxGroup);
  EXPECT_EQ(pd_march_group_max(0), kMaxMarchGroup);
  const PdMarchPlan m81 = pd_march_plan(106, 75, 81, 14, group_max(106, 75), false, 132);
  EXPECT_EQ(m81.rows, 28);
  EXPECT_EQ(m81.group, 21);
  EXPECT_EQ(m81.waves, 8);
  EXPECT_EQ(pd_march_plan(106, 75, 81, 14, kMaxGroup, false, 132, 22).waves, 11);
  EXPECT_EQ(pd_march_tiles(134, 110, 22), 5 * 6);
  EXPECT_EQ(pd_march_tiles(134, 110, 28), 5 * 5);
}

// The unlimited scheme's rule (un_march_cheaper) against both of its forms, each case's two
// forms measured in one run on one H200 (kernel ms of `wrfgpu_replay X.nc --backend gpu
// --repeat 10` with WRFGPU_ADVECT_UN_KERNEL=two and =march, the mean of two rounds;
// whole-domain cases of 35 levels from wrfgpu_make_large_case; the march in the blocks
// un_march_blocks fits to the patch, CONUS's in a second run as it keeps 32 x 16;
// docs/performance.md, "Blocks fitted to the patch"): the faster form in 13 of 14, 1.02x at
// worst. The march's groups
// as run_gpu sizes them (pd_march_group_size over the march's tiles, two blocks per SM).
TEST(AdvectionRule, UnMarchTakesTheMeasuredFasterForm) {
  struct Case { int ni, nj, ns; double two, march; };
  const Case measured[] = {
      {134, 110, 81, .8085, .612}, {425, 300, 5, .3675, .291},  {106, 75, 40, .3025, .2335}, {27, 20, 9, .048, .083},
      {106, 75, 5, .0585, .085},   {64, 50, 81, .2555, .2305},  {40, 30, 81, .165, .167},    {150, 110, 5, .081, .0855},
      {212, 150, 5, .1225, .121},  {300, 200, 5, .199, .1805},  {425, 300, 1, .112, .081},    {106, 75, 14, .1485, .1115},
      {134, 110, 14, .1965, .122}, {64, 50, 20, .1075, .080},
  };
  // a group's bytes per species as run_gpu counts them: the field over the tile and 4 columns
  // around it, the tendency over the tile
  const auto group_max = [](int ni, int nj) {
    return pd_march_group_max(sizeof(float) * 35 * ((std::size_t)(ni + 8) * (nj + 8) + (std::size_t)ni * nj));
  };
  int fastest = 0;
  for (const Case& c : measured) {
    const int g2 = default_group_size(c.ns);
    const int g = pd_march_group_size(c.ns, g2, group_max(c.ni, c.nj), un_march_blocks(c.ni, c.nj).tiles(), 2 * 132);
    const bool march = un_march_cheaper(c.ni, c.nj, c.ns, g, g2, 132);
    const double chosen = march ? c.march : c.two, best = std::min(c.two, c.march);
    EXPECT_LE(chosen, 1.02 * best) << c.ni << "x" << c.nj << ", " << c.ns << " species: took "
                                   << (march ? "the march" : "the two kernels") << ", " << chosen << " ms against " << best;
    fastest += chosen == best;
  }
  EXPECT_EQ(fastest, 13);
  // the cases: 81 tracers on 134 x 110 in groups of 15 (35 tiles, 525 blocks: two
  // waves of 264), CONUS with 5 in groups of 3
  EXPECT_EQ(un_march_blocks(134, 110).tiles(), 5 * 7);
  EXPECT_EQ(pd_march_group_size(81, 14, group_max(134, 110), 35, 264), 15);
  EXPECT_TRUE(un_march_cheaper(134, 110, 81, 15, 14, 132));
  EXPECT_TRUE(un_march_cheaper(425, 300, 5, 3, 3, 132));
  EXPECT_FALSE(un_march_cheaper(27, 20, 9, 5, 3, 132));
}

// The unlimited march's blocks fitted to the patch (un_march_blocks): within what k_un_march
// holds (bx <= 32, by <= 21, 400 to 512 threads, a slab of (bx + 5) x (by + 5) values copied by
// at most two per thread) and covering the patch with no block left over, for every patch of
// 1 to 450 x 1 to 320 columns, never more threads than 32 x 16; and the blocks of the issue's
// cases.
TEST(AdvectionRule, UnMarchBlocksFitThePatch) {
  for (int ni = 1; ni <= 450; ++ni)
    for (int nj = 1; nj <= 320; ++nj) {
      const UnMarchBlocks b = un_march_blocks(ni, nj);
      ASSERT_TRUE(b.bx <= kUnMarchMaxBX && b.by <= kUnMarchMaxBY && b.bx * b.by <= 512) << ni << "x" << nj;
      ASSERT_TRUE(b.bx * b.by >= 400 || (b.bx == 32 && b.by == 16)) << ni << "x" << nj;
      ASSERT_LE((b.bx + 5) * (b.by + 5), 2 * b.bx * b.by) << ni << "x" << nj;
      ASSERT_TRUE(b.nbx * (b.bx - 1) >= ni && (b.nbx - 1) * (b.bx - 1) < ni) << ni << "x" << nj;
      ASSERT_TRUE(b.nby * (b.by - 1) >= nj && (b.nby - 1) * (b.by - 1) < nj) << ni << "x" << nj;
      ASSERT_LE(b.tiles() * ((b.bx * b.by + 31) / 32), (long)((ni + 30) / 31) * ((nj + 14) / 15) * 16) << ni << "x" << nj;
    }
  // 134 x 110: 28 x 17 threads over 5 x 7 tiles of 27 x 16 (16,800 threads a level in whole
  // warps) against 32 x 16's 5 x 8 of 31 x 15 (20,480)
  const UnMarchBlocks a = un_march_blocks(134, 110);
  EXPECT_EQ(a.bx, 28);
  EXPECT_EQ(a.by, 17);
  EXPECT_EQ(a.nbx, 5);
  EXPECT_EQ(a.nby, 7);
  // CONUS: 32 x 16 over 14 x 20 tiles (26 x 16 over 17 x 20 saves 1.4% of the threads, under
  // the 5% asked)
  const UnMarchBlocks c = un_march_blocks(425, 300);
  EXPECT_EQ(c.bx, 32);
  EXPECT_EQ(c.by, 16);
  EXPECT_EQ(c.tiles(), 14 * 20);
  const UnMarchBlocks w = un_march_blocks(212, 150);  // 7 x 10 tiles of 31 x 15: nothing has fewer
  EXPECT_EQ(w.bx, 32);
  EXPECT_EQ(w.by, 16);
  const UnMarchBlocks q = un_march_blocks(300, 200);  // 21 x 21, 15 x 10 tiles: 6.25% fewer
  EXPECT_EQ(q.bx, 21);
  EXPECT_EQ(q.tiles(), 15 * 10);
}

// Tiles that the kernels' blocks of 32 x 4 (i, k) cells do not divide, level counts that are
// not multiples of 4, species counts that neither the transfer group nor the species per
// thread divide (1, 5, 81, 130), 1, 2 and 4 species per thread, every boundary type and a tile
// that is not the whole domain, and (PD) tiles the level march's blocks of 29 x 19 and 29 x 25
// columns do not divide, with both PD forms and both rows of the march, and (unlimited) tiles
// its march's blocks fitted to the patch do not divide (blocks of 20 x 20 to 32 x 16 threads
// here), with both of its forms: GPU strict == CPU strict, every output value (tendency, and
// h/z tendencies where WRF writes them).
TEST(AdvectionGpu, StrictBitwiseOnUnevenShapes) {
  WRFGPU_REQUIRE_GPU();
  // tile: its, ite, jts, jte (0: the whole domain; ide = nx + 1, jde = ny + 1). The open cases'
  // tiles touch one, two or four open edges, down to 2 x 2 cells (the open cells have threads
  // of their own, over the tile's edge columns).
  struct Shape { int nx, ny, nz, nspec, spt, bc, its, ite, jts, jte; };
  const Shape shapes[] = {
      {61, 30, 9, 1, 1, 0, 0, 0, 0, 0},    {30, 14, 7, 5, 2, 1, 0, 0, 0, 0},  {88, 27, 6, 81, 4, 2, 0, 0, 0, 0},
      {45, 41, 5, 130, 2, 3, 0, 0, 0, 0},  {59, 44, 8, 5, 4, 1, 7, 47, 5, 40}, {32, 16, 11, 3, 1, 1, 0, 0, 0, 0},
      {12, 10, 5, 3, 2, 2, 1, 2, 1, 3},    {12, 10, 5, 3, 1, 2, 11, 13, 9, 11}, {40, 33, 6, 9, 4, 2, 1, 41, 12, 20},
      {40, 33, 6, 9, 4, 2, 9, 30, 1, 34},
      // large enough for the level march's inner blocks (5 x 5 blocks of 29 x 19 tile cells or
      // more: the middle ones run the march with their flags as constants), beside blocks at
      // each boundary kind and, in the sub-tile, blocks cut by the tile's edge inside the domain
      {120, 80, 6, 3, 2, 1, 0, 0, 0, 0},   {120, 80, 6, 3, 1, 2, 0, 0, 0, 0}, {100, 95, 5, 2, 1, 3, 0, 0, 0, 0},
      {150, 100, 6, 2, 1, 0, 20, 140, 10, 90},
  };
  for (const Shape& s : shapes)
    for (int pd = 0; pd <= 1; ++pd) {
      SynthSpec sp;
      sp.nx = s.nx; sp.ny = s.ny; sp.nz = s.nz; sp.nspec = s.nspec; sp.seed = 70 + s.bc; sp.courant = 0.7f;
      set_boundary(sp, s.bc);
      sp.its = s.its; sp.ite = s.ite; sp.jts = s.jts; sp.jte = s.jte;
      // PD: the level march in blocks of 22 and 28 rows and the three kernels; unlimited: its
      // level march (rows 16) and its two kernels; whatever size would choose (rows 0: the
      // three or two kernels)
      for (const int rows : {22, 28, 16, 0}) {
        if (pd ? rows == 16 : rows > 0 && rows != 16) continue;
        SynthCase c = make_synth(sp);
        AdvectInputs in = c.inputs(pd == 1 && s.bc == 1);
        GpuOptions o;
        o.species_per_thread = s.spt;
        o.pd_kernel = rows > 0 ? GpuOptions::PdKernel::March : GpuOptions::PdKernel::Three;
        o.pd_march_rows = pd ? rows : 0;
        o.un_kernel = rows > 0 ? GpuOptions::UnKernel::March : GpuOptions::UnKernel::Two;
        AdvectTimings t;
        if (pd) run_pd(Backend::Both, Mode::Strict, in, &t, o);
        else run_unlimited(Backend::Both, Mode::Strict, in, &t, o);
        EXPECT_EQ(t.both_cells_differing, 0u)
            << "pd " << pd << (rows > 0 ? " march of " + std::to_string(rows) + " rows " : " three or two kernels ") << s.nx << "x"
            << s.ny << "x" << s.nz << ", " << s.nspec << " species, " << s.spt << " per thread, bc " << s.bc;
        // the tendencies are not all zero (the case advects something)
        double tmax = 0;
        for (float x : c.tendency) tmax = std::max(tmax, (double)std::fabs(x));
        EXPECT_GT(tmax, 0.0);
      }
    }
}

// The unlimited scheme's face kernel divides by WRF's 60. and 12. as one double product
// (DoubleDiv) and the CPU by IEEE float division: tracers scaled into the subnormal range, to
// 2^-124 and far above it give the CPU's bits, at every boundary kind. (The scales were chosen
// for an earlier float product whose exact range began at 2^-124.)
TEST(AdvectionGpu, UnlimitedQuotientsAtTheRangeEnds) {
  WRFGPU_REQUIRE_GPU();
  const float scale[] = {1e-39f, 3e-37f, 1e-36f, 1e30f};
  for (int bc = 0; bc < 3; ++bc) {
    SynthSpec sp;
    sp.nx = 40; sp.ny = 28; sp.nz = 9; sp.nspec = 4; sp.seed = 90 + bc; sp.courant = 0.7f;
    set_boundary(sp, bc);
    SynthCase c = make_synth(sp);
    const std::size_t n3 = c.d.size3();
    std::size_t subnormal = 0;
    for (int q = 0; q < sp.nspec; ++q)
      for (std::size_t e = 0; e < n3; ++e) {
        c.field[q * n3 + e] *= scale[q];
        c.field_old[q * n3 + e] *= scale[q];
        const float x = c.field[q * n3 + e];
        if (x != 0.f && std::fabs(x) < FLT_MIN) ++subnormal;
      }
    ASSERT_GT(subnormal, 0u);  // the case reaches the subnormal range
    AdvectTimings t;
    run_unlimited(Backend::Both, Mode::Strict, c.inputs(), &t);
    EXPECT_EQ(t.both_cells_differing, 0u) << "bc " << bc;
    std::size_t tiny = 0;  // tendencies of the scaled-down species that are not zero
    for (int q = 0; q < 3; ++q)
      for (std::size_t e = 0; e < n3; ++e) tiny += c.tendency[q * n3 + e] != 0.f;
    EXPECT_GT(tiny, 0u) << "bc " << bc;
  }
}

// WRF's rk_scalar_tend calls the per-species hook from inside its OpenMP tile loop: 4 tiles
// from 4 threads at once, many times over, give the whole-patch CPU result bit for bit (the
// GPU backend's buffers and streams are shared; run_gpu serialises the calls).
TEST(AdvectionGpu, TilesFromConcurrentThreads) {
  WRFGPU_REQUIRE_GPU();
  SynthSpec sp;
  sp.nx = 40; sp.ny = 34; sp.nz = 10; sp.nspec = 3; sp.seed = 21; sp.flags.specified = true;
  SynthCase whole = make_synth(sp);
  AdvectInputs in = whole.inputs();
  run_pd(Backend::Cpu, Mode::Strict, in);
  for (int rep = 0; rep < 10; ++rep) {
    SynthCase tiled = make_synth(sp);
    const WrfDims d0 = tiled.d;
    const int is[3] = {d0.ids, 20, d0.ide}, js[3] = {d0.jds, 17, d0.jde};
    std::vector<std::thread> th;
    std::vector<std::string> errors(4);
    for (int t = 0; t < 4; ++t)
      th.emplace_back([&, t] {
        const int a = t % 2, b = t / 2;
        AdvectInputs ti = tiled.inputs();
        ti.dims.its = is[a] + (a ? 1 : 0); ti.dims.ite = a ? is[2] : is[1];
        ti.dims.jts = js[b] + (b ? 1 : 0); ti.dims.jte = b ? js[2] : js[1];
        try {
          run_pd(Backend::Gpu, Mode::Strict, ti);
        } catch (const std::exception& e) {
          errors[t] = e.what();
        }
      });
    for (auto& x : th) x.join();
    for (const auto& e : errors) ASSERT_TRUE(e.empty()) << e;
    std::size_t diff = 0;
    for (std::size_t q = 0; q < whole.tendency.size(); ++q) diff += !(whole.tendency[q] == tiled.tendency[q]);
    ASSERT_EQ(diff, 0u) << "repetition " << rep;
  }
}

TEST(AdvectionGpu, FastModeCloseToCpu) {
  WRFGPU_REQUIRE_GPU();
  SynthSpec sp;
  sp.nx = 40; sp.ny = 30; sp.nz = 12; sp.nspec = 5; sp.flags.specified = true;
  SynthCase c = make_synth(sp);
  AdvectInputs in = c.inputs();
  AdvectTimings t;
  run_pd(Backend::Both, Mode::Fast, in, &t);
  double tmax = 0;
  for (float v : c.tendency) tmax = std::max(tmax, (double)std::fabs(v));
  std::printf("[ gpu fast ] max abs diff to cpu fast %.3g in %zu cells (max |t| %.3g)\n", t.both_max_abs_diff,
              t.both_cells_differing, tmax);
  // Both fast builds contract and reorder differently (FMA on the GPU): single-precision
  // rounding of the largest tendency, not a scheme difference (the strict builds are bitwise).
  ASSERT_GT(tmax, 0);
  EXPECT_LT(t.both_max_abs_diff, 2e-6 * tmax);
}

TEST(AdvectionGpu, BenchSmoke) {
  WRFGPU_REQUIRE_GPU();
  BenchResult r = bench_pd(Backend::Gpu, Mode::Strict, 64, 48, 20, 9, 2, false);
  EXPECT_GT(r.best.total_ms, 0);
  EXPECT_GT(r.bytes_min, 0u);
}

