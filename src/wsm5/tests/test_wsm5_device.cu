// test_wsm5_device.cu - device tests of the WSM5 physics, one per function group (the files of
// src/wsm5/impl/ and wsm5_radar.h). Each runs the group's WRFGPU_HD functions on the GPU, one
// thread per input (a cell, a point or a column; bounds-checked, no shared memory, nothing
// but plain loads and stores, so the kernels can be run under compute-sanitizer), and on the
// host over the same inputs, and requires the same bits (memcmp of the results; zeros of
// opposite sign and NaNs are counted and printed, see same_bits); the first mismatch is
// reported with its inputs. Skipped when no GPU is visible (WRFGPU_REQUIRE_GPU).
//
// Compiled by nvcc with the flags of the strict GPU backends (NVCC_STRICT: no FMA contraction,
// IEEE division and square root, no flush to zero), the host half by g++ without FMA
// contraction or fast math (-Xcompiler -ffp-contract=off,-fno-fast-math, Makefile): both halves
// must perform the same IEEE operations in the same order.
//
// One libm for both halves. CUDA's expf, logf, powf, exp, log, pow, log10, log1p, hypot and
// atan2 are not glibc's: they differ by an ulp or so on some arguments, which is why the
// production GPU and CPU results differ slightly (docs/wsm5.md; Wsm5Gpu.* hold them to
// tolerances). Here the physics' calls of these functions go to one implementation (tests/device_libm.h),
// written with IEEE double operations only (+ - * /, sqrt, floor, frexp, ldexp, copysign),
// which gives the same bits on both sides. What is left to compare is the compiled physics
// itself: an FMA contraction, a reassociation, another branch or another constant on one side
// shows as a difference. The redirection is by name lookup: the functions are declared in
// namespace wrfgpu::wsm5 before the physics headers, so the physics' unqualified calls find
// them before the global ones; qualified calls (std::sqrt and std::log of a std::complex, in
// wsm5_radar.h's host branch of c_sqrt and c_log) are not redirected. sqrtf/sqrt, fabsf/fabs,
// fma, copysign and lroundf are exact on both sides and stay as they are.
// This file's copy of the physics therefore lives in its own physics namespace
// (phys_strict_samelibm, from WRFGPU_MODE_NS strict_samelibm, below): sharing phys_strict's
// symbols with the host tests and the library would let the linker keep either copy of an
// inline function (docs/design.md, "Numerical modes").
//
// Radar: c_sqrt and c_log are glibc's csqrt/clog on the host and the ports csqrt_port/clog_port
// on the device by design (wsm5_radar.h). The ports are compared bitwise by calling them on
// both sides; refl10cm_column is compared bitwise at every level except those that go through
// the melting-snow branch (rayleigh_soak_wetgraupel, which calls c_sqrt and c_log), which are
// held to 1e-4 dBZ.
#include <cuda_runtime.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cuda_util.h"
#include "device_harness.h"
#include "device_libm.h"
#include "wsm5_case.h"

// The physics below calls this file's libm: its own namespace (see above).
#undef WRFGPU_MODE_NS
#define WRFGPU_MODE_NS strict_samelibm
#include "wrfgpu_hd.h"

namespace wrfgpu {
namespace wsm5 {
namespace samelibm = ::wrfgpu_devtest_libm;  // tests/device_libm.h

// What the physics' unqualified calls find (single precision through double, rounded once).
WRFGPU_HD float expf(float x) { return (float)samelibm::exp_d((double)x); }
WRFGPU_HD float logf(float x) { return (float)samelibm::log_d((double)x); }
WRFGPU_HD float powf(float x, float y) { return (float)samelibm::pow_d((double)x, (double)y); }
WRFGPU_HD double exp(double x) { return samelibm::exp_d(x); }
WRFGPU_HD double log(double x) { return samelibm::log_d(x); }
WRFGPU_HD double pow(double x, double y) { return samelibm::pow_d(x, y); }
WRFGPU_HD double log10(double x) { return samelibm::log_d(x) * samelibm::kInvLn10; }
WRFGPU_HD double log1p(double x) { return samelibm::log1p_d(x); }
WRFGPU_HD double hypot(double x, double y) { return samelibm::hypot_d(x, y); }
WRFGPU_HD double atan2(double y, double x) { return samelibm::atan2_d(y, x); }

}  // namespace wsm5
}  // namespace wrfgpu

#include "wsm5_physics.h"
#include "wsm5_radar.h"

namespace {

namespace w = wrfgpu::wsm5;
using wrfgpu::DeviceBuffer;
// The shared pieces of the device tests (tests/device_harness.h): both halves' results, their
// bits, the comparison and the coverage counts. This file keeps its own run_both: its functors
// take the item's inputs and scratch, not an index.
using wrfgpu_devtest::Both;
using wrfgpu_devtest::Describe;
using wrfgpu_devtest::hexbits;
using wrfgpu_devtest::same_bits;
using wrfgpu_devtest::count_if_out;
std::string num(double x) { return wrfgpu_devtest::num(x, 9); }

// Why same_bits counts zeros of opposite sign apart (device_harness.h):
// nvcc (13.0, strict flags) compiles fmin2(x, 0.f), i.e. x < 0.f ? x : 0.f, to PTX min.f32,
// which returns -0 for x = -0 where the C expression returns +0 (fmax2 stays a compare and
// select): cold_rain's psevp = fmin2(fmax2(psevp, -qs*rdtcld), 0.f) is +0 on the host and -0
// on the GPU where qs = 0 above 0 C (seen on an H200). No output of wsm5_column changes
// (Wsm5Device.Column), but it is not the host's bit pattern, hence the message.

// ---------------------------------------------------------------------------------------
// The harness: f(in_item, out_item, float scratch, double scratch) for each item, on the
// host and in a kernel with one thread per item.
template <class F>
__global__ void k_each(F f, int n, const typename F::In* in, int nin, typename F::T* out, int nout,
                       float* fs, std::size_t nfs, double* ds, std::size_t nds) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  f(in + (std::size_t)i * nin, out + (std::size_t)i * nout, nfs ? fs + (std::size_t)i * nfs : nullptr,
    nds ? ds + (std::size_t)i * nds : nullptr);
}

