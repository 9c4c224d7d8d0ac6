// wsm5_radar.h - radar reflectivity diagnostic refl10cm_wsm5 (module_mp_wsm5.F l.1669-1803)
// and the module_mp_radar tables it uses (radar_init).
//
// NOT YET PORTED: radar_tables() throws RuntimeError, so a call that asks for refl_10cm
// (diagflag && do_radar_ref == 1) stops with a clear message instead of returning wrong
// values. The column interface below is what the port will fill in.
#pragma once
#include "wsm5_physics.h"

namespace wrfgpu {
namespace wsm5 {
constexpr int kReflArrays = 8;  // per-level double work arrays of refl10cm_column

struct RadarTables {
  int ready = 0;
};

// module_mp_radar radar_init for this Constants set (host, once). Throws RuntimeError
// ("not yet implemented") in this version.
const RadarTables& radar_tables(const Constants& c);

inline namespace WRFGPU_WSM5_PHYS_NS {

struct ReflArgs {
  CCol th, pii, p, qv, qr, qs;
  Col refl;  // dBZ, max(-35, dBZ) as wsm5 stores it
};

// refl10cm_wsm5 for one column. Not reached in this version (radar_tables throws first).
WRFGPU_HD void refl10cm_column(const Constants&, const RadarTables&, int nk, const ReflArgs& a,
                               double* /*work*/, std::ptrdiff_t /*stride*/,
                               std::ptrdiff_t /*pitch*/) {
  for (int k = 0; k < nk; ++k) a.refl[k] = -35.f;
}

}  // inline namespace phys_<mode>
}  // namespace wsm5
}  // namespace wrfgpu
