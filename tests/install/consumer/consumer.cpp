// consumer.cpp - a C++ program of a wrfgpu user, built by tests/install/*.sh against an
// installed wrfgpu only (pkg-config or CMake find_package, never the source tree).
//
// Prints "wrfgpu <version>" (the header's version, which the scripts compare with the package
// files'), then runs WSM5 once on the CPU backend over a small box of columns (supersaturated
// between 1 and 5 km, rain aloft) and checks what a real step must give:
//   - the box's water is conserved: column water before = column water after + the step's
//     surface precipitation (rainncv, mm = kg m-2), per column;
//   - the supersaturation condenses: cloud water appears (none at the start) and the air
//     warms where it does;
//   - rain reaches the ground (rainncv > 0 somewhere, accumulated into rain);
//   - a NaN input throws wrfgpu::InputError across the library boundary;
//   - RADM2SORG's state names come from the library in the number its header declares.
// Exit status 0 when every check passes, 1 otherwise.
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "advection.h"  // every API header compiles against the installed tree
#include "device.h"
#include "errors.h"
#include "radm2sorg.h"
#include "version.h"
#include "wsm5.h"

using namespace wrfgpu;

static int failures = 0;
static void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++failures;
}

int main() {
  std::printf("wrfgpu %s\n", WRFGPU_VERSION);
  std::printf("library built with CUDA: %s (%s)\n", cuda_built() ? "yes" : "no",
              cuda_version_string().c_str());

  // A box of 4 x 3 columns, 24 levels, memory == tile (as a capture holds it).
  const int ni = 4, nj = 3, nk = 24;
  WrfDims d = dense_tile_dims(ni, nk, nj);
  d.ide = ni + 1; d.jde = nj + 1; d.kde = nk + 1;  // staggered domain ends, as WRF passes them
  const std::size_t n3 = d.size3(), n2 = d.size2();
  std::vector<float> th(n3), qv(n3), qc(n3, 0.f), qr(n3, 0.f), qi(n3, 0.f), qs(n3, 0.f);
  std::vector<float> den(n3), pii(n3), p(n3), dz(n3);
  std::vector<float> rain(n2, 0.f), rainncv(n2, -1.f), sr(n2, -1.f), snow(n2, 0.f), snowncv(n2, -1.f);
  for (int j = 1; j <= nj; ++j)
    for (int i = 1; i <= ni; ++i) {
      const float x = float((j - 1) * ni + (i - 1)) / float(ni * nj - 1);  // 0..1 across the box
      float z = 0.f, pk = 100000.f;
      for (int k = 1; k <= nk; ++k) {
        const std::size_t c = d.idx3(i, k, j);
        const float dzk = 250.f + 20.f * float(k);
        z += 0.5f * dzk;
        const float tk = 298.f - 2.f * x - 6.5e-3f * z;
        pk *= std::exp(-9.81f * dzk * 0.5f / (287.f * tk));
        const float es = 610.78f * std::exp(17.27f * (tk - 273.16f) / (tk - 35.86f));
        const float qsat = 0.622f * es / (pk - es);
        const bool moist = z > 1000.f && z < 5000.f;
        qv[c] = qsat * (moist ? 1.02f + 0.02f * x : 0.6f);
        if (z < 4000.f) qr[c] = 1.5e-3f * (0.5f + x);  // rain from the ground to 4 km
        if (tk < 268.f && moist) qs[c] = 3e-4f;
        p[c] = pk;
        dz[c] = dzk;
        den[c] = pk / (287.f * tk * (1.f + 0.608f * qv[c]));
        pii[c] = std::pow(pk / 1.e5f, 287.f / 1004.5f);
        th[c] = tk / pii[c];
        pk *= std::exp(-9.81f * dzk * 0.5f / (287.f * tk));
        z += 0.5f * dzk;
      }
    }
  const std::vector<float> th0 = th;
  // Column water, kg m-2 (double sums of the float state).
  auto column_water = [&](int i, int j) {
    double w = 0;
    for (int k = 1; k <= nk; ++k) {
      const std::size_t c = d.idx3(i, k, j);
      w += double(den[c]) * dz[c] * (double(qv[c]) + qc[c] + qr[c] + qi[c] + qs[c]);
    }
    return w;
  };
  std::vector<double> w0(n2);
  for (int j = 1; j <= nj; ++j)
    for (int i = 1; i <= ni; ++i) w0[d.idx2(i, j)] = column_water(i, j);

  const wsm5::Constants consts = wsm5::wrf_default_constants();
  wsm5::State s;
  s.th = th.data(); s.qv = qv.data(); s.qc = qc.data(); s.qr = qr.data(); s.qi = qi.data();
  s.qs = qs.data(); s.den = den.data(); s.pii = pii.data(); s.p = p.data(); s.delz = dz.data();
  s.rain = rain.data(); s.rainncv = rainncv.data(); s.sr = sr.data();
  s.snow = snow.data(); s.snowncv = snowncv.data();
  wsm5::Timing timing;
  try {
    wsm5::run(Backend::Cpu, Mode::Strict, consts, d, 20.f, s, wsm5::Options(), &timing);
  } catch (const std::exception& e) {
    std::printf("FAIL wsm5::run threw: %s\n", e.what());
    return 1;
  }
  check(timing.backend == Backend::Cpu, "WSM5 ran on the CPU backend");

  double worst = 0, wmax = 0, qc_sum = 0, rain_sum = 0;
  bool warm_where_cloud = false, rain_accumulated = true;
  for (int j = 1; j <= nj; ++j)
    for (int i = 1; i <= ni; ++i) {
      const std::size_t c2 = d.idx2(i, j);
      const double w1 = column_water(i, j) + rainncv[c2];
      worst = std::fmax(worst, std::fabs(w1 - w0[c2]) / w0[c2]);
      wmax = std::fmax(wmax, w0[c2]);
      rain_sum += rainncv[c2];
      rain_accumulated = rain_accumulated && rainncv[c2] >= 0.f && rain[c2] == rainncv[c2];
      for (int k = 1; k <= nk; ++k) {
        const std::size_t c = d.idx3(i, k, j);
        qc_sum += qc[c];
        if (qc[c] > 1e-6f && th[c] > th0[c]) warm_where_cloud = true;
      }
    }
  std::printf("column water %.3f kg m-2 at most; largest |after + rainncv - before| / before = %.2e;"
              " rainncv summed over the box %.4f mm\n", wmax, worst, rain_sum);
  check(worst < 1e-5, "water conserved per column (relative change < 1e-5)");
  check(qc_sum > 0, "the supersaturation condensed into cloud water");
  check(warm_where_cloud, "the air warmed where cloud water formed");
  check(rain_sum > 0 && rain_accumulated, "rain reached the ground and accumulated into rain");

  bool thrown = false;
  th[d.idx3(2, 5, 2)] = std::numeric_limits<float>::quiet_NaN();
  try {
    wsm5::run(Backend::Cpu, Mode::Strict, consts, d, 20.f, s);
  } catch (const InputError& e) {
    thrown = true;
    std::printf("NaN input: InputError: %s\n", e.what());
  } catch (const std::exception& e) {
    std::printf("NaN input: another exception: %s\n", e.what());
  }
  check(thrown, "a NaN input throws wrfgpu::InputError");

  check(radm2sorg::state_names().size() == std::size_t(radm2sorg::kNState),
        "RADM2SORG state names: the library's count is the header's kNState");

  if (failures) {
    std::printf("consumer: FAIL (%d checks failed)\n", failures);
    return 1;
  }
  std::printf("consumer: PASS\n");
  return 0;
}
