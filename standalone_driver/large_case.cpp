#include "large_case.h"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <unistd.h>
#include <vector>
#include "capture_io.h"
#include "errors.h"

namespace wrfgpu {

namespace {

// Mirror tiling: 0..n-1, n-1..0, 0..n-1, ... so neighbouring tiles join smoothly; negative
// i (a halo before the tile) reflects the same way.
int mirror(int i, int n) {
  if (n == 1) return 0;
  int m = ((i % (2 * n)) + 2 * n) % (2 * n);
  return m < n ? m : 2 * n - 1 - m;
}

bool is_mixing_ratio(const std::string& v) {
  return v == "qv" || v == "qc" || v == "qr" || v == "qi" || v == "qs" || v == "field" ||
         v == "field_old";
}

}  // namespace

namespace {

// How the tile grows: the new size minus the captured tile's mass points in i, j and k.
// Tiles are made from the captured tile's mass points only: a stored halo (advection) and
// WRF's staggered end column (ite = ide) hold boundary values or nothing defined, which
// must not be copied into the interior of the large domain. The large case's halo is the
// mirror image of its own edge.
struct Growth {
  int its, jts, ri0, rj0, ni0, nj0, nk0;  // the captured tile and where its region starts
  long di, dj, dk;
};
Growth growth(const NcFile& src, const LargeCaseSpec& spec) {
  Growth g;
  g.its = src.att_int("its");
  g.jts = src.att_int("jts");
  const int ite = src.att_int("ite"), jte = src.att_int("jte"), kts = src.att_int("kts"), kte = src.att_int("kte");
  const int ie = std::min(ite, src.att_int("ide") - 1), je = std::min(jte, src.att_int("jde") - 1);
  g.ri0 = src.att_int_or("region_i0", g.its);
  g.rj0 = src.att_int_or("region_j0", g.jts);
  g.ni0 = ie - g.its + 1;
  g.nj0 = je - g.jts + 1;
  // kte may be the staggered top (advection): mass levels are then kte-kts.
  g.nk0 = src.att_int("kde") == kte && src.att_string("kernel") == "advect_scalar_pd" ? kte - kts : kte - kts + 1;
  // Tiles are read through mirror(): the tile must be non-empty and inside the stored region.
  const long nwe = (long)src.dim_len("west_east"), nsn = (long)src.dim_len("south_north");
  if (g.ni0 < 1 || g.nj0 < 1 || g.nk0 < 1 || g.its < g.ri0 || g.jts < g.rj0 ||
      g.its - g.ri0 + g.ni0 > nwe || g.jts - g.rj0 + g.nj0 > nsn)
    throw InputError(src.path() + ": tile bounds its..ite, jts..jte, kts..kte (" + std::to_string(g.ni0) + "x" +
                     std::to_string(g.nj0) + "x" + std::to_string(g.nk0) +
                     " mass points) do not lie inside the stored dimensions west_east, south_north (" +
                     std::to_string(nwe) + "x" + std::to_string(nsn) + ")");
  g.di = (long)spec.ni - g.ni0;
  g.dj = (long)spec.nj - g.nj0;
  g.dk = (long)spec.nk - g.nk0;
  return g;
}

// The new extent of each dimension of a variable.
std::vector<std::size_t> new_shape(const std::vector<std::string>& dims, const std::vector<std::size_t>& shape,
                                   const Growth& g, const LargeCaseSpec& spec, const std::string& v) {
  std::vector<std::size_t> n = shape;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    long len = (long)shape[d];
    if (dims[d] == "west_east") len += g.di;
    else if (dims[d] == "south_north") len += g.dj;
    else if (dims[d] == "bottom_top" || dims[d] == "bottom_top_stag") len += g.dk;
    else if (dims[d] == "scalar" && spec.nscalar > 0) len = spec.nscalar;
    if (len < 1) throw InputError("make_large_case: size too small for " + v);
    n[d] = (std::size_t)len;
  }
  return n;
}

void write_case(const NcFile& src, NcFile& out, const std::string& in_path, const LargeCaseSpec& spec,
                const Growth& g);

}  // namespace

