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
                     T* rconst, const kpp::RosWork<T>& w, int* stats) {
  kpp::RosStats st;
  run_cell<T>(c, ncell, state, met, vdrog3, map, opt, var, fix, rconst, w, 1, st);
  store_stats(stats, ncell, c, st);
}

template <class T>
static void run_cpu_t(const CellOptions& opt, std::size_t ncell, float* state, const float* met,
                      float* vdrog3, const StateMap& map, int* stats) {
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

// The team integrator (kpp_rosenbrock_team.h, the GPU's warp-per-cell code) run on the CPU by
// one member, for the tests: reverse runs every team loop backwards, which a level schedule
// whose operations were not independent would not survive.
template <class T>
static void run_cpu_team_t(const CellOptions& opt, bool reverse, std::size_t ncell, float* state,
                           const float* met, float* vdrog3, const StateMap& map, int* stats) {
  const kpp::TeamTables tb = team_tables_host();
  const kpp::RosCoeffs rc = kpp::ros_coeffs(opt.ctl.method);
  const TeamLayout L = team_layout(rc.S > 0 ? rc.S : 1);
#pragma omp parallel
  {
    std::vector<T> block(L.nT);
    std::vector<T> rconst(mech::NREACT);
    kpp::SerialTeam tm;
    tm.reverse = reverse;
#pragma omp for schedule(dynamic, 64)
    for (long long cl = 0; cl < (long long)ncell; ++cl) {
      const std::size_t c = (std::size_t)cl;
      T* y = block.data() + L.y;
      cell_prologue<T>(c, ncell, state, met, map, opt, y, y + mech::NVAR, rconst.data(), 1);
      double time_end;
      const kpp::RosControl ctl = cell_controls(opt, time_end);
      kpp::RosStats st;
      const kpp::TeamWork<T> w = team_work_at<T>(L, block.data());
      kpp::ros_integrate_team<Mech, T>(tm, tb, y, rconst.data(), 0.0, time_end, ctl, st, w);
      cell_epilogue<T>(c, ncell, state, met, vdrog3, map, opt, y, rconst.data(), 1);
      store_stats(stats, ncell, c, st);
    }
  }
}

void run_cpu_team(const CellOptions& opt, bool use_float, bool reverse, std::size_t ncell,
                  float* state, const float* met, float* vdrog3, const StateMap& map,
                  int* stats) {
  if (use_float)
    run_cpu_team_t<float>(opt, reverse, ncell, state, met, vdrog3, map, stats);
  else
    run_cpu_team_t<double>(opt, reverse, ncell, state, met, vdrog3, map, stats);
}

void run_cpu(const CellOptions& opt, bool use_float, std::size_t ncell, float* state,
             const float* met, float* vdrog3, const StateMap& map, int* stats) {
  if (use_float)
    run_cpu_t<float>(opt, ncell, state, met, vdrog3, map, stats);
  else
    run_cpu_t<double>(opt, ncell, state, met, vdrog3, map, stats);
}

}  // namespace WRFGPU_MODE_NS
}  // namespace radm2sorg
}  // namespace wrfgpu