// n items of nin inputs and nout outputs; nfs floats and nds doubles of scratch per item.
template <class F>
Both<typename F::T> run_both(const F& f, const std::vector<typename F::In>& in, int nin, int nout,
                             std::size_t nfs = 0, std::size_t nds = 0) {
  using T = typename F::T;
  using In = typename F::In;
  const int n = (int)(in.size() / nin);
  Both<T> r;
  r.nout = nout;
  r.host.assign((std::size_t)n * nout, T(0));
  r.dev.assign((std::size_t)n * nout, T(0));
  std::vector<float> hfs((std::size_t)n * nfs, 0.f);
  std::vector<double> hds((std::size_t)n * nds, 0.0);
  for (int i = 0; i < n; ++i)
    f(in.data() + (std::size_t)i * nin, r.host.data() + (std::size_t)i * nout,
      nfs ? hfs.data() + (std::size_t)i * nfs : nullptr, nds ? hds.data() + (std::size_t)i * nds : nullptr);
  DeviceBuffer<In> din;
  DeviceBuffer<T> dout;
  DeviceBuffer<float> dfs;
  DeviceBuffer<double> dds;
  din.reserve(in.size());
  dout.reserve(r.dev.size());
  dfs.reserve(std::max<std::size_t>(hfs.size(), 1));
  dds.reserve(std::max<std::size_t>(hds.size(), 1));
  WRFGPU_CUDA_CHECK(cudaMemcpy(din.data(), in.data(), in.size() * sizeof(In), cudaMemcpyHostToDevice));
  WRFGPU_CUDA_CHECK(cudaMemset(dout.data(), 0, r.dev.size() * sizeof(T)));
  WRFGPU_CUDA_CHECK(cudaMemset(dfs.data(), 0, std::max<std::size_t>(hfs.size(), 1) * sizeof(float)));
  WRFGPU_CUDA_CHECK(cudaMemset(dds.data(), 0, std::max<std::size_t>(hds.size(), 1) * sizeof(double)));
  const int block = 128;
  k_each<<<(n + block - 1) / block, block>>>(f, n, din.data(), nin, dout.data(), nout, dfs.data(),
                                             nfs, dds.data(), nds);
  WRFGPU_CUDA_CHECK(cudaGetLastError());
  WRFGPU_CUDA_CHECK(cudaDeviceSynchronize());
  WRFGPU_CUDA_CHECK(cudaMemcpy(r.dev.data(), dout.data(), r.dev.size() * sizeof(T), cudaMemcpyDeviceToHost));
  return r;
}


// Cells: inputs and outputs named in order.
Describe cell_describe(const std::vector<float>& in, const std::vector<const char*>& in_names,
                       const std::vector<const char*>& out_names) {
  return [&in, in_names, out_names](int i, int j) {
    std::string s = std::string(out_names.at(j)) + " of item " + std::to_string(i) + " (";
    for (std::size_t a = 0; a < in_names.size(); ++a)
      s += std::string(a ? ", " : "") + in_names[a] + " = " + num(in[(std::size_t)i * in_names.size() + a]);
    return s + ")";
  };
}

const w::Constants C = w::wrf_default_constants();

// The WSM5 captures bundled in test_data (WRF inputs: ideal cases and synthetic columns).
std::vector<wsm5_test::Case> captures() {
  std::vector<wsm5_test::Case> v;
  for (const std::string& f : wsm5_test::data_files("wsm5")) {
    if (f.find("refl") != std::string::npos) continue;
    v.push_back(wsm5_test::load_case(f));
  }
  return v;
}
std::string case_name(const wsm5_test::Case& k) {
  const std::size_t s = k.path.find_last_of('/');
  return s == std::string::npos ? k.path : k.path.substr(s + 1);
}
// Column (i, j) of a capture's 3-D field as nk floats, level kts first.
std::vector<float> column(const wsm5_test::Case& k, const char* name, int ci, int cj) {
  std::vector<float> c(k.nk);
  const auto& f = k.in.at(name);
  for (std::size_t kk = 0; kk < k.nk; ++kk)
    c[kk] = f[k.dims.idx3(k.dims.its + ci, k.dims.kts + (int)kk, k.dims.jts + cj)];
  return c;
}
Describe column_describe(const wsm5_test::Case& k, const std::vector<const char*>& out_fields, int nk) {
  const std::string name = case_name(k);
  const int ni = (int)k.ni;
  return [name, ni, out_fields, nk](int item, int j) {
    const int f = j / nk;
    const std::string field = f < (int)out_fields.size() ? std::string(out_fields[f]) + " level " + std::to_string(j % nk)
                                                         : "scalar output " + std::to_string(j - nk * (int)out_fields.size());
    return name + " column (i " + std::to_string(item % ni) + ", j " + std::to_string(item / ni) +
           "): " + field;
  };
}

// ---------------------------------------------------------------------------------------
// The functors: one item each, the same code on both sides.

// impl/wsm5_saturation_impl.h
struct SaturationF {
  using In = float;
  using T = float;
  w::Constants c;
  static constexpr int nin = 4, nout = 12;
  WRFGPU_HD void operator()(const float* in, float* o, float*, double*) const {
    const float t = in[0], p = in[1], q = in[2], den = in[3];
    const w::Saturation s = w::saturation(c, t, p, q);
    o[0] = s.qs1; o[1] = s.qs2; o[2] = s.rh1; o[3] = s.rh2;
    o[4] = w::qsat_water(c, t, p);
    o[5] = w::cpmcal(c, q);
    o[6] = w::xlcal(c, t);
    o[7] = w::denfac_of(c, den);
    o[8] = w::n0sfac_of(c.t0c - t);
    o[9] = w::diffac(c, o[6], p, t, den, s.qs1);
    o[10] = w::diffac(c, c.xls, p, t, den, s.qs2);
    o[11] = w::venfac(c, p, t, den);
  }
};

// impl/wsm5_slopes_impl.h
struct SlopesF {
  using In = float;
  using T = float;
  w::Constants c;
  static constexpr int nin = 3, nout = 12;
  WRFGPU_HD void operator()(const float* in, float* o, float*, double*) const {
    const float q = in[0], den = in[1], t = in[2];
    const float denfac = w::denfac_of(c, den);
    const w::Slope r = w::slope_wsm5_rain(c, q, den, denfac);
    const w::Slope s = w::slope_wsm5_snow(c, q, den, denfac, t);
    o[0] = r.rslope; o[1] = r.rslopeb; o[2] = r.rslope2; o[3] = r.rslope3; o[4] = r.vt;
    o[5] = s.rslope; o[6] = s.rslopeb; o[7] = s.rslope2; o[8] = s.rslope3; o[9] = s.vt;
    o[10] = w::slope_rain_vt(c, q, den, denfac);
    o[11] = w::slope_snow_vt(c, q, den, denfac, t);
  }
};

// impl/wsm5_sedimentation_impl.h: the ice terms of a cell
struct IceF {
  using In = float;
  using T = float;
  w::Constants c;
  static constexpr int nin = 2, nout = 2;
  WRFGPU_HD void operator()(const float* in, float* o, float*, double*) const {
    o[0] = w::xni_of(c, in[1], in[0]);
    o[1] = w::ice_fall_speed(c, in[1], in[0]);
  }
};
// nislfv_rain_plm on one column. In: den, denfac, t, dz, ww, den*q (6 nk). Out: den*q after,
// t (passed as WRF's tk, not changed), precip (2 nk + 1). Scratch: nislfv's arrays, then ww.
struct NislfvF {
  using In = float;
  using T = float;
  w::Constants c;
  int nk, id, iter;
  float dt;
  WRFGPU_HD void operator()(const float* in, float* o, float* fs, double*) const {
    for (int k = 0; k < nk; ++k) {
      o[k] = in[5 * nk + k];
      o[nk + k] = in[2 * nk + k];
      fs[w::kNislfvArrays * (nk + 1) + k] = in[4 * nk + k];
    }
    const w::NislfvScratch s = w::nislfv_scratch(fs, 1, nk + 1);
    w::nislfv_rain_plm(c, nk, w::CCol{in, 1}, w::CCol{in + nk, 1}, w::Col{o + nk, 1},
                       w::CCol{in + 3 * nk, 1}, w::Col{fs + w::kNislfvArrays * (nk + 1), 1},
                       w::Col{o, 1}, &o[2 * nk], dt, id, iter, s);
  }
};
// The remap's source levels: nislfv_find_kbkt_wrf (WRF's loop) and nislfv_find_kbkt (per
// level) on given interface heights zi and arrival points za (km+1 each). Out: kb, kt of both.
struct KbKtF {
  using In = float;
  using T = float;
  int km;
  WRFGPU_HD void operator()(const float* in, float* o, float* fs, double*) const {
    float* zi = fs;
    float* za = fs + (km + 1);
    for (int k = 0; k <= km; ++k) {
      zi[k] = in[k];
      za[k] = in[km + 1 + k];
    }
    const w::A1 ziv{w::Col{zi, 1}}, zav{w::Col{za, 1}};
    w::nislfv_find_kbkt_wrf(km, ziv, zav, w::A1{w::Col{o, 1}}, w::A1{w::Col{o + km, 1}});
    bool rising = true;
    for (int k = 1; k <= km; ++k) rising = rising && zi[k] >= zi[k - 1];
    if (rising)
      w::nislfv_find_kbkt(w::SerialTeam{}, km, ziv, zav, w::A1{w::Col{o + 2 * km, 1}},
                          w::A1{w::Col{o + 3 * km, 1}}, w::A1{w::Col{fs + 2 * (km + 1), 1}});
  }
};