void make_large_case(const std::string& in_path, const std::string& out_path, const LargeCaseSpec& spec) {
  // 1 + A sin cos is positive only for A < 1 (a larger A makes negative mixing ratios).
  if (!(spec.perturbation >= 0 && spec.perturbation < 1))
    throw InputError("make_large_case: perturbation " + std::to_string(spec.perturbation) +
                     " is outside [0, 1) (mixing ratios would turn negative)");
  if (spec.ni < 1 || spec.nj < 1 || spec.nk < 2 || spec.nscalar < 0)
    throw InputError("make_large_case: sizes must be at least 1x1x2 and the tracer count >= 0");
  NcFile src(in_path);
  if (!spec.kernel.empty()) {
    const std::string k = src.att_string("kernel");
    if (spec.kernel != k && !(k == "advect_scalar_pd" && spec.kernel == "advect_scalar"))
      throw InputError("make_large_case: " + in_path + " is a '" + k + "' capture; it cannot make a '" +
                       spec.kernel + "' case (only advect_scalar_pd -> advect_scalar)");
  }
  const Growth g = growth(src, spec);
  // Each variable is built whole in memory (8 bytes per value, and 4 more for NetCDF's
  // conversion to float): refuse before writing anything when the largest would not fit.
  double worst = 0;
  std::string worst_var;
  for (const auto& v : src.var_names()) {
    if (v.size() > 4 && v.compare(v.size() - 4, 4, "_out") == 0) continue;  // not written
    auto shape = src.var_shape(v);
    auto nshape = new_shape(src.var_dim_names(v), shape, g, spec, v);
    double in = 1, n = 1;
    for (std::size_t d = 0; d < shape.size(); ++d) { in *= shape[d]; n *= nshape[d]; }
    if (8 * in + 12 * n > worst) { worst = 8 * in + 12 * n; worst_var = v; }
  }
  const double have = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  if (have > 0 && worst > 0.8 * have) {
    char b[160];
    std::snprintf(b, sizeof b, " needs about %.1f GiB of memory for variable '%s'; this machine has %.1f GiB",
                  worst / 1073741824.0, worst_var.c_str(), have / 1073741824.0);
    throw InputError("make_large_case: size " + std::to_string(spec.ni) + "x" + std::to_string(spec.nj) + "x" +
                     std::to_string(spec.nk) + b);
  }
  // Nothing half-written is left behind: a failure after the file was created removes it
  // (a failure to create it leaves whatever is at that path alone).
  std::unique_ptr<NcFile> out(new NcFile(out_path, true));
  try {
    write_case(src, *out, in_path, spec, g);
    out.reset();
  } catch (...) {
    out.reset();
    std::remove(out_path.c_str());
    throw;
  }
}

