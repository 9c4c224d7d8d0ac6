// radm2sorg_cpu.cpp - CPU backend: OpenMP over cells, one cell's KPP arrays contiguous
// (stride 1) in a per-thread work buffer. Compiled twice (WRFGPU_MODE_NS = strict, fast).
#include <vector>
#include "radm2sorg_backends.h"

namespace wrfgpu {
namespace radm2sorg {
namespace WRFGPU_MODE_NS {

// One cell with its arrays contiguous. Everything it calls is inlined here (GCC's flatten), so
// that the stride is the constant 1 in the generated KPP functions and every array element is
// a fixed offset, as in KPP's Fortran; the operations and their order are unchanged.
template <class T>
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((flatten))
#endif
static void cpu_cell(std::size_t c, std::size_t ncell, float* state, const float* met,
                     float* vdrog3, const StateMap& map, const CellOptions& opt, T* var, T* fix,
                     T* rconst, const kpp::RosWork<T>& w, const CellStatsOut& stats) {
  kpp::RosStats st;
  run_cell<T>(c, ncell, state, met, vdrog3, map, opt, var, fix, rconst, w, 1, st);
  const int v[5] = {st.nstp, st.nacc, st.nrej, st.nsng, st.status};
  for (int f = 0; f < 5; ++f) stats.field[f][c] = v[f];
}

template <class T>
static void run_cpu_t(const CellOptions& opt, std::size_t ncell, float* state, const float* met,
                      float* vdrog3, const StateMap& map, const CellStatsOut& stats) {
  const std::size_t nwork = kpp::ros_work_size<Mech>();
  const std::size_t per_cell = mech::NVAR + mech::NFIX + mech::NREACT + nwork;
  auto one_cell = [&](std::size_t c, T* var, T* fix, T* rconst, const kpp::RosWork<T>& w) {
    cpu_cell<T>(c, ncell, state, met, vdrog3, map, opt, var, fix, rconst, w, stats);
  };
  auto carve = [&](std::vector<T>& buf, T*& var, T*& fix, T*& rconst) {
    buf.assign(per_cell, T(0));
    var = buf.data();
    fix = var + mech::NVAR;
    rconst = fix + mech::NFIX;
    return kpp::ros_work_at<Mech, T>(rconst + mech::NREACT, 1);
  };
  if (opt.co2_carry) {
    // WRF's order (cell index = i fastest, then k, then j) on one thread: var(ind_CO2) is
    // what the previous cell left (0 for the first cell of the call)
    std::vector<T> buf;
    T *var, *fix, *rconst;
    const kpp::RosWork<T> w = carve(buf, var, fix, rconst);
    for (std::size_t c = 0; c < ncell; ++c) one_cell(c, var, fix, rconst, w);
    return;
  }
#pragma omp parallel
  {
    std::vector<T> buf;
    T *var, *fix, *rconst;
    const kpp::RosWork<T> w = carve(buf, var, fix, rconst);
#pragma omp for schedule(dynamic, 64)
    for (long long c = 0; c < (long long)ncell; ++c) one_cell((std::size_t)c, var, fix, rconst, w);
  }
}

void run_cpu(const CellOptions& opt, bool use_float, std::size_t ncell, float* state,
             const float* met, float* vdrog3, const StateMap& map, const CellStatsOut& stats) {
  if (use_float)
    run_cpu_t<float>(opt, ncell, state, met, vdrog3, map, stats);
  else
    run_cpu_t<double>(opt, ncell, state, met, vdrog3, map, stats);
}

}  // namespace WRFGPU_MODE_NS
}  // namespace radm2sorg
}  // namespace wrfgpu
