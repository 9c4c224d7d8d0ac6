// radm2sorg.h - public C++ API of the RADM2SORG KPP chemistry (WRF-Chem chem_opt=106).
//
// One call integrates every cell of a tile over dtstepc, as WRF's radm2sorg_interface does
// (docs/radm2sorg.md). Inputs either as WRF arrays (memory-dimensioned, WrfDims) or as a dense
// batch of cells ("fields": every field an array over the cells, cell index innermost).
#pragma once
#include <cstddef>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>
#include "modes.h"
#include "wrf_dims.h"
#include "radm2sorg_interface.h"

namespace wrfgpu {
namespace radm2sorg {

enum class Precision { Double, Float };   // state/linear algebra of the Rosenbrock solver

// How the GPU backend maps cells to threads (docs/radm2sorg.md section 5). Warp: a warp per
// cell, its arrays in shared memory, each phase of a step split over the 32 lanes (few cells
// fill the GPU). Lane: a lane per cell, the serial integrator of the CPU backend per lane, the
// arrays in global memory, a finished lane taking the next cell (fewer instructions per cell,
// for calls with many cells). Split: 32 cells per block of 8 warps, each step attempt's
// statements split over the warps by matrix rows, each warp's rows in its registers (Ros3 in
// double only). Auto: the split kernel where it can run (it was the fastest at every size
// measured); otherwise by the size of each chunk of the call and the previous call's step counts
// (the lane kernel from 1,024 cells per SM, 135,168 cells on an H100; from 300 per SM when the
// previous call's longest cell took at most twice its mean step count: the crossovers
// measured, docs/radm2sorg.md). The results are the same bits either way.
enum class GpuSolver { Auto, Warp, Lane, Split };

// The GPU backend runs a warp per cell, a lane per cell or cells split over warps (GpuSolver
// above), cells handed out
// dynamically (docs/radm2sorg.md section 2).
struct Options {
  Backend backend = Backend::Cpu;  // Both: GPU on the caller's arrays, CPU on copies, compared (both.h)
  Mode mode = Mode::Strict;
  Precision precision = Precision::Double;
  int method = kpp::kRos3;       // ICNTRL(3): 1 Ros2, 2 Ros3 (WRF), 3 Ros4, 4 Rodas3, 5 Rodas4
  float dtstepc = 0;             // s
  int p_nu0 = 2;                 // > 1: compute vdrog3 (WRF: SORGAM aerosols present)
  int max_no_steps = 0;          // ICNTRL(4): 0 -> KPP default 100000
  bool throw_on_failure = true;  // a cell with IERR < 0 -> RuntimeError after the run
  // GPU, warp per cell: hand the cells out longest first, by the step counts the same cells
  // (the same WRF tile of the same chem array, or a dense batch of the same size) took in the
  // previous GPU call of this process. Only the order in which the warps take cells changes;
  // the results do not (WRFGPU_RADM2SORG_ORDER=index|longest overrides, for measurement).
  bool gpu_longest_first = true;
  GpuSolver gpu_solver = GpuSolver::Auto;  // WRFGPU_RADM2SORG_SOLVER=warp|lane|split (measurement) overrides
  std::size_t gpu_batch = 262144;  // cells per GPU chunk (device records ~1.7 KB/cell in double)
  // WRF's cell-order CO2 (CPU backend only; for validation against WRF-Chem's own output).
  // WRF's radm2sorg_interface never loads var(ind_CO2): each cell starts from the CO2 the
  // previous cell of the loop (j, k, i) ended with, and that value enters the step-size
  // control. By default every cell starts from CO2 = 0, so cells are independent (and can run
  // in parallel); with wrf_co2_carry the cells of a call run one after the other in WRF's
  // order, CO2 carried, starting from 0. A serial chain: the GPU backend refuses it.
  bool wrf_co2_carry = false;
};

// Per-cell statistics (ISTATUS) and the integrator status (IERR: 1 ok, < 0 failed).
struct Failure {
  std::size_t cell;  // 0-based index in the batch
  int i, k, j;       // WRF indices (run_wrf) or -1
  int status;
};
// A call's per-cell counts. The backends write every cell's, so the vectors are sized
// without a zero fill: at CONUS size (4.46 M cells) the fill and then a copy out of a
// field-major scratch cost about 100 ms of the call's host time on one core (page faults
// and 180 MB of writes), which is 10% of the GPU call (docs/radm2sorg.md, "The call's
// host side at scale").
template <class T>
struct NoFillAllocator : std::allocator<T> {
  template <class U> struct rebind { using other = NoFillAllocator<U>; };
  NoFillAllocator() = default;
  template <class U> NoFillAllocator(const NoFillAllocator<U>&) noexcept {}
  template <class U> void construct(U* p) { ::new ((void*)p) U; }  // default-, not value-init
  template <class U, class... A> void construct(U* p, A&&... a) {
    ::new ((void*)p) U(std::forward<A>(a)...);
  }
};
using CellCounts = std::vector<int, NoFillAllocator<int>>;

struct Stats {
  CellCounts nstp, nacc, nrej, nsng, status;        // one entry per cell
  std::vector<Failure> failures;                    // cells with status < 0
  Backend backend_used = Backend::Cpu;
  double seconds = 0;                               // wall time of the integration
  // of the input checks (host): before the integration; on the GPU backend the scan of the
  // cells after the first two chunks, which runs while the device integrates those (their
  // values are tested as they are packed), so it overlaps `seconds`
  double check_seconds = 0;
  // GPU backend (ms, CUDA events): H2D and D2H summed over the call's chunks, kernel from
  // the first chunk's kernels starting to the last chunk's ending (chunks overlap one
  // another's copies); the rest of `seconds` is the host's packing into page-locked staging.
  double gpu_h2d_ms = 0, gpu_kernel_ms = 0, gpu_d2h_ms = 0;
  // GPU: the cells were handed out longest first, by the previous call's step counts
  bool gpu_longest_first = false;
  GpuSolver gpu_solver = GpuSolver::Auto;  // GPU: the solver that ran (Warp, Lane or Split)
  // GPU, split solver: step attempts of a block of 32 cells run again with the plain division
  // because a division of one of its lanes left nvcc's fast path (kpp_split.h)
  unsigned long long gpu_split_retries = 0;
};

// Dense batch: state[kNState*ncell] (ppmv/ppm, in/out, field order: chem species in KPP
// order then kRadicalNames), met[kNMet*ncell] (qv, t_phy, p_phy, rho_phy, ph_* in Pj order),
// vdrog3[kLdrog*ncell] (out when p_nu0 > 1).
Stats run_dense(const Options& opt, std::size_t ncell, float* state, const float* met,
                float* vdrog3);

// WRF arrays. Every 3-D array is memory-dimensioned (d.ims..d.ime, kms..kme, jms..jme);
// the tile d.its..ite, kts..kte, jts..jte is integrated.
struct WrfArrays {
  WrfDims d;
  float* chem = nullptr;       // chem(ims:ime,kms:kme,jms:jme,num_chem), ppmv
  int num_chem = 0;
  int p_chem[kNChem] = {};     // 1-based P_x of each state chem field (state_field_name order)
  float* rad[kNRad] = {};      // radical arrays (ppm), kRadicalNames order
  const float* qv = nullptr;   // moist(:,:,:,P_QV)
  const float* t_phy = nullptr;
  const float* p_phy = nullptr;
  const float* rho = nullptr;
  const float* ph[kNPh] = {};  // ph_<kPhotolysisNames> (min-1)
  float* vdrog3 = nullptr;     // vdrog3(ims:ime,kms:kme,jms:jme,ldrog)
  int ldrog = kLdrog;
};
Stats run_wrf(const Options& opt, WrfArrays& a);

// How closely the GPU backend agrees with the CPU backend (per-level mean variance of each
// state field; Backend::Both and the replay driver hold it to this): strict 1e-4, fast 1e-3.
// The adaptive step control turns last-bit differences of the GPU's exp/pow into accepted
// step sizes that differ within RTOL = 1e-3 (docs/radm2sorg.md).
double gpu_cpu_plmv_limit(Mode m);

// Names, for captures and the Fortran bridge.
std::vector<std::string> state_names();  // kNState WRF names
std::vector<std::string> met_names();    // qv, t_phy, p_phy, rho_phy, ph_*

}  // namespace radm2sorg
}  // namespace wrfgpu
