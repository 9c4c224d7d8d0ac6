// radm2sorg_bridge.cpp - C entry points of the RADM2SORG chemistry for Fortran
// (src/radm2sorg/fortran/module_wrfgpu_radm2sorg.F90), arguments as docs/wrf_reference.md D.5.
// Errors, status and the backend default: bridge.h (*ierr 0, 1 or 2; 1 also for cells whose
// integration failed, counted in stats[3]).
#include <chrono>
#include <cstdio>
#include <cstring>
#include "bridge.h"
#include "call_timing.h"
#include "errors.h"
#include "modes.h"
#include "radm2sorg.h"

using namespace wrfgpu;
namespace r2 = wrfgpu::radm2sorg;

extern "C" {

// Number of state chem fields (41), radicals (17), photolysis rates (21), ldrog (17).
void wrfgpu_radm2sorg_sizes(int* nchem, int* nrad, int* nph, int* ldrog) {
  *nchem = r2::kNChem;
  *nrad = r2::kNRad;
  *nph = r2::kNPh;
  *ldrog = r2::kLdrog;
}

// WRF name (lower case, blank padded to len) of state chem field q (1-based, 1..41), of
// radical q (42..58), or of photolysis rate q (kind=1: "no2" for ph_no2 ...).
void wrfgpu_radm2sorg_name(const int* kind, const int* q, char* name, const int* len) {
  std::string s;
  if (*kind == 0 && *q >= 1 && *q <= r2::kNState) s = r2::state_field_name(*q - 1);
  if (*kind == 1 && *q >= 1 && *q <= r2::kNPh) s = wrfgpu::kpp_radm2sorg::kPhotolysisNames[*q - 1];
  std::memset(name, ' ', *len);
  std::memcpy(name, s.data(), s.size() < (std::size_t)*len ? s.size() : *len);
}

// chem(ims:ime,kms:kme,jms:jme,num_chem) ppmv; p_chem(41): P_x of each state chem field;
// rad(17): addresses of the radical arrays; qv,t_phy,p_phy,rho: 3-D; ph(21): addresses of the
// ph_* arrays in Pj order; vdrog3(ims:ime,kms:kme,jms:jme,ldrog); dims(18): ids,ide,jds,jde,
// kds,kde, ims,ime,jms,jme,kms,kme, its,ite,jts,jte,kts,kte; backend: 0 WRFGPU_BACKEND (else
// gpu), 1 cpu, 2 gpu, 3 both, 4 auto; stats (optional, may be null): nstp total, nacc total,
// nrej total, failed cells.
void wrfgpu_radm2sorg_run(float* chem, const int* num_chem, const int* p_chem, float** rad,
                          const float* qv, const float* t_phy, const float* p_phy,
                          const float* rho, const float** ph, const float* dtstepc,
                          float* vdrog3, const int* ldrog, const int* p_nu0, const int* dims,
                          const int* backend, long long* stats, int* ierr) {
  int failed = 0;
  *ierr = bridge_call("radm2sorg", [&] {
    r2::WrfArrays a;
    WrfDims& d = a.d;
    d.ids = dims[0]; d.ide = dims[1]; d.jds = dims[2]; d.jde = dims[3]; d.kds = dims[4]; d.kde = dims[5];
    d.ims = dims[6]; d.ime = dims[7]; d.jms = dims[8]; d.jme = dims[9]; d.kms = dims[10]; d.kme = dims[11];
    d.its = dims[12]; d.ite = dims[13]; d.jts = dims[14]; d.jte = dims[15]; d.kts = dims[16]; d.kte = dims[17];
    a.chem = chem;
    a.num_chem = *num_chem;
    for (int q = 0; q < r2::kNChem; ++q) a.p_chem[q] = p_chem[q];
    for (int q = 0; q < r2::kNRad; ++q) a.rad[q] = rad[q];
    a.qv = qv; a.t_phy = t_phy; a.p_phy = p_phy; a.rho = rho;
    for (int p = 0; p < r2::kNPh; ++p) a.ph[p] = ph[p];
    a.vdrog3 = vdrog3;
    a.ldrog = *ldrog;
    r2::Options o;
    o.backend = bridge_backend(*backend);
    o.mode = mode_from_env(o.mode);
    o.dtstepc = *dtstepc;
    o.p_nu0 = *p_nu0;
    o.throw_on_failure = false;
    const auto t0 = std::chrono::steady_clock::now();
    r2::Stats s = r2::run_wrf(o, a);
    record_call("radm2sorg", s.gpu_kernel_ms, s.gpu_h2d_ms, s.gpu_d2h_ms,
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (stats) {
      long long steps = 0, accepted = 0, rejected = 0;
#pragma omp parallel for reduction(+ : steps, accepted, rejected)
      for (long c = 0; c < (long)s.nstp.size(); ++c) {
        steps += s.nstp[(std::size_t)c];
        accepted += s.nacc[(std::size_t)c];
        rejected += s.nrej[(std::size_t)c];
      }
      stats[0] = steps; stats[1] = accepted; stats[2] = rejected;
      stats[3] = (long long)s.failures.size();
    }
    if (!s.failures.empty()) {
      const r2::Failure& f = s.failures[0];
      std::fprintf(stderr, "wrfgpu: radm2sorg: integration failed in %zu cell(s), first (i,k,j)=(%d,%d,%d) status %d\n",
                   s.failures.size(), f.i, f.k, f.j, f.status);
      failed = 1;
    }
  });
  if (*ierr == 0) *ierr = failed;
}

}  // extern "C"
