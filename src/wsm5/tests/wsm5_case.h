// wsm5_case.h - loading a WSM5 capture (docs/capture_format.md, kernel = wsm5) and running
// it through wrfgpu::wsm5, for the tests in this folder.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <map>
#include <string>
#include <vector>

#include "capture_io.h"
#include "errors.h"
#include "test_util.h"
#include "verify.h"
#include "wsm5.h"

namespace wsm5_test {

using namespace wrfgpu;

struct Case {
  std::string path;
  std::size_t ni = 0, nk = 0, nj = 0;
  WrfDims dims;  // memory == tile (a capture holds the tile)
  float delt = 0;
  wsm5::Constants c;
  std::map<std::string, std::vector<float>> in;  // th qv qc qr qi qs rho pii p dz rainnc snownc
  bool has_snow = true;
};

inline Case load_case(const std::string& path) {
  Case k;
  k.path = path;
  NcFile f(path);
  k.nj = f.dim_len("south_north");
  k.nk = f.dim_len("bottom_top");
  k.ni = f.dim_len("west_east");
  WrfDims d;
  d.its = d.ims = f.att_int_or("its", 1);
  d.jts = d.jms = f.att_int_or("jts", 1);
  d.kts = d.kms = f.att_int_or("kts", 1);
  d.ite = d.ime = d.its + (int)k.ni - 1;
  d.jte = d.jme = d.jts + (int)k.nj - 1;
  d.kte = d.kme = d.kts + (int)k.nk - 1;
  d.ids = f.att_int_or("ids", d.its);
  d.ide = f.att_int_or("ide", d.ite + 1);
  d.jds = f.att_int_or("jds", d.jts);
  d.jde = f.att_int_or("jde", d.jte + 1);
  d.kds = f.att_int_or("kds", d.kts);
  d.kde = f.att_int_or("kde", d.kte + 1);
  k.dims = d;
  k.delt = (float)f.att_double_or("delt", f.att_double("dt"));
  wsm5::Constants b = wsm5::wrf_model_constants();
  auto get = [&](const char* n, float v) { return (float)f.att_double_or(n, v); };
  b.g = get("g", b.g); b.cpd = get("cpd", b.cpd); b.cpv = get("cpv", b.cpv); b.rd = get("rd", b.rd);
  b.rv = get("rv", b.rv); b.t0c = get("t0c", b.t0c); b.ep1 = get("ep1", b.ep1); b.ep2 = get("ep2", b.ep2);
  b.qmin = get("qmin", b.qmin); b.xls = get("xls", b.xls); b.xlv0 = get("xlv0", b.xlv0);
  b.xlf0 = get("xlf0", b.xlf0); b.den0 = get("den0", b.den0); b.denr = get("denr", b.denr);
  b.cliq = get("cliq", b.cliq); b.cice = get("cice", b.cice); b.psat = get("psat", b.psat);
  k.c = wsm5::wsm5init(b, get("dens", b.dens));
  for (const char* n : {"th", "qv", "qc", "qr", "qi", "qs", "rho", "pii", "p", "dz", "rainnc"})
    k.in[n] = f.read_float(n);
  k.has_snow = f.has_var("snownc") && f.att_int_or("snow_present", 1) != 0;
  k.in["snownc"] = k.has_snow ? f.read_float("snownc") : std::vector<float>(k.ni * k.nj, 0.f);
  return k;
}

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

// Files in the test data folder whose name contains `part` and ends in .nc, sorted.
inline std::vector<std::string> data_files(const std::string& part) {
  std::vector<std::string> v;
  DIR* d = opendir(wrfgpu_test::data_dir().c_str());
  if (!d) return v;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n.find(part) != std::string::npos && n.size() > 3 && n.substr(n.size() - 3) == ".nc")
      v.push_back(wrfgpu_test::data_file(n));
  }
  closedir(d);
  std::sort(v.begin(), v.end());
  return v;
}

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
