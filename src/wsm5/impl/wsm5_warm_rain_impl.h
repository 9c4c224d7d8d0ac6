// wsm5_warm_rain_impl.h - the warm rain processes.
//
// Mirrors WRF v4.7.1 phys/module_mp_wsm5.F, wsm52D: "warm rain processes" (l.878-923): praut,
// pracw and prevp.
//
// Part of wsm5_physics.h, which includes the impl files in dependency order; callers include
// wsm5_physics.h. Included on its own, this file includes wsm5_physics.h first, which brings
// in this file (inside the guard below) where it belongs.
#include "../wsm5_physics.h"
#ifndef WRFGPU_WSM5_WARM_RAIN_IMPL_H_
#define WRFGPU_WSM5_WARM_RAIN_IMPL_H_

namespace wrfgpu {
namespace wsm5 {
inline namespace WRFGPU_PHYS_NS {

// Warm rain processes (l.884-924): praut [HDC 16], pracw [HL A40], prevp [HDC 14].
WRFGPU_HD void warm_rain(const Constants& c, float dtcld, float q, float qc, float qr,
                         float qs1, float rh1, float denfac, float work1_1, float work2,
                         const Slope& rn, Rates& r) {
  const float supsat = fmax2(q, c.qmin) - qs1;
  const float satdt = supsat / dtcld;
  if (qc > c.qc0) {
    r.praut = c.qck1 * expf(logf(qc) * (7.f / 3.f));
    r.praut = fmin2(r.praut, qc / dtcld);
  }
  if (qr > param::qcrmin && qc > c.qmin) {
    r.pracw = fmin2(c.pacrr * rn.rslope3 * rn.rslopeb * qc * denfac, qc / dtcld);
  }
  if (qr > 0.f) {
    const float coeres = rn.rslope2 * sqrtf(rn.rslope * rn.rslopeb);
    r.prevp = (rh1 - 1.f) * (c.precr1 * rn.rslope2 + c.precr2 * work2 * coeres) / work1_1;
    if (r.prevp < 0.f) {
      r.prevp = fmax2(r.prevp, -qr / dtcld);
      r.prevp = fmax2(r.prevp, satdt / 2.f);
    } else {
      r.prevp = fmin2(r.prevp, satdt / 2.f);
    }
  }
}

}  // inline namespace phys_<mode>
}  // namespace wsm5
}  // namespace wrfgpu

#endif  // WRFGPU_WSM5_WARM_RAIN_IMPL_H_
