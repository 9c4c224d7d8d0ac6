// wsm5_conservation_impl.h - mass conservation of the process rates and the update of the
// state.
//
// Mirrors WRF v4.7.1 phys/module_mp_wsm5.F, wsm52D: "check mass conservation of generation terms
// and feedback to the large scale" (l.1061-1178): the rates of the warm and cold rain processes
// are limited by the mass available, then q, qc, qr, qi, qs and t are updated.
//
// Part of wsm5_physics.h, which includes the impl files in dependency order; callers include
// wsm5_physics.h. Included on its own, this file includes wsm5_physics.h first, which brings
// in this file (inside the guard below) where it belongs.
#include "../wsm5_physics.h"
#ifndef WRFGPU_WSM5_CONSERVATION_IMPL_H_
#define WRFGPU_WSM5_CONSERVATION_IMPL_H_

namespace wrfgpu {
namespace wsm5 {
inline namespace WRFGPU_PHYS_NS {

// Mass-conservation limiting of the rates and update of q, qc, qr, qi, qs, t (l.1066-1185).
WRFGPU_HD void limit_and_update(const Constants& c, float dtcld, float cpm, float xl, Rates& r,
                                float& t, float& q, float& qc, float& qi, float& qr, float& qs) {
  if (t <= c.t0c) {
    // cloud water
    float value = fmax2(c.qmin, qc);
    float source = (r.praut + r.pracw + r.psacw) * dtcld;
    if (source > value) {
      const float factor = value / source;
      r.praut = r.praut * factor;
      r.pracw = r.pracw * factor;
      r.psacw = r.psacw * factor;
    }
    // cloud ice
    value = fmax2(c.qmin, qi);
    source = (r.psaut + r.psaci - r.pigen - r.pidep) * dtcld;
    if (source > value) {
      const float factor = value / source;
      r.psaut = r.psaut * factor;
      r.psaci = r.psaci * factor;
      r.pigen = r.pigen * factor;
      r.pidep = r.pidep * factor;
    }
    // rain
    value = fmax2(c.qmin, qr);
    source = (-r.praut - r.pracw - r.prevp) * dtcld;
    if (source > value) {
      const float factor = value / source;
      r.praut = r.praut * factor;
      r.pracw = r.pracw * factor;
      r.prevp = r.prevp * factor;
    }
    // snow
    value = fmax2(c.qmin, qs);
    source = (-r.psdep - r.psaut - r.psaci - r.psacw) * dtcld;
    if (source > value) {
      const float factor = value / source;
      r.psdep = r.psdep * factor;
      r.psaut = r.psaut * factor;
      r.psaci = r.psaci * factor;
      r.psacw = r.psacw * factor;
    }
    const float work2 = -(r.prevp + r.psdep + r.pigen + r.pidep);
    // update
    q = q + work2 * dtcld;
    qc = fmax2(qc - (r.praut + r.pracw + r.psacw) * dtcld, 0.f);
    qr = fmax2(qr + (r.praut + r.pracw + r.prevp) * dtcld, 0.f);
    qi = fmax2(qi - (r.psaut + r.psaci - r.pigen - r.pidep) * dtcld, 0.f);
    qs = fmax2(qs + (r.psdep + r.psaut + r.psaci + r.psacw) * dtcld, 0.f);
    const float xlf = c.xls - xl;
    const float xlwork2 = -c.xls * (r.psdep + r.pidep + r.pigen) - xl * r.prevp - xlf * r.psacw;
    t = t - xlwork2 / cpm * dtcld;
  } else {
    // cloud water
    float value = fmax2(c.qmin, qc);
    float source = (r.praut + r.pracw + r.psacw) * dtcld;
    if (source > value) {
      const float factor = value / source;
      r.praut = r.praut * factor;
      r.pracw = r.pracw * factor;
      r.psacw = r.psacw * factor;
    }
    // rain
    value = fmax2(c.qmin, qr);
    source = (-r.praut - r.pracw - r.prevp - r.psacw) * dtcld;
    if (source > value) {
      const float factor = value / source;
      r.praut = r.praut * factor;
      r.pracw = r.pracw * factor;
      r.prevp = r.prevp * factor;
      r.psacw = r.psacw * factor;
    }
    // snow
    value = fmax2(param::qcrmin, qs);
    source = (-r.psevp) * dtcld;
    if (source > value) {
      const float factor = value / source;
      r.psevp = r.psevp * factor;
    }
    const float work2 = -(r.prevp + r.psevp);
    // update
    q = q + work2 * dtcld;
    qc = fmax2(qc - (r.praut + r.pracw + r.psacw) * dtcld, 0.f);
    qr = fmax2(qr + (r.praut + r.pracw + r.prevp + r.psacw) * dtcld, 0.f);
    qs = fmax2(qs + r.psevp * dtcld, 0.f);
    const float xlwork2 = -xl * (r.prevp + r.psevp);
    t = t - xlwork2 / cpm * dtcld;
  }
}

}  // inline namespace phys_<mode>
}  // namespace wsm5
}  // namespace wrfgpu

#endif  // WRFGPU_WSM5_CONSERVATION_IMPL_H_
