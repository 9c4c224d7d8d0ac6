// wsm5_bridge.cpp - the C side of WSM5's Fortran entry points.
//
// 1. The symbols WRF already calls when built with -DRUN_ON_GPU (gfortran mangling, every
//    argument by reference); WRF ships no implementation of them:
//      main/module_wrf_top.F        CALL wsm5_gpu_init(myproc, nproc, mydevice)
//      phys/module_mp_wsm5_accel.F  CALL get_wsm5_gpu_levels(mkx) ; CALL wsm5_host(...)
//      phys/module_mp_wdm5.F        the same two calls (WDM5 is replaced by WSM5 there)
//    wsm5_host receives array sections (its:ite,kts:kte,jts:jte): gfortran hands over
//    contiguous tile-sized copies, so the arrays are dense tiles here, and no constants
//    (WRF's module_model_constants values are used).
// 2. wrfgpu_wsm5_c, called by module_wrfgpu_wsm5.F90 (ISO_C_BINDING) with WRF's
//    memory-dimensioned arrays, no copies, and the full v4.7 wsm5 argument list.
//
// Backend: GPU by default; WRFGPU_BACKEND=cpu|gpu|auto|both overrides (cpu for a GPU-less
// run); wrfgpu_wsm5_set_backend overrides both. Mode: WRFGPU_MODE=strict|fast (strict).
// Errors: bridge.h (one line "wrfgpu: ..." on stderr; status 2 bad input, else 1: returned by
// wrfgpu_wsm5_c, the exit status of WRF's own symbols).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unistd.h>

#include "bridge.h"
#include "device.h"
#include "host_cores.h"
#include "call_timing.h"
#include "config.h"
#include "errors.h"
#include "modes.h"
#include "wrf_dims.h"
#include "wsm5.h"

using namespace wrfgpu;

namespace {

std::mutex g_mu;
bool g_backend_set = false;
Backend g_backend = Backend::Gpu;

Backend backend() {
  std::lock_guard<std::mutex> l(g_mu);
  if (g_backend_set) return g_backend;
  return backend_from_env(Backend::Gpu);
}
Mode mode() { return mode_from_env(Mode::Strict); }

// wsm5init is redone only when the constants change (WRF passes the same ones every call).
const wsm5::Constants& constants_for(const wsm5::Constants& base, float dens) {
  static std::mutex mu;
  static bool have = false;
  static wsm5::Constants last_base{}, result{};
  static float last_dens = 0;
  std::lock_guard<std::mutex> l(mu);
  if (!have || std::memcmp(&base, &last_base, sizeof base) != 0 || dens != last_dens) {
    result = wsm5::wsm5init(base, dens);
    last_base = base;
    last_dens = dens;
    have = true;
  }
  return result;
}

float g_dens = 100.f;  // rhosnow, wsm5init's dens (WRF's wsm5 does not receive it)

}  // namespace

