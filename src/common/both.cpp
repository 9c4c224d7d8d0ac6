// both.cpp - compare_both (both.h).
#include "both.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "errors.h"
#include "verify.h"

namespace wrfgpu {

BothSummary compare_both(const char* kernel, Mode mode, const std::vector<BothOutput>& outputs) {
  BothSummary all;
  std::string first_bad;
  for (const BothOutput& o : outputs) {
    if (o.cpu.size() != o.gpu.size())
      throw RuntimeError(std::string(kernel) + " both: " + o.name + ": CPU and GPU outputs differ in size");
    std::size_t n_diff = 0, first = 0;
    double max_abs = 0;
    for (std::size_t x = 0; x < o.cpu.size(); ++x) {
      const float a = o.cpu[x], g = o.gpu[x];
      if (std::memcmp(&a, &g, sizeof a) == 0 || a == g) continue;
      if (n_diff++ == 0) first = x;
      const double dabs = std::fabs((double)a - (double)g);
      if (dabs > max_abs || std::isnan(dabs)) max_abs = dabs;
    }
    const FieldStats st = compare_field(o.name, o.cpu.data(), o.gpu.data(), o.ni, o.nk, o.nj, 1e-12);
    std::string at;
    if (n_diff) {
      char buf[160];
      std::snprintf(buf, sizeof buf, ", first at %s: CPU %.9g GPU %.9g",
                    o.where ? o.where(first).c_str() : std::to_string(first).c_str(),
                    (double)o.cpu[first], (double)o.gpu[first]);
      at = buf;
    }
    const bool outside = o.plmv_limit == 0 ? n_diff > 0
                                           : !(st.plmv <= o.plmv_limit) || st.nonfinite > st.nonfinite_ref;
    char lim[32] = "bitwise";
    if (o.plmv_limit != 0) std::snprintf(lim, sizeof lim, "%.0e", o.plmv_limit);
    std::fprintf(stderr, "wrfgpu: %s both (%s): %-8s differing %zu of %zu, max_abs %.3e, plmv %.3e "
                 "(limit %s)%s%s\n", kernel, to_string(mode), o.name.c_str(), n_diff, o.cpu.size(),
                 max_abs, st.plmv, lim, at.c_str(), outside ? "  OUTSIDE" : "");
    if (outside && first_bad.empty()) {
      char buf[96];
      std::snprintf(buf, sizeof buf, " (plmv %.3e, %zu values differ)", st.plmv, n_diff);
      first_bad = o.name + buf + at;
    }
    all.differing += n_diff;
    all.max_abs = std::max(all.max_abs, max_abs);
  }
  if (!first_bad.empty())
    throw RuntimeError(std::string(kernel) + ": " + to_string(mode) + " mode, the GPU differs from " +
                       "the CPU beyond the kernel's agreement: " + first_bad);
  return all;
}

}  // namespace wrfgpu
