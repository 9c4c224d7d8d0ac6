// verify.h - how we say "matches WRF": the WRF GPU benchmarks' per-level mean variance,
// plus max per-cell absolute and relative errors and a count of non-finite values.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace wrfgpu {

struct FieldStats {
  std::string name;
  double plmv = 0;          // per-level mean variance: mean_k |(mref_k - m_k)/mref_k| over levels
                            // with |mref_k| > level_floor (see compare_field)
  double plmv_literal = 0;  // the same over every level with mref_k != 0 (the literal definition)
  double max_abs = 0;       // max |ref - x|
  double max_rel = 0;       // max |ref - x| / |ref| over cells with |ref| > rel_floor
  std::size_t nonfinite = 0;  // non-finite values in x
  std::size_t nonfinite_ref = 0;  // non-finite values in ref (a reference that proves nothing)
  double max_absref = 0;    // max |ref|, for tolerances that scale with the field
  std::size_t cells = 0, levels_used = 0;
  std::size_t worst_i = 0, worst_k = 0, worst_j = 0;  // 0-based position of max_rel
};

// ref and x are dense (ni fastest, then nk, then nj) arrays of one 3-D field (nk = 1 for 2-D).
// Level means are over the ni*nj horizontal cells. Cells with |ref| <= rel_floor are left out
// of max_rel (relative error of a value that is zero in the reference has no meaning).
FieldStats compare_field(const std::string& name, const float* ref, const float* x,
                         std::size_t ni, std::size_t nk, std::size_t nj, double rel_floor = 0.0,
                         double level_floor = 0.0);
FieldStats compare_field(const std::string& name, const double* ref, const double* x,
                         std::size_t ni, std::size_t nk, std::size_t nj, double rel_floor = 0.0,
                         double level_floor = 0.0);
// The two halves of compare_field, for callers that add up sums over several patches (the
// MPI driver reduces LevelSums over ranks between them).
struct LevelSums {
  std::vector<double> ref, x, absref;  // per level: sums of ref, x and |ref|
  double cols = 0;                     // horizontal cells summed
  double max_abs = 0, max_rel = 0, max_absref = 0;
  std::size_t nonfinite = 0, nonfinite_ref = 0;  // in x, in ref; such cells are left out
  std::size_t worst_i = 0, worst_k = 0, worst_j = 0;
};
LevelSums accumulate_levels(const float* ref, const float* x, std::size_t ni, std::size_t nk,
                            std::size_t nj, double rel_floor = 0.0);
FieldStats finish_stats(const std::string& name, const LevelSums& sums, double level_floor = 0.0,
                        double cancel = 0.0, std::vector<double>* mref = nullptr,
                        std::vector<double>* mx = nullptr);

// The figure from per-level means.
// A negative level_floor is relative to the field: -f skips levels whose |mean| is below f
// times the largest per-level mean of |ref| (a tracer nearly absent from that level).
// With `mabs` (per-level means of |ref|) and cancel > 0, levels whose mean is a cancellation,
// |mref| < cancel * mean|ref| (e.g. an advection tendency, a flux divergence whose level
// mean is near zero), are skipped too: there a rounding of the cells is amplified by
// 1/cancel and the figure measures cancellation, not agreement.
void plmv_from_means(const std::vector<double>& mref, const std::vector<double>& m,
                     double level_floor, FieldStats& s, const std::vector<double>* mabs = nullptr,
                     double cancel = 0.0);

}  // namespace wrfgpu
