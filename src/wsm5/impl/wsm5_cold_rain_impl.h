// wsm5_cold_rain_impl.h - the cold rain processes.
//
// Mirrors WRF v4.7.1 phys/module_mp_wsm5.F, wsm52D: "cold rain processes" (l.924-1059): psaci,
// psacw, pidep, psdep, pigen, psaut (T<T0) and psevp (T>T0).
//
// Part of wsm5_physics.h, which includes the impl files in dependency order; callers include
// wsm5_physics.h. Included on its own, this file includes wsm5_physics.h first, which brings
// in this file (inside the guard below) where it belongs.
#include "../wsm5_physics.h"
#ifndef WRFGPU_WSM5_COLD_RAIN_IMPL_H_
#define WRFGPU_WSM5_COLD_RAIN_IMPL_H_

namespace wrfgpu {
namespace wsm5 {
inline namespace WRFGPU_PHYS_NS {

// Cold rain processes (l.938-1059): psaci, psacw, pidep, psdep, pigen, psaut (T<T0) and
// psevp (T>T0), with the ifsat saturation guard.
WRFGPU_HD void cold_rain(const Constants& c, float dtcld, float rdtcld, float t, float q,
                         float qc, float qi, float qs, float den, float denfac, float qs2,
                         float rh1, float rh2, float work1_1, float work1_2, float work2,
                         const Slope& sn, Rates& r) {
  using namespace param;
  const float supcol = c.t0c - t;
  const float supsat = fmax2(q, c.qmin) - qs2;
  const float satdt = supsat / dtcld;
  int ifsat = 0;
  // WRF evaluates n0sfac, xni and eacrs for every cell; they enter only the rates of cells
  // with snow (n0sfac) or ice (xni, eacrs), so only those cells evaluate them: same values,
  // fewer exp/log/sqrt where the air is dry.
  const float n0sfac = qs > 0.f ? n0sfac_of(supcol) : 1.f;  // psaci, psacw, psdep: qs > 0
  const float xni = qi > 0.f ? xni_of(c, den, qi) : 0.f;    // psaci, pidep: qi > 0
  if (supcol > 0.f) {
    if (qs > qcrmin && qi > c.qmin) {
      const float eacrs = expf(0.07f * (-supcol));
      const float xmi = den * qi / xni;
      const float diameter = fmin2(dicon * sqrtf(xmi), dimax);
      const float vt2i = 1.49e4f * powf(diameter, 1.31f);
      const float vt2s = c.pvts * sn.rslopeb * denfac;
      // psaci: accretion of cloud ice by snow [HDC 10] (T<T0: I->S)
      const float acrfac = 2.f * sn.rslope3 + 2.f * diameter * sn.rslope2 +
                           diameter * diameter * sn.rslope;
      r.psaci = c.pi * qi * eacrs * n0s * n0sfac * fabsf(vt2s - vt2i) * acrfac / 4.f;
    }
  }
  // psacw: accretion of cloud water by snow [HL A7] [LFO 24]
  if (qs > qcrmin && qc > c.qmin) {
    r.psacw = fmin2(c.pacrc * n0sfac * sn.rslope3 * sn.rslopeb * qc * denfac, qc * rdtcld);
  }
  if (supcol > 0.f) {
    // pidep: deposition/sublimation of ice [HDC 9]
    if (qi > 0.f && ifsat != 1) {
      const float xmi = den * qi / xni;
      const float diameter = dicon * sqrtf(xmi);
      r.pidep = 4.f * diameter * xni * (rh2 - 1.f) / work1_2;
      const float supice = satdt - r.prevp;
      if (r.pidep < 0.f) {
        r.pidep = fmax2(fmax2(r.pidep, satdt * .5f), supice);
        r.pidep = fmax2(r.pidep, -qi * rdtcld);
      } else {
        r.pidep = fmin2(fmin2(r.pidep, satdt * .5f), supice);
      }
      if (fabsf(r.prevp + r.pidep) >= fabsf(satdt)) ifsat = 1;
    }
    // psdep: deposition/sublimation of snow [HDC 14]
    if (qs > 0.f && ifsat != 1) {
      const float coeres = sn.rslope2 * sqrtf(sn.rslope * sn.rslopeb);
      r.psdep = (rh2 - 1.f) * n0sfac * (c.precs1 * sn.rslope2 + c.precs2 * work2 * coeres) /
                work1_2;
      const float supice = satdt - r.prevp - r.pidep;
      if (r.psdep < 0.f) {
        r.psdep = fmax2(r.psdep, -qs * rdtcld);
        r.psdep = fmax2(fmax2(r.psdep, satdt * .5f), supice);
      } else {
        r.psdep = fmin2(fmin2(r.psdep, satdt * .5f), supice);
      }
      if (fabsf(r.prevp + r.pidep + r.psdep) >= fabsf(satdt)) ifsat = 1;
    }
    // pigen: nucleation of ice from vapour [HL A50] [HDC 7-8]
    if (supsat > 0.f && ifsat != 1) {
      const float supice = satdt - r.prevp - r.pidep - r.psdep;
      const float xni0 = 1.e3f * expf(0.1f * supcol);
      const float roqi0 = 4.92e-11f * expf(logf(xni0) * 1.33f);
      r.pigen = fmax2(0.f, (roqi0 / den - fmax2(qi, 0.f)) * rdtcld);
      r.pigen = fmin2(fmin2(r.pigen, satdt), supice);
    }
    // psaut: aggregation of ice to snow [HDC 12]
    if (qi > 0.f) {
      const float qimax = c.roqimax / den;
      r.psaut = fmax2(0.f, (qi - qimax) * rdtcld);
    }
  }
  // psevp: evaporation of melting snow [HL A35] [RH83 A27] (T>T0: S->V)
  if (supcol < 0.f) {
    if (qs > 0.f && rh1 < 1.f) r.psevp = r.psdep * work1_2 / work1_1;
    r.psevp = fmin2(fmax2(r.psevp, -qs * rdtcld), 0.f);
  }
}

}  // inline namespace phys_<mode>
}  // namespace wsm5
}  // namespace wrfgpu

#endif  // WRFGPU_WSM5_COLD_RAIN_IMPL_H_
