// advection.h - public API of the scalar advection kernel: WRF's positive-definite advection
// (advect_scalar_pd, last Runge-Kutta step) and the unlimited advect_scalar (RK steps 1 and 2),
// h_sca_adv_order = 5, v_sca_adv_order = 3, batched over all tracers of one WRF 4-D array.
//
// Arrays are WRF's, in WRF memory layout (i fastest, ims:ime, kms:kme, jms:jme; see
// wrf_dims.h); 4-D tracer arrays are species-last: species n (0-based in this call) starts at
// base + n*spec_stride. Pass moist(ims,kms,jms,PARAM_FIRST_SCALAR) and nspec = num_moist-1 to
// advect every moist species at once. Nothing is copied on the CPU backend; the GPU backend
// copies only the region the scheme reads (tile + halo) and the tile of the tendency.
#pragma once
#include <cstddef>
#include <string>
#include "modes.h"
#include "wrf_dims.h"

namespace wrfgpu {
namespace advection {

// The config_flags members advect_scalar_pd / advect_scalar read.
struct AdvectFlags {
  int h_order = 5;  // h_sca_adv_order (only 5 is supported)
  int v_order = 3;  // v_sca_adv_order (only 3 is supported)
  bool periodic_x = false, periodic_y = false;
  bool symmetric_xs = false, symmetric_xe = false, symmetric_ys = false, symmetric_ye = false;
  bool open_xs = false, open_xe = false, open_ys = false, open_ye = false;
  bool specified = false, nested = false;
  bool polar = false;  // not supported: InputError
};

struct AdvectInputs {
  // ids..kde (staggered domain), ims..kme (memory), its..kte (tile exactly as WRF passes it to
  // advect_scalar_pd: ite may be ide, kte must be kde, kts must be kds).
  WrfDims dims;
  int nspec = 1;
  std::size_t spec_stride = 0;  // elements between species of field/field_old/tendency; 0 = size3
  const float* field = nullptr;      // scalar (RK stage value)           4-D
  const float* field_old = nullptr;  // scalar_old (pd: time n + physics)  4-D (may == field)
  float* tendency = nullptr;         // advect_tend, written on the tile  4-D
  float* h_tendency = nullptr;       // optional (WRF's tenddec), pd only 4-D
  float* z_tendency = nullptr;       // optional (WRF's tenddec), pd only 4-D
  const float *ru = nullptr, *rv = nullptr, *rom = nullptr;  // ru_m, rv_m, wwE (3-D, staggered)
  const float *mut = nullptr, *mub = nullptr, *mu_old = nullptr;  // muts, mub, mu_1 (2-D)
  const float *msftx = nullptr, *msfty = nullptr;                 // 2-D
  const float *c1 = nullptr, *c2 = nullptr;  // c1h, c2h (kms:kme)
  const float *fzm = nullptr, *fzp = nullptr, *rdzw = nullptr;  // fnm, fnp, rdnw (kms:kme)
  float rdx = 0, rdy = 0;
  float dt = 0;        // dt_rk of the last RK step (pd only)
  int time_step = 1;   // namelist time_step: only its sign is used
  AdvectFlags flags;
  // false (default): the tendency starts from +0 on the tile, as after WRF's zero_tend (no read
  // of the array). true: the result is added to what the array holds (WRF's INTENT(INOUT)).
  bool accumulate = false;
  // Check every input value the scheme reads for NaN/Inf first (InputError naming it).
  bool check_finite = true;
  // For messages: the WRF 4-D array the species come from (field is array(:,:,:,first_index),
  // field_old array_old(:,:,:,first_index)), so that a bad value reads "moist_old(5,4,6,3):
  // non-finite value nan" with WRF's own subscripts. Empty: "field_old: ... in species 1 at ...",
  // the species counted from 0 within the call.
  std::string array_name;
  int first_index = 1;
  // field_old's array where it is not array_name + "_old" (WRF's TKE: tke_2 is advected from
  // tke_1). first_index 0: the arrays are 3-D, one species, named without a species subscript
  // ("tke_1(5,4,6): non-finite value nan").
  std::string array_name_old;
};

// Timings of one call (GPU: CUDA events, summed over the species groups; with overlap, the
// sum of the parts exceeds total_ms). CPU: kernel_ms = total_ms.
struct AdvectTimings {
  double h2d_ms = 0, kernel_ms = 0, d2h_ms = 0;  // GPU: events, union over groups (staged_call.h)
  double pack_ms = 0;   // host packing/unpacking between WRF arrays and pinned buffers
  double check_ms = 0;  // the input checks (validate(): bounds, halos, finite values), host
  double total_ms = 0;  // wall clock of the call (validation excluded)
  std::size_t bytes_h2d = 0, bytes_d2h = 0;
  int groups = 0, species_per_group = 0;
  bool direct = false;  // GPU: the caller's arrays were page-locked; copied straight, no staging
  bool field_old_staged = false;  // GPU, direct: field_old was pageable, packed into staging
  const char* backend = "";
  // Backend::Both: comparison of the GPU result (returned) with the CPU one.
  double both_max_abs_diff = 0;
  std::size_t both_cells_differing = 0;
};

// How closely the GPU backend agrees with the CPU backend (per-level mean variance of the
// tendencies; Backend::Both and the replay driver hold it to this): strict 0, bit for bit (no
// transcendental functions, the same operations in the same order); fast 1e-5.
double gpu_cpu_plmv_limit(Mode m);

// GPU tuning (defaults chosen for H100/H200).
// 0 = automatic, which the environment can set for tuning without rebuilding:
// WRFGPU_ADVECT_GROUP (species per transfer group), WRFGPU_ADVECT_SPT (species per thread),
// WRFGPU_ADVECT_PD_KERNEL (march or three kernels), WRFGPU_ADVECT_UN_KERNEL (march or two).
struct GpuOptions {
  int species_per_group = 0;  // 0: automatic (about 6 groups, 3 to 16 species each; the level marches: up to 24 by their waves, pd_march_group_max)
  int species_per_thread = 0; // face-flux kernels (not the level marches): tracers one thread loops over; 0: 8
  // PD scheme: the level march (one kernel per group, k_pd_fused) where its waves cost less
  // than the three kernels' cells (pd_march_cheaper, advection_impl.h), the three kernels
  // otherwise (PdKernel::Auto); or either, for measurement and tests (the environment:
  // WRFGPU_ADVECT_PD_KERNEL=march|three). Auto takes the three kernels where the march's block
  // cannot hold the call's levels in shared memory (some 6,000 on an H100); March there is a
  // RuntimeError.
  enum class PdKernel { Auto, March, Three };
  PdKernel pd_kernel = PdKernel::Auto;
  // The level march's block rows: 22 or 28 (32 x 22 or 32 x 28 threads); 0: the fewer waves x
  // (rows + 4), pd_march_plan (the environment: WRFGPU_ADVECT_PD_ROWS=22|28).
  int pd_march_rows = 0;
  // Unlimited scheme: the level march (one kernel per group, k_un_march) where its launches
  // cost less than the two kernels' groups and columns (un_march_cheaper, advection_impl.h),
  // the two kernels otherwise (UnKernel::Auto); or either, for measurement and tests (the
  // environment: WRFGPU_ADVECT_UN_KERNEL=march|two).
  enum class UnKernel { Auto, March, Two };
  UnKernel un_kernel = UnKernel::Auto;
  // When the tracers and tendencies of the call are page-locked (cudaHostAlloc or
  // cudaHostRegister), copy each group straight between them and the device: no host packing,
  // the NaN/Inf check of the tracers on the device (and ru, rv, rom straight too where they are
  // page-locked; a pageable field_old alone is packed and checked on the host). false: always
  // stage through pinned buffers.
  bool direct_locked = true;
};

// Positive-definite advection (advect_scalar_pd). Throws InputError (bad input; nothing is
// written), RuntimeError (no GPU, CUDA failure, strict-mode Both mismatch).
void run_pd(Backend backend, Mode mode, const AdvectInputs& in, AdvectTimings* timings = nullptr,
            const GpuOptions& gpu = GpuOptions());
// Unlimited advection of RK steps 1 and 2 (advect_scalar; field_old is only read by the open
// boundary terms, WRF passes field for it). mub, mu_old, msfty, dt are not used.
void run_unlimited(Backend backend, Mode mode, const AdvectInputs& in,
                   AdvectTimings* timings = nullptr, const GpuOptions& gpu = GpuOptions());

// Validation alone (what run_* do first); throws InputError naming the problem.
void validate(const AdvectInputs& in, bool pd);

// Benchmark helper for wrfgpu_bench: builds a synthetic moist-like case of
// nspec tracers on an nx x ny x nz domain (periodic in x, specified in y... see advection.md),
// runs the pd scheme `reps` times and reports the best timings. bytes_min is the minimum DRAM
// traffic of one call (tracer inputs read once, tendency written once, met fields once).
struct BenchResult {
  AdvectTimings best;      // the call with the smallest total_ms
  double cpu_ms = -1;      // the OpenMP backend on the same case (if run_cpu)
  std::size_t bytes_min = 0;
  std::size_t cells = 0;   // cells * species of the tile
  std::string note;
};
BenchResult bench_pd(Backend backend, Mode mode, int nx, int ny, int nz, int nspec, int reps,
                     bool run_cpu, const GpuOptions& gpu = GpuOptions());

}  // namespace advection
}  // namespace wrfgpu
