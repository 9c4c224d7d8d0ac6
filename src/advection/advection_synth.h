// advection_synth.h - deterministic synthetic inputs for the advection kernel (tests, the
// benchmark, and the out-of-tree tool that makes the WRF reference data): WRF-like magnitudes
// (column mass ~ 9e4 Pa, rdnw < 0, hybrid c1/c2), tracers with zeros and sharp edges so the
// pd limiter is active, periodic/symmetric halos filled as WRF's halo/bc routines would.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>
#include "advection.h"

namespace wrfgpu {
namespace advection {

struct SynthSpec {
  int nx = 24, ny = 20, nz = 10;  // mass points; ide = nx+1, jde = ny+1, kde = nz+1
  int nspec = 3;
  int halo = 4;                   // memory = tile +- halo
  int its = 0, ite = 0, jts = 0, jte = 0;  // 0: whole domain (ite = ide, jte = jde)
  AdvectFlags flags;
  std::uint64_t seed = 1;
  float courant = 0.3f;           // max |u| dt/dx per direction
  float dx = 3000.f, dt = 18.f;
  int time_step = 18;
};

struct SynthCase {
  SynthSpec spec;
  WrfDims d;
  std::vector<float> field, field_old, tendency, h_tendency, z_tendency;
  std::vector<float> ru, rv, rom, mut, mub, mu_old, msftx, msfty, c1, c2, fzm, fzp, rdzw;
  float rdx = 0, rdy = 0;
  AdvectInputs inputs(bool with_hz = false) {
    AdvectInputs in;
    in.dims = d;
    in.nspec = spec.nspec;
    in.field = field.data();
    in.field_old = field_old.data();
    in.tendency = tendency.data();
    if (with_hz) {
      h_tendency.assign(tendency.size(), 0.f);
      z_tendency.assign(tendency.size(), 0.f);
      in.h_tendency = h_tendency.data();
      in.z_tendency = z_tendency.data();
    }
    in.ru = ru.data(); in.rv = rv.data(); in.rom = rom.data();
    in.mut = mut.data(); in.mub = mub.data(); in.mu_old = mu_old.data();
    in.msftx = msftx.data(); in.msfty = msfty.data();
    in.c1 = c1.data(); in.c2 = c2.data(); in.fzm = fzm.data(); in.fzp = fzp.data();
    in.rdzw = rdzw.data();
    in.rdx = rdx; in.rdy = rdy; in.dt = spec.dt; in.time_step = spec.time_step;
    in.flags = spec.flags;
    return in;
  }
};

namespace synth_detail {
inline double u01(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d) {
  std::uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull;
  x ^= (c + 0x94D049BB133111EBull) * 0x94D049BB133111EBull;
  x ^= (d + 0x2545F4914F6CDD1Dull) * 0xD6E8FEB86659FD93ull;
  x ^= x >> 31; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 27; x *= 0x94D049BB133111EBull; x ^= x >> 31;
  return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}
}  // namespace synth_detail

// Build a case. Periodic directions wrap all arrays with period nx (ny); symmetric sides mirror
// mass arrays about the boundary face and flip the sign of the normal mass flux (zero on the
// boundary face), as WRF's set_physical_bc3d does.
inline SynthCase make_synth(const SynthSpec& sp) {
  using synth_detail::u01;
  SynthCase c;
  c.spec = sp;
  WrfDims& d = c.d;
  d.ids = 1; d.ide = sp.nx + 1; d.jds = 1; d.jde = sp.ny + 1; d.kds = 1; d.kde = sp.nz + 1;
  d.its = sp.its ? sp.its : d.ids; d.ite = sp.ite ? sp.ite : d.ide;
  d.jts = sp.jts ? sp.jts : d.jds; d.jte = sp.jte ? sp.jte : d.jde;
  d.kts = 1; d.kte = d.kde;
  d.ims = d.its - sp.halo; d.ime = d.ite + sp.halo;
  d.jms = d.jts - sp.halo; d.jme = d.jte + sp.halo;
  d.kms = 1; d.kme = d.kde;
  const AdvectFlags& f = sp.flags;
  const int P = sp.nx, Q = sp.ny;
  // Map an index to the point whose value it takes (periodic wrap / symmetric mirror).
  // stag: staggered in that direction; returns sign flip for the normal flux via *sgn.
  auto mapx = [&](int i, bool stag, float* sgn) {
    *sgn = 1.f;
    if (f.periodic_x) { while (i < d.ids) i += P; while (i > d.ide - (stag ? 0 : 1)) i -= P; if (stag && i == d.ide) i = d.ids; return i; }
    if (f.symmetric_xs && i < d.ids + (stag ? 1 : 0)) {
      if (stag) { if (i == d.ids) { *sgn = 0.f; return i; } *sgn = -1.f; return 2 * d.ids - i; }
      return 2 * d.ids - 1 - i;
    }
    if (f.symmetric_xe && i > d.ide - (stag ? 1 : 1)) {
      if (stag) { if (i == d.ide) { *sgn = 0.f; return i; } *sgn = -1.f; return 2 * d.ide - i; }
      return 2 * d.ide - 1 - i;
    }
    return i;
  };
  auto mapy = [&](int j, bool stag, float* sgn) {
    *sgn = 1.f;
    if (f.periodic_y) { while (j < d.jds) j += Q; while (j > d.jde - (stag ? 0 : 1)) j -= Q; if (stag && j == d.jde) j = d.jds; return j; }
    if (f.symmetric_ys && j < d.jds + (stag ? 1 : 0)) {
      if (stag) { if (j == d.jds) { *sgn = 0.f; return j; } *sgn = -1.f; return 2 * d.jds - j; }
      return 2 * d.jds - 1 - j;
    }
    if (f.symmetric_ye && j > d.jde - 1) {
      if (stag) { if (j == d.jde) { *sgn = 0.f; return j; } *sgn = -1.f; return 2 * d.jde - j; }
      return 2 * d.jde - 1 - j;
    }
    return j;
  };
  const std::size_t n3 = d.size3(), n2 = d.size2(), nk = (std::size_t)d.nz();
  const int ns = sp.nspec;
  c.field.assign(n3 * ns, 0.f); c.field_old.assign(n3 * ns, 0.f); c.tendency.assign(n3 * ns, 0.f);
  c.ru.assign(n3, 0.f); c.rv.assign(n3, 0.f); c.rom.assign(n3, 0.f);
  c.mut.assign(n2, 0.f); c.mub.assign(n2, 0.f); c.mu_old.assign(n2, 0.f);
  c.msftx.assign(n2, 0.f); c.msfty.assign(n2, 0.f);
  c.c1.assign(nk, 0.f); c.c2.assign(nk, 0.f); c.fzm.assign(nk, 0.f); c.fzp.assign(nk, 0.f); c.rdzw.assign(nk, 0.f);
  const std::uint64_t S = sp.seed;
  // Vertical: eta levels stretched, rdnw = 1/(znw(k+1)-znw(k)) < 0, fnm/fnp interpolation.
  const int nz = sp.nz;
  std::vector<double> znw(nz + 2);
  for (int k = 1; k <= nz + 1; ++k) { double x = (k - 1.0) / nz; znw[k] = 1.0 - (0.6 * x + 0.4 * x * x); }
  for (int k = d.kms; k <= d.kme; ++k) {
    const std::size_t o = k - d.kms;
    const int kk = k <= nz ? k : nz;
    const double dnw = znw[kk + 1] - znw[kk];
    c.rdzw[o] = (float)(1.0 / dnw);
    const double znu = 0.5 * (znw[kk] + znw[kk + 1]);
    c.c1[o] = (float)(0.15 + 0.85 * znu);                 // c1h
    c.c2[o] = (float)((1.0 - (0.15 + 0.85 * znu)) * 9.0e3 * znu);  // c2h (Pa)
    c.fzm[o] = (float)(0.5 + 0.05 * std::sin(0.7 * k));
    c.fzp[o] = 1.0f - c.fzm[o];
  }
  const double mu0 = 8.8e4;
  for (int j = d.jms; j <= d.jme; ++j)
    for (int i = d.ims; i <= d.ime; ++i) {
      float sg;
      const int mi = mapx(i, false, &sg), mj = mapy(j, false, &sg);
      const double x = (double)mi / P, y = (double)mj / Q;
      const double mub = mu0 * (1.0 + 0.03 * std::sin(6.283 * x) * std::cos(6.283 * y));
      const double mup = 400.0 * (u01(S, mi, mj, 101) - 0.5);
      const std::size_t o = d.idx2(i, j);
      c.mub[o] = (float)mub;
      c.mu_old[o] = (float)mup;
      c.mut[o] = (float)(mub + mup + 150.0 * (u01(S, mi, mj, 102) - 0.5));
      c.msftx[o] = (float)(1.0 + 0.02 * y + 0.01 * u01(S, mi, mj, 103));
      c.msfty[o] = (float)(1.0 + 0.02 * y + 0.01 * u01(S, mi, mj, 104));
    }
  c.rdx = 1.0f / sp.dx;
  c.rdy = 1.0f / sp.dx;
  const double umax = sp.courant * sp.dx / sp.dt;
  for (int j = d.jms; j <= d.jme; ++j)
    for (int k = d.kms; k <= d.kme; ++k)
      for (int i = d.ims; i <= d.ime; ++i) {
        float sx, sy, s0;
        const std::size_t o = d.idx3(i, k, j);
        // dry mass of the column at this level: winds are mass-coupled (ru = (c1 mu + c2) u),
        // so Courant numbers are the same at every level.
        const double mk = c.c1[k - d.kms] * mu0 + c.c2[k - d.kms];
        {
          const int mi = mapx(i, true, &sx), mj = mapy(j, false, &s0);
          const double u = umax * (0.6 * std::sin(6.283 * (mj + 0.3 * k) / Q) + 0.4 * (2 * u01(S, mi, k, mj * 7 + 1) - 1));
          c.ru[o] = (float)(sx * mk * u);
        }
        {
          const int mi = mapx(i, false, &s0), mj = mapy(j, true, &sy);
          const double v = umax * (0.6 * std::cos(6.283 * (mi - 0.2 * k) / P) + 0.4 * (2 * u01(S, mi, k, mj * 7 + 2) - 1));
          c.rv[o] = (float)(sy * mk * v);
        }
        {
          const int mi = mapx(i, false, &s0), mj = mapy(j, false, &s0);
          // eta-dot * mu; |rom*dt*rdnw/mu| <= courant/2; zero at kds and kde.
          const double dnw = 1.0 / std::fabs(c.rdzw[(k > d.kms ? k - 1 : k) - d.kms]);
          const double w = (k == d.kds || k == d.kde) ? 0.0 : 0.5 * sp.courant * dnw / sp.dt * (2 * u01(S, mi, k, mj * 7 + 3) - 1);
          c.rom[o] = (float)(mk * w);
        }
      }
  for (int s = 0; s < ns; ++s)
    for (int j = d.jms; j <= d.jme; ++j)
      for (int k = d.kms; k <= d.kme; ++k)
        for (int i = d.ims; i <= d.ime; ++i) {
          float sg;
          const int mi = mapx(i, false, &sg), mj = mapy(j, false, &sg);
          const double r = u01(S, mi * 131 + s, k, mj * 17 + 5);
          double q;
          switch (s % 3) {
            case 0: {  // blobs: top hats on zero background (qc/qr-like)
              const bool in = ((mi / 4 + mj / 3 + k / 3 + s) % 3 == 0);
              q = in ? 1.0e-3 * (0.5 + r) : 0.0;
              break;
            }
            case 1:  // sparse random with many exact zeros and tiny values
              q = r < 0.4 ? 0.0 : (r < 0.5 ? 1e-12 * r : 2.0e-5 * r);
              break;
            default:  // smooth positive field with noise (qv-like)
              q = 1.0e-2 * std::exp(-0.3 * k) * (1.0 + 0.3 * std::sin(0.9 * mi + 0.4 * mj)) * (0.9 + 0.2 * r);
          }
          const std::size_t o = (std::size_t)s * n3 + d.idx3(i, k, j);
          c.field[o] = (float)q;
          const double r2 = u01(S, mi * 131 + s, k, mj * 17 + 6);
          c.field_old[o] = (float)(q == 0.0 ? (r2 < 0.8 ? 0.0 : 1e-4 * r2) : q * (0.9 + 0.2 * r2));
        }
  return c;
}

}  // namespace advection
}  // namespace wrfgpu
