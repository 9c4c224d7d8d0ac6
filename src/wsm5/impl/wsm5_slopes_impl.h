// wsm5_slopes_impl.h - slopes of the rain and snow size distributions and their mass-weighted
// fall speeds.
//
// Mirrors WRF v4.7.1 phys/module_mp_wsm5.F: slope_wsm5 (l.1263-1324), called by wsm52D before
// the sedimentation (l.655), before psmlt (l.690) and before the warm and cold rain processes
// (l.849); slope_rain (l.1326-1367) and slope_snow (l.1369-1415), called by nislfv_rain_plm
// for the arrival fall speeds (l.1538-1540).
//
// Part of wsm5_physics.h, which includes the impl files in dependency order; callers include
// wsm5_physics.h. Included on its own, this file includes wsm5_physics.h first, which brings
// in this file (inside the guard below) where it belongs.
#include "../wsm5_physics.h"
#ifndef WRFGPU_WSM5_SLOPES_IMPL_H_
#define WRFGPU_WSM5_SLOPES_IMPL_H_

namespace wrfgpu {
namespace wsm5 {
inline namespace WRFGPU_PHYS_NS {

// ---------------------------------------------------------------------------------------
// Slopes of the size distributions and mass-weighted fall speeds.
struct Slope {
  float rslope, rslopeb, rslope2, rslope3, vt;
};
// slope_wsm5, rain part (l.1263-1324): rslopeb = exp(log(rslope)*bvtr).
WRFGPU_HD Slope slope_wsm5_rain(const Constants& c, float qr, float den, float denfac) {
  Slope s;
  if (qr <= param::qcrmin) {
    s.rslope = c.rslopermax;
    s.rslopeb = c.rsloperbmax;
    s.rslope2 = c.rsloper2max;
    s.rslope3 = c.rsloper3max;
  } else {
    s.rslope = 1.f / sqrtf(sqrtf(c.pidn0r / (qr * den)));  // 1./lamdar(qr,den)
    s.rslopeb = expf(logf(s.rslope) * param::bvtr);
    s.rslope2 = s.rslope * s.rslope;
    s.rslope3 = s.rslope2 * s.rslope;
  }
  s.vt = c.pvtr * s.rslopeb * denfac;
  if (qr <= 0.0f) s.vt = 0.0f;
  return s;
}
// slope_wsm5, snow part (l.1294-1320): n0sfac with slope_wsm5's local t0c=273.15.
WRFGPU_HD Slope slope_wsm5_snow(const Constants& c, float qs, float den, float denfac, float t) {
  Slope s;
  if (qs <= param::qcrmin) {
    s.rslope = c.rslopesmax;
    s.rslopeb = c.rslopesbmax;
    s.rslope2 = c.rslopes2max;
    s.rslope3 = c.rslopes3max;
  } else {
    // n0sfac enters only here: evaluated where snow is (WRF evaluates it everywhere)
    const float n0sfac = n0sfac_of(param::t0c_slope - t);
    s.rslope = 1.f / sqrtf(sqrtf(c.pidn0s * n0sfac / (qs * den)));  // 1./lamdas(qs,den,n0sfac)
    s.rslopeb = expf(logf(s.rslope) * param::bvts);
    s.rslope2 = s.rslope * s.rslope;
    s.rslope3 = s.rslope2 * s.rslope;
  }
  s.vt = c.pvts * s.rslopeb * denfac;
  if (qs <= 0.0f) s.vt = 0.0f;
  return s;
}
// slope_rain (l.1326-1367): as slope_wsm5 but rslopeb = rslope**bvtr (powf). Only vt is used.
WRFGPU_HD float slope_rain_vt(const Constants& c, float qr, float den, float denfac) {
  float rslopeb;
  if (qr <= param::qcrmin) {
    rslopeb = c.rsloperbmax;
  } else {
    const float rslope = 1.f / sqrtf(sqrtf(c.pidn0r / (qr * den)));
    rslopeb = powf(rslope, param::bvtr);
  }
  float vt = c.pvtr * rslopeb * denfac;
  if (qr <= 0.0f) vt = 0.0f;
  return vt;
}
// slope_snow (l.1369-1415): rslopeb = rslope**bvts (powf), local t0c. Only vt is used.
WRFGPU_HD float slope_snow_vt(const Constants& c, float qs, float den, float denfac, float t) {
  float rslopeb;
  if (qs <= param::qcrmin) {
    rslopeb = c.rslopesbmax;
  } else {
    const float n0sfac = n0sfac_of(param::t0c_slope - t);
    const float rslope = 1.f / sqrtf(sqrtf(c.pidn0s * n0sfac / (qs * den)));
    rslopeb = powf(rslope, param::bvts);
  }
  float vt = c.pvts * rslopeb * denfac;
  if (qs <= 0.0f) vt = 0.0f;
  return vt;
}

}  // inline namespace phys_<mode>
}  // namespace wsm5
}  // namespace wrfgpu

#endif  // WRFGPU_WSM5_SLOPES_IMPL_H_