namespace {

void write_case(const NcFile& src, NcFile& out, const std::string& in_path, const LargeCaseSpec& spec,
                const Growth& g) {
  const int its = g.its, jts = g.jts, ri0 = g.ri0, rj0 = g.rj0, ni0 = g.ni0, nj0 = g.nj0, nk0 = g.nk0;
  const long di = g.di, dj = g.dj, dk = g.dk;
  out.set_deflate(spec.deflate);
  for (auto& a : src.global_att_names()) out.copy_att(src, a);
  for (const char* e : {"ite", "ide"}) out.put_att_int(e, src.att_int(e) + di);
  for (const char* e : {"jte", "jde"}) out.put_att_int(e, src.att_int(e) + dj);
  for (const char* e : {"kte", "kde"}) out.put_att_int(e, src.att_int(e) + dk);
  std::string name = spec.case_name.empty()
                         ? src.att_string_or("case_name", "case") + "_" + std::to_string(spec.ni) + "x" +
                               std::to_string(spec.nj) + "x" + std::to_string(spec.nk)
                         : spec.case_name;
  if (!spec.kernel.empty()) out.put_att("kernel", spec.kernel);
  out.put_att("case_name", name);
  out.put_att("source", "tools/make_large_case (mirror-tiled from " + in_path +
                            "; no WRF outputs: the reference is the CPU backend)");

  for (const auto& v : src.var_names()) {
    if (v.size() > 4 && v.compare(v.size() - 4, 4, "_out") == 0) continue;  // WRF outputs dropped
    auto dims = src.var_dim_names(v);
    auto shape = src.var_shape(v);
    std::vector<std::size_t> nshape = new_shape(dims, shape, g, spec, v);
    for (std::size_t d = 0; d < dims.size(); ++d) out.def_dim(dims[d], nshape[d]);
    bool dbl = src.var_is_double(v);
    out.def_var(v, dbl, dims, src.att_string_or("units", "", v), src.att_string_or("description", "", v));
    auto data = src.read_double(v);
    std::size_t total = 1;
    for (auto s : nshape) total *= s;
    std::vector<double> nd(total);
    const std::size_t nd_dims = dims.size();
    if (nd_dims > 8) throw InputError("make_large_case: variable " + v + " has more than 8 dimensions");
    double zscale = 1.0;
    if (v == "dz") zscale = double(nk0) / spec.nk;
    if (v == "rdzw") zscale = double(spec.nk) / nk0;
    // What each dimension is, decided once (string compares per element are too slow).
    enum Kind { kWE, kSN, kVert, kScalar, kOther };
    Kind kind[8];
    for (std::size_t d = 0; d < nd_dims; ++d)
      kind[d] = dims[d] == "west_east" ? kWE : dims[d] == "south_north" ? kSN
              : (dims[d] == "bottom_top" || dims[d] == "bottom_top_stag") ? kVert
              : dims[d] == "scalar" ? kScalar : kOther;
    const bool perturb = is_mixing_ratio(v) && spec.perturbation > 0;
    // Every output element is independent (CONUS with 81 tracers is ~10^9 of them).
#pragma omp parallel for schedule(static)
    for (std::size_t n = 0; n < total; ++n) {
      std::size_t idx[8];
      // decode n into indices (last dim fastest)
      std::size_t r = n;
      for (int d = (int)nd_dims - 1; d >= 0; --d) { idx[d] = r % nshape[d]; r /= nshape[d]; }
      // source position: vertical dims interpolate between two source levels
      std::size_t lo = 0, hi = 0;
      double w = 0;
      int vd = -1;
      std::size_t base_lo = 0, base_hi = 0, stride = 1;
      for (int d = (int)nd_dims - 1; d >= 0; --d) {
        std::size_t s;
        if (kind[d] == kWE) {
          s = (std::size_t)(its + mirror(ri0 + (int)idx[d] - its, ni0) - ri0);
        } else if (kind[d] == kSN) {
          s = (std::size_t)(jts + mirror(rj0 + (int)idx[d] - jts, nj0) - rj0);
        } else if (kind[d] == kVert) {
          double pos = nshape[d] > 1 ? double(idx[d]) * (shape[d] - 1) / (nshape[d] - 1) : 0;
          lo = (std::size_t)std::floor(pos);
          hi = std::min(lo + 1, shape[d] - 1);
          w = pos - lo;
          vd = d;
          s = 0;
        } else if (kind[d] == kScalar) {
          s = idx[d] % shape[d];
        } else {
          s = idx[d];
        }
        base_lo += s * stride;
        stride *= shape[d];
      }
      base_hi = base_lo;
      if (vd >= 0) {
        std::size_t st = 1;
        for (int d = (int)nd_dims - 1; d > vd; --d) st *= shape[d];
        base_lo += lo * st;
        base_hi += hi * st;
      }
      double val = (1 - w) * data[base_lo] + w * data[base_hi];
      val *= zscale;
      if (perturb) {
        // smooth in i and j, period ~ two source tiles; positive since 0 <= A < 1
        double x = 0, y = 0;
        for (std::size_t d = 0; d < nd_dims; ++d) {
          if (kind[d] == kWE) x = double(idx[d]) / (2.0 * shape[d]);
          if (kind[d] == kSN) y = double(idx[d]) / (2.0 * shape[d]);
          if (kind[d] == kScalar) x += 0.37 * double(idx[d] / shape[d]);  // repeated tracers differ
        }
        val *= 1.0 + spec.perturbation * std::sin(2 * M_PI * x + 0.7) * std::cos(2 * M_PI * y + 0.3);
      }
      nd[n] = val;
    }
    out.put_double(v, nd);
  }
}

}  // namespace

}  // namespace wrfgpu