// impl/wsm5_melting_impl.h: psmlt as wsm5_melt_cell calls it, and the instantaneous processes.
struct MeltingF {
  using In = float;
  using T = float;
  w::Constants c;
  float dtcld;
  static constexpr int nin = 8, nout = 9;
  WRFGPU_HD void operator()(const float* in, float* o, float*, double*) const {
    const float t = in[0], p = in[1], q = in[2], qc = in[3], qi = in[4], qr = in[5], qs = in[6];
    const float den = in[7];
    const float cpm = w::cpmcal(c, q), xl = w::xlcal(c, t), denfac = w::denfac_of(c, den);
    const w::Slope rn = w::slope_wsm5_rain(c, qr, den, denfac);
    w::Slope sn{};
    if (t > c.t0c && qs > 0.f) sn = w::slope_wsm5_snow(c, qs, den, denfac, t);
    float tm = t, qrm = qr, qsm = qs;
    w::psmlt_cell(c, dtcld, cpm, den, p, sn, tm, qrm, qsm);
    o[0] = tm; o[1] = qrm; o[2] = qsm;
    o[3] = w::venfac_psmlt(c, t, den, p);
    float ti = t, qci = qc, qii = qi, qri = qr, qsi = qs;
    w::instantaneous_cell(c, dtcld, cpm, xl, den, rn.rslope, ti, qci, qii, qri, qsi);
    o[4] = ti; o[5] = qci; o[6] = qii; o[7] = qri; o[8] = qsi;
  }
};

// The rates of one cell after warm_rain (cold = false) or warm_rain then cold_rain (cold = true),
// with their inputs prepared as wsm5_local_cell prepares them.
WRFGPU_HD void rates_of(const w::Constants& c, float dtcld, bool cold, const float* in, w::Rates& r) {
  const float t = in[0], p = in[1], q = in[2], qc = in[3], qi = in[4], qr = in[5], qs = in[6];
  const float den = in[7];
  const float xl = w::xlcal(c, t), denfac = w::denfac_of(c, den);
  const w::Saturation sat = w::saturation(c, t, p, q);
  const w::Slope rn = w::slope_wsm5_rain(c, qr, den, denfac);
  const w::Slope sn = w::slope_wsm5_snow(c, qs, den, denfac, t);
  const bool rain_or_snow = qr > 0.f || qs > 0.f;
  const float work1_1 = rain_or_snow ? w::diffac(c, xl, p, t, den, sat.qs1) : 1.f;
  const float work1_2 = (qi > 0.f || qs > 0.f) ? w::diffac(c, c.xls, p, t, den, sat.qs2) : 1.f;
  const float work2 = rain_or_snow ? w::venfac(c, p, t, den) : 1.f;
  w::warm_rain(c, dtcld, q, qc, qr, sat.qs1, sat.rh1, denfac, work1_1, work2, rn, r);
  if (cold)
    w::cold_rain(c, dtcld, 1.f / dtcld, t, q, qc, qi, qs, den, denfac, sat.qs2, sat.rh1, sat.rh2,
                 work1_1, work1_2, work2, sn, r);
}
WRFGPU_HD void rates_out(const w::Rates& r, float* o) {
  o[0] = r.prevp; o[1] = r.psdep; o[2] = r.praut; o[3] = r.psaut; o[4] = r.pracw; o[5] = r.psaci;
  o[6] = r.psacw; o[7] = r.pigen; o[8] = r.pidep; o[9] = r.pcond; o[10] = r.psevp;
}
const std::vector<const char*> kRateNames = {"prevp", "psdep", "praut", "psaut", "pracw", "psaci",
                                             "psacw", "pigen", "pidep", "pcond", "psevp"};
const std::vector<const char*> kCellInNames = {"t", "p", "q", "qc", "qi", "qr", "qs", "den"};

// impl/wsm5_warm_rain_impl.h, impl/wsm5_cold_rain_impl.h
struct RatesF {
  using In = float;
  using T = float;
  w::Constants c;
  float dtcld;
  bool cold;
  static constexpr int nin = 8, nout = 11;
  WRFGPU_HD void operator()(const float* in, float* o, float*, double*) const {
    w::Rates r;
    rates_of(c, dtcld, cold, in, r);
    rates_out(r, o);
  }
};

// impl/wsm5_conservation_impl.h. In: t, q, qc, qi, qr, qs, cpm, xl and the 11 rates.
// Out: t, q, qc, qi, qr, qs and the rates after limit_and_update.
struct ConservationF {
  using In = float;
  using T = float;
  w::Constants c;
  float dtcld;
  static constexpr int nin = 19, nout = 17;
  WRFGPU_HD void operator()(const float* in, float* o, float*, double*) const {
    float t = in[0], q = in[1], qc = in[2], qi = in[3], qr = in[4], qs = in[5];
    w::Rates r;
    r.prevp = in[8]; r.psdep = in[9]; r.praut = in[10]; r.psaut = in[11]; r.pracw = in[12];
    r.psaci = in[13]; r.psacw = in[14]; r.pigen = in[15]; r.pidep = in[16]; r.pcond = in[17];
    r.psevp = in[18];
    w::limit_and_update(c, dtcld, in[6], in[7], r, t, q, qc, qi, qr, qs);
    o[0] = t; o[1] = q; o[2] = qc; o[3] = qi; o[4] = qr; o[5] = qs;
    rates_out(r, o + 6);
  }
};

// impl/wsm5_condensation_impl.h. In: t, p, q, qc. Out: t, q, qc, pcond.
struct CondensationF {
  using In = float;
  using T = float;
  w::Constants c;
  float dtcld;
  static constexpr int nin = 4, nout = 4;
  WRFGPU_HD void operator()(const float* in, float* o, float*, double*) const {
    float t = in[0], q = in[2], qc = in[3];
    w::Rates r;
    w::pcond_cell(c, dtcld, w::cpmcal(c, q), w::xlcal(c, t), in[1], t, q, qc, r);
    o[0] = t; o[1] = q; o[2] = qc; o[3] = r.pcond;
  }
};

