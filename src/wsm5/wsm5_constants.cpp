// wsm5_constants.cpp - wsm5init and rgmma on the host, in single precision as gfortran
// evaluates WRF v4.7.1 phys/module_mp_wsm5.F l.1806-1900.
//
// Expressions made only of PARAMETERs are folded by gfortran at compile time with correct
// rounding (MPFR); C++ constexpr float arithmetic gives the same values. Expressions that
// involve wsm5init's dummy arguments or SAVE variables are evaluated at run time, left to
// right, in float, as below. Values are checked bit for bit against a gfortran build of
// WRF's wsm5init in src/wsm5/tests/test_wsm5_constants.cpp.
#include "wsm5_constants.h"

#include <cmath>
#include <string>

#include "errors.h"

// No contraction into FMA here, whatever the Makefile's flags: these values are compared
// bitwise with gfortran's (which has no FMA on x86-64 baseline).
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace wrfgpu {
namespace wsm5 {

namespace {

// Correctly rounded float of x**n for a float x and small integer n (what gfortran's
// compile-time folding of `PARAMETER**n` gives): computed in long double/double and rounded
// once to float. Exactness is checked by the bitwise constant test.
float folded_ipow(float x, int n) {
  long double r = 1.0L;
  for (int i = 0; i < n; ++i) r *= (long double)x;
  return (float)r;
}

}  // namespace

// rgmma (l.1881-1900): gamma function by the infinite product, 10,000 terms, in float.
float rgmma(float x) {
  const float euler = 0.577215664901532f;  // PARAMETER (euler=0.577215664901532)
  if (x == 1.f) return 0.f;                // WRF returns 0 for x == 1 (never used)
  float r = x * std::exp(euler * x);
  for (int i = 1; i <= 10000; ++i) {
    const float y = (float)i;               // y = float(i)
    r = r * (1.000f + x / y) * std::exp(-x / y);
  }
  return 1.f / r;
}

Constants wrf_model_constants() {
  // share/module_model_constants.F (the actuals module_microphysics_driver.F passes)
  Constants c{};
  constexpr float r_d = 287.f, r_v = 461.6f;
  c.g = 9.81f;
  c.cpd = 7.f * r_d / 2.f;   // cp = 7.*r_d/2.
  c.cpv = 4.f * r_v;         // cpv = 4.*r_v
  c.rd = r_d;
  c.rv = r_v;
  c.t0c = 273.15f;           // svpt0
  c.ep1 = r_v / r_d - 1.f;   // ep_1
  c.ep2 = r_d / r_v;         // ep_2
  c.qmin = 1.e-15f;          // epsilon
  c.xls = 2.85e6f;           // xls
  c.xlv0 = 2.5e6f;           // the driver passes xlv (not the 3.15e6 XLV0 constant)
  c.xlf0 = 3.50e5f;          // xlf
  c.den0 = 1.28f;            // rhoair0
  c.denr = 1000.f;           // rhowater
  c.cliq = 4190.f;
  c.cice = 2106.f;
  c.psat = 610.78f;
  c.dens = 100.f;            // rhosnow (wsm5init only)
  return c;
}

Constants wsm5init(const Constants& base, float dens) {
  using namespace param;
  // Every one of them is a positive physical constant; zero, a negative or a non-finite
  // value (e.g. a fill value read where none was recorded) would turn the scheme's
  // divisions and logarithms into NaN without any message.
  const struct { const char* name; float v; } given[] = {
      {"g", base.g}, {"cpd", base.cpd}, {"cpv", base.cpv}, {"rd", base.rd}, {"rv", base.rv},
      {"t0c", base.t0c}, {"ep1", base.ep1}, {"ep2", base.ep2}, {"qmin", base.qmin},
      {"xls", base.xls}, {"xlv0", base.xlv0}, {"xlf0", base.xlf0}, {"den0", base.den0},
      {"denr", base.denr}, {"cliq", base.cliq}, {"cice", base.cice}, {"psat", base.psat},
      {"dens", dens}};
  for (const auto& g : given)
    if (!(g.v > 0.f) || !std::isfinite(g.v))
      throw InputError(std::string("wsm5init: constant '") + g.name + "' = " + std::to_string(g.v) +
                       " is not a finite positive value");
  Constants c = base;
  c.dens = dens;
  const float den0 = base.den0, denr = base.denr, cl = base.cliq, cpv = base.cpv;

  c.pi = 4.f * std::atan(1.f);   // pi = 4.*atan(1.)  (atan(1.) folded: correctly rounded)
  c.xlv1 = cl - cpv;

  // qc0 = 4./3.*pi*denr*r0**3*xncr/den0
  c.qc0 = (4.f / 3.f) * c.pi * denr * folded_ipow(r0, 3) * xncr / den0;
  // qck1 = .104*9.8*peaut/(xncr*denr)**(1./3.)/xmyu*den0**(4./3.)
  {
    constexpr float k = .104f * 9.8f * peaut;  // folded
    c.qck1 = k / std::pow(xncr * denr, 1.f / 3.f) / xmyu * std::pow(den0, 4.f / 3.f);
  }
  c.pidnc = c.pi * denr / 6.f;

  c.bvtr1 = 1.f + bvtr;
  c.bvtr2 = 2.5f + .5f * bvtr;
  c.bvtr3 = 3.f + bvtr;
  c.bvtr4 = 4.f + bvtr;
  c.g1pbr = rgmma(c.bvtr1);
  c.g3pbr = rgmma(c.bvtr3);
  c.g4pbr = rgmma(c.bvtr4);
  c.g5pbro2 = rgmma(c.bvtr2);
  c.pvtr = avtr * c.g4pbr / 6.f;
  c.eacrr = 1.0f;
  c.pacrr = c.pi * n0r * avtr * c.g3pbr * .25f * c.eacrr;
  c.precr1 = 2.f * c.pi * n0r * .78f;
  c.precr2 = 2.f * c.pi * n0r * .31f * std::sqrt(avtr) * c.g5pbro2;  // avtr**.5 folded
  {
    constexpr float q = dimax / dicon;
    c.xmmax = q * q;                                                  // (dimax/dicon)**2
  }
  c.roqimax = 2.08e22f * folded_ipow(dimax, 8);                       // 2.08e22*dimax**8

  c.bvts1 = 1.f + bvts;
  c.bvts2 = 2.5f + .5f * bvts;
  c.bvts3 = 3.f + bvts;
  c.bvts4 = 4.f + bvts;
  c.g1pbs = rgmma(c.bvts1);
  c.g3pbs = rgmma(c.bvts3);
  c.g4pbs = rgmma(c.bvts4);
  c.g5pbso2 = rgmma(c.bvts2);
  c.pvts = avts * c.g4pbs / 6.f;
  c.pacrs = c.pi * n0s * avts * c.g3pbs * .25f;
  c.precs1 = 4.f * n0s * .65f;
  {
    const float k = 4.f * n0s * .44f * std::sqrt(avts);               // folded prefix
    c.precs2 = k * c.g5pbso2;
  }
  c.pidn0r = c.pi * denr * n0r;
  c.pidn0s = c.pi * dens * n0s;
  c.pacrc = c.pi * n0s * avts * c.g3pbs * .25f * eacrc;

  c.rslopermax = 1.f / lamdarmax;
  c.rslopesmax = 1.f / lamdasmax;
  c.rsloperbmax = std::pow(c.rslopermax, bvtr);
  c.rslopesbmax = std::pow(c.rslopesmax, bvts);
  c.rsloper2max = c.rslopermax * c.rslopermax;
  c.rslopes2max = c.rslopesmax * c.rslopesmax;
  c.rsloper3max = c.rsloper2max * c.rslopermax;
  c.rslopes3max = c.rslopes2max * c.rslopesmax;

  // wsm52D's fpvs inline-expansion constants (l.548-557): hsub=xls, hvap=xlv0, cvap=cpv.
  c.ttp = c.t0c + 0.01f;
  const float dldt = c.cpv - c.cliq;
  c.xa = -dldt / c.rv;
  c.xb = c.xa + c.xlv0 / (c.rv * c.ttp);
  const float dldti = c.cpv - c.cice;
  c.xai = -dldti / c.rv;
  c.xbi = c.xai + c.xls / (c.rv * c.ttp);
  return c;
}

Constants wrf_default_constants() {
  const Constants b = wrf_model_constants();
  return wsm5init(b, b.dens);
}

}  // namespace wsm5
}  // namespace wrfgpu
