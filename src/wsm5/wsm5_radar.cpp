// wsm5_radar.cpp - radar_init (WRF v4.7.1 phys/module_mp_radar.F r.l. 78-246) for WSM5, on
// the host, once per constants set: the m(D) parameters wsm5init sets (module_mp_wsm5.F
// l.1864-1874), the refractive indices of water and ice at 0 C for 10 cm, K_w, the snow size
// bins and the Simpson weights. refl10cm_column (wsm5_radar.h) reads the result.
//
// Each expression is evaluated in the precision gfortran uses for it: REAL literals inside
// double expressions (273.16, 1e-2, 0.0207, 10.02, 0.0364, 3.1884, 9.1e-4, 1.25664,
// 1.88496, and lamda_radar = 0.10) are single-precision values promoted to double, and
// CMPLX(x,y) without KIND is a default (single-precision) COMPLEX. Checked against the
// values WRF's radar_init prints, in src/wsm5/tests/test_wsm5_radar.cpp.
#include "wsm5_radar.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>

// No FMA contraction whatever the flags: compared bitwise with gfortran's values.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace wrfgpu {
namespace wsm5 {

namespace {

// GAMMLN (r.l. 620-640, Numerical Recipes): REAL argument and result, double inside.
float gammln(float xx) {
  const double STP = 2.5066282746310005;
  const double COF[6] = {76.18009172947146,     -86.50532032941677,
                         24.01409824083091,     -1.231739572450155,
                         .1208650973866179e-2, -.5395239384953e-5};
  const double X = xx;
  double Y = X;
  double TMP = X + 5.5;
  TMP = (X + 0.5) * std::log(TMP) - TMP;
  double SER = 1.000000000190015;
  for (int j = 0; j < 6; ++j) {
    Y = Y + 1.;
    SER = SER + COF[j] / Y;
  }
  return (float)(TMP + std::log(STP * SER / X));
}
// WGAMMA (r.l. 642-650): EXP of the REAL GAMMLN, in REAL.
float wgamma(float y) { return std::exp(gammln(y)); }

// m_complex_water_ray (r.l. 252-283): Ray (1972), T in deg C, lambda in m.
Cplx m_complex_water_ray(double lambda, double T) {
  const double PIx = 3.1415926535897932384626434;
  const double t273 = (double)273.16f;  // REAL literal 273.16
  const double epsinf = 5.27137 + 0.02164740 * T - 0.00131198 * T * T;
  const double epss = 78.54 * (1.0 - 4.579e-3 * (T - 25.0) + 1.190e-5 * (T - 25.0) * (T - 25.0) -
                               2.800e-8 * (T - 25.0) * (T - 25.0) * (T - 25.0));
  const double alpha = -16.8129 / (T + t273) + 0.0609265;
  const double lambdas = 0.00033836 * std::exp(2513.98 / (T + t273)) * (double)1e-2f;
  const double nenner = 1. + 2. * std::pow(lambdas / lambda, 1. - alpha) * std::sin(alpha * PIx * 0.5) +
                        std::pow(lambdas / lambda, 2. - 2. * alpha);
  const double epsr = epsinf + ((epss - epsinf) * (std::pow(lambdas / lambda, 1. - alpha) *
                                                       std::sin(alpha * PIx * 0.5) + 1.)) / nenner;
  const double epsi = ((epss - epsinf) * (std::pow(lambdas / lambda, 1. - alpha) *
                                              std::cos(alpha * PIx * 0.5) + 0.)) / nenner +
                      lambda * (double)1.25664f / (double)1.88496f;
  // SQRT(CMPLX(epsr,-epsi)): CMPLX without KIND is COMPLEX(4), so csqrtf
  const std::complex<float> m = std::sqrt(std::complex<float>((float)epsr, (float)(-epsi)));
  return Cplx{(double)m.real(), (double)m.imag()};
}

// m_complex_ice_maetzler (r.l. 287-320): Maetzler (1998), T in deg C, lambda in m.
Cplx m_complex_ice_maetzler(double lambda, double T) {
  const double t273 = (double)273.16f;
  const double c = 2.99e8;
  const double TK = T + t273;
  const double f = c / lambda * 1e-9;
  const double B1 = (double)0.0207f;
  const double B2 = 1.16e-11;
  const double b = 335.0;
  const double deltabeta = std::exp((double)(-10.02f) + (double)0.0364f * (TK - t273));
  const double betam = (B1 / TK) * (std::exp(b / TK) / ((std::exp(b / TK) - 1) * (std::exp(b / TK) - 1))) +
                       B2 * f * f;
  const double beta = betam + deltabeta;
  const double theta = 300. / TK - 1.;
  const double alfa = (0.00504 + 0.0062 * theta) * std::exp(-22.1 * theta);
  // m = 3.1884 + 9.1e-4*(TK-273.16); m = m + CMPLX(0.0d0, alfa/f + beta*f) (COMPLEX(4))
  const double mre = (double)3.1884f + (double)9.1e-4f * (TK - t273);
  const float mim = (float)(alfa / f + beta * f);
  const Cplx m{mre + 0.0, 0.0 + (double)mim};
  // SQRT(CONJG(m)): csqrt
  const std::complex<double> r = std::sqrt(std::complex<double>(m.re, -m.im));
  return Cplx{r.real(), r.imag()};
}

RadarTables radar_init(const Constants& c) {
  RadarTables t;
  std::memset(&t, 0, sizeof t);
  // wsm5init l.1867-1872 (REAL): xam_r = PI*denr/6., xam_s = PI*dens/6.
  t.xam_r = c.pi * c.denr / 6.f;
  t.xbm_r = 3.f;
  t.xmu_r = 0.f;
  t.xam_s = c.pi * c.dens / 6.f;
  t.xbm_s = 3.f;
  t.xmu_s = 0.f;

  // r.l. 83-87
  t.PI5 = (double)(3.14159f * 3.14159f * 3.14159f * 3.14159f * 3.14159f);  // REAL, folded
  t.lamda_radar = (double)0.10f;
  t.lamda4 = t.lamda_radar * t.lamda_radar * t.lamda_radar * t.lamda_radar;
  t.m_w_0 = m_complex_water_ray(t.lamda_radar, 0.0);
  t.m_i_0 = m_complex_ice_maetzler(t.lamda_radar, 0.0);
  {
    const Cplx m2 = cmul(t.m_w_0, t.m_w_0);
    const double a = cabs_(cdiv(csubr(m2, 1.0), caddr(m2, 2.0)));
    t.K_w = a * a;
  }

  // r.l. 89-96: Simpson weights
  const double basis[3] = {1. / 3., 4. / 3., 1. / 3.};
  for (int n = 0; n <= kRadarBins; ++n) t.simpson[n] = 0.0;
  for (int n = 1; n <= kRadarBins - 1; n += 2) {  // do n = 1, nrbins-1, 2 (1-based)
    t.simpson[n - 1] = t.simpson[n - 1] + basis[0];
    t.simpson[n] = t.simpson[n] + basis[1];
    t.simpson[n + 1] = t.simpson[n + 1] + basis[2];
  }

  // r.l. 151-160: snow bins from 100 microns to 2 cm (graupel/hail bins: unused by WSM5)
  double xxDx[kRadarBins + 1];
  xxDx[0] = 100.e-6;
  xxDx[kRadarBins] = 0.02;
  for (int n = 2; n <= kRadarBins; ++n)
    xxDx[n - 1] = std::exp((double)(n - 1) / (double)kRadarBins * std::log(xxDx[kRadarBins] / xxDx[0]) +
                           std::log(xxDx[0]));
  for (int n = 0; n < kRadarBins; ++n) {
    t.xxDs[n] = std::sqrt(xxDx[n] * xxDx[n + 1]);
    t.xdts[n] = xxDx[n + 1] - xxDx[n];
  }

  // r.l. 198-214 (REAL)
  t.xcre[0] = 1.f + t.xbm_r;
  t.xcre[1] = 1.f + t.xmu_r;
  t.xcre[2] = 1.f + t.xbm_r + t.xmu_r;
  t.xcre[3] = 1.f + 2.f * t.xbm_r + t.xmu_r;
  for (int n = 0; n < 4; ++n) t.xcrg[n] = wgamma(t.xcre[n]);
  t.xcse[0] = 1.f + t.xbm_s;
  t.xcse[1] = 1.f + t.xmu_s;
  t.xcse[2] = 1.f + t.xbm_s + t.xmu_s;
  t.xcse[3] = 1.f + 2.f * t.xbm_s + t.xmu_s;
  for (int n = 0; n < 4; ++n) t.xcsg[n] = wgamma(t.xcse[n]);

  // r.l. 235-238 (REAL): xocms = xoams**xobms (powf)
  t.xoams = 1.f / t.xam_s;
  t.xobms = 1.f / t.xbm_s;
  t.xocms = std::pow(t.xoams, t.xobms);
  return t;
}

struct Key {
  uint32_t pi, denr, dens;
  bool operator==(const Key& o) const { return pi == o.pi && denr == o.denr && dens == o.dens; }
};
uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

}  // namespace

const RadarTables& radar_tables(const Constants& c) {
  static std::mutex mu;
  static std::deque<std::pair<Key, RadarTables>>* cache =
      new std::deque<std::pair<Key, RadarTables>>();  // never destroyed (used until exit)
  const Key k{bits(c.pi), bits(c.denr), bits(c.dens)};
  std::lock_guard<std::mutex> lock(mu);
  for (const auto& e : *cache)
    if (e.first == k) return e.second;
  cache->emplace_back(k, radar_init(c));
  return cache->back().second;
}

}  // namespace wsm5
}  // namespace wrfgpu
