// advection_capture.cpp - see advection_capture.h.
#include "advection_capture.h"
#include "capture_io.h"
#include "errors.h"

namespace wrfgpu {
namespace advection {

AdvectCapture load_capture(const std::string& path) {
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
  const std::vector<std::size_t> s4 = {ns, nj, nk, ni}, s3 = {nj, nk, ni}, s2 = {nj, ni}, s1 = {nk};
  c.field = nc.read_float("field", s4);
  c.field_old = nc.read_float("field_old", s4);
  c.ru = nc.read_float("ru", s3); c.rv = nc.read_float("rv", s3); c.rom = nc.read_float("rom", s3);
  c.mut = nc.read_float("mut", s2);
  c.mub = nc.has_var("mub") ? nc.read_float("mub", s2) : std::vector<float>(nj * ni, 0.f);
  c.mu_old = nc.has_var("mu_old") ? nc.read_float("mu_old", s2) : std::vector<float>(nj * ni, 0.f);
  c.msftx = nc.read_float("msftx", s2); c.msfty = nc.read_float("msfty", s2);
  c.c1 = nc.read_float("c1", s1); c.c2 = nc.read_float("c2", s1);
  c.fzm = nc.read_float("fzm", s1); c.fzp = nc.read_float("fzp", s1); c.rdzw = nc.read_float("rdzw", s1);
  // WRF's output is absent from cases made by tools/make_large_case (their reference is the
  // CPU backend).
  if (nc.has_var("tendency_out")) c.tendency_ref = nc.read_float("tendency_out", s4);
  if (nc.has_var("h_tendency_out")) c.h_ref = nc.read_float("h_tendency_out", s4);
  if (nc.has_var("z_tendency_out")) c.z_ref = nc.read_float("z_tendency_out", s4);
  return c;
}

}  // namespace advection
}  // namespace wrfgpu
