// advection_capture.cpp - see advection_capture.h.
#include "advection_capture.h"
#include "capture_io.h"
#include "errors.h"

namespace wrfgpu {
namespace advection {

AdvectCapture load_capture(const std::string& path, const CaptureWindow* window) {
  NcFile nc(path);
  AdvectCapture c;
  c.path = path;
  c.kernel = nc.att_string("kernel");
  if (c.kernel != "advect_scalar_pd" && c.kernel != "advect_scalar")
    throw InputError(path + ": kernel attribute is '" + c.kernel + "', not advect_scalar_pd/advect_scalar");
  c.pd = c.kernel == "advect_scalar_pd";
  c.case_name = nc.att_string_or("case_name", "");
  c.source = nc.att_string_or("source", "");
  c.scalar_names = nc.att_string_or("scalar_names", "");
  const std::size_t ns = nc.dim_len("scalar"), nj = nc.dim_len("south_north"),
                    nk = nc.dim_len("bottom_top_stag"), ni = nc.dim_len("west_east");
  c.nspec = (int)ns;
  WrfDims& d = c.d;
  d.ids = nc.att_int("ids"); d.ide = nc.att_int("ide"); d.jds = nc.att_int("jds"); d.jde = nc.att_int("jde");
  d.kds = nc.att_int("kds"); d.kde = nc.att_int("kde");
  d.its = nc.att_int("its"); d.ite = nc.att_int("ite"); d.jts = nc.att_int("jts"); d.jte = nc.att_int("jte");
  d.kts = nc.att_int("kts"); d.kte = nc.att_int("kte");
  d.ims = nc.att_int("region_i0"); d.jms = nc.att_int("region_j0"); d.kms = nc.att_int("region_k0");
  d.ime = d.ims + (int)ni - 1; d.jme = d.jms + (int)nj - 1; d.kme = d.kms + (int)nk - 1;
  // Offsets and counts of the part of the stored region that is read.
  std::size_t oi = 0, oj = 0, ci = ni, cj = nj;
  if (window) {
    const CaptureWindow& w = *window;
    if (w.i0 < d.ims || w.i1 > d.ime || w.j0 < d.jms || w.j1 > d.jme || w.i0 > w.i1 || w.j0 > w.j1)
      throw InputError(path + ": requested window i " + std::to_string(w.i0) + ".." + std::to_string(w.i1) +
                       ", j " + std::to_string(w.j0) + ".." + std::to_string(w.j1) +
                       " is not inside the stored region i " + std::to_string(d.ims) + ".." +
                       std::to_string(d.ime) + ", j " + std::to_string(d.jms) + ".." + std::to_string(d.jme));
    oi = (std::size_t)(w.i0 - d.ims); oj = (std::size_t)(w.j0 - d.jms);
    ci = (std::size_t)(w.i1 - w.i0 + 1); cj = (std::size_t)(w.j1 - w.j0 + 1);
    d.ims = w.i0; d.ime = w.i1; d.jms = w.j0; d.jme = w.j1;
  }
  if (nc.att_int_or("real_kind", 4) != 4) throw InputError(path + ": real_kind != 4 (only single precision WRF)");
  AdvectFlags& f = c.flags;
  f.h_order = nc.att_int("h_sca_adv_order");
  f.v_order = nc.att_int("v_sca_adv_order");
  auto flag = [&](const char* n) { return nc.att_int_or(n, 0) != 0; };
  f.periodic_x = flag("periodic_x"); f.periodic_y = flag("periodic_y");
  f.symmetric_xs = flag("symmetric_xs"); f.symmetric_xe = flag("symmetric_xe");
  f.symmetric_ys = flag("symmetric_ys"); f.symmetric_ye = flag("symmetric_ye");
  f.open_xs = flag("open_xs"); f.open_xe = flag("open_xe"); f.open_ys = flag("open_ys"); f.open_ye = flag("open_ye");
  f.specified = flag("specified"); f.nested = flag("nested"); f.polar = flag("polar");
  c.rdx = (float)nc.att_double("rdx"); c.rdy = (float)nc.att_double("rdy");
  c.dt = (float)nc.att_double_or("dt_rk", nc.att_double("dt"));
  c.time_step = nc.att_int_or("time_step", 1);
  c.tenddec = nc.att_int_or("tenddec", 0) != 0;
  // Every 2-D to 4-D variable is (..., south_north, [bottom_top_stag,] west_east) over the
  // stored region; read the window's part of each.
  auto rd = [&](const char* name, std::size_t lead, bool has_k) {
    std::vector<std::size_t> full, start, count;
    if (lead) { full.push_back(ns); start.push_back(0); count.push_back(ns); }
    full.push_back(nj); start.push_back(oj); count.push_back(cj);
    if (has_k) { full.push_back(nk); start.push_back(0); count.push_back(nk); }
    full.push_back(ni); start.push_back(oi); count.push_back(ci);
    nc.check_shape(name, full);  // names the variable and its dimensions if wrong
    return nc.read_float_slab(name, start, count);
  };
  const std::vector<std::size_t> s1 = {nk};
  c.field = rd("field", 1, true);
  c.field_old = rd("field_old", 1, true);
  c.ru = rd("ru", 0, true); c.rv = rd("rv", 0, true); c.rom = rd("rom", 0, true);
  c.mut = rd("mut", 0, false);
  // mub and mu_old enter only advect_scalar_pd's mass (the limiter's (c1 mub + c2) + c1 mu_old);
  // the unlimited scheme's captures need not hold them
  if (c.pd || nc.has_var("mub")) c.mub = rd("mub", 0, false);
  else c.mub.assign(cj * ci, 0.f);
  if (c.pd || nc.has_var("mu_old")) c.mu_old = rd("mu_old", 0, false);
  else c.mu_old.assign(cj * ci, 0.f);
  c.msftx = rd("msftx", 0, false); c.msfty = rd("msfty", 0, false);
  c.c1 = nc.read_float("c1", s1); c.c2 = nc.read_float("c2", s1);
  c.fzm = nc.read_float("fzm", s1); c.fzp = nc.read_float("fzp", s1); c.rdzw = nc.read_float("rdzw", s1);
  // WRF's output is absent from cases made by tools/make_large_case (their reference is the
  // CPU backend).
  if (nc.has_var("tendency_out")) c.tendency_ref = rd("tendency_out", 1, true);
  if (nc.has_var("h_tendency_out")) c.h_ref = rd("h_tendency_out", 1, true);
  if (nc.has_var("z_tendency_out")) c.z_ref = rd("z_tendency_out", 1, true);
  return c;
}

}  // namespace advection
}  // namespace wrfgpu
