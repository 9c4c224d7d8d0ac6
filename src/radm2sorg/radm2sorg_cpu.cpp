// radm2sorg_cpu.cpp - CPU backend: OpenMP over cells, one cell's KPP arrays contiguous
// (stride 1) in a per-thread work buffer. Compiled twice (WRFGPU_MODE_NS = strict, fast).
#include <vector>
#include "radm2sorg_backends.h"

namespace wrfgpu {
namespace radm2sorg {
namespace WRFGPU_MODE_NS {

template <class T>
static void run_cpu_t(const CellOptions& opt, std::size_t ncell, float* state, const float* met,
                      float* vdrog3, const StateMap& map, int* stats) {
  const std::size_t nwork = kpp::ros_work_size<Mech>();
  const std::size_t per_cell = mech::NVAR + mech::NFIX + mech::NREACT + nwork;
#pragma omp parallel
  {
    std::vector<T> buf(per_cell);
    T* var = buf.data();
    T* fix = var + mech::NVAR;
    T* rconst = fix + mech::NFIX;
    const kpp::RosWork<T> w = kpp::ros_work_at<Mech, T>(rconst + mech::NREACT, 1);
#pragma omp for schedule(dynamic, 64)
    for (long long c = 0; c < (long long)ncell; ++c) {
      kpp::RosStats st;
      run_cell<T>((std::size_t)c, ncell, state, met, vdrog3, map, opt, var, fix, rconst, w, 1, st);
      stats[0 * ncell + c] = st.nstp;
      stats[1 * ncell + c] = st.nacc;
      stats[2 * ncell + c] = st.nrej;
      stats[3 * ncell + c] = st.nsng;
      stats[4 * ncell + c] = st.status;
    }
  }
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
