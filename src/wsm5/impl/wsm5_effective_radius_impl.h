// wsm5_effective_radius_impl.h - effective radii of cloud water, cloud ice and snow.
//
// Mirrors WRF v4.7.1 phys/module_mp_wsm5.F: effectRad_wsm5 (l.1903-1996) as wsm5 calls it after
// the microphysics and clips its results (l.219-241).
//
// Part of wsm5_physics.h, which includes the impl files in dependency order; callers include
// wsm5_physics.h. Included on its own, this file includes wsm5_physics.h first, which brings
// in this file (inside the guard below) where it belongs.
#include "../wsm5_physics.h"
#ifndef WRFGPU_WSM5_EFFECTIVE_RADIUS_IMPL_H_
#define WRFGPU_WSM5_EFFECTIVE_RADIUS_IMPL_H_

namespace wrfgpu {
namespace wsm5 {
inline namespace WRFGPU_PHYS_NS {

// ---------------------------------------------------------------------------------------
// effectRad_wsm5 (l.1903-1998) as called from wsm5 (l.219-238): effective radii of cloud
// water, ice and snow for radiation, after the microphysics, clipped to WRF's bounds.
// t1d = th*pii is recomputed from the updated th, as WRF does. re_* are written for every
// level of the column.
struct EffRadArgs {
  CCol th, pii, qc, qi, qs, den;
  Col re_cloud, re_ice, re_snow;
};
WRFGPU_HD void effect_rad_column(const Constants& c, int nk, const EffRadArgs& a) {
  const float R1 = 1.e-12f, R2 = 1.e-6f;
  const float obmr = 1.0f / 3.0f;  // 1.0/bm_r, bm_r = 3.0
  const float nc0 = 3.e8f;
  bool has_qc = false, has_qi = false, has_qs = false;
  for (int k = 0; k < nk; ++k) {
    const float rho = a.den[k];
    const float rqc = fmax2(R1, a.qc[k] * rho);
    if (rqc > R1) has_qc = true;
    const float rqi = fmax2(R1, a.qi[k] * rho);
    const float ni = xni_of(c, rho, a.qi[k]);
    const float rni = fmax2(R2, ni * rho);
    if (rqi > R1 && rni > R2) has_qi = true;
    const float rqs = fmax2(R1, a.qs[k] * rho);
    if (rqs > R1) has_qs = true;
  }
  for (int k = 0; k < nk; ++k) {
    const float rho = a.den[k];
    float re_qc = RE_QC_BG, re_qi = RE_QI_BG, re_qs = RE_QS_BG;
    const float rqc = fmax2(R1, a.qc[k] * rho);
    const float rqi = fmax2(R1, a.qi[k] * rho);
    const float ni = xni_of(c, rho, a.qi[k]);
    const float rni = fmax2(R2, ni * rho);
    const float rqs = fmax2(R1, a.qs[k] * rho);
    if (has_qc && !(rqc <= R1)) {
      const float lamdac = powf(c.pidnc * nc0 / rqc, obmr);
      re_qc = fmax2(2.51e-6f, fmin2(1.5f * (1.0f / lamdac), 50.e-6f));
    }
    if (has_qi && !(rqi <= R1 || rni <= R2)) {
      const float diai = 11.9f * sqrtf(rqi / ni);
      re_qi = fmax2(10.01e-6f, fmin2(0.75f * 0.163f * diai, 125.e-6f));
    }
    if (has_qs && !(rqs <= R1)) {
      const float t = a.th[k] * a.pii[k];
      const float supcol = c.t0c - t;
      const float n0sfac = n0sfac_of(supcol);
      const float lamdas = sqrtf(sqrtf(c.pidn0s * n0sfac / rqs));
      re_qs = fmax2(25.e-6f, fmin2(0.5f * (1.f / lamdas), 999.e-6f));
    }
    a.re_cloud[k] = fmax2(RE_QC_BG, fmin2(re_qc, 50.e-6f));
    a.re_ice[k] = fmax2(RE_QI_BG, fmin2(re_qi, 125.e-6f));
    a.re_snow[k] = fmax2(RE_QS_BG, fmin2(re_qs, 999.e-6f));
  }
}

}  // inline namespace phys_<mode>
}  // namespace wsm5
}  // namespace wrfgpu

#endif  // WRFGPU_WSM5_EFFECTIVE_RADIUS_IMPL_H_
