// wsm5_radar.h - radar reflectivity diagnostic refl10cm_wsm5 (module_mp_wsm5.F l.1669-1803)
// and the pieces of module_mp_radar.F it uses: radar_init (tables, called from wsm5init,
// module_mp_wsm5.F l.1864-1876), rayleigh_soak_wetgraupel, get_m_mix_nested, get_m_mix,
// m_complex_maxwellgarnett, and at initialisation m_complex_water_ray,
// m_complex_ice_maetzler and WGAMMA/GAMMLN. Line numbers "r.l." refer to WRF v4.7.1
// phys/module_mp_radar.F, "l." to phys/module_mp_wsm5.F.
//
// Precision is the Fortran's, operation by operation: REAL (float) where WRF declares REAL
// or writes a REAL literal (0.10 in lamda_radar, 273.16 and 1e-2 in m_complex_water_ray,
// 1./3. as an exponent: these are single-precision constants promoted to double), DOUBLE
// PRECISION / COMPLEX*16 elsewhere. Complex arithmetic is spelled out as gfortran expands it
// (-fcx-fortran-rules: product (ar*br-ai*bi, ar*bi+ai*br), Smith's division as GCC's
// expand_complex_div_wide); ABS of a complex is hypot, SQRT and LOG of a complex are glibc's
// csqrt and clog on the host (what gfortran calls) and ports of the same algorithms on the
// device. No std::complex in device code.
#pragma once
#include <cmath>
#include <complex>  // host branch of c_sqrt/c_log only
#include <cstddef>

#include "wsm5_physics.h"

