// advect_bridge.cpp - C entry point of the scalar advection kernel for Fortran
// (src/advection/fortran/module_wrfgpu_advect.F90), arguments as docs/wrf_reference.md D.5.
// Arrays are WRF's own (no copies on the Fortran side): 4-D tracer arrays are passed by their
// first element of the first species to advect, e.g. moist(ims,kms,jms,PARAM_FIRST_SCALAR).
// Errors, status and the backend default: bridge.h (*ierr 0, 1 or 2).
#include <algorithm>
#include <chrono>
#include <string>
#include "advection.h"
#include "bridge.h"
#include "call_timing.h"
#include "config.h"
#include "errors.h"

using namespace wrfgpu;
namespace adv = wrfgpu::advection;

extern "C" {

// pd: 1 advect_scalar_pd (last RK step), 0 advect_scalar (RK1/RK2).
// field, field_old, tend, h_tend, z_tend: (ims:ime,kms:kme,jms:jme, nspec) consecutive species;
//   h_tend/z_tend are written only when flags[15] (tenddec) is 1 and pd == 1.
// flags(16): h_sca_adv_order, v_sca_adv_order, periodic_x, periodic_y, symmetric_xs, _xe, _ys,
//   _ye, open_xs, _xe, _ys, _ye, specified, nested, polar, tenddec.
// dims(18): ids,ide,jds,jde,kds,kde, ims,ime,jms,jme,kms,kme, its,ite,jts,jte,kts,kte.
// accumulate: 0 tendency starts from zero on the tile (WRF zeroes advect_tend before the call),
//   1 add to it. backend: 0 WRFGPU_BACKEND (else gpu), 1 cpu, 2 gpu, 3 both, 4 auto.
//   Mode: WRFGPU_MODE (strict|fast, default strict).
// times(4) (may be null): h2d, kernel, d2h, total milliseconds of the call.
// array_name, old_name, first_index (for messages, AdvectInputs): the WRF arrays field and
// field_old belong to (old_name empty: array_name + "_old") and field's species subscript there;
// first_index 0: 3-D arrays, one species (TKE: tke_2 and tke_1).
void wrfgpu_advect_run(const int* pd, const int* nspec, const float* field, const float* field_old,
                       float* tend, float* h_tend, float* z_tend, const float* ru, const float* rv,
                       const float* rom, const float* mut, const float* mub, const float* mu_old,
                       const float* msftx, const float* msfty, const float* c1, const float* c2,
                       const float* fzm, const float* fzp, const float* rdzw, const float* rdx,
                       const float* rdy, const float* dt, const int* time_step, const int* flags,
                       const int* dims, const int* accumulate, const int* backend,
                       const char* array_name, const int* array_name_len, const char* old_name,
                       const int* old_name_len, const int* first_index, double* times, int* ierr) {
  *ierr = bridge_call("advection", [&] {
    adv::AdvectInputs in;
    WrfDims& d = in.dims;
    d.ids = dims[0]; d.ide = dims[1]; d.jds = dims[2]; d.jde = dims[3]; d.kds = dims[4]; d.kde = dims[5];
    d.ims = dims[6]; d.ime = dims[7]; d.jms = dims[8]; d.jme = dims[9]; d.kms = dims[10]; d.kme = dims[11];
    d.its = dims[12]; d.ite = dims[13]; d.jts = dims[14]; d.jte = dims[15]; d.kts = dims[16]; d.kte = dims[17];
    adv::AdvectFlags& f = in.flags;
    f.h_order = flags[0]; f.v_order = flags[1];
    f.periodic_x = flags[2]; f.periodic_y = flags[3];
    f.symmetric_xs = flags[4]; f.symmetric_xe = flags[5]; f.symmetric_ys = flags[6]; f.symmetric_ye = flags[7];
    f.open_xs = flags[8]; f.open_xe = flags[9]; f.open_ys = flags[10]; f.open_ye = flags[11];
    f.specified = flags[12]; f.nested = flags[13]; f.polar = flags[14];
    const bool tenddec = flags[15] != 0 && *pd;
    in.nspec = *nspec;
    in.field = field; in.field_old = field_old; in.tendency = tend;
    in.h_tendency = tenddec ? h_tend : nullptr;
    in.z_tendency = tenddec ? z_tend : nullptr;
    in.ru = ru; in.rv = rv; in.rom = rom;
    in.mut = mut; in.mub = mub; in.mu_old = mu_old; in.msftx = msftx; in.msfty = msfty;
    in.c1 = c1; in.c2 = c2; in.fzm = fzm; in.fzp = fzp; in.rdzw = rdzw;
    in.rdx = *rdx; in.rdy = *rdy; in.dt = *dt; in.time_step = *time_step;
    in.accumulate = *accumulate != 0;
    in.array_name.assign(array_name, (std::size_t)std::max(*array_name_len, 0));
    in.array_name_old.assign(old_name, (std::size_t)std::max(*old_name_len, 0));
    in.first_index = *first_index;
    in.check_finite = config::flag("WRFGPU_ADVECT_CHECK").value_or(in.check_finite);
    const Backend b = bridge_backend(*backend);
    const Mode m = mode_from_env(Mode::Strict);
    adv::AdvectTimings t;
    const auto t0 = std::chrono::steady_clock::now();
    if (*pd) adv::run_pd(b, m, in, &t); else adv::run_unlimited(b, m, in, &t);
    // the whole call as WRF sees it: the input checks too (t.total_ms starts after them)
    record_call(*pd ? "advect_pd" : "advect", t.kernel_ms, t.h2d_ms, t.d2h_ms,
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (times) { times[0] = t.h2d_ms; times[1] = t.kernel_ms; times[2] = t.d2h_ms; times[3] = t.total_ms; }
  });
}

}  // extern "C"