// impl/wsm5_effective_radius_impl.h. In: th, pii, qc, qi, qs, den (6 nk). Out: re_cloud,
// re_ice, re_snow (3 nk).
struct EffRadF {
  using In = float;
  using T = float;
  w::Constants c;
  int nk;
  WRFGPU_HD void operator()(const float* in, float* o, float*, double*) const {
    const w::EffRadArgs a{w::CCol{in, 1},          w::CCol{in + nk, 1},     w::CCol{in + 2 * nk, 1},
                          w::CCol{in + 3 * nk, 1}, w::CCol{in + 4 * nk, 1}, w::CCol{in + 5 * nk, 1},
                          w::Col{o, 1},            w::Col{o + nk, 1},       w::Col{o + 2 * nk, 1}};
    w::effect_rad_column(c, nk, a);
  }
};

// impl/wsm5_column_impl.h: wsm5_column. In: th, q, qc, qr, qi, qs, den, pii, p, delz (10 nk),
// rain, snow. Out: th, q, qc, qr, qi, qs (6 nk), rain, rainncv, sr, snow, snowncv.
struct ColumnF {
  using In = float;
  using T = float;
  w::Constants c;
  int nk;
  float delt;
  WRFGPU_HD void operator()(const float* in, float* o, float* fs, double*) const {
    for (int k = 0; k < 6 * nk; ++k) o[k] = in[k];
    float* sc = o + 6 * nk;
    sc[0] = in[10 * nk];      // rain
    sc[1] = -1.f;             // rainncv (zeroed inside)
    sc[2] = -1.f;             // sr
    sc[3] = in[10 * nk + 1];  // snow
    sc[4] = -1.f;             // snowncv
    w::ColumnArgs a;
    a.th = w::Col{o, 1};
    a.q = w::Col{o + nk, 1};
    a.qc = w::Col{o + 2 * nk, 1};
    a.qr = w::Col{o + 3 * nk, 1};
    a.qi = w::Col{o + 4 * nk, 1};
    a.qs = w::Col{o + 5 * nk, 1};
    a.den = w::CCol{in + 6 * nk, 1};
    a.pii = w::CCol{in + 7 * nk, 1};
    a.p = w::CCol{in + 8 * nk, 1};
    a.delz = w::CCol{in + 9 * nk, 1};
    a.rain = &sc[0];
    a.rainncv = &sc[1];
    a.sr = &sc[2];
    a.snow = &sc[3];
    a.snowncv = &sc[4];
    w::wsm5_column(c, nk, delt, a, w::column_scratch(fs, 1, nk + 1));
  }
};

// wsm5_radar.h: the complex arithmetic and the device's ports of glibc's csqrt and clog.
// In: z = (a, b), u = (c, d). Out: csqrt_port(z), clog_port(z), z*u, z/u (2 each), |z|,
// x2y2m1_port(a, b).
struct ComplexF {
  using In = double;
  using T = double;
  static constexpr int nin = 4, nout = 10;
  WRFGPU_HD void operator()(const double* in, double* o, float*, double*) const {
    const w::Cplx z{in[0], in[1]}, u{in[2], in[3]};
    const w::Cplx s = w::csqrt_port(z), l = w::clog_port(z), m = w::cmul(z, u), d = w::cdiv(z, u);
    o[0] = s.re; o[1] = s.im; o[2] = l.re; o[3] = l.im; o[4] = m.re; o[5] = m.im;
    o[6] = d.re; o[7] = d.im; o[8] = w::cabs_(z); o[9] = w::x2y2m1_port(in[0], in[1]);
  }
};
// refl10cm_column. In: th, pii, p, qv, qr, qs (6 nk). Out: refl (nk). Scratch: its doubles.
struct ReflF {
  using In = float;
  using T = float;
  w::Constants c;
  w::RadarTables rt;
  int nk;
  WRFGPU_HD void operator()(const float* in, float* o, float*, double* ds) const {
    const w::ReflArgs a{w::CCol{in, 1},          w::CCol{in + nk, 1},     w::CCol{in + 2 * nk, 1},
                        w::CCol{in + 3 * nk, 1}, w::CCol{in + 4 * nk, 1}, w::CCol{in + 5 * nk, 1},
                        w::Col{o, 1}};
    w::refl10cm_column(c, rt, nk, a, ds, 1, nk);
  }
};

