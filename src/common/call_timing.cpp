// call_timing.cpp - see call_timing.h.
#include "call_timing.h"
#include "config.h"
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <unistd.h>

namespace wrfgpu {
namespace {

struct Totals {
  long calls = 0;
  double kernel = 0, h2d = 0, d2h = 0, total = 0;
  // The first call (device memory, tables, registrations, warm-up), kept apart: its wall time
  // and its kernels + transfers, so that a steady-state ratio can leave it out of both.
  double first_total = 0, first_kc = 0;
};

struct Table {
  std::mutex mu;
  std::map<std::string, Totals> t;
  ~Table() {
    if (t.empty()) return;
    char host[128] = {0};
    gethostname(host, sizeof host - 1);
    std::optional<std::string> r = config::external("OMPI_COMM_WORLD_RANK");
    if (!r) r = config::external("PMI_RANK");
    const char* rank = r ? r->c_str() : nullptr;
    // Totals over all calls; first_ms is the first call's wall time (in call_ms) and
    // first_kc_ms its kernels + transfers (in kernel_ms + h2d_ms + d2h_ms): the first call
    // carries the one-off set-up and is left out of a steady-state per-call figure.
    std::fprintf(stderr,
                 "wrfgpu timing (%s, rank %s): kernel  calls  kernel_ms  h2d_ms  d2h_ms  call_ms  first_ms  "
                 "first_kc_ms\n",
                 host, rank ? rank : "0");
    for (auto& kv : t)
      std::fprintf(stderr, "wrfgpu timing: %-10s %6ld %10.1f %7.1f %7.1f %8.1f %9.1f %11.1f\n",
                   kv.first.c_str(), kv.second.calls, kv.second.kernel, kv.second.h2d, kv.second.d2h,
                   kv.second.total, kv.second.first_total, kv.second.first_kc);
  }
};

bool enabled() { return config::flag("WRFGPU_TIMING").value_or(false); }

Table& table() {
  static Table tab;  // destroyed (and printed) at exit
  return tab;
}

}  // namespace

void record_call(const char* kernel, double kernel_ms, double h2d_ms, double d2h_ms, double total_ms) {
  if (!enabled()) return;
  Table& tab = table();
  std::lock_guard<std::mutex> l(tab.mu);
  Totals& x = tab.t[kernel];
  if (x.calls == 0) {
    x.first_total = total_ms;
    x.first_kc = kernel_ms + h2d_ms + d2h_ms;
  }
  ++x.calls;
  x.kernel += kernel_ms;
  x.h2d += h2d_ms;
  x.d2h += d2h_ms;
  x.total += total_ms;
}

}  // namespace wrfgpu
