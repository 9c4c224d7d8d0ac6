// radm2sorg_capture.h - reading a RADM2SORG capture (docs/capture_format.md, kernel radm2sorg_kpp),
// the one reader of its replay adapter and its tests (not installed): species, radicals, met
// fields and photolysis rates of every cell, field-major as run_dense takes them; cells are
// independent, so a window (e.g. an MPI rank's patch) is read as a hyperslab.
#pragma once
#include <string>
#include <vector>
#include "capture_io.h"
#include "errors.h"
#include "radm2sorg.h"

namespace wrfgpu {
namespace radm2sorg {

struct Capture {
  std::size_t ni = 0, nk = 0, nj = 0, n = 0;  // of the columns read; n = ni * nk * nj cells
  float dtstepc = 0;
  int p_nu0 = 2;
  std::vector<float> state, met;  // kNState * n, kNMet * n: state_names(), met_names()
};

inline Capture load_capture(const NcFile& f, TileWindow w = {}) {
  const std::vector<std::string> d3 = {"south_north", "bottom_top", "west_east"};
  // The region is the tile its:ite, kts:kte, jts:jte (capture format). Under MPI the driver
  // splits ranks by these attributes, so they must agree with the stored dimensions.
  const long ni = (long)f.dim_len("west_east"), nj = (long)f.dim_len("south_north"),
             nk = (long)f.dim_len("bottom_top");
  const long ti = f.att_int("ite") - f.att_int("its") + 1, tj = f.att_int("jte") - f.att_int("jts") + 1,
             tk = f.att_int("kte") - f.att_int("kts") + 1;
  if (ti != ni || tj != nj || tk != nk)
    throw InputError(f.path() + ": tile bounds its..ite, jts..jte, kts..kte (" + std::to_string(ti) + "x" +
                     std::to_string(tj) + "x" + std::to_string(tk) + ") do not match the dimensions "
                     "west_east, south_north, bottom_top (" + std::to_string(ni) + "x" + std::to_string(nj) +
                     "x" + std::to_string(nk) + ")");
  if (w.ni < 0) { w.ni = (int)ni; w.nj = (int)nj; }
  Capture c;
  c.ni = (std::size_t)w.ni;
  c.nj = (std::size_t)w.nj;
  c.nk = (std::size_t)nk;
  c.n = c.ni * c.nj * c.nk;
  for (auto& s : state_names()) {
    auto v = read_checked(f, s, d3, w);
    c.state.insert(c.state.end(), v.begin(), v.end());
  }
  for (auto& s : met_names()) {
    auto v = read_checked(f, s, d3, w);
    c.met.insert(c.met.end(), v.begin(), v.end());
  }
  c.dtstepc = (float)f.att_double_or("dtstepc", f.att_double("dt"));
  if (!(c.dtstepc > 0)) throw InputError(f.path() + ": attribute 'dtstepc' = " + std::to_string(c.dtstepc) + " is not a positive time step");
  c.p_nu0 = f.att_int_or("p_nu0", 2);
  const std::string method = f.att_string_or("method", "ros3");
  if (method != "ros3")
    throw InputError(f.path() + ": attribute 'method' = '" + method + "': WRF's interface uses ros3");
  return c;
}

}  // namespace radm2sorg
}  // namespace wrfgpu
