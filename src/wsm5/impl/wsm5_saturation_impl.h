// wsm5_saturation_impl.h - saturation and the internal functions of wsm52D.
//
// Mirrors WRF v4.7.1 phys/module_mp_wsm5.F, wsm52D: the statement functions cpmcal and xlcal
// and the functions diffac and venfac of "compute internal functions" (l.453-467; diffac and
// venfac are written out inline at l.852-876), denfac through VREC/VSQRT (l.531-542), the
// inline expansions of fpvs (l.544-606, water only again at l.1179-1201) and the snow intercept
// factor n0sfac (slope_wsm5 l.1295, psmlt l.695, cold rain l.941). "l." = line of that file at
// WRF f15568cc, here and in the comments of each function.
//
// Part of wsm5_physics.h, which includes the impl files in dependency order; callers include
// wsm5_physics.h. Included on its own, this file includes wsm5_physics.h first, which brings
// in this file (inside the guard below) where it belongs.
#include "../wsm5_physics.h"
#ifndef WRFGPU_WSM5_SATURATION_IMPL_H_
#define WRFGPU_WSM5_SATURATION_IMPL_H_

namespace wrfgpu {
namespace wsm5 {
inline namespace WRFGPU_PHYS_NS {

// ---------------------------------------------------------------------------------------
// Saturation: wsm52D's inline expansion of fpvs (l.548-606, WSM_NO_CONDITIONAL_IN_VECTOR
// branch, and l.1132-1152). Water (qs1) and ice/water (qs2) saturation mixing ratios.
WRFGPU_HD float satur_es_term(const Constants& c, float logtr, float tr, float xa, float xb) {
  // psat*exp(logtr*(xa)+xb*(1.-tr))
  return c.psat * expf(logtr * xa + xb * (1.f - tr));
}
WRFGPU_HD float satur_qs_from_es(const Constants& c, float es, float p) {
  es = fmin2(es, 0.99f * p);          // min(qs,0.99*p)
  float qs = c.ep2 * es / (p - es);   // ep2*qs/(p-qs)
  return fmax2(qs, c.qmin);
}
struct Saturation {
  float qs1, qs2, rh1, rh2;
};
// l.560-576: qs(i,k,1:2) and rh(i,k,1:2) at the start of each minor loop.
WRFGPU_HD Saturation saturation(const Constants& c, float t, float p, float q) {
  Saturation s;
  const float xal = (t < c.ttp) ? c.xai : c.xa;  // xal(i)/xbl(i) select (l.562-569)
  const float xbl = (t < c.ttp) ? c.xbi : c.xb;
  const float tr = c.ttp / t;
  const float logtr = logf(tr);
  s.qs1 = satur_qs_from_es(c, satur_es_term(c, logtr, tr, c.xa, c.xb), p);
  s.rh1 = fmax2(q / s.qs1, c.qmin);
  s.qs2 = satur_qs_from_es(c, satur_es_term(c, logtr, tr, xal, xbl), p);
  s.rh2 = fmax2(q / s.qs2, c.qmin);
  return s;
}
// l.1143-1151: water saturation only, recomputed after the process updates (before pcond).
WRFGPU_HD float qsat_water(const Constants& c, float t, float p) {
  const float tr = c.ttp / t;
  const float logtr = logf(tr);
  return satur_qs_from_es(c, satur_es_term(c, logtr, tr, c.xa, c.xb), p);
}

// cpmcal / xlcal statement functions (l.436-437), evaluated once per call (frozen).
WRFGPU_HD float cpmcal(const Constants& c, float q) {
  return c.cpd * (1.f - fmax2(q, c.qmin)) + fmax2(q, c.qmin) * c.cpv;
}
WRFGPU_HD float xlcal(const Constants& c, float t) { return c.xlv0 - c.xlv1 * (t - c.t0c); }

// denfac = sqrt(den0*(1/den)) via VREC (1.e0/x) then VSQRT (l.510-516, frame/libmassv.F).
WRFGPU_HD float denfac_of(const Constants& c, float den) {
  const float rec = 1.e0f / den;
  return sqrtf(rec * c.den0);
}

// n0sfac = max(min(exp(alpha*supcol),n0smax/n0s),1.)  (l.1297, l.696, l.938)
WRFGPU_HD float n0sfac_of(float supcol) {
  return fmax2(fmin2(expf(param::alpha * supcol), param::n0smax_over_n0s), 1.f);
}

// work1(:,:,1|2) = diffac(xl|xls, p, t, den, qs1|qs2), inlined at l.857-866.
WRFGPU_HD float diffac(const Constants& c, float xlat, float p, float t, float den, float qs) {
  return (den * xlat * xlat) * (t + 120.f) * den /
             (1.414e3f * (1.496e-6f * (t * sqrtf(t))) * den * (c.rv * t * t)) +
         p / (qs * (8.794e-5f * expf(logf(t) * 1.81f)));
}
// work2 = venfac(p, t, den), inlined at l.868-872.
WRFGPU_HD float venfac(const Constants& c, float p, float t, float den) {
  return expf(.3333333f * logf((1.496e-6f * (t * sqrtf(t))) * p /
                               ((t + 120.f) * den * (8.794e-5f * expf(logf(t) * 1.81f))))) *
         sqrtf(sqrtf(c.den0 / den)) / sqrtf((1.496e-6f * (t * sqrtf(t))) / ((t + 120.f) * den));
}

}  // inline namespace phys_<mode>
}  // namespace wsm5
}  // namespace wrfgpu

#endif  // WRFGPU_WSM5_SATURATION_IMPL_H_
