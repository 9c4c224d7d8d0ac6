// verify.cpp - per-level mean variance and per-cell errors (see verify.h).
#include "verify.h"
#include <cmath>
#include <vector>

namespace wrfgpu {

template <class T>
static FieldStats compare_impl(const std::string& name, const T* ref, const T* x, std::size_t ni,
                               std::size_t nk, std::size_t nj, double rel_floor) {
  FieldStats s;
  s.name = name;
  s.cells = ni * nk * nj;
  double sum_rel = 0;
  for (std::size_t k = 0; k < nk; ++k) {
    // Level means in double, so the figure measures the data, not the summation.
    double mr = 0, mx = 0;
    for (std::size_t j = 0; j < nj; ++j)
      for (std::size_t i = 0; i < ni; ++i) {
        std::size_t c = i + ni * (k + nk * j);
        double r = ref[c], v = x[c];
        if (!std::isfinite(v)) { ++s.nonfinite; continue; }
        mr += r;
        mx += v;
        double a = std::fabs(r - v);
        if (a > s.max_abs) s.max_abs = a;
        if (std::fabs(r) > rel_floor && r != 0) {
          double rel = a / std::fabs(r);
          if (rel > s.max_rel) { s.max_rel = rel; s.worst_i = i; s.worst_k = k; s.worst_j = j; }
        }
      }
    mr /= double(ni * nj);
    mx /= double(ni * nj);
    if (mr != 0) {
      sum_rel += std::fabs((mr - mx) / mr);
      ++s.levels_used;
    }
  }
  s.plmv = s.levels_used ? sum_rel / s.levels_used : 0.0;
  return s;
}

FieldStats compare_field(const std::string& name, const float* ref, const float* x, std::size_t ni,
                         std::size_t nk, std::size_t nj, double rel_floor) {
  return compare_impl(name, ref, x, ni, nk, nj, rel_floor);
}
FieldStats compare_field(const std::string& name, const double* ref, const double* x,
                         std::size_t ni, std::size_t nk, std::size_t nj, double rel_floor) {
  return compare_impl(name, ref, x, ni, nk, nj, rel_floor);
}

}  // namespace wrfgpu