// Log-spaced values lo..hi (n of them) with 0 in front.
std::vector<float> zero_and_logspace(float lo, float hi, int n) {
  std::vector<float> v{0.f};
  for (int i = 0; i < n; ++i) v.push_back((float)(lo * std::pow((double)hi / lo, n > 1 ? (double)i / (n - 1) : 0.0)));
  return v;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// This file's libm against glibc's: close enough that the physics takes the branches it takes
// with the real one (runs without a GPU).
TEST(Wsm5DeviceLibm, CloseToGlibc) {
  auto rel = [](double a, double b) { return a == b ? 0.0 : std::fabs(a - b) / std::fabs(b); };
  auto ulps = [](float a, float b) {
    if (a == b) return 0.0;
    return std::fabs((double)a - (double)b) / std::ldexp(1.0, std::ilogb(b) - 23);
  };
  double ue = 0, ul = 0, up = 0, rd = 0;
  for (int i = -200000; i <= 200000; ++i) {
    const float x = 87.f * i / 200000.f;
    ue = std::max(ue, ulps(w::expf(x), std::exp(x)));
    const float y = std::ldexp(1.f + (i + 200000) / 400001.f, i % 120);
    ul = std::max(ul, ulps(w::logf(y), std::log(y)));
    const float e = 3.f * i / 200000.f;
    if (std::fabs(e * std::log(y)) < 80.f) up = std::max(up, ulps(w::powf(y, e), std::pow(y, e)));
    const double d = 700.0 * i / 200000.0, yd = std::ldexp(1.0 + (i + 200000) / 400001.0, i % 1000);
    rd = std::max({rd, rel(w::exp(d), std::exp(d)), rel(w::log(yd), std::log(yd)),
                   rel(w::log10(yd), std::log10(yd)), rel(w::pow(yd, 0.37), std::pow(yd, 0.37)),
                   rel(w::hypot(d, yd), std::hypot(d, yd)), rel(w::log1p(d * 1e-9), std::log1p(d * 1e-9)),
                   std::fabs(w::atan2(d, yd - 1e10) - std::atan2(d, yd - 1e10))});
  }
  std::printf("this file's libm vs glibc: expf %.0f ulp, logf %.0f ulp, powf %.0f ulp; double "
              "functions %.2e relative\n", ue, ul, up, rd);
  EXPECT_LE(ue, 1.0);
  EXPECT_LE(ul, 1.0);
  EXPECT_LE(up, 1.0);
  EXPECT_LE(rd, 1e-13);
  // the physics of this file calls it: n0sfac_of's expf where this libm and glibc's differ
  int redirected = 0, checked = 0;
  for (float supcol = 0.01f; supcol < 90.f && checked < 50; supcol += 0.0137f) {
    const float x = w::param::alpha * supcol;
    if (w::expf(x) == std::exp(x) || w::expf(x) >= w::param::n0smax_over_n0s) continue;
    ++checked;
    redirected += w::n0sfac_of(supcol) == w::expf(x) ? 1 : 0;
  }
  EXPECT_GT(checked, 0);
  EXPECT_EQ(redirected, checked);
  EXPECT_EQ(w::expf(-200.f), 0.f);
  EXPECT_EQ(w::logf(1.f), 0.f);
  EXPECT_EQ(w::powf(0.f, 0.8f), 0.f);
}

// impl/wsm5_saturation_impl.h: across the triple point, the 0.99 p cap, dry to moist air.
TEST(Wsm5Device, Saturation) {
  WRFGPU_REQUIRE_GPU();
  std::vector<float> in;
  const float ts[] = {180.f, 200.f, 220.f, 233.15f, 250.f, 260.f, 270.f, 273.15f,
                      std::nextafter(C.ttp, 0.f), C.ttp, std::nextafter(C.ttp, 400.f), 280.f,
                      290.f, 300.f, 310.f, 320.f, 330.f};
  for (float t : ts)
    for (float p : {2000.f, 10000.f, 30000.f, 50000.f, 70000.f, 85000.f, 101325.f})
      for (float q : {0.f, 1e-7f, 1e-5f, 1e-3f, 5e-3f, 0.02f, 0.04f})
        in.insert(in.end(), {t, p, q, p / (C.rd * t)});
  const auto r = run_both(SaturationF{C}, in, SaturationF::nin, SaturationF::nout);
  EXPECT_TRUE(same_bits(r, cell_describe(in, {"t", "p", "q", "den"},
                                         {"qs1", "qs2", "rh1", "rh2", "qsat_water", "cpm", "xl",
                                          "denfac", "n0sfac", "diffac(xl)", "diffac(xls)", "venfac"})));
  // branches: the 0.99 p cap (qs = 99 ep2), rh at its qmin floor, n0sfac at both bounds
  EXPECT_GT(count_if_out<float>(r, 0, [](float x) { return x > 60.f; }), 0);
  EXPECT_GT(count_if_out<float>(r, 2, [](float x) { return x == C.qmin; }), 0);
  EXPECT_GT(count_if_out<float>(r, 8, [](float x) { return x == 1.f; }), 0);
  EXPECT_GT(count_if_out<float>(r, 8, [](float x) { return x == w::param::n0smax_over_n0s; }), 0);
}

// impl/wsm5_slopes_impl.h: mixing ratios across qcrmin and zero, densities, temperatures.
TEST(Wsm5Device, Slopes) {
  WRFGPU_REQUIRE_GPU();
  std::vector<float> in;
  std::vector<float> qs = zero_and_logspace(1e-12f, 2e-2f, 25);
  qs.insert(qs.end(), {-1e-8f, w::param::qcrmin, std::nextafter(w::param::qcrmin, 1.f)});
  for (float q : qs)
    for (float den : {0.2f, 0.6f, 1.0f, 1.3f})
      for (float t : {200.f, 240.f, 265.f, 273.15f, 280.f, 300.f}) in.insert(in.end(), {q, den, t});
  const auto r = run_both(SlopesF{C}, in, SlopesF::nin, SlopesF::nout);
  EXPECT_TRUE(same_bits(r, cell_describe(in, {"q", "den", "t"},
                                         {"rain rslope", "rain rslopeb", "rain rslope2", "rain rslope3",
                                          "rain vt", "snow rslope", "snow rslopeb", "snow rslope2",
                                          "snow rslope3", "snow vt", "slope_rain vt", "slope_snow vt"})));
  EXPECT_GT(count_if_out<float>(r, 0, [](float x) { return x == C.rslopermax; }), 0);
  EXPECT_GT(count_if_out<float>(r, 0, [](float x) { return x < C.rslopermax; }), 0);
  EXPECT_GT(count_if_out<float>(r, 9, [](float x) { return x == 0.f; }), 0);
  EXPECT_GT(count_if_out<float>(r, 9, [](float x) { return x > 0.f; }), 0);
}

// impl/wsm5_sedimentation_impl.h: Ni and Vice of a cell; nislfv_rain_plm on every column of
// the captures for rain, snow (mean-speed iteration) and ice (departure speed); the remap's
// search on rising and on non-monotone interface heights.
TEST(Wsm5Device, Sedimentation) {
  WRFGPU_REQUIRE_GPU();
  {
    std::vector<float> in;
    std::vector<float> qis = zero_and_logspace(1e-12f, 5e-3f, 30);
    qis.push_back(-1e-9f);
    for (float qi : qis)
      for (float den : {0.1f, 0.4f, 0.8f, 1.2f}) in.insert(in.end(), {qi, den});
    const auto r = run_both(IceF{C}, in, IceF::nin, IceF::nout);
    EXPECT_TRUE(same_bits(r, cell_describe(in, {"qi", "den"}, {"xni", "ice fall speed"})));
    EXPECT_GT(count_if_out<float>(r, 0, [](float x) { return x == 1e3f; }), 0);
    EXPECT_GT(count_if_out<float>(r, 0, [](float x) { return x == 1e6f; }), 0);
    EXPECT_GT(count_if_out<float>(r, 1, [](float x) { return x > 0.f; }), 0);
  }
  const auto cases = captures();
  ASSERT_TRUE(wrfgpu_test::data_present("WSM5 captures", !cases.empty()));
  int with_precip = 0, skipped = 0;
  for (const auto& k : cases) {
    const int nk = (int)k.nk, ncol = (int)(k.ni * k.nj);
    for (int species = 0; species < 3; ++species) {  // rain, snow, ice
      std::vector<float> in;
      in.reserve((std::size_t)ncol * 6 * nk);
      for (int col = 0; col < ncol; ++col) {
        const int ci = col % (int)k.ni, cj = col / (int)k.ni;
        const auto den = column(k, "rho", ci, cj), th = column(k, "th", ci, cj);
        const auto pii = column(k, "pii", ci, cj), dz = column(k, "dz", ci, cj);
        const auto q = column(k, species == 0 ? "qr" : species == 1 ? "qs" : "qi", ci, cj);
        std::vector<float> denfac(nk), t(nk), ww(nk), rq(nk);
        for (int kk = 0; kk < nk; ++kk) {
          denfac[kk] = w::denfac_of(k.c, den[kk]);
          t[kk] = th[kk] * pii[kk];
          const float qq = std::max(q[kk], 0.f);
          ww[kk] = species == 2 ? w::ice_fall_speed(k.c, den[kk], qq)
                                : w::fall_speed_of(k.c, species, qq, den[kk], denfac[kk], t[kk]);
          rq[kk] = den[kk] * qq;
        }
        for (const std::vector<float>* v : std::initializer_list<const std::vector<float>*>{&den, &denfac, &t, &dz, &ww, &rq})
          in.insert(in.end(), v->begin(), v->end());
      }
      const NislfvF f{k.c, nk, species == 2 ? 1 : species + 1, species == 2 ? 0 : 1, w::minor_dt(k.delt)};
      const auto r = run_both(f, in, 6 * nk, 2 * nk + 1, (std::size_t)w::kNislfvArrays * (nk + 1) + nk);
      EXPECT_TRUE(same_bits(r, column_describe(k, {species == 0 ? "den*qr" : species == 1 ? "den*qs" : "den*qi", "t"}, nk)))
          << "species " << species;
      with_precip += count_if_out<float>(r, 2 * nk, [](float x) { return x > 0.f; });
      for (int col = 0; col < ncol; ++col) {
        bool empty = true;
        for (int kk = 0; kk < nk; ++kk) empty = empty && in[(std::size_t)col * 6 * nk + 5 * nk + kk] <= 0.f;
        skipped += empty ? 1 : 0;
      }
    }
  }
  EXPECT_GT(with_precip, 0);
  EXPECT_GT(skipped, 0);
  // the remap's search: rising heights (both searches) and heights with a decrease (WRF's loop)
  const int km = 30;
  std::mt19937 g(3);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<float> in;
  int nonmonotone = 0;
  for (int n = 0; n < 2000; ++n) {
    std::vector<float> zi(km + 1), za(km + 1);
    zi[0] = 0.f;
    za[0] = -300.f * u(g);
    for (int k = 1; k <= km; ++k) {
      const float dz = 50.f + 500.f * u(g);
      zi[k] = zi[k - 1] + (n % 5 == 4 && k == 1 + n % km ? -0.5f * dz : dz);
      za[k] = za[k - 1] + dz * (0.2f + 1.6f * u(g));
    }
    if (n % 7 == 3) za[km] = 0.5f * zi[km];  // an early "exit intp"
    nonmonotone += n % 5 == 4 ? 1 : 0;
    in.insert(in.end(), zi.begin(), zi.end());
    in.insert(in.end(), za.begin(), za.end());
  }
  const auto r = run_both(KbKtF{km}, in, 2 * (km + 1), 4 * km, 3 * (km + 1));
  EXPECT_TRUE(same_bits(r, [km](int item, int j) {
    const char* what[] = {"kb (WRF's loop)", "kt (WRF's loop)", "kb (per level)", "kt (per level)"};
    return std::string(what[j / km]) + " level " + std::to_string(j % km + 1) + " of height set " + std::to_string(item);
  }));
  EXPECT_GT(nonmonotone, 0);
}

// impl/wsm5_melting_impl.h: temperatures across -40 C and 0 C, every hydrometeor present or not.
TEST(Wsm5Device, Melting) {
  WRFGPU_REQUIRE_GPU();
  std::vector<float> in;
  const float qv[] = {0.f, 1e-7f, 1e-4f, 2e-3f};
  for (float t : {220.f, 230.f, 233.14f, 233.16f, 240.f, 250.f, 260.f, 270.f, 273.14f, 273.15f, 273.16f,
                  275.f, 280.f, 290.f})
    for (float p : {45000.f, 90000.f})
      for (float qc : qv)
        for (float qi : qv)
          for (float qr : qv)
            for (float qs : qv) in.insert(in.end(), {t, p, 5e-3f, qc, qi, qr, qs, p / (C.rd * t)});
  const MeltingF f{C, 60.f};
  const auto r = run_both(f, in, MeltingF::nin, MeltingF::nout);
  EXPECT_TRUE(same_bits(r, cell_describe(in, kCellInNames,
                                         {"t (psmlt)", "qr (psmlt)", "qs (psmlt)", "venfac_psmlt",
                                          "t (instantaneous)", "qc", "qi", "qr", "qs"})));
  int psmlt = 0, pimlt = 0, pihmf = 0, pihtf = 0, psfrz = 0;
  for (std::size_t i = 0; i < in.size() / MeltingF::nin; ++i) {
    const float* x = &in[i * MeltingF::nin];
    const float* o = &r.host[i * MeltingF::nout];
    const float supcol = C.t0c - x[0];
    psmlt += o[2] < x[6] ? 1 : 0;
    pimlt += supcol < 0.f && x[4] > 0.f && o[6] == 0.f ? 1 : 0;
    pihmf += supcol > 40.f && x[3] > 0.f && o[5] == 0.f ? 1 : 0;
    pihtf += supcol > 0.f && supcol <= 40.f && x[3] > 0.f && o[5] < x[3] ? 1 : 0;
    psfrz += supcol > 0.f && x[5] > 0.f && o[7] < x[5] ? 1 : 0;
  }
  EXPECT_GT(psmlt, 0);
  EXPECT_GT(pimlt, 0);
  EXPECT_GT(pihmf, 0);
  EXPECT_GT(pihtf, 0);
  EXPECT_GT(psfrz, 0);
}

namespace {
// Cells for the rate tests: q as a fraction of the water (warm) or ice (cold) saturation.
std::vector<float> rate_cells(bool cold) {
  std::vector<float> in;
  const std::vector<float> ts = cold ? std::vector<float>{230.f, 240.f, 250.f, 260.f, 268.f, 272.f, 273.14f,
                                                          273.16f, 275.f, 280.f}
                                     : std::vector<float>{260.f, 275.f, 290.f, 300.f};
  const std::vector<float> rhs = cold ? std::vector<float>{0.5f, 0.95f, 1.02f, 1.1f, 1.3f}
                                      : std::vector<float>{0.3f, 0.9f, 0.999f, 1.f, 1.001f, 1.05f};
  const std::vector<float> qcs = cold ? std::vector<float>{0.f, 1e-5f, 1e-3f}
                                      : std::vector<float>{0.f, 1e-6f, 4e-4f, C.qc0, 6e-4f, 3e-3f};
  const std::vector<float> qis = cold ? std::vector<float>{0.f, 1e-9f, 1e-6f, 1e-4f, 1e-3f} : std::vector<float>{0.f};
  const std::vector<float> qss = cold ? std::vector<float>{0.f, 1e-10f, 1e-6f, 1e-4f, 2e-3f} : std::vector<float>{0.f};
  const std::vector<float> qrs = cold ? std::vector<float>{0.f, 1e-4f}
                                      : std::vector<float>{0.f, 1e-10f, 1e-9f, 2e-9f, 1e-6f, 1e-4f, 3e-3f};
  for (float t : ts)
    for (float p : {40000.f, 85000.f}) {
      const w::Saturation s = w::saturation(C, t, p, 0.f);
      for (float rh : rhs)
        for (float qc : qcs)
          for (float qi : qis)
            for (float qs : qss)
              for (float qr : qrs) in.insert(in.end(), {t, p, rh * (cold ? s.qs2 : s.qs1), qc, qi, qr, qs, p / (C.rd * t)});
    }
  return in;
}
}  // namespace

// impl/wsm5_warm_rain_impl.h: praut across qc0, pracw across qcrmin, prevp both signs.
TEST(Wsm5Device, WarmRain) {
  WRFGPU_REQUIRE_GPU();
  const std::vector<float> in = rate_cells(false);
  const auto r = run_both(RatesF{C, 60.f, false}, in, RatesF::nin, RatesF::nout);
  EXPECT_TRUE(same_bits(r, cell_describe(in, kCellInNames, kRateNames)));
  EXPECT_GT(count_if_out<float>(r, 2, [](float x) { return x > 0.f; }), 0);  // praut
  EXPECT_GT(count_if_out<float>(r, 4, [](float x) { return x > 0.f; }), 0);  // pracw
  EXPECT_GT(count_if_out<float>(r, 0, [](float x) { return x < 0.f; }), 0);  // prevp
  EXPECT_GT(count_if_out<float>(r, 0, [](float x) { return x > 0.f; }), 0);
}

// impl/wsm5_cold_rain_impl.h: below and above 0 C, sub- and supersaturated over ice.
TEST(Wsm5Device, ColdRain) {
  WRFGPU_REQUIRE_GPU();
  const std::vector<float> in = rate_cells(true);
  const auto r = run_both(RatesF{C, 90.f, true}, in, RatesF::nin, RatesF::nout);
  EXPECT_TRUE(same_bits(r, cell_describe(in, kCellInNames, kRateNames)));
  auto some = [&r](int j, bool positive) {
    return count_if_out<float>(r, j, [positive](float x) { return positive ? x > 0.f : x < 0.f; });
  };
  EXPECT_GT(some(5, true), 0);   // psaci
  EXPECT_GT(some(6, true), 0);   // psacw
  EXPECT_GT(some(8, true), 0);   // pidep
  EXPECT_GT(some(8, false), 0);
  EXPECT_GT(some(1, true), 0);   // psdep
  EXPECT_GT(some(1, false), 0);
  EXPECT_GT(some(7, true), 0);   // pigen
  EXPECT_GT(some(3, true), 0);   // psaut
  // psevp = psdep*work1_2/work1_1 above 0 C, where WRF never sets psdep (l.1003-1023 are inside
  // "if(supcol.gt.0)"): it is zero, so its branch is checked by its inputs
  int psevp_branch = 0;
  for (std::size_t i = 0; i < in.size() / RatesF::nin; ++i) {
    const float* x = &in[i * RatesF::nin];
    psevp_branch += x[0] > C.t0c && x[6] > 0.f && x[2] < w::saturation(C, x[0], x[1], x[2]).qs1 ? 1 : 0;
  }
  EXPECT_GT(psevp_branch, 0);
}

// impl/wsm5_conservation_impl.h: random states and rates, about half of them beyond what the
// mass allows, below and above 0 C.
TEST(Wsm5Device, Conservation) {
  WRFGPU_REQUIRE_GPU();
  std::mt19937 g(11);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  auto logu = [&](float lo, float hi) { return lo * std::pow(hi / lo, u(g)); };
  auto hydro = [&]() { return u(g) < 0.2f ? 0.f : logu(1e-9f, 3e-3f); };
  auto rate = [&](float sign) { return sign * logu(1e-10f, 1e-4f); };
  auto pm = [&]() { return u(g) < 0.5f ? -1.f : 1.f; };
  std::vector<float> in;
  for (int n = 0; n < 20000; ++n) {
    const float t = n % 2 ? 240.f + 33.f * u(g) : 273.2f + 20.f * u(g), q = logu(1e-4f, 2e-2f);
    in.insert(in.end(), {t, q, hydro(), hydro(), hydro(), hydro(), w::cpmcal(C, q), w::xlcal(C, t),
                         rate(pm()), rate(pm()), rate(1.f), rate(1.f), rate(1.f), rate(1.f), rate(1.f),
                         rate(1.f), rate(pm()), 0.f, rate(-1.f)});
  }
  const auto r = run_both(ConservationF{C, 120.f}, in, ConservationF::nin, ConservationF::nout);
  std::vector<const char*> out = {"t", "q", "qc", "qi", "qr", "qs"};
  out.insert(out.end(), kRateNames.begin(), kRateNames.end());
  EXPECT_TRUE(same_bits(r, cell_describe(in, {"t", "q", "qc", "qi", "qr", "qs", "cpm", "xl", "prevp",
                                              "psdep", "praut", "psaut", "pracw", "psaci", "psacw",
                                              "pigen", "pidep", "pcond", "psevp"}, out)));
  // each limit (a rate scaled down) below and above 0 C
  int cold_c = 0, cold_i = 0, cold_r = 0, cold_s = 0, warm_c = 0, warm_r = 0, warm_s = 0;
  for (std::size_t i = 0; i < in.size() / ConservationF::nin; ++i) {
    const float* x = &in[i * ConservationF::nin];
    const float* o = &r.host[i * ConservationF::nout];
    auto scaled = [&](int rate) { return o[6 + rate] != x[8 + rate]; };
    if (x[0] <= C.t0c) {
      cold_c += scaled(6) ? 1 : 0;  // psacw (cloud water)
      cold_i += scaled(8) ? 1 : 0;  // pidep (cloud ice)
      cold_r += scaled(0) ? 1 : 0;  // prevp (rain)
      cold_s += scaled(1) ? 1 : 0;  // psdep (snow)
    } else {
      warm_c += scaled(4) ? 1 : 0;   // pracw
      warm_r += scaled(0) ? 1 : 0;   // prevp
      warm_s += scaled(10) ? 1 : 0;  // psevp
    }
  }
  EXPECT_GT(cold_c, 0) << "cloud water limited below 0 C";
  EXPECT_GT(cold_i, 0) << "cloud ice limited below 0 C";
  EXPECT_GT(cold_r, 0) << "rain limited below 0 C";
  EXPECT_GT(cold_s, 0) << "snow limited below 0 C";
  EXPECT_GT(warm_c, 0) << "cloud water limited above 0 C";
  EXPECT_GT(warm_r, 0) << "rain limited above 0 C";
  EXPECT_GT(warm_s, 0) << "snow limited above 0 C";
}

// impl/wsm5_condensation_impl.h: sub- and supersaturated, with and without cloud water.
TEST(Wsm5Device, Condensation) {
  WRFGPU_REQUIRE_GPU();
  std::vector<float> in;
  for (float t = 230.f; t <= 310.f; t += 5.f)
    for (float p : {30000.f, 60000.f, 90000.f})
      for (float rh : {0.5f, 0.9f, 0.99f, 1.f, 1.01f, 1.1f})
        for (float qc : {0.f, 1e-7f, 1e-5f, 1e-3f}) in.insert(in.end(), {t, p, rh * w::qsat_water(C, t, p), qc});
  const auto r = run_both(CondensationF{C, 60.f}, in, CondensationF::nin, CondensationF::nout);
  EXPECT_TRUE(same_bits(r, cell_describe(in, {"t", "p", "q", "qc"}, {"t", "q", "qc", "pcond"})));
  int cond = 0, evap = 0, evap_all = 0, none = 0;
  for (std::size_t i = 0; i < in.size() / 4; ++i) {
    const float pc = r.host[i * 4 + 3], qc = in[i * 4 + 3], qc_after = r.host[i * 4 + 2];
    cond += pc > 0.f ? 1 : 0;
    evap += pc < 0.f && qc_after > 0.f ? 1 : 0;
    evap_all += pc < 0.f && qc_after < 1e-5f * qc ? 1 : 0;  // limited by the cloud water there is
    none += pc == 0.f ? 1 : 0;
  }
  EXPECT_GT(cond, 0);
  EXPECT_GT(evap, 0);
  EXPECT_GT(evap_all, 0);
  EXPECT_GT(none, 0);
}

// impl/wsm5_effective_radius_impl.h: every column of the captures, and columns without cloud
// water, ice or snow.
TEST(Wsm5Device, EffectiveRadius) {
  WRFGPU_REQUIRE_GPU();
  const auto cases = captures();
  ASSERT_TRUE(wrfgpu_test::data_present("WSM5 captures", !cases.empty()));
  int computed[3] = {0, 0, 0};
  const float bg[3] = {w::RE_QC_BG, w::RE_QI_BG, w::RE_QS_BG};
  for (const auto& k : cases) {
    const int nk = (int)k.nk, ncol = (int)(k.ni * k.nj);
    std::vector<float> in;
    for (int col = 0; col < ncol + 2; ++col) {
      const int ci = col % (int)k.ni, cj = (col / (int)k.ni) % (int)k.nj;
      for (const char* f : {"th", "pii", "qc", "qi", "qs", "rho"}) {
        auto v = column(k, f, ci, cj);
        if (col >= ncol && f[0] == 'q') std::fill(v.begin(), v.end(), col == ncol ? 0.f : 1e-13f);
        in.insert(in.end(), v.begin(), v.end());
      }
    }
    const auto r = run_both(EffRadF{k.c, nk}, in, 6 * nk, 3 * nk);
    EXPECT_TRUE(same_bits(r, column_describe(k, {"re_cloud", "re_ice", "re_snow"}, nk)));
    for (std::size_t q = 0; q < r.host.size(); ++q) computed[(q % (3 * nk)) / nk] += r.host[q] != bg[(q % (3 * nk)) / nk];
  }
  for (int n : computed) EXPECT_GT(n, 0);
}

// impl/wsm5_column_impl.h (and every process through it): wsm5_column on every column of the
// captures, all minor loops.
TEST(Wsm5Device, Column) {
  WRFGPU_REQUIRE_GPU();
  const auto cases = captures();
  ASSERT_TRUE(wrfgpu_test::data_present("WSM5 captures", !cases.empty()));
  int raining = 0;
  for (const auto& k : cases) {
    const int nk = (int)k.nk, ncol = (int)(k.ni * k.nj);
    std::vector<float> in;
    for (int col = 0; col < ncol; ++col) {
      const int ci = col % (int)k.ni, cj = col / (int)k.ni;
      for (const char* f : {"th", "qv", "qc", "qr", "qi", "qs", "rho", "pii", "p", "dz"}) {
        const auto v = column(k, f, ci, cj);
        in.insert(in.end(), v.begin(), v.end());
      }
      in.push_back(k.in.at("rainnc")[k.dims.idx2(k.dims.its + ci, k.dims.jts + cj)]);
      in.push_back(k.in.at("snownc")[k.dims.idx2(k.dims.its + ci, k.dims.jts + cj)]);
    }
    const auto r = run_both(ColumnF{k.c, nk, k.delt}, in, 10 * nk + 2, 6 * nk + 5,
                            (std::size_t)w::kScratchArrays * (nk + 1));
    EXPECT_TRUE(same_bits(r, column_describe(k, {"th", "qv", "qc", "qr", "qi", "qs"}, nk)))
        << "(scalar outputs: rain, rainncv, sr, snow, snowncv)";
    raining += count_if_out<float>(r, 6 * nk + 1, [](float x) { return x > 0.f; });
  }
  EXPECT_GT(raining, 0);
}

// wsm5_radar.h: the complex arithmetic and the ports of csqrt/clog (every branch), then
// refl10cm_column on every column of the captures.
TEST(Wsm5Device, Radar) {
  WRFGPU_REQUIRE_GPU();
  {
    std::mt19937_64 g(7);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> in;
    for (int n = 0; n < 100000; ++n) {
      double re = u(g) * std::pow(10.0, 3 * u(g)), im = u(g) * std::pow(10.0, 3 * u(g));
      if (n % 6 == 1) { re = std::copysign(1.0 + 0.3 * u(g), re); im = 0.3 * u(g); }
      if (n % 6 == 2) { const double a = 6.283 * u(g); re = std::cos(a) * (1 + 1e-3 * u(g)); im = std::sin(a); }
      if (n % 6 == 3) { re = std::copysign(0.5 + 0.5 * std::fabs(u(g)), re); im = 1e-17 * u(g); }
      if (n % 6 == 4) { re = std::copysign(1.0, re); im = u(g); }
      if (n % 97 == 5) im = 0.0;
      if (n % 89 == 5) re = 0.0;
      in.insert(in.end(), {re, im, u(g) * std::pow(10.0, 2 * u(g)), u(g) * std::pow(10.0, 2 * u(g))});
    }
    const auto r = run_both(ComplexF{}, in, ComplexF::nin, ComplexF::nout);
    EXPECT_TRUE(same_bits(r, [&in](int i, int j) {
      const char* what[] = {"csqrt_port re", "csqrt_port im", "clog_port re", "clog_port im", "cmul re",
                            "cmul im", "cdiv re", "cdiv im", "cabs_", "x2y2m1_port"};
      return std::string(what[j]) + " of z = (" + num(in[4 * i]) + ", " + num(in[4 * i + 1]) + "), u = (" +
             num(in[4 * i + 2]) + ", " + num(in[4 * i + 3]) + ")";
    }));
  }
  const auto cases = captures();
  ASSERT_TRUE(wrfgpu_test::data_present("WSM5 captures", !cases.empty()));
  int melting_columns = 0, melting_levels = 0, melting_differ = 0;
  double worst = 0;
  for (const auto& k : cases) {
    const int nk = (int)k.nk, ncol = (int)(k.ni * k.nj);
    std::vector<float> in;
    // melting[col*nk+k]: the level goes through refl10cm's melting-snow branch (l.1740-1797)
    std::vector<char> melting((std::size_t)ncol * nk, 0);
    for (int col = 0; col < ncol; ++col) {
      const int ci = col % (int)k.ni, cj = col / (int)k.ni;
      std::vector<float> th = column(k, "th", ci, cj), pii = column(k, "pii", ci, cj);
      const std::vector<float> qr = column(k, "qr", ci, cj), qs = column(k, "qs", ci, cj);
      for (const std::vector<float>* v : {&th, &pii}) in.insert(in.end(), v->begin(), v->end());
      for (const char* f : {"p", "qv"}) {
        const auto v = column(k, f, ci, cj);
        in.insert(in.end(), v.begin(), v.end());
      }
      in.insert(in.end(), qr.begin(), qr.end());
      in.insert(in.end(), qs.begin(), qs.end());
      int k0 = 0;
      for (int kk = nk - 2; kk >= 0; --kk)
        if (th[kk] * pii[kk] > 273.15f && qr[kk] > 1e-9f && qs[kk + 1] > 1e-9f) {
          k0 = kk + 1;
          break;
        }
      if (k0 >= 1 && qs[k0] > 1e-9f) {
        ++melting_columns;
        for (int kk = 0; kk < k0; ++kk) melting[(std::size_t)col * nk + kk] = qs[kk] > 1e-9f;
      }
    }
    w::RadarTables rt = w::radar_tables(k.c);
    const auto r = run_both(ReflF{k.c, rt, nk}, in, 6 * nk, nk, 0, (std::size_t)w::kReflArrays * nk);
    EXPECT_TRUE(same_bits(r, column_describe(k, {"refl_10cm"}, nk),
                          [&melting, nk](int item, int j) { return melting[(std::size_t)item * nk + j] != 0; }));
    for (std::size_t q = 0; q < r.host.size(); ++q) {
      if (!melting[q]) continue;
      ++melting_levels;
      const double d = std::fabs((double)r.host[q] - r.dev[q]);
      melting_differ += d > 0 ? 1 : 0;
      worst = std::max(worst, d);
    }
  }
  std::printf("refl10cm melting-snow levels (glibc csqrt/clog on the host, the ports on the GPU): "
              "%d in %d columns, %d differ, at most %.3e dBZ\n",
              melting_levels, melting_columns, melting_differ, worst);
  EXPECT_GT(melting_levels, 0);
  EXPECT_LE(worst, 1e-4);
}
