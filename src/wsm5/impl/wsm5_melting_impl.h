// wsm5_melting_impl.h - melting of snow and the instantaneous melting/freezing processes.
//
// Mirrors WRF v4.7.1 phys/module_mp_wsm5.F, wsm52D: psmlt, melting of snow, in the loop after the
// rain/snow sedimentation (l.692-722, with its own inline venfac); pimlt, pihmf, pihtf and psfrz,
// the instantaneous melting of cloud ice and freezing of cloud water and rain (l.782-838).
//
// Part of wsm5_physics.h, which includes the impl files in dependency order; callers include
// wsm5_physics.h. Included on its own, this file includes wsm5_physics.h first, which brings
// in this file (inside the guard below) where it belongs.
#include "../wsm5_physics.h"
#ifndef WRFGPU_WSM5_MELTING_IMPL_H_
#define WRFGPU_WSM5_MELTING_IMPL_H_

namespace wrfgpu {
namespace wsm5 {
inline namespace WRFGPU_PHYS_NS {

// venfac inlined in the psmlt loop (l.705-711), evaluation order as written there.
WRFGPU_HD float venfac_psmlt(const Constants& c, float t, float den, float p) {
  const float visc = 1.496e-6f * (t * sqrtf(t)) / (t + 120.f) / den;
  const float diff = 8.794e-5f * expf(logf(t) * 1.81f) / p;
  return expf(logf(visc / diff) * .3333333f) / sqrtf(visc) * sqrtf(sqrtf(c.den0 / den));
}

// psmlt: melting of snow [HL A33] [RH83 A25] (T>T0: S->R), l.697-723. Updates qs, qr, t.
WRFGPU_HD void psmlt_cell(const Constants& c, float dtcld, float cpm, float den, float p,
                          const Slope& sn, float& t, float& qr, float& qs) {
  if (t > c.t0c && qs > 0.f) {
    const float n0sfac = n0sfac_of(c.t0c - t);
    const float xlf = c.xlf0;
    const float work2 = venfac_psmlt(c, t, den, p);
    const float coeres = sn.rslope2 * sqrtf(sn.rslope * sn.rslopeb);
    const float visc = 1.496e-6f * (t * sqrtf(t)) / (t + 120.f) / den;
    float psmlt = 1.414e3f * visc * den / xlf * (c.t0c - t) * c.pi / 2.f * n0sfac *
                  (c.precs1 * sn.rslope2 + c.precs2 * work2 * coeres) / den;
    const float mstep = 1.f;  // mstep(i) = 1
    psmlt = fmin2(fmax2(psmlt * dtcld / mstep, -qs / mstep), 0.f);
    qs = qs + psmlt;
    qr = qr - psmlt;
    t = t + xlf / cpm * psmlt;
  }
}

// Instantaneous processes (l.781-836): pimlt (T>T0: I->C), pihmf (T<-40C: C->I), pihtf
// Bigg heterogeneous freezing (C->I), psfrz rain freezing (R->S). rslope_r is the rain
// slope of the second slope_wsm5 call (before psmlt), as in WRF.
WRFGPU_HD void instantaneous_cell(const Constants& c, float dtcld, float cpm, float xl, float den,
                                  float rslope_r, float& t, float& qc, float& qi, float& qr,
                                  float& qs) {
  const float supcol = c.t0c - t;
  float xlf = c.xls - xl;
  if (supcol < 0.f) xlf = c.xlf0;
  // pimlt
  if (supcol < 0.f && qi > 0.f) {
    qc = qc + qi;
    t = t - xlf / cpm * qi;
    qi = 0.f;
  }
  // pihmf
  if (supcol > 40.f && qc > 0.f) {
    qi = qi + qc;
    t = t + xlf / cpm * qc;
    qc = 0.f;
  }
  // pihtf
  if (supcol > 0.f && qc > 0.f) {
    const float supcolt = fmin2(supcol, 50.f);
    const float pfrzdtc = fmin2(param::pfrz1 * (expf(param::pfrz2 * supcolt) - 1.f) * den / c.denr /
                                    param::xncr * qc * qc * dtcld,
                                qc);
    qi = qi + pfrzdtc;
    t = t + xlf / cpm * pfrzdtc;
    qc = qc - pfrzdtc;
  }
  // psfrz
  if (supcol > 0.f && qr > 0.f) {
    const float supcolt = fmin2(supcol, 50.f);
    float temp = rslope_r;
    temp = temp * temp * temp * temp * temp * temp * temp;
    const float pfrzdtr = fmin2(20.f * (c.pi * c.pi) * param::pfrz1 * param::n0r * c.denr / den *
                                    (expf(param::pfrz2 * supcolt) - 1.f) * temp * dtcld,
                                qr);
    qs = qs + pfrzdtr;
    t = t + xlf / cpm * pfrzdtr;
    qr = qr - pfrzdtr;
  }
}

}  // inline namespace phys_<mode>
}  // namespace wsm5
}  // namespace wrfgpu

#endif  // WRFGPU_WSM5_MELTING_IMPL_H_
