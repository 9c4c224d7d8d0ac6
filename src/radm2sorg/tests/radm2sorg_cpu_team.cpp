// radm2sorg_cpu_team.cpp - see radm2sorg_cpu_team.h. Compiled with the tests' flags (no fast
// maths, no FMA contraction: IEEE arithmetic as the library's strict CPU backend), so its
// results can be compared bit for bit with the strict serial integrator.
#include "radm2sorg_cpu_team.h"

#include <vector>
#include "radm2sorg_backends.h"

namespace wrfgpu_test {

namespace r2 = wrfgpu::radm2sorg;
namespace kpp = wrfgpu::kpp;

namespace {

template <class T>
void run_team(const r2::CellOptions& opt, bool reverse, std::size_t ncell, float* state,
              const float* met, float* vdrog3, const r2::StateMap& map, int* stats) {
  const kpp::TeamTables tb = r2::team_tables_host();
  const kpp::RosCoeffs rc = kpp::ros_coeffs(opt.ctl.method);
  const r2::TeamLayout L = r2::team_layout(rc.S > 0 ? rc.S : 1);
#pragma omp parallel
  {
    std::vector<T> block(L.nT);
    std::vector<T> rconst(r2::mech::NREACT);
    kpp::SerialTeam tm;
    tm.reverse = reverse;
#pragma omp for schedule(dynamic, 64)
    for (long long cl = 0; cl < (long long)ncell; ++cl) {
      const std::size_t c = (std::size_t)cl;
      T* y = block.data() + L.y;
      r2::cell_prologue<T>(c, ncell, state, met, map, opt, y, y + r2::mech::NVAR, rconst.data(), 1);
      double time_end;
      const kpp::RosControl ctl = r2::cell_controls(opt, time_end);
      kpp::RosStats st;
      const kpp::TeamWork<T> w = r2::team_work_at<T>(L, block.data());
      kpp::ros_integrate_team<r2::Mech, T>(tm, tb, y, rconst.data(), 0.0, time_end, ctl, st, w);
      r2::cell_epilogue<T>(c, ncell, state, met, vdrog3, map, opt, y, rconst.data(), 1);
      r2::store_stats(stats, ncell, c, st);
    }
  }
}

}  // namespace

r2::Stats radm2sorg_cpu_team(const r2::Options& o, bool reverse, std::size_t ncell, float* state,
                             const float* met, float* vdrog3) {
  r2::CellOptions co;
  co.dtstepc = o.dtstepc;
  co.p_nu0 = o.p_nu0;
  co.ctl.method = o.method;
  co.ctl.max_no_steps = o.max_no_steps;
  const r2::StateMap map = r2::make_state_map();
  std::vector<int> st(5 * ncell, 0);
  if (o.precision == r2::Precision::Float)
    run_team<float>(co, reverse, ncell, state, met, vdrog3, map, st.data());
  else
    run_team<double>(co, reverse, ncell, state, met, vdrog3, map, st.data());
  r2::Stats s;
  s.backend_used = wrfgpu::Backend::Cpu;
  s.nstp.assign(st.begin(), st.begin() + ncell);
  s.nacc.assign(st.begin() + ncell, st.begin() + 2 * ncell);
  s.nrej.assign(st.begin() + 2 * ncell, st.begin() + 3 * ncell);
  s.nsng.assign(st.begin() + 3 * ncell, st.begin() + 4 * ncell);
  s.status.assign(st.begin() + 4 * ncell, st.end());
  return s;
}

}  // namespace wrfgpu_test
