// wsm5_capture.h - reading a WSM5 capture (docs/capture_format.md, kernel wsm5), the one reader
// of its replay adapter and its tests (not installed). Inputs are the tile WRF passed to wsm5 (no
// halo); wsm5init is redone from the constants WRF passed (attributes), as WRF does at start-up.
#pragma once
#include <map>
#include <string>
#include <vector>
#include "capture_io.h"
#include "errors.h"
#include "wrf_dims.h"
#include "wsm5.h"

namespace wrfgpu {
namespace wsm5 {

struct Capture {
  std::string path;
  std::size_t ni = 0, nk = 0, nj = 0;  // of the columns read
  WrfDims dims;  // memory == tile (a capture holds the tile; a window is a smaller tile)
  float delt = 0;
  Constants c;
  std::map<std::string, std::vector<float>> in;  // th qv qc qr qi qs rho pii p dz rainnc snownc
  bool has_snow = true;
};

// The whole tile, or the window's columns of it (WSM5 is column-local: a window needs no halo).
inline Capture load_capture(const NcFile& f, TileWindow w = {}) {
  const std::vector<std::string> d3 = {"south_north", "bottom_top", "west_east"};
  const std::vector<std::string> d2 = {"south_north", "west_east"};
  Capture k;
  k.path = f.path();
  k.nj = f.dim_len("south_north");
  k.nk = f.dim_len("bottom_top");
  k.ni = f.dim_len("west_east");
  // WRF's own indices for the tile; memory == tile in a capture.
  WrfDims& d = k.dims;
  d.its = d.ims = f.att_int("its"); d.ite = d.ime = f.att_int("ite");
  d.jts = d.jms = f.att_int("jts"); d.jte = d.jme = f.att_int("jte");
  d.kts = d.kms = f.att_int("kts"); d.kte = d.kme = f.att_int("kte");
  d.ids = f.att_int("ids"); d.ide = f.att_int("ide");
  d.jds = f.att_int("jds"); d.jde = f.att_int("jde");
  d.kds = f.att_int("kds"); d.kde = f.att_int("kde");
  if ((std::size_t)d.tile_ni() != k.ni || (std::size_t)d.tile_nj() != k.nj || (std::size_t)d.tile_nk() != k.nk)
    throw InputError(k.path + ": tile bounds its..ite, jts..jte, kts..kte (" +
                     std::to_string(d.tile_ni()) + "x" + std::to_string(d.tile_nj()) + "x" +
                     std::to_string(d.tile_nk()) + ") do not match the dimensions west_east, "
                     "south_north, bottom_top (" + std::to_string(k.ni) + "x" + std::to_string(k.nj) +
                     "x" + std::to_string(k.nk) + ")");
  if (w.ni < 0) { w.ni = (int)k.ni; w.nj = (int)k.nj; }
  d.its = d.ims = d.its + w.i0;
  d.ite = d.ime = d.its + w.ni - 1;
  d.jts = d.jms = d.jts + w.j0;
  d.jte = d.jme = d.jts + w.nj - 1;
  k.ni = w.ni;
  k.nj = w.nj;
  for (const char* v : {"th", "qv", "qc", "qr", "qi", "qs", "rho", "pii", "p", "dz"})
    k.in[v] = read_checked(f, v, d3, w);
  k.in["rainnc"] = read_checked(f, "rainnc", d2, w);
  k.has_snow = f.att_int_or("snow_present", 1) != 0 && f.has_var("snownc");
  k.in["snownc"] = k.has_snow ? read_checked(f, "snownc", d2, w) : std::vector<float>(k.ni * k.nj, 0.f);
  k.delt = (float)f.att_double_or("delt", f.att_double("dt"));
  if (!(k.delt > 0)) throw InputError(k.path + ": attribute 'delt' = " + std::to_string(k.delt) + " is not a positive time step");
  Constants b = wrf_default_constants();
  // The constants WRF passed, when recorded (capture format: all 17 and dens).
  auto get = [&](const char* n, float v) { return (float)f.att_double_or(n, v); };
  b.g = get("g", b.g); b.cpd = get("cpd", b.cpd); b.cpv = get("cpv", b.cpv); b.rd = get("rd", b.rd);
  b.rv = get("rv", b.rv); b.t0c = get("t0c", b.t0c); b.ep1 = get("ep1", b.ep1); b.ep2 = get("ep2", b.ep2);
  b.qmin = get("qmin", b.qmin); b.xls = get("xls", b.xls); b.xlv0 = get("xlv0", b.xlv0);
  b.xlf0 = get("xlf0", b.xlf0); b.den0 = get("den0", b.den0); b.denr = get("denr", b.denr);
  b.cliq = get("cliq", b.cliq); b.cice = get("cice", b.cice); b.psat = get("psat", b.psat);
  k.c = wsm5init(b, get("dens", b.dens));
  return k;
}

}  // namespace wsm5
}  // namespace wrfgpu
