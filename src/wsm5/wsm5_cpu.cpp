// wsm5_cpu.cpp - OpenMP CPU backend of WSM5: one column (i,j) per iteration, working in
// place on WRF's memory arrays (no copies), per-thread column scratch sized at run time.
// Compiled twice (-DWRFGPU_MODE_NS=strict|fast); the physics is wsm5_physics.h.
#include <chrono>
#include <vector>

#include "wsm5_backends.h"
#include "wsm5_physics.h"
#include "wsm5_radar.h"

namespace wrfgpu {
namespace wsm5 {
namespace WRFGPU_MODE_NS {

void run_cpu(const Constants& c, const WrfDims& d, float delt, const State& s,
             const Options& opt, Timing* timing) {
  const auto t0 = std::chrono::steady_clock::now();
  const int nk = d.tile_nk();
  const int ni = d.tile_ni(), nj = d.tile_nj();
  const std::ptrdiff_t kstride = d.nx();  // distance between levels of one column
  const bool do_re = want_re(s, opt);
  const bool do_refl = want_refl(s, opt);
  const RadarTables* radar = do_refl ? &radar_tables(c) : nullptr;
  const long ncol = (long)ni * nj;

#pragma omp parallel
  {
    std::vector<float> scratch((std::size_t)kScratchArrays * (nk + 1));
    const ColumnScratch cs = column_scratch(scratch.data(), 1, nk + 1);
    std::vector<double> rwork(do_refl ? (std::size_t)kReflArrays * nk : 0);
#pragma omp for schedule(dynamic, 8)
    for (long col = 0; col < ncol; ++col) {
      const int i = d.its + (int)(col % ni);
      const int j = d.jts + (int)(col / ni);
      const std::size_t o3 = d.idx3(i, d.kts, j);
      const std::size_t o2 = d.idx2(i, j);
      ColumnArgs a;
      a.th = Col{s.th + o3, kstride};
      a.q = Col{s.qv + o3, kstride};
      a.qc = Col{s.qc + o3, kstride};
      a.qr = Col{s.qr + o3, kstride};
      a.qi = Col{s.qi + o3, kstride};
      a.qs = Col{s.qs + o3, kstride};
      a.den = CCol{s.den + o3, kstride};
      a.pii = CCol{s.pii + o3, kstride};
      a.p = CCol{s.p + o3, kstride};
      a.delz = CCol{s.delz + o3, kstride};
      a.rain = s.rain + o2;
      a.rainncv = s.rainncv + o2;
      a.sr = s.sr + o2;
      a.snow = s.snow ? s.snow + o2 : nullptr;
      a.snowncv = s.snowncv ? s.snowncv + o2 : nullptr;
      wsm5_column(c, nk, delt, a, cs);
      if (do_refl) {
        ReflArgs r{CCol{s.th + o3, kstride}, CCol{s.pii + o3, kstride}, CCol{s.p + o3, kstride},
                   CCol{s.qv + o3, kstride}, CCol{s.qr + o3, kstride}, CCol{s.qs + o3, kstride},
                   Col{s.refl_10cm + o3, kstride}};
        refl10cm_column(c, *radar, nk, r, rwork.data(), 1, nk);
      }
      if (do_re) {
        EffRadArgs e{CCol{s.th + o3, kstride}, CCol{s.pii + o3, kstride}, CCol{s.qc + o3, kstride},
                     CCol{s.qi + o3, kstride}, CCol{s.qs + o3, kstride}, CCol{s.den + o3, kstride},
                     Col{s.re_cloud + o3, kstride}, Col{s.re_ice + o3, kstride},
                     Col{s.re_snow + o3, kstride}};
        effect_rad_column(c, nk, e);
      }
    }
  }
  if (timing) {
    timing->h2d_ms = timing->kernel_ms = timing->d2h_ms = 0;
    timing->total_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    timing->backend = Backend::Cpu;
  }
}

}  // namespace WRFGPU_MODE_NS
}  // namespace wsm5
}  // namespace wrfgpu
