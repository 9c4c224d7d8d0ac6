// wsm5.h - public C++ API of the WSM5 microphysics (WRF mp_physics=4), a port of WRF v4.7.1
// phys/module_mp_wsm5.F (subroutine wsm5 and everything it calls).
//
//   auto c = wrfgpu::wsm5::wrf_default_constants();          // wsm5init, once
//   wrfgpu::wsm5::State s; s.th = th; ...                     // WRF memory arrays, no copies
//   wrfgpu::wsm5::run(Backend::Auto, Mode::Strict, c, dims, dt, s);
//
// Arrays are WRF's: 3-D (ims:ime,kms:kme,jms:jme) and 2-D (ims:ime,jms:jme), i fastest; only
// the tile its:ite, kts:kte, jts:jte is read and written (nothing outside it is touched).
// kts:kte are mass levels (the driver passes kte = min(k_end, kde-1)).
#pragma once
#include <string>

#include "modes.h"
#include "wrf_dims.h"
#include "wsm5_constants.h"

namespace wrfgpu {
namespace wsm5 {

// Pointers into WRF memory (argument names of WRF's wsm5).
struct State {
  float* th = nullptr;   // inout, potential temperature (th_phy), K
  float* qv = nullptr;   // inout, water vapour (WRF's q), kg/kg
  float* qc = nullptr;   // inout, cloud water
  float* qr = nullptr;   // inout, rain
  float* qi = nullptr;   // inout, cloud ice
  float* qs = nullptr;   // inout, snow
  const float* den = nullptr;   // in, dry air density (rho), kg/m3
  const float* pii = nullptr;   // in, Exner function (pi_phy)
  const float* p = nullptr;     // in, pressure (p_phy), Pa
  const float* delz = nullptr;  // in, layer depth (dz8w), m
  float* rain = nullptr;     // inout 2-D, accumulated grid-scale precipitation (rainnc), mm
  float* rainncv = nullptr;  // out 2-D, precipitation of this step, mm
  float* sr = nullptr;       // out 2-D, frozen fraction of this step's precipitation
  float* snow = nullptr;     // inout 2-D, optional (snownc)
  float* snowncv = nullptr;  // out 2-D, optional
  // Diagnostics (optional; written only when the matching Options flags ask for them).
  float* refl_10cm = nullptr;  // 3-D, dBZ
  float* re_cloud = nullptr;   // 3-D, m
  float* re_ice = nullptr;
  float* re_snow = nullptr;
};

struct Options {
  // refl_10cm is computed when diagflag && do_radar_ref == 1 (WRF's condition).
  bool diagflag = false;
  int do_radar_ref = 0;
  // Effective radii are computed when all three are nonzero (WRF's condition).
  int has_reqc = 0, has_reqi = 0, has_reqs = 0;
  // GPU: the tile is split into this many j-slabs so transfers overlap with compute
  // (0: chosen from the tile size).
  int gpu_slabs = 0;
  int gpu_streams = 3;
  // GPU: lanes of a warp that share one column in the sedimentation kernels (2, 4, 8, 16 or
  // 32); 1 runs the column in one thread with its scratch in global memory: the kernels the
  // teams fall back on when their shared scratch does not fit (past about 3,400 levels), which
  // 1 selects at any level count (the tests compare the teams with them); 0: the default
  // (WRFGPU_WSM5_TEAM overrides).
  int gpu_sediment_team = 0;
  // GPU: copy the tile rows of each page-locked array of the call (cudaHostAlloc or
  // cudaHostRegister) straight between it and the device; only pageable arrays are staged.
  // false: every array staged.
  bool direct_locked = true;
  // Check inputs for NaN/Inf and non-positive den/pii/p/delz before running.
  bool validate = true;
};

struct Timing {
  double h2d_ms = 0, kernel_ms = 0, d2h_ms = 0;  // GPU: events, union over slabs (staged_call.h)
  double total_ms = 0;                           // wall clock of the whole call
  double check_ms = 0;  // of which the input checks (host, validate(); GPU: the 3-D inputs on the device)
  bool direct = false;    // GPU: every array copied straight (all page-locked)
  int staged_arrays = 0;  // GPU: how many of the call's arrays went through staging (pageable)
  Backend backend = Backend::Cpu;                // the backend that ran
};

// Runs WSM5 on the tile. Throws InputError (bad input: names the field and the first
// (i,k,j), or the bounds) or RuntimeError (no GPU, CUDA failure, unsupported option).
// Backend::Both runs the GPU into the caller's arrays and the CPU on copies and compares every
// output (both.h: one line per field on stderr; in strict mode a difference throws).
void run(Backend backend, Mode mode, const Constants& c, const WrfDims& d, float delt,
         const State& s, const Options& opt = Options(), Timing* timing = nullptr);

// How closely the GPU backend agrees with the CPU backend, as the per-level mean variance of
// an output (Backend::Both and the replay driver hold it to this): strict 1e-6 (the effective
// radii and the reflectivity 1e-5: effectRad_wsm5's thresholds amplify qc's last bits), fast
// 2e-3 (fast maths move the snow front; docs/wsm5.md). Not bitwise: the GPU's expf/logf/powf
// are not glibc's.
double gpu_cpu_plmv_limit(Mode m, const std::string& output);

// The input checks run() does first (exposed for tests and the bridge).
void validate(const WrfDims& d, float delt, const State& s, const Options& opt);

// Device scratch the GPU backend needs for a tile (bytes), for capacity planning.
std::size_t gpu_bytes_needed(const WrfDims& d, const Options& opt);

}  // namespace wsm5
}  // namespace wrfgpu
