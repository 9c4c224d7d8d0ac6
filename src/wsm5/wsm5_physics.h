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
//
// Files (as E3SM EAMxx's P3, one impl/p3_<process>_impl.hpp per process): this header holds
// what the processes share (Col/CCol, the Fortran MAX/MIN helpers, SerialTeam, the process
// rates, the column's arguments and scratch) and then includes one file per process group,
// each citing the WRF routine and lines it mirrors, in dependency order:
//   impl/wsm5_saturation_impl.h        fpvs inline expansion, cpmcal, xlcal, denfac, n0sfac,
//                                      diffac, venfac
//   impl/wsm5_slopes_impl.h            slope_wsm5, slope_rain, slope_snow
//   impl/wsm5_sedimentation_impl.h     nislfv_rain_plm, Ni, Vice, the sedimentation phases
//   impl/wsm5_melting_impl.h           psmlt; pimlt, pihmf, pihtf, psfrz
//   impl/wsm5_warm_rain_impl.h         praut, pracw, prevp
//   impl/wsm5_cold_rain_impl.h         psaci, psacw, pidep, psdep, pigen, psaut, psevp
//   impl/wsm5_conservation_impl.h      mass conservation of the rates, update of the state
//   impl/wsm5_condensation_impl.h      pcond
//   impl/wsm5_column_impl.h            the phases of a minor loop, wsm5_column
//   impl/wsm5_effective_radius_impl.h  effectRad_wsm5
// The radar reflectivity is wsm5_radar.h. Callers include this header, not the impl files.
#pragma once
#include <cmath>
#include <cstddef>

#include "wrfgpu_hd.h"
#include "wsm5_constants.h"

// The physics is compiled in both numerical modes (wsm5_cpu.cpp and wsm5_gpu.cu, with and
// without fast math): it lives in the mode's inline namespace WRFGPU_PHYS_NS (phys_strict,
// phys_fast; wrfgpu_hd.h), as every file of impl/ and wsm5_radar.h. Callers use the names
// unqualified.
namespace wrfgpu {
namespace wsm5 {
inline namespace WRFGPU_PHYS_NS {

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
// A team of threads that shares one column (EAMxx-style team policy). The CPU backend runs a
// column with SerialTeam (one member, sync does nothing); the GPU runs it with a few lanes of
// a warp (WarpTeam in wsm5_gpu.cu), each member taking levels rank+1, rank+1+size, ... of the
// per-level loops, and member 0 alone running the loops that are recurrences in WRF.
struct SerialTeam {
  WRFGPU_HD int rank() const { return 0; }
  WRFGPU_HD int size() const { return 1; }
  WRFGPU_HD void sync() const {}
};

// The arrays that more than one level's computation reads. WRF's wd (the departure speed) is
// the input wwl itself, and its wa, qr and qn are each used by their own level only, so they
// are locals here (qn goes straight into rql).
struct NislfvScratch {
  Col ww, was;                           // km
  Col wi, zi, za, dza, qa, qmi, qpi;     // km+1
  Col kb, kt;                            // km: the remap's source levels (small integers)
};
constexpr int kNislfvArrays = 11;

// Process rates of one cell (kgkg-1s-1), zeroed at the start of each minor loop (l.615-636).
struct Rates {
  float prevp = 0.f, psdep = 0.f, praut = 0.f, psaut = 0.f, pracw = 0.f, psaci = 0.f;
  float psacw = 0.f, pigen = 0.f, pidep = 0.f, pcond = 0.f, psevp = 0.f;
};

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

}  // inline namespace phys_<mode>
}  // namespace wsm5
}  // namespace wrfgpu

// The processes, in dependency order (each file opens the namespaces above again).
#include "impl/wsm5_saturation_impl.h"
#include "impl/wsm5_slopes_impl.h"
#include "impl/wsm5_sedimentation_impl.h"
#include "impl/wsm5_melting_impl.h"
#include "impl/wsm5_warm_rain_impl.h"
#include "impl/wsm5_cold_rain_impl.h"
#include "impl/wsm5_conservation_impl.h"
#include "impl/wsm5_condensation_impl.h"
#include "impl/wsm5_column_impl.h"
#include "impl/wsm5_effective_radius_impl.h"
