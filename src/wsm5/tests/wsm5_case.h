// wsm5_case.h - loading a WSM5 capture (docs/capture_format.md, kernel = wsm5; the reader of
// wsm5_capture.h, the replay adapter's) and running it through wrfgpu::wsm5, for the tests in
// this folder.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "capture_io.h"
#include "errors.h"
#include "test_util.h"
#include "verify.h"
#include "wsm5.h"
#include "wsm5_capture.h"

namespace wsm5_test {

using namespace wrfgpu;

// A capture, read by the replay adapter's reader (wsm5_capture.h).
using Case = wsm5::Capture;
inline Case load_case(const std::string& path) { return wsm5::load_capture(NcFile(path)); }

struct Result {
  std::map<std::string, std::vector<float>> out;  // th qv qc qr qi qs rainnc snownc rainncv snowncv sr re_*
  wsm5::Timing timing;
};

// with_refl: also refl_10cm (diagflag = .true., do_radar_ref = 1), in out["refl_10cm"].
inline Result run_case(const Case& k, Backend b, Mode m, bool with_re = true,
                       bool with_refl = false, const wsm5::Options& base = wsm5::Options()) {
  Result r;
  r.out = k.in;
  const std::size_t n2 = k.ni * k.nj, n3 = n2 * k.nk;
  r.out["rainncv"].assign(n2, -1.f);
  r.out["snowncv"].assign(n2, -1.f);
  r.out["sr"].assign(n2, -1.f);
  for (const char* n : {"re_cloud", "re_ice", "re_snow"}) r.out[n].assign(n3, -1.f);
  if (with_refl) r.out["refl_10cm"].assign(n3, -999.f);
  wsm5::State s;
  s.th = r.out["th"].data(); s.qv = r.out["qv"].data(); s.qc = r.out["qc"].data();
  s.qr = r.out["qr"].data(); s.qi = r.out["qi"].data(); s.qs = r.out["qs"].data();
  s.den = r.out["rho"].data(); s.pii = r.out["pii"].data(); s.p = r.out["p"].data();
  s.delz = r.out["dz"].data();
  s.rain = r.out["rainnc"].data(); s.rainncv = r.out["rainncv"].data(); s.sr = r.out["sr"].data();
  if (k.has_snow) { s.snow = r.out["snownc"].data(); s.snowncv = r.out["snowncv"].data(); }
  wsm5::Options o = base;
  if (with_refl) {
    o.diagflag = true;
    o.do_radar_ref = 1;
    s.refl_10cm = r.out["refl_10cm"].data();
  }
  if (with_re) {
    o.has_reqc = o.has_reqi = o.has_reqs = 1;
    s.re_cloud = r.out["re_cloud"].data(); s.re_ice = r.out["re_ice"].data();
    s.re_snow = r.out["re_snow"].data();
  }
  wsm5::run(b, m, k.c, k.dims, k.delt, s, o, &r.timing);
  return r;
}

using wrfgpu_test::data_files;

inline std::size_t bit_differences(const std::vector<float>& a, const std::vector<float>& b) {
  std::size_t n = 0;
  for (std::size_t q = 0; q < a.size() && q < b.size(); ++q)
    if (std::memcmp(&a[q], &b[q], sizeof(float)) != 0) ++n;
  return n + (a.size() > b.size() ? a.size() - b.size() : b.size() - a.size());
}

inline double total(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += x;
  return s;
}

}  // namespace wsm5_test
