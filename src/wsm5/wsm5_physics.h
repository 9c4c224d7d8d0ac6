// wsm5_physics.h - the WSM5 column physics, one small WRFGPU_HD function per WRF step.
//
// Mirrors WRF v4.7.1 phys/module_mp_wsm5.F (the normal module, not module_mp_wsm5_accel.F).
// Line numbers ("l.") refer to that file. Every function reproduces WRF's single-precision
// arithmetic: float literals, expf/logf/sqrtf/powf where WRF writes exp/log/sqrt/**, integer
// powers as products, and the Fortran's left-to-right evaluation order (no reassociation).
// Compiled as __host__ __device__ under nvcc and as plain inline C++ under g++; no CUDA, no
// OpenMP here (design.md).
//
// Layout: a column is accessed through Col/CCol = pointer + stride, 0-based level index
// k = 0 .. nk-1 standing for WRF's kts .. kte. The same type addresses WRF's memory arrays
// (stride = ime-ims+1), a dense device tile (stride = tile width) or column scratch (CPU:
// stride 1; GPU: stride = number of columns, i.e. column-innermost and coalesced).
#pragma once
#include <cmath>
#include <cstddef>

#include "wrfgpu_hd.h"
#include "wsm5_constants.h"

// The physics is instantiated in both numerical modes (wsm5_cpu.cpp is compiled with and
// without fast math). Inline functions of the same name would be merged by the linker (ODR),
// so a strict run could execute fast-math code: the inline namespace phys_strict/phys_fast
// gives each mode its own symbols. Callers use the names unqualified.
#define WRFGPU_WSM5_CAT2_(a, b) a##_##b
#define WRFGPU_WSM5_CAT_(a, b) WRFGPU_WSM5_CAT2_(a, b)
#define WRFGPU_WSM5_PHYS_NS WRFGPU_WSM5_CAT_(phys, WRFGPU_MODE_NS)