extern "C" {

// main/module_wrf_top.F: one call per MPI rank at start-up. mydevice is the rank's index
// among the ranks on its host; the GPU used is mydevice modulo the visible devices.
// A rank that cannot use its GPU stops the job here (WRF's FATAL, and MPI_Abort in a dmpar
// build: bridge.h), saying which rank, on which host and why: a GPU run never falls back to
// the CPU silently.
void wsm5_gpu_init_(int* myproc, int* nproc, int* mydevice) {
  Backend b = Backend::Gpu;
  bridge_call_or_exit("wsm5_gpu_init", [&] { b = backend(); });  // a bad WRFGPU_BACKEND stops here
  if (b == Backend::Cpu) {
    std::printf("wrfgpu: rank %d of %d runs WSM5 on the CPU backend (WRFGPU_BACKEND=cpu)\n",
                *myproc, *nproc);
    return;
  }
  if (b == Backend::Auto && gpu_count() == 0) {
    std::printf("wrfgpu: rank %d of %d: no GPU visible, WSM5 runs on the CPU backend\n",
                *myproc, *nproc);
    return;
  }
  char host[128] = {0};
  gethostname(host, sizeof host - 1);
  const std::optional<std::string> pipe = config::external("CUDA_MPS_PIPE_DIRECTORY");
  const char* mps_pipe = pipe ? pipe->c_str() : nullptr;
  try {
    const int id = gpu_select(-1, *mydevice);
    const DeviceInfo d = gpu_info(id);
    // A pipe directory says the user means MPS; a context that is not an MPS client then
    // means no control daemon listens there (CUDA itself carries on without MPS).
    if (mps_pipe && *mps_pipe && !d.mps)
      throw RuntimeError(std::string("CUDA_MPS_PIPE_DIRECTORY=") + mps_pipe +
                         " is set, but this rank's GPU context is not an MPS client: no MPS "
                         "control daemon runs there (start it: tools/mps.sh start, or unset "
                         "the variable)");
    // Ranks of this host sharing one GPU (Open MPI's local size; other launchers: unknown).
    const std::optional<std::string> ls = config::external("OMPI_COMM_WORLD_LOCAL_SIZE");
    const int local = ls ? std::atoi(ls->c_str()) : 0, ngpu = gpu_count();
    std::string sharing;
    if (d.mps)
      sharing = ", through MPS";
    else if (ngpu > 0 && local > ngpu)
      sharing = ", shared by " + std::to_string((local + ngpu - 1) / ngpu) +
                " ranks without MPS (their contexts time-slice the GPU: tools/mps.sh start)";
    std::printf("wrfgpu: rank %d of %d uses GPU %d (%s, PCI %s%s) for WSM5%s\n", *myproc,
                *nproc, id, d.name.c_str(), d.pci_bus_id.c_str(), sharing.c_str(),
                *nproc < host_cores_online() ? host_cores_note().c_str() : "");
    std::fflush(stdout);
  } catch (const std::exception& e) {
    const std::string why = "rank " + std::to_string(*myproc) + " of " + std::to_string(*nproc) +
                            " (host " + host + "): " + e.what() +
                            ". Inside WRF the library runs on the GPU by default; "
                            "WRFGPU_BACKEND=cpu runs its CPU backend instead";
    bridge_report("wsm5_gpu_init", why.c_str());
    bridge_stop(1);
  }
}

// WRF stops when this is smaller than kte; our level count is set at run time.
void get_wsm5_gpu_levels_(int* mkx) { *mkx = 1000000; }

// phys/module_mp_wsm5_accel.F / module_mp_wdm5.F: note qc, qi, qr, qs order. The 18 bounds
// are its,ite,jts,jte,kts,kte three times in WRF's call (domain, memory, tile); the arrays
// are dense tile copies whatever they say.
void wsm5_host_(float* th, float* pii, float* q, float* qc, float* qi, float* qr, float* qs,
                float* den, float* p, float* delz, float* delt, float* rain, float* rainncv,
                float* snow, float* snowncv, float* sr, int* ids, int* ide, int* jds, int* jde,
                int* kds, int* kde, int* ims, int* ime, int* jms, int* jme, int* kms, int* kme,
                int* its, int* ite, int* jts, int* jte, int* kts, int* kte) {
  (void)ids; (void)ide; (void)jds; (void)jde; (void)kds; (void)kde;
  (void)ims; (void)ime; (void)jms; (void)jme; (void)kms; (void)kme;
  bridge_call_or_exit("wsm5_host", [&] {
    WrfDims d;
    d.its = d.ims = d.ids = *its;
    d.ite = d.ime = d.ide = *ite;
    d.jts = d.jms = d.jds = *jts;
    d.jte = d.jme = d.jde = *jte;
    d.kts = d.kms = d.kds = *kts;
    d.kte = d.kme = d.kde = *kte;
    wsm5::State s;
    s.th = th; s.qv = q; s.qc = qc; s.qr = qr; s.qi = qi; s.qs = qs;
    s.den = den; s.pii = pii; s.p = p; s.delz = delz;
    s.rain = rain; s.rainncv = rainncv; s.sr = sr;
    if (snow && snowncv) { s.snow = snow; s.snowncv = snowncv; }
    const wsm5::Constants base = wsm5::wrf_model_constants();
    wsm5::Timing t;
    wsm5::run(backend(), mode(), constants_for(base, base.dens), d, *delt, s, wsm5::Options(), &t);
    record_call("wsm5", t.kernel_ms, t.h2d_ms, t.d2h_ms, t.total_ms);
  });
}

// ---- ISO_C_BINDING entry points (module_wrfgpu_wsm5.F90) ---------------------------------

// The 17 constants in WRF's wsm5 argument order, then dens.
struct Wsm5Consts17 {
  float g, cpd, cpv, rd, rv, t0c, ep1, ep2, qmin, xls, xlv0, xlf0, den0, denr, cliq, cice, psat;
};

void wrfgpu_wsm5_c(float* th, float* q, float* qc, float* qr, float* qi, float* qs,
                   const float* den, const float* pii, const float* p, const float* delz,
                   float delt, const float* consts17, float* rain, float* rainncv, float* snow,
                   float* snowncv, int has_snow, float* sr, float* refl_10cm, int diagflag,
                   int do_radar_ref, int has_reqc, int has_reqi, int has_reqs, float* re_cloud,
                   float* re_ice, float* re_snow, const int* dims18, int* ierr) {
  *ierr = bridge_call("wsm5_gpu", [&] {
    WrfDims d;
    const int* b = dims18;
    d.ids = b[0]; d.ide = b[1]; d.jds = b[2]; d.jde = b[3]; d.kds = b[4]; d.kde = b[5];
    d.ims = b[6]; d.ime = b[7]; d.jms = b[8]; d.jme = b[9]; d.kms = b[10]; d.kme = b[11];
    d.its = b[12]; d.ite = b[13]; d.jts = b[14]; d.jte = b[15]; d.kts = b[16]; d.kte = b[17];
    wsm5::Constants base = wsm5::wrf_model_constants();
    Wsm5Consts17 k;
    std::memcpy(&k, consts17, sizeof k);
    base.g = k.g; base.cpd = k.cpd; base.cpv = k.cpv; base.rd = k.rd; base.rv = k.rv;
    base.t0c = k.t0c; base.ep1 = k.ep1; base.ep2 = k.ep2; base.qmin = k.qmin; base.xls = k.xls;
    base.xlv0 = k.xlv0; base.xlf0 = k.xlf0; base.den0 = k.den0; base.denr = k.denr;
    base.cliq = k.cliq; base.cice = k.cice; base.psat = k.psat;
    float dens;
    {
      std::lock_guard<std::mutex> l(g_mu);
      dens = g_dens;
    }
    base.dens = dens;
    wsm5::State s;
    s.th = th; s.qv = q; s.qc = qc; s.qr = qr; s.qi = qi; s.qs = qs;
    s.den = den; s.pii = pii; s.p = p; s.delz = delz;
    s.rain = rain; s.rainncv = rainncv; s.sr = sr;
    if (has_snow) { s.snow = snow; s.snowncv = snowncv; }
    wsm5::Options o;
    o.diagflag = diagflag != 0;
    o.do_radar_ref = do_radar_ref;
    if (o.diagflag && o.do_radar_ref == 1) s.refl_10cm = refl_10cm;
    o.has_reqc = has_reqc; o.has_reqi = has_reqi; o.has_reqs = has_reqs;
    if (has_reqc && has_reqi && has_reqs) {
      s.re_cloud = re_cloud; s.re_ice = re_ice; s.re_snow = re_snow;
    }
    wsm5::Timing t;
    wsm5::run(backend(), mode(), constants_for(base, dens), d, delt, s, o, &t);
    record_call("wsm5", t.kernel_ms, t.h2d_ms, t.d2h_ms, t.total_ms);
  });
}

// wsm5init's rhosnow (default 100, module_model_constants).
void wrfgpu_wsm5_set_dens(float dens) {
  std::lock_guard<std::mutex> l(g_mu);
  g_dens = dens;
}

// "cpu", "gpu", "auto", "both", or "" to go back to WRFGPU_BACKEND / the GPU default.
void wrfgpu_wsm5_set_backend(const char* name, int len) {
  bridge_call_or_exit("wrfgpu_wsm5_set_backend", [&] {
    std::string n(name, (std::size_t)(len > 0 ? len : 0));
    while (!n.empty() && (n.back() == ' ' || n.back() == '\0')) n.pop_back();
    std::lock_guard<std::mutex> l(g_mu);
    if (n.empty()) {
      g_backend_set = false;
    } else {
      g_backend = parse_backend(n);
      g_backend_set = true;
    }
  });
}

}  // extern "C"
