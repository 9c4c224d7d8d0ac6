// wsm5_sedimentation_impl.h - sedimentation of rain, snow and cloud ice.
//
// Mirrors WRF v4.7.1 phys/module_mp_wsm5.F: nislfv_rain_plm (l.1417-1659), the forward
// semi-Lagrangian scheme; in wsm52D, the ice crystal number concentration Ni (l.634-644, again
// in the cold rain processes l.946-952) and the ice fall speed Vice (l.723-736); and the
// sedimentation phases of the column driver: "compute the fallout term" for rain and snow
// (l.645-683), for cloud ice (l.737-754) and the surface precipitation of the minor loop
// (l.756-781).
//
// Part of wsm5_physics.h, which includes the impl files in dependency order; callers include
// wsm5_physics.h. Included on its own, this file includes wsm5_physics.h first, which brings
// in this file (inside the guard below) where it belongs.
#include "../wsm5_physics.h"
#ifndef WRFGPU_WSM5_SEDIMENTATION_IMPL_H_
#define WRFGPU_WSM5_SEDIMENTATION_IMPL_H_

namespace wrfgpu {
namespace wsm5 {
inline namespace WRFGPU_PHYS_NS {

// ---------------------------------------------------------------------------------------
// nislfv_rain_plm (l.1417-1653): forward semi-Lagrangian sedimentation with a monotone
// piecewise-linear remap (Juang & Hong). One column, k = 1 at the bottom. Written with
// WRF's 1-based indices (A1 adapts the 0-based Col) so it can be read next to the Fortran.
// Reproduced as is, including the loss of hydrometeors in the top layers (no arrival cell is
// found above the top interface) and the PCM/PLM mismatch of the surface precipitation.
struct A1 {  // 1-based view on a 0-based column
  Col c;
  WRFGPU_HD float& operator()(int k) const { return c[k - 1]; }
};
struct CA1 {
  CCol c;
  WRFGPU_HD const float& operator()(int k) const { return c[k - 1]; }
};

// The remap's search (l.1581-1607) as WRF writes it: for each level k, kb is the first arrival
// cell whose top is at or above zi(k), kt (before its "kt = kt - 1") the first whose bottom is
// at or above zi(k+1), each search starting from max(kb-1,1) / max(kt-1,1) of the level below
// and keeping that start when nothing is found. kbl(k) = 0 marks the levels from WRF's
// "exit intp" on (zi(k) >= za(km+1)), whose qn stays 0. Values are small integers in floats.
WRFGPU_HD void nislfv_find_kbkt_wrf(int km, const A1& zi, const A1& za, const A1& kbl,
                                    const A1& ktl) {
  int kb = 1, kt = 1;
  bool exited = false;
  for (int k = 1; k <= km; ++k) {
    kb = imax2(kb - 1, 1);
    kt = imax2(kt - 1, 1);
    if (exited || zi(k) >= za(km + 1)) {  // exit intp: this level and all above stay 0
      exited = true;
      kbl(k) = 0.0f;
      continue;
    }
    for (int kk = kb; kk <= km; ++kk) {
      if (zi(k) <= za(kk + 1)) {
        kb = kk;
        break;
      }
    }
    for (int kk = kt; kk <= km; ++kk) {
      if (zi(k + 1) <= za(kk)) {
        kt = kk;
        break;
      }
    }
    kt = kt - 1;
    kbl(k) = (float)kb;  // exact: levels are far below 2^24
    ktl(k) = (float)kt;
  }
}

// The same kb and kt, each level searched on its own, for zi that never decreases (dz >= 0).
// The start WRF takes from the level below then changes no result:
//  - kb: a level before the exit (zi(k) < za(km+1)) always finds one, and every kk below the
//    kb of the level below fails the test zi(k) <= za(kk+1) here too (zi(k) >= zi(k-1)); so
//    WRF's kb is the first kk >= 1 that passes.
//  - kt: likewise, when one is found, WRF's is the first kk >= 1 with zi(k+1) <= za(kk). When
//    none is found, none is for any level above either, and WRF keeps its start: from the
//    first such level on, kt follows max(kt-1,1)-1, starting from the kt of the level below
//    that one (1 before level 1).
// A member searches its levels upwards from the results of its previous level (a lower bound,
// by the same argument), marks the levels with no kt, and after a sync resolves those from
// the marks (spare holds the values until every member has read the marks).
template <class Team>
WRFGPU_HD void nislfv_find_kbkt(const Team& tm, int km, const A1& zi, const A1& za,
                                const A1& kbl, const A1& ktl, const A1& spare) {
  const int k0 = 1 + tm.rank(), ks = tm.size();
  int kb_lo = 1, kt_lo = 1;
  for (int k = k0; k <= km; k += ks) {
    // WRF: IF (zi(k) >= za(km+1)) exit intp. Written as !(<) so that NaN heights (a column
    // whose heights overflowed) exit too: the kb search below then always meets
    // zi(k) < za(km+1) and stops at km at the latest, inside the column.
    if (!(zi(k) < za(km + 1))) {  // exit intp
      kbl(k) = 0.0f;
      continue;
    }
    int kb = kb_lo;
    while (!(zi(k) <= za(kb + 1))) ++kb;
    int kt = kt_lo;
    while (kt <= km && !(zi(k + 1) <= za(kt))) ++kt;
    kb_lo = kb;
    kt_lo = kt;
    kbl(k) = (float)kb;
    ktl(k) = kt <= km ? (float)(kt - 1) : -1.0f;  // -1: none found
  }
  tm.sync();
  for (int k = k0; k <= km; k += ks) {
    if (kbl(k) == 0.0f || ktl(k) >= 0.0f) continue;
    int first = k;
    while (first > 1 && ktl(first - 1) < 0.0f) --first;
    int kt = first == 1 ? 1 : (int)ktl(first - 1);
    for (int j = first; j <= k; ++j) kt = imax2(kt - 1, 1) - 1;
    spare(k) = (float)kt;
  }
  tm.sync();
  for (int k = k0; k <= km; k += ks)
    if (kbl(k) != 0.0f && ktl(k) < 0.0f) ktl(k) = spare(k);
}

// rql (den*q, inout) and precip (kg m-2 per dt, out; written by member 0). id: 1 rain, else
// snow (arrival fall speeds); iter: number of mean-speed iterations (0: departure speed only).
//
// Every value is computed by the same expression as in WRF; a team only changes which member
// computes it. Per-level loops are split over the members; WRF's recurrences (interface
// heights, the top-down diffusivity limit of wi, the surface rain-out) run on member 0. The
// remap is cut in two: kb and kt of every level as WRF's loop finds them (nislfv_find_kbkt;
// kb = 0 marks the levels after WRF's "exit intp"), then each member integrates its levels.
// So a team of any size gives the bits of the serial loop.
template <class Team>
WRFGPU_HD void nislfv_rain_plm(const Team& tm, const Constants& c, int km, CCol denl,
                               CCol denfacl, Col tkl, CCol dzl, Col wwl, Col rql, float* precip,
                               float dt, int id, int iter, const NislfvScratch& s) {
  const CA1 dz{dzl}, den{denl}, denfac{denfacl};
  const A1 tk{tkl}, qq{rql}, ww{s.ww}, was{s.was};
  const A1 wi{s.wi}, zi{s.zi}, za{s.za}, dza{s.dza}, qa{s.qa}, qmi{s.qmi}, qpi{s.qpi};
  const A1 kbl{s.kb}, ktl{s.kt};
  const CA1 wd{CCol{wwl.p, wwl.s}};  // WRF's wd: the departure speeds, never modified
  const int k0 = 1 + tm.rank(), ks = tm.size();
  const bool lead = tm.rank() == 0;

  if (lead) *precip = 0.0f;
  // skip for no precipitation for all layers (l.1471-1477); every member sums in WRF's order
  float allold = 0.0f;
  for (int k = 1; k <= km; ++k) allold = allold + qq(k);
  if (allold <= 0.0f) return;
  // departure wind (l.1486: wd = ww, read from wwl here)
  for (int k = k0; k <= km; k += ks) ww(k) = wwl[k - 1];
  // interface heights (l.1480-1483); kbl(km+1), a spare slot, says whether they never
  // decrease (dz >= 0: always for validated input), which the remap search below relies on
  if (lead) {
    zi(1) = 0.0f;
    bool rising = true;
    for (int k = 1; k <= km; ++k) {
      zi(k + 1) = zi(k) + dz(k);
      rising = rising && zi(k + 1) >= zi(k);
    }
    kbl(km + 1) = rising ? 1.0f : 0.0f;
  }
  tm.sync();

  int n = 1;
  for (;;) {  // label 100
    // 3rd-order interpolation of wi (l.1495-1505; the 2nd-order values computed before it in
    // WRF, l.1491-1494, are all overwritten), then "terminate of top of raingroup"
    // (l.1508-1510). For each k the value WRF's statements leave last.
    const float fa1 = 9.f / 16.f, fa2 = 1.f / 16.f;
    for (int k = k0; k <= km + 1; k += ks) {
      float w;
      if (k == km + 1) w = ww(km);
      else if (k == km) w = 0.5f * (ww(km) + ww(km - 1));
      else if (k == 1) w = ww(1);
      else if (k == 2) w = 0.5f * (ww(2) + ww(1));
      else w = fa1 * (ww(k) + ww(k - 1)) - fa2 * (ww(k + 1) + ww(k - 2));
      if (k >= 2 && k <= km && ww(k) == 0.0f) w = ww(k - 1);
      wi(k) = w;
    }
    tm.sync();
    // diffusivity of wi (l.1513-1519): top down, each level limited against the one above.
    // decfl of every level is first computed from the unlimited wi (in za, free until the
    // arrival points); member 0 then walks down and recomputes it only below a level it
    // limited, where WRF's loop sees a changed wi(k+1). The same bits, fewer serial divisions.
    const float con1 = 0.05f;
    for (int k = k0; k <= km; k += ks) za(k) = (wi(k + 1) - wi(k)) * dt / dz(k);
    tm.sync();
    if (lead) {
      bool limited_above = false;
      for (int k = km; k >= 1; --k) {
        const float decfl = limited_above ? (wi(k + 1) - wi(k)) * dt / dz(k) : za(k);
        limited_above = decfl > con1;
        if (limited_above) wi(k) = wi(k + 1) - con1 * dz(k) / dt;
      }
    }
    tm.sync();
    // arrival points (l.1521-1528)
    for (int k = k0; k <= km + 1; k += ks) za(k) = zi(k) - wi(k) * dt;
    tm.sync();
    for (int k = k0; k <= km; k += ks) dza(k) = za(k + 1) - za(k);
    if (lead) dza(km + 1) = zi(km + 1) - za(km + 1);
    tm.sync();
    // deformation at arrival points (l.1531-1535; qr = qa/den where it is used, below)
    for (int k = k0; k <= km; k += ks) qa(k) = qq(k) * dz(k) / dza(k);
    if (lead) qa(km + 1) = 0.0f;
    // arrival terminal velocity and mean of departure/arrival speeds (l.1540-1556)
    if (n <= iter) {
      for (int k = k0; k <= km; k += ks) {
        const float qr = qa(k) / den(k);
        float wa = id == 1 ? slope_rain_vt(c, qr, den(k), denfac(k))
                           : slope_snow_vt(c, qr, den(k), denfac(k), tk(k));
        if (n >= 2) wa = 0.5f * (wa + was(k));
        ww(k) = 0.5f * (wd(k) + wa);
        was(k) = wa;
      }
      n = n + 1;
      tm.sync();
      continue;  // go to 100
    }
    break;
  }
  tm.sync();

  // monotone edge values at the arrival cells (l.1559-1578)
  for (int k = k0; k <= km + 1; k += ks) {
    if (k == 1 || k == km + 1) {
      qpi(k) = qa(k);
      qmi(k) = qa(k);
      continue;
    }
    const float dip = (qa(k + 1) - qa(k)) / (dza(k + 1) + dza(k));
    const float dim = (qa(k) - qa(k - 1)) / (dza(k - 1) + dza(k));
    if (dip * dim <= 0.0f) {
      qmi(k) = qa(k);
      qpi(k) = qa(k);
    } else {
      qpi(k) = qa(k) + 0.5f * (dip + dim) * dza(k);
      qmi(k) = 2.0f * qa(k) - qpi(k);
      if (qpi(k) < 0.0f || qmi(k) < 0.0f) {
        qpi(k) = qa(k);
        qmi(k) = qa(k);
      }
    }
  }

  // remap to the fixed grid (l.1581-1636), part 1: WRF's kb and kt of every level
  if (kbl(km + 1) != 0.0f) {
    nislfv_find_kbkt(tm, km, zi, za, kbl, ktl, was);
  } else if (lead) {
    nislfv_find_kbkt_wrf(km, zi, za, kbl, ktl);
  }
  tm.sync();
  // part 2: the piecewise-linear integral over the arrival cells kb..kt of each level, stored
  // in rql at once (WRF's qn, copied to rql at l.1651; nothing reads rql after qa is made)
  for (int k = k0; k <= km; k += ks) {
    float qn = 0.0f;
    const int kb = (int)kbl(k);
    if (kb == 0) {
      qq(k) = qn;
      continue;
    }
    const int kt = (int)ktl(k);
    if (kt == kb) {
      const float tl = (zi(k) - za(kb)) / dza(kb);
      const float th = (zi(k + 1) - za(kb)) / dza(kb);
      const float tl2 = tl * tl;
      const float th2 = th * th;
      const float qqd = 0.5f * (qpi(kb) - qmi(kb));
      const float qqh = qqd * th2 + qmi(kb) * th;
      const float qql = qqd * tl2 + qmi(kb) * tl;
      qn = (qqh - qql) / (th - tl);
    } else if (kt > kb) {
      const float tl = (zi(k) - za(kb)) / dza(kb);
      const float tl2 = tl * tl;
      float qqd = 0.5f * (qpi(kb) - qmi(kb));
      const float qql = qqd * tl2 + qmi(kb) * tl;
      const float dql = qa(kb) - qql;
      float zsum = (1.f - tl) * dza(kb);
      float qsum = dql * dza(kb);
      if (kt - kb > 1) {
        for (int m = kb + 1; m <= kt - 1; ++m) {
          zsum = zsum + dza(m);
          qsum = qsum + qa(m) * dza(m);
        }
      }
      const float th = (zi(k + 1) - za(kt)) / dza(kt);
      const float th2 = th * th;
      qqd = 0.5f * (qpi(kt) - qmi(kt));
      const float dqh = qqd * th2 + qmi(kt) * th;
      zsum = zsum + th * dza(kt);
      qsum = qsum + dqh * dza(kt);
      qn = qsum / zsum;
    }
    qq(k) = qn;
  }

  // rain out (l.1639-1648)
  if (lead) {
    float pr = 0.0f;
    for (int k = 1; k <= km; ++k) {
      if (za(k) < 0.0f && za(k + 1) < 0.0f) {
        pr = pr + qa(k) * dza(k);
        continue;
      } else if (za(k) < 0.0f && za(k + 1) >= 0.0f) {
        pr = pr + qa(k) * (0.0f - za(k));
        break;
      }
      break;
    }
    *precip = pr;
  }
}
// One thread, the whole column.
WRFGPU_HD void nislfv_rain_plm(const Constants& c, int km, CCol denl, CCol denfacl, Col tkl,
                               CCol dzl, Col wwl, Col rql, float* precip, float dt, int id,
                               int iter, const NislfvScratch& s) {
  nislfv_rain_plm(SerialTeam{}, c, km, denl, denfacl, tkl, dzl, wwl, rql, precip, dt, id, iter, s);
}

// ---------------------------------------------------------------------------------------
// Ice crystal number concentration [HDC 5c] (l.641-647, l.943-946):
// xni = min(max(5.38e7*(den*max(qi,qmin))**0.75, 1e3), 1e6), **0.75 as sqrt(sqrt(x^3)).
WRFGPU_HD float xni_of(const Constants& c, float den, float qi) {
  float temp = den * fmax2(qi, c.qmin);
  temp = sqrtf(sqrtf(temp * temp * temp));
  return fmin2(fmax2(5.38e7f * temp, 1.e3f), 1.e6f);
}

// Ice fall speed Vice [HDC 5a] (l.731-741).
WRFGPU_HD float ice_fall_speed(const Constants& c, float den, float qi) {
  if (qi <= 0.f) return 0.f;
  const float xni = xni_of(c, den, qi);
  const float xmi = den * qi / xni;
  const float diameter = fmax2(fmin2(param::dicon * sqrtf(xmi), param::dimax), 1.e-25f);
  return 1.49e4f * expf(logf(diameter) * 1.31f);
}

// Phase 2, one column and one species (0 rain, 1 snow): sedimentation (l.670-686) and the
// new mixing ratio (l.687-690). Returns WRF's delqrs1 (rain) or delqrs2 (snow). Rain and snow
// are independent here (both read t, den, denfac, delz only), so the GPU runs them at once,
// each with its own nislfv scratch.
template <class Team>
WRFGPU_HD float wsm5_sediment_rain_snow_column(const Team& tm, const Constants& c, int nk,
                                               float dtcld, const ColumnArgs& a,
                                               const ColumnScratch& s, const NislfvScratch& nis,
                                               int species) {
  // one nislfv call site with the species' arrays (a single inlined copy on the GPU)
  const Col w = species == 0 ? s.workr : s.works;
  const Col dq = species == 0 ? s.denqr : s.denqs;
  const Col q = species == 0 ? a.qr : a.qs;
  float delq = 0.f;
  nislfv_rain_plm(tm, c, nk, a.den, CCol{s.denfac.p, s.denfac.s}, s.t, a.delz, w, dq, &delq,
                  dtcld, species + 1, 1, nis);
  for (int k = tm.rank(); k < nk; k += tm.size()) q[k] = fmax2(dq[k] / a.den[k], 0.f);
  return delq;  // meaningful on member 0
}
WRFGPU_HD float wsm5_sediment_rain_snow_column(const Constants& c, int nk, float dtcld,
                                               const ColumnArgs& a, const ColumnScratch& s,
                                               const NislfvScratch& nis, int species) {
  return wsm5_sediment_rain_snow_column(SerialTeam{}, c, nk, dtcld, a, s, nis, species);
}

// Phase 4, one column: sedimentation of cloud ice (l.759-761) and the surface precipitation
// of the minor loop (l.762-782) from the three fluxes of the lowest level.
template <class Team>
WRFGPU_HD void wsm5_sediment_ice_column(const Team& tm, const Constants& c, int nk,
                                        float dtcld, const ColumnArgs& a,
                                        const ColumnScratch& s, const NislfvScratch& nis,
                                        float delqrs1, float delqrs2, float* tstepsnow) {
  const float delz1 = a.delz[0];
  const float fall_r1 = delqrs1 / delz1 / dtcld;  // fall(i,1,1)
  const float fall_s1 = delqrs2 / delz1 / dtcld;  // fall(i,1,2)
  float delqi = 0.f;
  nislfv_rain_plm(tm, c, nk, a.den, CCol{s.denfac.p, s.denfac.s}, s.t, a.delz, s.work1c,
                  s.denqi, &delqi, dtcld, 1, 0, nis);
  for (int k = tm.rank(); k < nk; k += tm.size()) a.qi[k] = fmax2(s.denqi[k] / a.den[k], 0.f);
  if (tm.rank() != 0) return;  // the surface bookkeeping of the column: member 0
  const float fallc1 = delqi / delz1 / dtcld;
  const bool snow_both = a.snow != nullptr && a.snowncv != nullptr;
  const float fallsum = fall_r1 + fall_s1 + fallc1;
  const float fallsum_qsi = fall_s1 + fallc1;
  if (fallsum > 0.f) {
    *a.rainncv = fallsum * delz1 / c.denr * dtcld * 1000.f + *a.rainncv;
    *a.rain = fallsum * delz1 / c.denr * dtcld * 1000.f + *a.rain;
  }
  if (fallsum_qsi > 0.f) {
    *tstepsnow = fallsum_qsi * delz1 / c.denr * dtcld * 1000.f + *tstepsnow;
    if (snow_both) {
      *a.snowncv = fallsum_qsi * delz1 / c.denr * dtcld * 1000.f + *a.snowncv;
      *a.snow = fallsum_qsi * delz1 / c.denr * dtcld * 1000.f + *a.snow;
    }
  }
  if (a.snowncv != nullptr) {
    if (fallsum > 0.f) *a.sr = *a.snowncv / (*a.rainncv + 1.e-12f);
  } else {
    if (fallsum > 0.f) *a.sr = *tstepsnow / (*a.rainncv + 1.e-12f);
  }
}

WRFGPU_HD void wsm5_sediment_ice_column(const Constants& c, int nk, float dtcld,
                                        const ColumnArgs& a, const ColumnScratch& s,
                                        const NislfvScratch& nis, float delqrs1, float delqrs2,
                                        float* tstepsnow) {
  wsm5_sediment_ice_column(SerialTeam{}, c, nk, dtcld, a, s, nis, delqrs1, delqrs2, tstepsnow);
}

}  // inline namespace phys_<mode>
}  // namespace wsm5
}  // namespace wrfgpu

#endif  // WRFGPU_WSM5_SEDIMENTATION_IMPL_H_
