// verify.cpp - per-level mean variance and per-cell errors (see verify.h).
#include "verify.h"
#include <algorithm>
#include <cmath>
#include <vector>

namespace wrfgpu {

void plmv_from_means(const std::vector<double>& mref, const std::vector<double>& m,
                     double level_floor, FieldStats& s, const std::vector<double>* mabs,
                     double cancel) {
  // A negative floor is relative: -f means f times the largest level mean of |ref|.
  if (level_floor < 0 && mabs) {
    double mx = 0;
    for (double a : *mabs) mx = std::max(mx, a);
    level_floor = -level_floor * mx;
  }
  double acc = 0, acc_lit = 0;
  std::size_t n = 0, n_lit = 0;
  for (std::size_t k = 0; k < mref.size(); ++k) {
    if (mref[k] == 0) continue;
    double r = std::fabs((mref[k] - m[k]) / mref[k]);
    acc_lit += r;
    ++n_lit;
    bool cancelled = mabs && cancel > 0 && std::fabs(mref[k]) < cancel * (*mabs)[k];
    if (std::fabs(mref[k]) > level_floor && !cancelled) {
      acc += r;
      ++n;
    }
  }
  s.levels_used = n;
  s.plmv = n ? acc / n : 0.0;
  s.plmv_literal = n_lit ? acc_lit / n_lit : 0.0;
}

template <class T>
static FieldStats compare_impl(const std::string& name, const T* ref, const T* x, std::size_t ni,
                               std::size_t nk, std::size_t nj, double rel_floor, double level_floor) {
  FieldStats s;
  s.name = name;
  s.cells = ni * nk * nj;
  std::vector<double> mref(nk), mx(nk);
  for (std::size_t k = 0; k < nk; ++k) {
    // Level means in double, so the figure measures the data, not the summation.
    double mr = 0, xm = 0;
    for (std::size_t j = 0; j < nj; ++j)
      for (std::size_t i = 0; i < ni; ++i) {
        std::size_t c = i + ni * (k + nk * j);
        double r = ref[c], v = x[c];
        if (!std::isfinite(v)) { ++s.nonfinite; continue; }
        mr += r;
        xm += v;
        double a = std::fabs(r - v);
        if (a > s.max_abs) s.max_abs = a;
        if (std::fabs(r) > rel_floor && r != 0) {
          double rel = a / std::fabs(r);
          if (rel > s.max_rel) { s.max_rel = rel; s.worst_i = i; s.worst_k = k; s.worst_j = j; }
        }
      }
    mref[k] = mr / double(ni * nj);
    mx[k] = xm / double(ni * nj);
  }
  plmv_from_means(mref, mx, level_floor, s);
  return s;
}

FieldStats compare_field(const std::string& name, const float* ref, const float* x, std::size_t ni,
                         std::size_t nk, std::size_t nj, double rel_floor, double level_floor) {
  return compare_impl(name, ref, x, ni, nk, nj, rel_floor, level_floor);
}
FieldStats compare_field(const std::string& name, const double* ref, const double* x,
                         std::size_t ni, std::size_t nk, std::size_t nj, double rel_floor,
                         double level_floor) {
  return compare_impl(name, ref, x, ni, nk, nj, rel_floor, level_floor);
}

}  // namespace wrfgpu
