#include "large_case.h"
#include <algorithm>
#include <cmath>
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

void make_large_case(const std::string& in_path, const std::string& out_path, const LargeCaseSpec& spec) {
  NcFile src(in_path);
  int its = src.att_int("its"), ite = src.att_int("ite"), jts = src.att_int("jts"), jte = src.att_int("jte");
  int kts = src.att_int("kts"), kte = src.att_int("kte");
  // Tiles are made from the captured tile's mass points only: a stored halo (advection) and
  // WRF's staggered end column (ite = ide) hold boundary values or nothing defined, which
  // must not be copied into the interior of the large domain. The large case's halo is the
  // mirror image of its own edge.
  const int ie = std::min(ite, src.att_int("ide") - 1), je = std::min(jte, src.att_int("jde") - 1);
  const int ri0 = src.att_int_or("region_i0", its), rj0 = src.att_int_or("region_j0", jts);
  int ni0 = ie - its + 1, nj0 = je - jts + 1;
  // kte may be the staggered top (advection): mass levels are then kte-kts.
  int nk0 = src.att_int("kde") == kte && src.att_string("kernel") == "advect_scalar_pd" ? kte - kts : kte - kts + 1;
  int di = spec.ni - ni0, dj = spec.nj - nj0, dk = spec.nk - nk0;
  if (spec.ni < 1 || spec.nj < 1 || spec.nk < 2)
    throw InputError("make_large_case: sizes must be at least 1x1x2");

  NcFile out(out_path, true);
  out.set_deflate(spec.deflate);
  for (auto& a : src.global_att_names()) out.copy_att(src, a);
  for (const char* e : {"ite", "ide"}) out.put_att_int(e, src.att_int(e) + di);
  for (const char* e : {"jte", "jde"}) out.put_att_int(e, src.att_int(e) + dj);
  for (const char* e : {"kte", "kde"}) out.put_att_int(e, src.att_int(e) + dk);
  std::string name = spec.case_name.empty()
                         ? src.att_string_or("case_name", "case") + "_" + std::to_string(spec.ni) + "x" +
                               std::to_string(spec.nj) + "x" + std::to_string(spec.nk)
                         : spec.case_name;
  out.put_att("case_name", name);
  out.put_att("source", "tools/make_large_case (mirror-tiled from " + in_path +
                            "; no WRF outputs: the reference is the CPU backend)");

  for (const auto& v : src.var_names()) {
    if (v.size() > 4 && v.compare(v.size() - 4, 4, "_out") == 0) continue;  // WRF outputs dropped
    auto dims = src.var_dim_names(v);
    auto shape = src.var_shape(v);
    std::vector<std::size_t> nshape = shape;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] == "west_east") nshape[d] = shape[d] + di;
      else if (dims[d] == "south_north") nshape[d] = shape[d] + dj;
      else if (dims[d] == "bottom_top" || dims[d] == "bottom_top_stag") nshape[d] = shape[d] + dk;
      else if (dims[d] == "scalar" && spec.nscalar > 0) nshape[d] = spec.nscalar;
      if ((long)nshape[d] < 1) throw InputError("make_large_case: size too small for " + v);
      out.def_dim(dims[d], nshape[d]);
    }
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
        // smooth in i and j, period ~ two source tiles, never negative
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

}  // namespace wrfgpu
