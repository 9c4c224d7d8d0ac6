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
static LevelSums accumulate_impl(const T* ref, const T* x, std::size_t ni, std::size_t nk,
                                 std::size_t nj, double rel_floor) {
  LevelSums s;
  s.ref.assign(nk, 0.0);
  s.x.assign(nk, 0.0);
  s.absref.assign(nk, 0.0);
  s.cols = double(ni * nj);
  // Level sums in double, so the figure measures the data, not the summation.
  for (std::size_t k = 0; k < nk; ++k)
    for (std::size_t j = 0; j < nj; ++j)
      for (std::size_t i = 0; i < ni; ++i) {
        std::size_t c = i + ni * (k + nk * j);
        double r = ref[c], v = x[c];
        // A non-finite cell on either side is counted and left out of every sum: counted in
        // the reference too, since a NaN there would otherwise compare as "no difference".
        const bool bad_v = !std::isfinite(v), bad_r = !std::isfinite(r);
        s.nonfinite += bad_v;
        s.nonfinite_ref += bad_r;
        if (bad_v || bad_r) continue;
        s.ref[k] += r;
        s.x[k] += v;
        s.absref[k] += std::fabs(r);
        double a = std::fabs(r - v);
        if (a > s.max_abs) s.max_abs = a;
        if (std::fabs(r) > s.max_absref) s.max_absref = std::fabs(r);
        if (std::fabs(r) > rel_floor && r != 0) {
          double rel = a / std::fabs(r);
          if (rel > s.max_rel) { s.max_rel = rel; s.worst_i = i; s.worst_k = k; s.worst_j = j; }
        }
      }
  return s;
}

LevelSums accumulate_levels(const float* ref, const float* x, std::size_t ni, std::size_t nk,
                            std::size_t nj, double rel_floor) {
  return accumulate_impl(ref, x, ni, nk, nj, rel_floor);
}

FieldStats finish_stats(const std::string& name, const LevelSums& sums, double level_floor,
                        double cancel, std::vector<double>* mref_out, std::vector<double>* mx_out) {
  FieldStats s;
  s.name = name;
  std::size_t nk = sums.ref.size();
  s.cells = (std::size_t)(sums.cols * nk);
  s.max_abs = sums.max_abs;
  s.max_rel = sums.max_rel;
  s.nonfinite = sums.nonfinite;
  s.nonfinite_ref = sums.nonfinite_ref;
  s.max_absref = sums.max_absref;
  s.worst_i = sums.worst_i; s.worst_k = sums.worst_k; s.worst_j = sums.worst_j;
  std::vector<double> mr(nk), mx(nk), ma(nk);
  for (std::size_t k = 0; k < nk; ++k) {
    mr[k] = sums.ref[k] / sums.cols;
    mx[k] = sums.x[k] / sums.cols;
    ma[k] = sums.absref[k] / sums.cols;
  }
  plmv_from_means(mr, mx, level_floor, s, &ma, cancel);
  if (mref_out) *mref_out = mr;
  if (mx_out) *mx_out = mx;
  return s;
}

FieldStats compare_field(const std::string& name, const float* ref, const float* x, std::size_t ni,
                         std::size_t nk, std::size_t nj, double rel_floor, double level_floor) {
  return finish_stats(name, accumulate_impl(ref, x, ni, nk, nj, rel_floor), level_floor);
}
FieldStats compare_field(const std::string& name, const double* ref, const double* x,
                         std::size_t ni, std::size_t nk, std::size_t nj, double rel_floor,
                         double level_floor) {
  return finish_stats(name, accumulate_impl(ref, x, ni, nk, nj, rel_floor), level_floor);
}

}  // namespace wrfgpu
