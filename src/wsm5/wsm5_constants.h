// wsm5_constants.h - every constant the WSM5 physics uses, computed once on the host.
//
// Mirrors WRF v4.7.1 phys/module_mp_wsm5.F:
//  - the 17 constants wsm5() receives from the microphysics driver (module_model_constants),
//    plus dens (rhosnow), which only wsm5init uses;
//  - the module PARAMETERs (dtcldcr, n0r, avtr, ... eacrc), as constexpr floats below;
//  - the SAVE set computed by wsm5init (l.1806-1879), in single precision exactly as gfortran
//    computes it, including rgmma's 10,000-term infinite product (l.1881-1900), so Gamma(4.8)
//    is 17.817297 as in WRF, not the true 17.837825;
//  - the saturation constants wsm52D computes at run time before its fpvs inline expansion
//    (ttp, xa, xb, xai, xbi; l.548-557), evaluated once here with the same float operations.
// Kernels receive a Constants by value (it is a plain struct of floats); nothing is
// recomputed per cell.
#pragma once

namespace wrfgpu {
namespace wsm5 {

// module_mp_wsm5 PARAMETERs (l.18-37), REAL (single precision) as in WRF.
namespace param {
constexpr float dtcldcr = 120.f;    // maximum time step for minor loops
constexpr float n0r = 8.e6f;        // intercept parameter rain
constexpr float avtr = 841.9f;      // terminal velocity constant, rain
constexpr float bvtr = 0.8f;
constexpr float r0 = .8e-5f;        // 8 micron
constexpr float peaut = .55f;       // collection efficiency
constexpr float xncr = 3.e8f;       // maritime cloud
constexpr float xmyu = 1.718e-5f;   // dynamic viscosity
constexpr float avts = 11.72f;      // terminal velocity constant, snow
constexpr float bvts = .41f;
constexpr float n0smax = 1.e11f;    // maximum n0s
constexpr float lamdarmax = 8.e4f;
constexpr float lamdasmax = 1.e5f;
constexpr float lamdagmax = 6.e4f;
constexpr float dicon = 11.9f;      // cloud-ice diameter constant
constexpr float dimax = 500.e-6f;   // maximum cloud-ice diameter
constexpr float n0s = 2.e6f;        // snow intercept parameter
constexpr float alpha = .12f;       // exponent factor for n0s
constexpr float pfrz1 = 100.f;      // Bigg freezing
constexpr float pfrz2 = 0.66f;
constexpr float qcrmin = 1.e-9f;    // minimum qr, qs for the slope formulas
constexpr float eacrc = 1.0f;       // snow/cloud-water collection efficiency
// slope_wsm5/slope_rain/slope_snow use their own local PARAMETER t0c (l.1281).
constexpr float t0c_slope = 273.15f;
// n0smax/n0s, folded by gfortran at compile time (correctly rounded).
constexpr float n0smax_over_n0s = n0smax / n0s;
}  // namespace param

// module_model_constants RE_QC_BG, RE_QI_BG, RE_QS_BG (background effective radii, m).
constexpr float RE_QC_BG = 2.49e-6f;
constexpr float RE_QI_BG = 4.99e-6f;
constexpr float RE_QS_BG = 9.99e-6f;

struct Constants {
  // --- passed by the microphysics driver to wsm5 (module_model_constants values by default)
  float g, cpd, cpv, rd, rv, t0c, ep1, ep2, qmin, xls, xlv0, xlf0, den0, denr, cliq, cice, psat;
  // --- wsm5init's dens argument (rhosnow)
  float dens;
  // --- wsm5init SAVE set (module_mp_wsm5.F l.39-49, computed l.1806-1879)
  float pi, xlv1;
  float qc0, qck1, pidnc;
  float bvtr1, bvtr2, bvtr3, bvtr4, g1pbr, g3pbr, g4pbr, g5pbro2, pvtr, eacrr, pacrr;
  float precr1, precr2, xmmax, roqimax;
  float bvts1, bvts2, bvts3, bvts4, g1pbs, g3pbs, g4pbs, g5pbso2, pvts, pacrs;
  float precs1, precs2, pidn0r, pidn0s, pacrc;
  float rslopermax, rslopesmax, rsloperbmax, rslopesbmax;
  float rsloper2max, rslopes2max, rsloper3max, rslopes3max;
  // --- fpvs inline-expansion constants of wsm52D (l.548-557 and l.1132-1142)
  float ttp, xa, xb, xai, xbi;
};

// WRF's rgmma (module_mp_wsm5.F l.1881-1900): single-precision 10,000-term product.
float rgmma(float x);

// WRF's wsm5init (l.1806-1879) for the driver's 17 constants plus dens, in single precision.
// The 17 are taken from `base` (g ... psat) and must already be set.
Constants wsm5init(const Constants& base, float dens);

// Convenience: wsm5init for WRF's defaults (module_model_constants: rhoair0=1.28,
// rhowater=1000, rhosnow=100, cliq=4190, cpv=4*r_v, ...).
Constants wrf_default_constants();

// The 17 constants + dens with WRF's values (share/module_model_constants.F), not yet
// passed through wsm5init.
Constants wrf_model_constants();

}  // namespace wsm5
}  // namespace wrfgpu
