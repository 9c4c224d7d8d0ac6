// wsm5.cpp - WSM5 public API: input validation and backend/mode dispatch (compiled once).
#include "wsm5.h"

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "both.h"
#include "errors.h"
#include "config.h"
#include "finite_check.h"
#include "verify.h"
#include "wsm5_backends.h"
#include "wsm5_physics.h"
#include "wsm5_radar.h"

namespace wrfgpu {
namespace wsm5 {

namespace {

std::string ijk(int i, int k, int j) {
  return "(i,k,j)=(" + std::to_string(i) + "," + std::to_string(k) + "," + std::to_string(j) + ")";
}

void check_bounds(const char* what, int ms, int me, int ts, int te) {
  if (te < ts)
    throw InputError(std::string("wsm5: empty tile in ") + what + ": t" + what + "s=" +
                     std::to_string(ts) + " > t" + what + "e=" + std::to_string(te));
  if (ts < ms || te > me)
    throw InputError(std::string("wsm5: tile ") + what + "=" + std::to_string(ts) + ":" +
                     std::to_string(te) + " lies outside memory " + what + "=" +
                     std::to_string(ms) + ":" + std::to_string(me));
}

}  // namespace

[[noreturn]] void throw_bad_field3(const WrfDims& d, const float* f, const char* name, long first) {
  const int ni = d.tile_ni(), nk = d.tile_nk();
  const int ii = (int)(first % ni), kk = (int)((first / ni) % nk), jj = (int)(first / ((long)ni * nk));
  const float v = f[d.idx3(d.its + ii, d.kts + kk, d.jts + jj)];
  const bool nonfinite = !std::isfinite(v);
  throw InputError(std::string("wsm5: input field ") + name + " has " +
                   (nonfinite ? (std::isnan(v) ? "NaN" : "Inf") : "a non-positive value " + std::to_string(v)) +
                   " at " + ijk(d.its + ii, d.kts + kk, d.jts + jj));
}

namespace {

// First non-finite (or, when positive, non-positive) value of a 3-D field in Fortran order.
void scan3(const WrfDims& d, const float* f, const char* name, bool positive) {
  long first = LONG_MAX;  // linear tile index of the first bad cell (i fastest, then k, then j)
  const int ni = d.tile_ni(), nk = d.tile_nk(), nj = d.tile_nj();
#pragma omp parallel for reduction(min : first) schedule(static)
  for (long jj = 0; jj < nj; ++jj) {
    for (int kk = 0; kk < nk; ++kk) {
      const float* row = f + d.idx3(d.its, d.kts + kk, d.jts + (int)jj);
      if (!(positive ? row_has_bad<true>(row, ni) : row_has_bad<false>(row, ni))) continue;
      int bad = 0;
      while (std::isfinite(row[bad]) && !(positive && !(row[bad] > 0.f))) ++bad;
      const long lin = (jj * nk + kk) * (long)ni + bad;
      if (lin < first) first = lin;
      break;
    }
  }
  if (first != LONG_MAX) throw_bad_field3(d, f, name, first);
}

void scan2(const WrfDims& d, const float* f, const char* name) {
  for (int j = d.jts; j <= d.jte; ++j)
    for (int i = d.its; i <= d.ite; ++i) {
      const float v = f[d.idx2(i, j)];
      if (!std::isfinite(v))
        throw InputError(std::string("wsm5: input field ") + name + " has " +
                         (std::isnan(v) ? "NaN" : "Inf") + " at (i,j)=(" + std::to_string(i) +
                         "," + std::to_string(j) + ")");
    }
}

}  // namespace

void validate_args(const WrfDims& d, float delt, const State& s, const Options& opt) {
  check_bounds("i", d.ims, d.ime, d.its, d.ite);
  check_bounds("j", d.jms, d.jme, d.jts, d.jte);
  check_bounds("k", d.kms, d.kme, d.kts, d.kte);
  if (d.kte > d.kde)
    throw InputError("wsm5: kte=" + std::to_string(d.kte) + " lies above the domain's kde=" +
                     std::to_string(d.kde) + " (WRF passes kte = min(k_end, kde-1))");
  if (d.tile_nk() < 2)
    throw InputError("wsm5: needs at least 2 levels (kts=" + std::to_string(d.kts) +
                     ", kte=" + std::to_string(d.kte) + ")");
  if (!std::isfinite(delt) || !(delt > 0.f))
    throw InputError("wsm5: time step delt=" + std::to_string(delt) + " is not a positive number");
  const struct { const float* p; const char* n; } req[] = {
      {s.th, "th"}, {s.qv, "qv"}, {s.qc, "qc"}, {s.qr, "qr"}, {s.qi, "qi"}, {s.qs, "qs"},
      {s.den, "den"}, {s.pii, "pii"}, {s.p, "p"}, {s.delz, "delz"}, {s.rain, "rain"},
      {s.rainncv, "rainncv"}, {s.sr, "sr"}};
  for (const auto& r : req)
    if (r.p == nullptr) throw InputError(std::string("wsm5: required array ") + r.n + " is missing (null)");
  if ((s.snow == nullptr) != (s.snowncv == nullptr))
    throw InputError("wsm5: snow and snowncv must both be given or both be omitted");
  if (want_re(s, opt) == false && opt.has_reqc && opt.has_reqi && opt.has_reqs)
    throw InputError("wsm5: has_reqc/has_reqi/has_reqs are set but re_cloud/re_ice/re_snow are missing");
}

void scan_fields3(const WrfDims& d, const State& s) {
  const float* f[kFields3] = {s.th, s.qv, s.qc, s.qr, s.qi, s.qs, s.den, s.pii, s.p, s.delz};
  for (int q = 0; q < kFields3; ++q) scan3(d, f[q], kField3Name[q], kField3Positive[q]);
}

void validate(const WrfDims& d, float delt, const State& s, const Options& opt) {
  validate_args(d, delt, s, opt);
  if (!opt.validate) return;
  scan_fields3(d, s);
  scan2(d, s.rain, "rain");
  if (s.snow) scan2(d, s.snow, "snow");
}

std::size_t gpu_bytes_needed(const WrfDims& d, const Options& opt) {
  const std::size_t ni = d.tile_ni(), nk = d.tile_nk(), nj = d.tile_nj();
  const std::size_t cells = ni * nk * nj, cols = ni * nj;
  const std::size_t fields3 = 10 + 4;  // inputs/outputs + re_* + refl
  const int streams = opt.gpu_streams > 0 ? opt.gpu_streams : 1;
  // column scratch with a second nislfv set, plus 3 per-column carries (wsm5_gpu.cu); upper bound
  const std::size_t scratch = ((std::size_t)(kScratchArrays + kNislfvArrays) * (nk + 1) + 3) * cols;
  // refl10cm work arrays (doubles), only when reflectivity is asked; upper bound
  const std::size_t refl_work =
      (opt.diagflag && opt.do_radar_ref == 1) ? (std::size_t)kReflArrays * nk * cols : 0;
  return sizeof(float) * (cells * fields3 + cols * 5 + scratch) + sizeof(double) * refl_work +
         (std::size_t)streams * 0;
}

namespace {

void dispatch(Backend b, Mode m, const Constants& c, const WrfDims& d, float delt, const State& s,
              const Options& opt, Timing* t) {
  if (b == Backend::Cpu) {
    if (m == Mode::Strict) strict::run_cpu(c, d, delt, s, opt, t);
    else fast::run_cpu(c, d, delt, s, opt, t);
    return;
  }
#if defined(WRFGPU_HAVE_CUDA) && WRFGPU_HAVE_CUDA
  if (m == Mode::Strict) strict::run_gpu(c, d, delt, s, opt, t);
  else fast::run_gpu(c, d, delt, s, opt, t);
#else
  (void)c; (void)d; (void)delt; (void)s; (void)opt; (void)t; (void)m;
  throw RuntimeError("wsm5: this build has no CUDA backend");
#endif
}

// Tile copy of a 3-D/2-D field into a dense array (i fastest, then k, then j).
std::vector<float> tile3(const WrfDims& d, const float* f) {
  std::vector<float> v((std::size_t)d.tile_ni() * d.tile_nk() * d.tile_nj());
  std::size_t n = 0;
  for (int j = d.jts; j <= d.jte; ++j)
    for (int k = d.kts; k <= d.kte; ++k)
      for (int i = d.its; i <= d.ite; ++i) v[n++] = f[d.idx3(i, k, j)];
  return v;
}
std::vector<float> tile2(const WrfDims& d, const float* f) {
  std::vector<float> v((std::size_t)d.tile_ni() * d.tile_nj());
  std::size_t n = 0;
  for (int j = d.jts; j <= d.jte; ++j)
    for (int i = d.its; i <= d.ite; ++i) v[n++] = f[d.idx2(i, j)];
  return v;
}

void run_both(Mode m, const Constants& c, const WrfDims& d, float delt, const State& s,
              const Options& opt, Timing* t) {
  // CPU on full-memory copies of the fields it writes, GPU in place; then compare the tiles.
  const std::size_t n3 = d.size3(), n2 = d.size2();
  std::vector<float> th(s.th, s.th + n3), qv(s.qv, s.qv + n3), qc(s.qc, s.qc + n3),
      qr(s.qr, s.qr + n3), qi(s.qi, s.qi + n3), qs(s.qs, s.qs + n3);
  std::vector<float> rain(s.rain, s.rain + n2), rainncv(n2, 0.f), sr(n2, 0.f), snow, snowncv;
  State cs = s;
  cs.th = th.data(); cs.qv = qv.data(); cs.qc = qc.data(); cs.qr = qr.data(); cs.qi = qi.data();
  cs.qs = qs.data(); cs.rain = rain.data(); cs.rainncv = rainncv.data(); cs.sr = sr.data();
  if (s.snow) { snow.assign(s.snow, s.snow + n2); cs.snow = snow.data(); }
  if (s.snowncv) { snowncv.assign(s.snowncv, s.snowncv + n2); cs.snowncv = snowncv.data(); }
  std::vector<float> rc, ri, rs;
  if (want_re(s, opt)) {
    rc.assign(s.re_cloud, s.re_cloud + n3); ri.assign(s.re_ice, s.re_ice + n3);
    rs.assign(s.re_snow, s.re_snow + n3);
    cs.re_cloud = rc.data(); cs.re_ice = ri.data(); cs.re_snow = rs.data();
  }
  std::vector<float> rf;
  if (want_refl(s, opt)) {
    rf.assign(s.refl_10cm, s.refl_10cm + n3);
    cs.refl_10cm = rf.data();
  }
  dispatch(Backend::Cpu, m, c, d, delt, cs, opt, nullptr);
  dispatch(Backend::Gpu, m, c, d, delt, s, opt, t);
  // Every output WSM5 writes, over the tile (both.h: strict mode throws on a difference).
  const std::size_t ni = d.tile_ni(), nk = d.tile_nk(), nj = d.tile_nj();
  auto ijk = [&](std::size_t x, bool three) {
    const std::size_t i = x % ni, r = x / ni;
    const int k = three ? (int)(r % nk) : 0, j = (int)(three ? r / nk : r);
    return three ? "(i,k,j)=(" + std::to_string(d.its + (int)i) + "," + std::to_string(d.kts + k) +
                       "," + std::to_string(d.jts + j) + ")"
                 : "(i,j)=(" + std::to_string(d.its + (int)i) + "," + std::to_string(d.jts + j) + ")";
  };
  std::vector<BothOutput> outs;
  auto add = [&](const char* name, const float* cpu, const float* gpu, bool three) {
    if (!cpu || !gpu) return;
    BothOutput o;
    o.name = name;
    o.cpu = three ? tile3(d, cpu) : tile2(d, cpu);
    o.gpu = three ? tile3(d, gpu) : tile2(d, gpu);
    o.ni = ni; o.nk = three ? nk : 1; o.nj = nj;
    o.where = [&ijk, three](std::size_t x) { return ijk(x, three); };
    o.plmv_limit = gpu_cpu_plmv_limit(m, name);
    outs.push_back(std::move(o));
  };
  add("th", cs.th, s.th, true); add("qv", cs.qv, s.qv, true); add("qc", cs.qc, s.qc, true);
  add("qr", cs.qr, s.qr, true); add("qi", cs.qi, s.qi, true); add("qs", cs.qs, s.qs, true);
  add("rain", cs.rain, s.rain, false); add("rainncv", cs.rainncv, s.rainncv, false);
  add("sr", cs.sr, s.sr, false); add("snow", cs.snow, s.snow, false);
  add("snowncv", cs.snowncv, s.snowncv, false);
  if (want_re(s, opt)) {
    add("re_cloud", cs.re_cloud, s.re_cloud, true); add("re_ice", cs.re_ice, s.re_ice, true);
    add("re_snow", cs.re_snow, s.re_snow, true);
  }
  if (want_refl(s, opt)) add("refl_10cm", cs.refl_10cm, s.refl_10cm, true);
  compare_both("wsm5", m, outs);
}

}  // namespace

double gpu_cpu_plmv_limit(Mode m, const std::string& output) {
  if (m == Mode::Fast) return 2e-3;
  return output.rfind("re_", 0) == 0 || output == "refl_10cm" ? 1e-5 : 1e-6;
}

void run(Backend backend, Mode mode, const Constants& c, const WrfDims& d, float delt,
         const State& s, const Options& opt, Timing* timing) {
  const auto t0 = std::chrono::steady_clock::now();
  validate_args(d, delt, s, opt);
  const Backend b = resolve_backend(backend);
  if (opt.validate) {
    scan2(d, s.rain, "rain");
    if (s.snow) scan2(d, s.snow, "snow");
    // The GPU backend scans the 3-D inputs itself: on the host as it packs them, or on the
    // device when it copies straight from page-locked arrays (wsm5_gpu.cu).
    if (b != Backend::Gpu) scan_fields3(d, s);
  }
  const double check_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (want_refl(s, opt)) (void)radar_tables(c);  // radar_init once, before any backend runs
  if (timing) timing->check_ms = 0;
  if (b == Backend::Both) run_both(mode, c, d, delt, s, opt, timing);
  else dispatch(b, mode, c, d, delt, s, opt, timing);
  const double total_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (timing) {
    timing->total_ms = total_ms;
    timing->backend = b;
    timing->check_ms += check_ms;
  }
  if (b == Backend::Gpu && config::flag("WRFGPU_TRACE").value_or(false))
    std::fprintf(stderr, "wsm5 call: %.3f ms, of which %.3f ms checking the 2-D inputs and the bounds\n",
                 total_ms, check_ms);
}

}  // namespace wsm5
}  // namespace wrfgpu
