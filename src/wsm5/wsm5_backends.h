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

// Input checks, split so that the GPU backend can do the 3-D scans where the data is
// (validate() = validate_args + scan_fields3 + the 2-D scans).
void validate_args(const WrfDims& d, float delt, const State& s, const Options& opt);
// NaN/Inf in the 10 3-D inputs, and values not > 0 in th, den, pii, p, delz, in this order;
// throws InputError naming the field and the first (i,k,j) in Fortran order.
constexpr int kFields3 = 10;
constexpr const char* kField3Name[kFields3] = {"th", "qv", "qc", "qr", "qi",
                                               "qs", "den", "pii", "p", "delz"};
constexpr bool kField3Positive[kFields3] = {true, false, false, false, false,
                                            false, true, true, true, true};
void scan_fields3(const WrfDims& d, const State& s);
// The error scan_fields3 raises for field array f whose first bad tile cell has the linear
// index `first` (i fastest, then k, then j, from (its,kts,jts)).
[[noreturn]] void throw_bad_field3(const WrfDims& d, const float* f, const char* name, long first);

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
