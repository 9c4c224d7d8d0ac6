// wsm5_backends.h - entry points of the backends, one set per numerical mode. The
// dispatcher in wsm5.cpp picks one; the sources wsm5_cpu.cpp and wsm5_gpu.cu are compiled
// twice by the Makefile (-DWRFGPU_MODE_NS=strict|fast).
#pragma once
#include "wsm5.h"

namespace wrfgpu {
namespace wsm5 {

#define WRFGPU_WSM5_DECLARE_BACKENDS(ns)                                                  \
  namespace ns {                                                                          \
  void run_cpu(const Constants& c, const WrfDims& d, float delt, const State& s,           \
               const Options& opt, Timing* timing);                                       \
  void run_gpu(const Constants& c, const WrfDims& d, float delt, const State& s,           \
               const Options& opt, Timing* timing);                                       \
  }
WRFGPU_WSM5_DECLARE_BACKENDS(strict)
WRFGPU_WSM5_DECLARE_BACKENDS(fast)
#undef WRFGPU_WSM5_DECLARE_BACKENDS

// Which diagnostics a call computes (WRF's conditions, l.199 and l.219 of module_mp_wsm5.F).
inline bool want_refl(const State& s, const Options& o) {
  return o.diagflag && o.do_radar_ref == 1 && s.refl_10cm != nullptr;
}
inline bool want_re(const State& s, const Options& o) {
  return o.has_reqc != 0 && o.has_reqi != 0 && o.has_reqs != 0 && s.re_cloud != nullptr &&
         s.re_ice != nullptr && s.re_snow != nullptr;
}

}  // namespace wsm5
}  // namespace wrfgpu