namespace wrfgpu {
namespace wsm5 {

// module_mp_radar: nrbins = 50 (r.l. 39); melt_outside_s = 0.9d0 (r.l. 67).
constexpr int kRadarBins = 50;
constexpr double kMeltOutsideS = 0.9;
// refl10cm_column's per-level double work arrays (see refl10cm_column).
constexpr int kReflArrays = 7;

// COMPLEX*16 value (plain struct: usable in kernels and in RadarTables passed by value).
struct Cplx {
  double re, im;
};

// What radar_init computes once (r.l. 78-246) for WSM5's m(D) relations (set in wsm5init,
// l.1864-1874), as refl10cm_wsm5 reads it. Plain data: kernels receive it by value.
struct RadarTables {
  // wsm5init l.1867-1872: xam_r = PI*denr/6., xbm_r = 3., xmu_r = 0., same for snow (dens)
  float xam_r, xbm_r, xmu_r, xam_s, xbm_s, xmu_s;
  // radar_init r.l. 198-217: xcre/xcse = exponents, xcrg/xcsg = WGAMMA of them (REAL)
  float xcre[4], xcse[4], xcrg[4], xcsg[4];
  // r.l. 235-238: xoams = 1./xam_s, xobms = 1./xbm_s, xocms = xoams**xobms (REAL)
  float xoams, xobms, xocms;
  double lamda_radar;  // r.l. 42: PARAMETER = 0.10 (a REAL literal): 0.100000001490116...
  double lamda4;       // r.l. 84: lamda_radar**4 (products)
  double PI5;          // r.l. 83: 3.14159**5 in REAL, stored in a DOUBLE
  double K_w;          // r.l. 87: |(m_w_0**2-1)/(m_w_0**2+2)|**2
  Cplx m_w_0, m_i_0;   // r.l. 85-86: water (Ray 1972) and ice (Maetzler) at 0 C, 10 cm
  double xxDs[kRadarBins], xdts[kRadarBins];  // snow size bins (r.l. 151-160)
  double simpson[kRadarBins + 1];             // r.l. 89-96
};

// radar_init for this Constants set (pi, denr, dens of wsm5init), computed on the host on
// the first call and kept: later calls with the same constants return the same object.
// Thread-safe.
const RadarTables& radar_tables(const Constants& c);

inline namespace WRFGPU_PHYS_NS {

// ---------------------------------------------------------------------------------------
// COMPLEX*16 arithmetic as gfortran lowers it (GCC tree-complex.cc, flag_complex_method 1).
WRFGPU_HD Cplx cadd(Cplx a, Cplx b) { return Cplx{a.re + b.re, a.im + b.im}; }
WRFGPU_HD Cplx csub(Cplx a, Cplx b) { return Cplx{a.re - b.re, a.im - b.im}; }
WRFGPU_HD Cplx cmul(Cplx a, Cplx b) { return Cplx{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
// real*complex, real+complex, complex-real: the real operand has a zero imaginary part, which
// GCC's lattice drops (same values as the full formula for finite operands).
WRFGPU_HD Cplx rmul(double r, Cplx b) { return Cplx{r * b.re, r * b.im}; }
WRFGPU_HD Cplx radd(double r, Cplx b) { return Cplx{r + b.re, b.im}; }
WRFGPU_HD Cplx csubr(Cplx a, double r) { return Cplx{a.re - r, a.im}; }
WRFGPU_HD Cplx caddr(Cplx a, double r) { return Cplx{a.re + r, a.im}; }
// a/b: expand_complex_div_wide (Smith's algorithm as GCC writes it).
WRFGPU_HD Cplx cdiv(Cplx a, Cplx b) {
  double tr, ti, div;
  if (fabs(b.re) < fabs(b.im)) {
    const double ratio = b.re / b.im;
    div = (b.re * ratio) + b.im;
    tr = (a.re * ratio) + a.im;
    ti = (a.im * ratio) - a.re;
  } else {
    const double ratio = b.im / b.re;
    div = (b.im * ratio) + b.re;
    tr = (a.im * ratio) + a.re;
    ti = a.im - (a.re * ratio);
  }
  return Cplx{tr / div, ti / div};
}
// ABS(z) = cabs = hypot (glibc's cabs is hypot).
WRFGPU_HD double cabs_(Cplx z) { return hypot(z.re, z.im); }

// glibc 2.36 csqrt (math/s_csqrt_template.c), finite arguments; the rescaling branches for
// |re| or |im| > DBL_MAX/4 or both < 2*DBL_MIN are left out (the arguments here are
// refractive-index squares and mixtures, magnitudes ~1e-2..1e2). With the host's hypot and
// sqrt it gives glibc's bits; on the device it is the device's hypot/sqrt.
WRFGPU_HD Cplx csqrt_port(Cplx x) {
  if (x.im == 0.0) {
    if (x.re < 0) return Cplx{0.0, copysign(sqrt(-x.re), x.im)};
    return Cplx{fabs(sqrt(x.re)), copysign(0.0, x.im)};
  }
  if (x.re == 0.0) {
    const double r = sqrt(0.5 * fabs(x.im));
    return Cplx{r, copysign(r, x.im)};
  }
  const double d = hypot(x.re, x.im);
  double r, s;
  if (x.re > 0) {
    r = sqrt(0.5 * (d + x.re));
    s = 0.5 * (x.im / r);
  } else {
    s = sqrt(0.5 * (d - x.re));
    r = fabs(0.5 * (x.im / s));
  }
  return Cplx{r, copysign(s, x.im)};
}

// glibc 2.36 clog (math/s_clog_template.c), finite non-zero arguments of moderate size (no
// rescaling branch), with glibc's __x2y2m1 (sysdeps/ieee754/dbl-64/x2y2m1.c: x*x+y*y-1 from
// the exact products, summed after sorting by magnitude; qsort there is a stable merge sort,
// here an insertion sort).
WRFGPU_HD void x2y2m1_sort(double* v, int n) {  // stable, by |v|
  for (int i = 1; i < n; ++i) {
    const double t = v[i];
    int j = i - 1;
    while (j >= 0 && fabs(v[j]) > fabs(t)) {
      v[j + 1] = v[j];
      --j;
    }
    v[j + 1] = t;
  }
}
WRFGPU_HD double x2y2m1_port(double x, double y) {
  double v[5];
  v[1] = x * x;  // mul_split: exact product as hi + lo
  v[0] = fma(x, x, -v[1]);
  v[3] = y * y;
  v[2] = fma(y, y, -v[3]);
  v[4] = -1.0;
  x2y2m1_sort(v, 5);
  for (int i = 0; i <= 3; ++i) {
    const double hi = v[i + 1] + v[i];  // add_split (Dekker)
    const double lo = (v[i + 1] - hi) + v[i];
    v[i + 1] = hi;
    v[i] = lo;
    x2y2m1_sort(v + i + 1, 4 - i);
  }
  return v[4] + v[3] + v[2] + v[1] + v[0];
}
WRFGPU_HD Cplx clog_port(Cplx x) {
  double absx = fabs(x.re), absy = fabs(x.im);
  if (absx < absy) {
    const double t = absx;
    absx = absy;
    absy = t;
  }
  const double eps = 2.220446049250313080847e-16;  // DBL_EPSILON
  double re;
  if (absx == 1.0) {
    re = log1p(absy * absy) / 2;
  } else if (absx > 1.0 && absx < 2.0 && absy < 1.0) {
    double d2m1 = (absx - 1.0) * (absx + 1.0);
    if (absy >= eps) d2m1 += absy * absy;
    re = log1p(d2m1) / 2;
  } else if (absx < 1.0 && absx >= 0.5 && absy < eps / 2) {
    const double d2m1 = (absx - 1.0) * (absx + 1.0);
    re = log1p(d2m1) / 2;
  } else if (absx < 1.0 && absx >= 0.5 && absx * absx + absy * absy >= 0.5) {
    re = log1p(x2y2m1_port(absx, absy)) / 2;
  } else {
    re = log(hypot(absx, absy));
  }
  return Cplx{re, atan2(x.im, x.re)};
}

// SQRT / LOG of a COMPLEX*16 (gfortran: csqrt / clog).
WRFGPU_HD Cplx c_sqrt(Cplx z) {
#if defined(__CUDA_ARCH__)
  return csqrt_port(z);
#else
  const std::complex<double> r = std::sqrt(std::complex<double>(z.re, z.im));
  return Cplx{r.real(), r.imag()};
#endif
}
WRFGPU_HD Cplx c_log(Cplx z) {
#if defined(__CUDA_ARCH__)
  return clog_port(z);
#else
  const std::complex<double> r = std::log(std::complex<double>(z.re, z.im));
  return Cplx{r.real(), r.imag()};
#endif
}

WRFGPU_HD double dmax2(double a, double b) { return a > b ? a : b; }
WRFGPU_HD double dmin2(double a, double b) { return a < b ? a : b; }

// ---------------------------------------------------------------------------------------
// m_complex_maxwellgarnett (r.l. 575-616) with inclusion = 'spheroidal' (the only shape
// radar_init sets). Returns error = 1 (and -999.99-999.99i) when the volume fractions do not
// sum to 1 within 1d-6, as WRF does.
WRFGPU_HD Cplx m_complex_maxwellgarnett(double vol1, double vol2, double vol3, Cplx m1, Cplx m2,
                                        Cplx m3, int& error) {
  error = 0;
  if (fabs(vol1 + vol2 + vol3 - 1.0) > 1e-6) {
    error = 1;
    return Cplx{-999.99, -999.99};
  }
  const Cplx m1t = cmul(m1, m1), m2t = cmul(m2, m2), m3t = cmul(m3, m3);
  // beta2 = 2.0d0*m1t/(m2t-m1t) * (m2t/(m2t-m1t)*LOG(m2t/m1t)-1.0d0)
  const Cplx beta2 = cmul(cdiv(rmul(2.0, m1t), csub(m2t, m1t)),
                          csubr(cmul(cdiv(m2t, csub(m2t, m1t)), c_log(cdiv(m2t, m1t))), 1.0));
  const Cplx beta3 = cmul(cdiv(rmul(2.0, m1t), csub(m3t, m1t)),
                          csubr(cmul(cdiv(m3t, csub(m3t, m1t)), c_log(cdiv(m3t, m1t))), 1.0));
  // SQRT(((1-vol2-vol3)*m1t + vol2*beta2*m2t + vol3*beta3*m3t) /
  //      (1-vol2-vol3+vol2*beta2+vol3*beta3))
  const double v1 = 1.0 - vol2 - vol3;
  const Cplx num = cadd(cadd(rmul(v1, m1t), cmul(rmul(vol2, beta2), m2t)), cmul(rmul(vol3, beta3), m3t));
  const Cplx den = cadd(radd(v1, rmul(vol2, beta2)), rmul(vol3, beta3));
  return c_sqrt(cdiv(num, den));
}

// get_m_mix_nested (r.l. 386-522) for radar_init's snow strings: host 'air', matrix 'water',
// inclusion 'spheroidal', hostmatrix 'icewater', hostinclusion 'spheroidal', mixingrule
// 'maxwellgarnett' (r.l. 124-129); get_m_mix (r.l. 526-571) dispatched by hand. The other
// string branches cannot be reached from refl10cm_wsm5.
WRFGPU_HD Cplx get_m_mix_nested_snow(Cplx m_a, Cplx m_i, Cplx m_w, double volair, double volice,
                                     double volwater, int& cumulerror) {
  cumulerror = 0;
  int error;
  const double vol1 = volice / dmax2(volice + volwater, 1e-10);
  const double vol2 = 1.0 - vol1;
  // get_m_mix(m_a, m_i, m_w, 0.0d0, vol1, vol2, ..., matrix 'water') ->
  // m_complex_maxwellgarnett(volwater, volair, volice, m_w, m_a, m_i)
  const Cplx mtmp = m_complex_maxwellgarnett(vol2, 0.0, vol1, m_w, m_a, m_i, error);
  cumulerror += error;
  // hostmatrix 'icewater': get_m_mix(m_a, mtmp, 2.0*m_a, volair, 1-volair, 0.0d0, ..., 'ice')
  // -> m_complex_maxwellgarnett(volice, volair, volwater, m_i=mtmp, m_a, m_w=2*m_a)
  Cplx r = m_complex_maxwellgarnett(1.0 - volair, volair, 0.0, mtmp, m_a, rmul(2.0, m_a), error);
  cumulerror += error;
  if (cumulerror != 0) r = Cplx{1.0, 0.0};
  return r;
}

// rayleigh_soak_wetgraupel (r.l. 295-382): Rayleigh backscattering cross section of one
// melting snow particle of mass x_g (kg).
WRFGPU_HD double rayleigh_soak_wetgraupel(const RadarTables& rt, double x_g, double a_geo,
                                          double b_geo, double fmelt, double meltratio_outside,
                                          Cplx m_w, Cplx m_i) {
  constexpr double PIx = 3.1415926535897932384626434;
  const Cplx m_air{1.0, 0.0};
  const double fm = dmax2(dmin2(fmelt, 1.0), 0.0);
  double mra = dmax2(dmin2(meltratio_outside, 1.0), 0.0);
  mra = mra + (1.0 - mra) * fm;
  const double x_w = x_g * fm;
  const double D_g = a_geo * pow(x_g, b_geo);
  if (!(D_g >= 1e-12)) return 0.0;
  double vg = PIx / 6. * (D_g * (D_g * D_g));  // D_g**3 (gfortran: x*(x*x))
  const double rhog = dmax2(dmin2(x_g / vg, 900.0), 10.0);
  vg = x_g / rhog;
  const double meltratio_outside_grenz = 1.0 - rhog / 1000.;
  double volg;
  if (mra <= meltratio_outside_grenz) {
    volg = vg * (1.0 - mra * fm);
  } else {
    const double fmgrenz = (900.0 - rhog) / (mra * 900.0 - rhog + 900.0 * rhog / 1000.);
    if (fm <= fmgrenz) volg = (1.0 - mra * fm) * vg;
    else volg = (x_g - x_w) / 900.0 + x_w / 1000.;
  }
  // (6.0/PIx*volg)**(1./3.): the exponent is the REAL 1./3. promoted to double
  const double D_large = pow(6.0 / PIx * volg, (double)(1.f / 3.f));
  const double volice = (x_g - x_w) / (volg * 900.0);
  const double volwater = x_w / (1000. * volg);
  const double volair = 1.0 - volice - volwater;
  int error;
  const Cplx m_core = get_m_mix_nested_snow(m_air, m_i, m_w, volair, volice, volwater, error);
  if (error != 0) return 0.0;
  const Cplx m2 = cmul(m_core, m_core);
  const double a = cabs_(cdiv(csubr(m2, 1.0), caddr(m2, 2.0)));
  const double D3 = D_large * (D_large * D_large);  // D_large**6 = x3*x3, x3 = x*(x*x)
  return a * a * rt.PI5 * (D3 * D3) / rt.lamda4;
}

// ---------------------------------------------------------------------------------------
// refl10cm_wsm5 (l.1669-1803) for one column, as wsm5 calls it after the microphysics
// (l.198-216): t1d = th*pii, p1d = p, qv1d = qv, qr1d = qr, qs1d = qs (all after the column
// update), refl_10cm = MAX(-35., dBZ).
struct ReflArgs {
  CCol th, pii, p, qv, qr, qs;
  Col refl;  // dBZ, max(-35, dBZ) as wsm5 stores it
};

// Per-level work arrays (doubles): array a, level k at work[a*pitch + k*stride]. CPU:
// stride 1, pitch nk. GPU: work + column, stride = ncols, pitch = nk*ncols.
//   0 temp  1 rs  2 N0_s  3 ilams  4 ze_rain  5 ze_snow  6 L_qr + 2*L_qs
// REAL locals (temp, rs, ze_*) are stored as doubles holding the float value exactly.
// The rain terms N0_r/ilamr of WRF are used only at their own level and are not kept.
WRFGPU_HD bool refl_flag(const ColT<double>& f, int k, int bit) { return ((int)f[k] & bit) != 0; }

WRFGPU_HD void refl10cm_column(const Constants& c, const RadarTables& rt, int nk, const ReflArgs& a,
                               double* work, std::ptrdiff_t stride, std::ptrdiff_t pitch) {
  using DCol = ColT<double>;
  const DCol w_temp{work, stride}, w_rs{work + pitch, stride}, w_n0s{work + 2 * pitch, stride},
      w_ilams{work + 3 * pitch, stride}, w_zer{work + 4 * pitch, stride},
      w_zes{work + 5 * pitch, stride}, w_flag{work + 6 * pitch, stride};
  const float R = 287.f;
  // ze_snow's REAL prefactor (0.176/0.93)*(6.0/PI)*(6.0/PI)*(xam_s/900.0)*(xam_s/900.0);
  // PI is wsm5init's pi; 0.176/0.93 is folded by gfortran (correctly rounded, as here).
  const float zes_pre = (0.176f / 0.93f) * (6.0f / c.pi) * (6.0f / c.pi) * (rt.xam_s / 900.0f) *
                        (rt.xam_s / 900.0f);

  // l.1705-1735: column into local arrays, slopes of rain and snow. The Rayleigh terms of
  // l.1761-1767 (level by level, no coupling) are evaluated here in the same loop.
  for (int k = 0; k < nk; ++k) {
    const float temp = a.th[k] * a.pii[k];                  // t1d (l.204)
    const float temp_C = fmin2(-0.001f, temp - 273.15f);
    const float qv = fmax2(1.E-10f, a.qv[k]);
    const float pres = a.p[k];
    const float rho = 0.622f * pres / (R * temp * (qv + 0.622f));
    float ze_rain = 1.e-22f, ze_snow = 1.e-22f, rs;
    int flags = 0;
    if (a.qr[k] > 1.E-9f) {
      const float rr = a.qr[k] * rho;
      const double N0_r = (double)param::n0r;
      // lamr = (xam_r*xcrg(3)*N0_r(k)/rr(k))**(1./xcre(1))
      const double lamr = pow((double)(rt.xam_r * rt.xcrg[2]) * N0_r / (double)rr,
                              (double)(1.f / rt.xcre[0]));
      const double ilamr = 1. / lamr;
      // ze_rain(k) = N0_r(k)*xcrg(4)*ilamr(k)**xcre(4)
      ze_rain = (float)(N0_r * (double)rt.xcrg[3] * pow(ilamr, (double)rt.xcre[3]));
      flags |= 1;
    }
    if (a.qs[k] > 1.E-9f) {
      rs = a.qs[k] * rho;
      // N0_s(k) = min(n0smax, n0s*exp(-alpha*temp_C))  (REAL)
      const double N0_s = (double)fmin2(param::n0smax, param::n0s * expf(-param::alpha * temp_C));
      const double lams = pow((double)(rt.xam_s * rt.xcsg[2]) * N0_s / (double)rs,
                              (double)(1.f / rt.xcse[0]));
      const double ilams = 1. / lams;
      ze_snow = (float)((double)zes_pre * N0_s * (double)rt.xcsg[3] * pow(ilams, (double)rt.xcse[3]));
      w_n0s[k] = N0_s;
      w_ilams[k] = ilams;
      flags |= 2;
    } else {
      rs = 1.E-12f;
    }
    w_temp[k] = temp;
    w_rs[k] = rs;
    w_zer[k] = ze_rain;
    w_zes[k] = ze_snow;
    w_flag[k] = flags;
  }

  // l.1740-1749: level of the start of melting (k_0 is the level above)
  bool melti = false;
  int k_0 = 0;
  for (int k = nk - 2; k >= 0; --k) {
    if ((float)w_temp[k] > 273.15f && refl_flag(w_flag, k, 1) && refl_flag(w_flag, k + 1, 2)) {
      k_0 = imax2(k + 1, k_0);
      melti = true;
      break;
    }
  }

  // l.1779-1797: melting snow below k_0, ice coated by meltwater (Blahak's routines)
  if (melti && k_0 >= 1) {
    for (int k = k_0 - 1; k >= 0; --k) {
      if (refl_flag(w_flag, k, 2) && refl_flag(w_flag, k_0, 2)) {
        const float rs_ratio = (float)w_rs[k] / (float)w_rs[k_0];  // rs(k)/rs(k_0): REAL
        const double fmelt_s = dmax2(0.005, dmin2(1.0 - (double)rs_ratio, 0.99));
        double eta = 0.0;
        const double lams = 1. / w_ilams[k];
        const double N0_s = w_n0s[k];
        for (int n = 0; n < kRadarBins; ++n) {
          const double x = (double)rt.xam_s * pow(rt.xxDs[n], (double)rt.xbm_s);
          const double cback = rayleigh_soak_wetgraupel(rt, x, (double)rt.xocms, (double)rt.xobms,
                                                        fmelt_s, kMeltOutsideS, rt.m_w_0, rt.m_i_0);
          const double f_d = N0_s * pow(rt.xxDs[n], (double)rt.xmu_s) * exp(-lams * rt.xxDs[n]);
          eta = eta + f_d * cback * rt.simpson[n] * rt.xdts[n];
        }
        w_zes[k] = (float)(rt.lamda4 / (rt.PI5 * rt.K_w) * eta);  // SNGL(...)
      }
    }
  }

  // l.1799-1801 and wsm5 l.214: dBZ = 10*log10((ze_rain+ze_snow)*1.d18), MAX(-35., dBZ)
  for (int k = nk - 1; k >= 0; --k) {
    const float ze = (float)w_zer[k] + (float)w_zes[k];
    const float dBZ = (float)(10. * log10((double)ze * 1.e18));
    a.refl[k] = fmax2(-35.f, dBZ);
  }
}

}  // inline namespace phys_<mode>
}  // namespace wsm5
}  // namespace wrfgpu
