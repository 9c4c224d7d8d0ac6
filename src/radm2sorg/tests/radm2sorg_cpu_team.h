// radm2sorg_cpu_team.h - the GPU's warp-per-cell integrator (kpp_rosenbrock_team.h) run on the
// CPU by one member, a build for the tests alone: radm2sorg_cpu_team.cpp is compiled into
// bin/wrfgpu_tests (make check, which CI runs), never into the library, so that a machine
// without a GPU tests the team algorithm the GPU runs (Radm2sorgTeam.CpuTeamBitwiseSerial*).
// It was Options::cpu_team_check of the library's CPU backend before.
#pragma once
#include <cstddef>
#include "radm2sorg.h"

namespace wrfgpu_test {

// The cells of a dense batch (run_dense's arrays: state in/out, met, vdrog3 out when
// o.p_nu0 > 1) through kpp::ros_integrate_team with a kpp::SerialTeam, in o.precision, with
// o.dtstepc, o.method, o.p_nu0 and o.max_no_steps; reverse: every team loop backwards (a
// level of the decomposition or solve schedule holding two dependent operations would then
// change the bits). No input check, no OpenMP chunking beyond the cells. Returns the per-cell
// statistics (nstp, nacc, nrej, nsng, status) as run_dense does.
wrfgpu::radm2sorg::Stats radm2sorg_cpu_team(const wrfgpu::radm2sorg::Options& o, bool reverse,
                                            std::size_t ncell, float* state, const float* met,
                                            float* vdrog3);

}  // namespace wrfgpu_test
