// wsm5_condensation_impl.h - condensation and evaporation of cloud water.
//
// Mirrors WRF v4.7.1 phys/module_mp_wsm5.F, wsm52D: the water saturation recomputed after the
// update (fpvs inline expansion, l.1179-1201) and pcond, the saturation adjustment of cloud
// water (l.1203-1222).
//
// Part of wsm5_physics.h, which includes the impl files in dependency order; callers include
// wsm5_physics.h. Included on its own, this file includes wsm5_physics.h first, which brings
// in this file (inside the guard below) where it belongs.
#include "../wsm5_physics.h"
#ifndef WRFGPU_WSM5_CONDENSATION_IMPL_H_
#define WRFGPU_WSM5_CONDENSATION_IMPL_H_

namespace wrfgpu {
namespace wsm5 {
inline namespace WRFGPU_PHYS_NS {

// pcond: condensation/evaporation of cloud water, saturation adjustment [HL A46] [RH83 A6]
// (l.1158-1171), with qs1 recomputed from the updated t (l.1143-1151).
WRFGPU_HD void pcond_cell(const Constants& c, float dtcld, float cpm, float xl, float p, float& t,
                          float& q, float& qc, Rates& r) {
  const float qs1 = qsat_water(c, t, p);
  const float work1 = (fmax2(q, c.qmin) - qs1) / (1.f + xl * xl / (c.rv * cpm) * qs1 / (t * t));
  r.pcond = fmin2(fmax2(work1 / dtcld, 0.f), fmax2(q, 0.f) / dtcld);
  if (qc > 0.f && work1 < 0.f) r.pcond = fmax2(work1, -qc) / dtcld;
  q = q - r.pcond * dtcld;
  qc = fmax2(qc + r.pcond * dtcld, 0.f);
  t = t + r.pcond * xl / cpm * dtcld;
}

}  // inline namespace phys_<mode>
}  // namespace wsm5
}  // namespace wrfgpu

#endif  // WRFGPU_WSM5_CONDENSATION_IMPL_H_