namespace wrfgpu {
namespace wsm5 {
inline namespace WRFGPU_WSM5_PHYS_NS {

template <class T>
struct ColT {
  T* p;
  std::ptrdiff_t s;
  WRFGPU_HD T& operator[](int k) const { return p[(std::ptrdiff_t)k * s]; }
};
using Col = ColT<float>;
using CCol = ColT<const float>;

// Fortran MAX/MIN of two reals (inputs are validated finite, so NaN rules do not matter).
WRFGPU_HD float fmax2(float a, float b) { return a > b ? a : b; }
WRFGPU_HD float fmin2(float a, float b) { return a < b ? a : b; }
WRFGPU_HD int imax2(int a, int b) { return a > b ? a : b; }
WRFGPU_HD bool sign_bit(float x) {
#if defined(__CUDA_ARCH__)
  return signbit(x);
#else
  return std::signbit(x);
#endif
}

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

// ---------------------------------------------------------------------------------------
// A team of threads that shares one column (EAMxx-style team policy). The CPU backend runs a
// column with SerialTeam (one member, sync does nothing); the GPU runs it with a few lanes of
// a warp (WarpTeam in wsm5_gpu.cu), each member taking levels rank+1, rank+1+size, ... of the
// per-level loops, and member 0 alone running the loops that are recurrences in WRF.
struct SerialTeam {
  WRFGPU_HD int rank() const { return 0; }
  WRFGPU_HD int size() const { return 1; }
  WRFGPU_HD void sync() const {}
};

// ---------------------------------------------------------------------------------------
// nislfv_rain_plm (l.1417-1653): forward semi-Lagrangian sedimentation with a monotone
// piecewise-linear remap (Juang & Hong). One column, k = 1 at the bottom. Written with
// WRF's 1-based indices (A1 adapts the 0-based Col) so it can be read next to the Fortran.
// Reproduced as is, including the loss of hydrometeors in the top layers (no arrival cell is
// found above the top interface) and the PCM/PLM mismatch of the surface precipitation.
// The arrays that more than one level's computation reads. WRF's wd (the departure speed) is
// the input wwl itself, and its wa, qr and qn are each used by their own level only, so they
// are locals here (qn goes straight into rql).
struct NislfvScratch {
  Col ww, was;                           // km
  Col wi, zi, za, dza, qa, qmi, qpi;     // km+1
  Col kb, kt;                            // km: the remap's source levels (small integers)
};
constexpr int kNislfvArrays = 11;

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

// Process rates of one cell (kgkg-1s-1), zeroed at the start of each minor loop (l.615-636).
struct Rates {
  float prevp = 0.f, psdep = 0.f, praut = 0.f, psaut = 0.f, pracw = 0.f, psaci = 0.f;
  float psacw = 0.f, pigen = 0.f, pidep = 0.f, pcond = 0.f, psevp = 0.f;
};

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

// ---------------------------------------------------------------------------------------
// Column driver: wsm5 (l.160-197) + wsm52D (l.281-1236) for one column (i,j).
struct ColumnArgs {
  Col th, q, qc, qr, qi, qs;  // inout
  CCol den, pii, p, delz;     // in
  float* rain;                // inout
  float* rainncv;             // out (zeroed inside)
  float* sr;                  // out
  float* snow;                // inout, may be null (WRF: OPTIONAL)
  float* snowncv;             // out, may be null (WRF: OPTIONAL)
};

struct ColumnScratch {
  Col t, cpm, xl, denfac, qs1, qs2, rh1, rh2, workr, works, denqr, denqs, denqi, work1c, rslope_r;
  NislfvScratch nis;
};
constexpr int kColumnArrays = 15;
constexpr int kScratchArrays = kColumnArrays + kNislfvArrays;  // each of nk+1 floats

// Scratch of one column: array a starts at base + a*array_pitch, level k at + k*stride.
// CPU: stride 1, array_pitch nk+1. GPU: base = scratch + column, stride = ncols,
// array_pitch = (nk+1)*ncols (column-innermost, coalesced).
WRFGPU_HD NislfvScratch nislfv_scratch(float* base, std::ptrdiff_t stride,
                                       std::ptrdiff_t array_pitch) {
  NislfvScratch n;
  Col* order[kNislfvArrays] = {&n.ww, &n.was, &n.wi,  &n.zi, &n.za, &n.dza,
                               &n.qa, &n.qmi, &n.qpi, &n.kb, &n.kt};
  for (int a = 0; a < kNislfvArrays; ++a) *order[a] = Col{base + (std::ptrdiff_t)a * array_pitch, stride};
  return n;
}
WRFGPU_HD ColumnScratch column_scratch(float* base, std::ptrdiff_t stride,
                                       std::ptrdiff_t array_pitch) {
  ColumnScratch s;
  Col* order[kColumnArrays] = {&s.t,     &s.cpm,   &s.xl,    &s.denfac, &s.qs1,
                               &s.qs2,   &s.rh1,   &s.rh2,   &s.workr,  &s.works,
                               &s.denqr, &s.denqs, &s.denqi, &s.work1c, &s.rslope_r};
  for (int a = 0; a < kColumnArrays; ++a) *order[a] = Col{base + (std::ptrdiff_t)a * array_pitch, stride};
  s.nis = nislfv_scratch(base + (std::ptrdiff_t)kColumnArrays * array_pitch, stride, array_pitch);
  return s;
}

// Number of minor loops and their length (l.488-490).
WRFGPU_HD int minor_loops(float delt) {
  const int nx = (int)lroundf(delt / param::dtcldcr);  // nint: round half away from zero
  return imax2(nx, 1);
}
WRFGPU_HD float minor_dt(float delt) {
  const int loops = minor_loops(delt);
  float dtcld = delt / (float)loops;
  if (delt <= param::dtcldcr) dtcld = delt;
  return dtcld;
}

// The column driver is cut into phases so that the GPU can run the cell-local ones with one
// thread per cell (i,k) and only the sedimentation with one thread per column (and species).
// Each *_cell function does, for one level k, exactly the operations the corresponding WRF
// loop does for that level; the *_column functions are WRF's column-serial pieces. The CPU
// calls them in WRF's order (wsm5_column); the GPU calls the same functions from separate
// kernels. Every operation and its operands are the same, so both give the same bits.

// Phase "begin", once per call (wsm5 l.161-168, wsm52D l.450-471, l.510-516).
// The *_cell functions read all their inputs first and write their results last: on the GPU
// the arrays may alias as far as the compiler knows, and a load after a store waits for it
// (a chain of memory round trips per thread; the fallspeed kernel was 80% such stalls).
struct BeginCell {
  float t, qc, qr, qi, qs, cpm, xl, denfac;
  unsigned clipped;  // bit n: the n-th of qc, qr, qi, qs changed (it had its sign bit set)
};
WRFGPU_HD BeginCell begin_values(const Constants& c, float th, float pii, float q, float qc,
                                 float qr, float qi, float qs, float den) {
  BeginCell b;
  // wsm5 l.161-168: t = th*pii (qci/qrs are the q arrays themselves here)
  b.t = th * pii;
  // wsm52D l.450-458: padding 0 for negative values generated by dynamics
  b.qc = fmax2(qc, 0.0f);
  b.qr = fmax2(qr, 0.0f);
  b.qi = fmax2(qi, 0.0f);
  b.qs = fmax2(qs, 0.0f);
  // max(x,0.) leaves x >= +0 as it is: only the others need to be written back
  b.clipped = (sign_bit(qc) ? 1u : 0u) | (sign_bit(qr) ? 2u : 0u) | (sign_bit(qi) ? 4u : 0u) |
              (sign_bit(qs) ? 8u : 0u);
  // l.464-471: latent heat and heat capacity, frozen for all minor loops
  b.cpm = cpmcal(c, q);
  b.xl = xlcal(c, b.t);
  b.denfac = denfac_of(c, den);  // l.510-516 (the same value every minor loop)
  return b;
}
WRFGPU_HD void store_begin(const ColumnArgs& a, const ColumnScratch& s, int k, const BeginCell& b) {
  s.t[k] = b.t;
  if (b.clipped & 1u) a.qc[k] = b.qc;
  if (b.clipped & 2u) a.qr[k] = b.qr;
  if (b.clipped & 4u) a.qi[k] = b.qi;
  if (b.clipped & 8u) a.qs[k] = b.qs;
  s.cpm[k] = b.cpm; s.xl[k] = b.xl; s.denfac[k] = b.denfac;
}
WRFGPU_HD void wsm5_begin_cell(const Constants& c, const ColumnArgs& a, const ColumnScratch& s,
                               int k) {
  store_begin(a, s, k, begin_values(c, a.th[k], a.pii[k], a.q[k], a.qc[k], a.qr[k], a.qi[k],
                                    a.qs[k], a.den[k]));
}
// l.478-484: initialise the surface rain, snow of the column; *tstepsnow is WRF's local.
WRFGPU_HD void wsm5_begin_column(const ColumnArgs& a, float* tstepsnow) {
  *a.rainncv = 0.f;
  if (a.snow != nullptr && a.snowncv != nullptr) *a.snowncv = 0.f;
  *a.sr = 0.f;
  *tstepsnow = 0.f;
}

// Minor loop, phase 1: saturation at the start of the minor loop (l.544-606) and the fall
// speeds of rain and snow (l.653-669).
// workr (species 0, rain) or works (1, snow) of one level (l.653-669).
WRFGPU_HD float fall_speed_of(const Constants& c, int species, float q, float den, float denfac,
                              float t) {
  if (q <= 0.0f) return 0.0f;
  return species == 0 ? slope_wsm5_rain(c, q, den, denfac).vt
                      : slope_wsm5_snow(c, q, den, denfac, t).vt;
}
// fall_speeds false: saturation only (the GPU's team sedimentation computes the fall speeds
// and den*q of its column itself, with fall_speed_of and the same product).
WRFGPU_HD void fallspeed_values(const Constants& c, const ColumnScratch& s, int k, float t,
                                float p, float q, float qr, float qs, float den, float denfac,
                                bool fall_speeds = true) {
  const Saturation sat = saturation(c, t, p, q);
  s.qs1[k] = sat.qs1; s.qs2[k] = sat.qs2; s.rh1[k] = sat.rh1; s.rh2[k] = sat.rh2;
  if (!fall_speeds) return;
  s.workr[k] = fall_speed_of(c, 0, qr, den, denfac, t);
  s.works[k] = fall_speed_of(c, 1, qs, den, denfac, t);
  s.denqr[k] = den * qr;
  s.denqs[k] = den * qs;
}
WRFGPU_HD void wsm5_fallspeed_cell(const Constants& c, const ColumnArgs& a,
                                   const ColumnScratch& s, int k, bool fall_speeds = true) {
  fallspeed_values(c, s, k, s.t[k], a.p[k], a.q[k], a.qr[k], a.qs[k], a.den[k], s.denfac[k],
                   fall_speeds);
}
// The first minor loop's phase 1 with the "begin" phase before it, for one cell (the GPU's
// first fallspeed kernel): the values begin stores are the ones fallspeed then reads.
WRFGPU_HD void wsm5_begin_fallspeed_cell(const Constants& c, const ColumnArgs& a,
                                         const ColumnScratch& s, int k, bool fall_speeds = true) {
  const float q = a.q[k], p = a.p[k], den = a.den[k];
  const BeginCell b = begin_values(c, a.th[k], a.pii[k], q, a.qc[k], a.qr[k], a.qi[k], a.qs[k], den);
  store_begin(a, s, k, b);
  fallspeed_values(c, s, k, b.t, p, q, b.qr, b.qs, den, b.denfac, fall_speeds);
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

// Phase 3: second slope_wsm5 (l.692-693), psmlt (l.694-725) and the ice fall speed
// (l.729-758); all local to the cell.
WRFGPU_HD void wsm5_melt_cell(const Constants& c, float dtcld, const ColumnArgs& a,
                              const ColumnScratch& s, int k) {
  const float den = a.den[k], p = a.p[k], qi = a.qi[k], denfac = s.denfac[k], cpm = s.cpm[k];
  float t = s.t[k], qr = a.qr[k], qs = a.qs[k];
  const Slope rn = slope_wsm5_rain(c, qr, den, denfac);
  // the snow slope enters only psmlt, i.e. where snow melts (WRF computes it everywhere)
  Slope sn{};
  if (t > c.t0c && qs > 0.f) sn = slope_wsm5_snow(c, qs, den, denfac, t);
  psmlt_cell(c, dtcld, cpm, den, p, sn, t, qr, qs);
  s.rslope_r[k] = rn.rslope;
  s.t[k] = t; a.qr[k] = qr; a.qs[k] = qs;
  s.work1c[k] = ice_fall_speed(c, den, qi);
  s.denqi[k] = den * qi;
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

// Phase 5: everything below is local to the cell (l.787-1196); with last, also wsm5
// l.186-192 (th = t/pii) after the final minor loop.
WRFGPU_HD void wsm5_local_cell(const Constants& c, float dtcld, const ColumnArgs& a,
                               const ColumnScratch& s, int k, bool last) {
  const float rdtcld = 1.f / dtcld;
  const float den = a.den[k], p = a.p[k], cpm = s.cpm[k], xl = s.xl[k];
  const float denfac = s.denfac[k], rslope_r = s.rslope_r[k];
  const float qs1 = s.qs1[k], qs2 = s.qs2[k], rh1 = s.rh1[k], rh2 = s.rh2[k];
  const float pii = last ? a.pii[k] : 1.f;
  float t = s.t[k], q = a.q[k], qc = a.qc[k], qi = a.qi[k], qr = a.qr[k], qs = a.qs[k];
  instantaneous_cell(c, dtcld, cpm, xl, den, rslope_r, t, qc, qi, qr, qs);
  // third slope_wsm5 (l.843-849)
  const Slope rn = slope_wsm5_rain(c, qr, den, denfac);
  const Slope sn = slope_wsm5_snow(c, qs, den, denfac, t);
  // diffac / venfac (l.855-874), with qs from the start of the minor loop. WRF evaluates them
  // for every cell; they enter only prevp (qr > 0), pidep (qi > 0), psdep and psevp (qs > 0),
  // so a cell without rain, snow or ice skips them (the 1.f is never read).
  const bool rain_or_snow = qr > 0.f || qs > 0.f;
  const float work1_1 = rain_or_snow ? diffac(c, xl, p, t, den, qs1) : 1.f;
  const float work1_2 = (qi > 0.f || qs > 0.f) ? diffac(c, c.xls, p, t, den, qs2) : 1.f;
  const float work2 = rain_or_snow ? venfac(c, p, t, den) : 1.f;
  Rates r;
  warm_rain(c, dtcld, q, qc, qr, qs1, rh1, denfac, work1_1, work2, rn, r);
  cold_rain(c, dtcld, rdtcld, t, q, qc, qi, qs, den, denfac, qs2, rh1, rh2,
            work1_1, work1_2, work2, sn, r);
  limit_and_update(c, dtcld, cpm, xl, r, t, q, qc, qi, qr, qs);
  pcond_cell(c, dtcld, cpm, xl, p, t, q, qc, r);
  // padding for small values (l.1180-1186)
  if (qc <= c.qmin) qc = 0.0f;
  if (qi <= c.qmin) qi = 0.0f;
  s.t[k] = t; a.q[k] = q; a.qc[k] = qc; a.qi[k] = qi; a.qr[k] = qr; a.qs[k] = qs;
  if (last) a.th[k] = t / pii;
}

// wsm5 (l.160-197) + wsm52D (l.281-1236) for one column (i,j), in WRF's order.
WRFGPU_HD void wsm5_column(const Constants& c, int nk, float delt, const ColumnArgs& a,
                           const ColumnScratch& s) {
  for (int k = 0; k < nk; ++k) wsm5_begin_cell(c, a, s, k);
  float tstepsnow;
  wsm5_begin_column(a, &tstepsnow);
  const int loops = minor_loops(delt);
  const float dtcld = minor_dt(delt);
  for (int loop = 1; loop <= loops; ++loop) {
    for (int k = 0; k < nk; ++k) wsm5_fallspeed_cell(c, a, s, k);
    const float delqrs1 = wsm5_sediment_rain_snow_column(c, nk, dtcld, a, s, s.nis, 0);
    const float delqrs2 = wsm5_sediment_rain_snow_column(c, nk, dtcld, a, s, s.nis, 1);
    for (int k = nk - 1; k >= 0; --k) wsm5_melt_cell(c, dtcld, a, s, k);
    wsm5_sediment_ice_column(c, nk, dtcld, a, s, s.nis, delqrs1, delqrs2, &tstepsnow);
    for (int k = 0; k < nk; ++k) wsm5_local_cell(c, dtcld, a, s, k, loop == loops);
  }
}

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
