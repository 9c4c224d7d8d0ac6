// replay_advect.cpp - replays a captured call of WRF's positive-definite scalar advection
// (capture kernel "advect_scalar_pd": every tracer of one WRF 4-D array in one file, the last
// Runge-Kutta step). The unlimited scheme of RK steps 1-2 uses the same layout with kernel
// "advect_scalar" (reference files made from WRF's own module_advect_em.F).
//
// The whole stored region (tile + 4-point halo) is read; a rank's patch only narrows the
// tile bounds, so every patch sees exactly the halo values WRF held.
#include <algorithm>
#include "advection.h"
#include "advection_capture.h"
#include "errors.h"
#include "replay.h"

namespace wrfgpu {
namespace {

class AdvectReplay : public Replay {
 public:
  AdvectReplay(const NcFile& f, const Patch& patch) : cap_(advection::load_capture(f.path())) {
    WrfDims& d = cap_.d;
    // Mass-point extent of the tile: WRF may pass the staggered end (ite = ide).
    int ie = std::min(d.ite, d.ide - 1), je = std::min(d.jte, d.jde - 1);
    if (patch.ni >= 0) {
      int its = d.its + patch.i0, jts = d.jts + patch.j0;
      int ite = its + patch.ni - 1, jte = jts + patch.nj - 1;
      if (ite == ie) ite = d.ite;  // the last patch keeps WRF's (possibly staggered) end
      if (jte == je) jte = d.jte;
      d.its = its; d.ite = ite; d.jts = jts; d.jte = jte;
      ie = std::min(d.ite, d.ide - 1);
      je = std::min(d.jte, d.jde - 1);
    }
    ni_ = ie - d.its + 1;
    nj_ = je - d.jts + 1;
    nk_ = d.kme - d.kms + 1;
    off_i_ = d.its - d.ims;
    off_j_ = d.jts - d.jms;
    summary_ = std::to_string(cap_.nspec) + " tracers (" + cap_.scalar_names + "), tile " +
               std::to_string(d.tile_ni()) + "x" + std::to_string(d.tile_nj()) + "x" +
               std::to_string(nk_) + ", case " + cap_.case_name + ", " + (cap_.pd ? "pd" : "unlimited");
  }

  std::string kernel() const override { return cap_.pd ? "advect_scalar_pd" : "advect_scalar"; }
  std::string summary() const override { return summary_; }

  std::vector<OutputField> run(Backend b, Mode m, PhaseTimes& t) override {
    const WrfDims& d = cap_.d;
    std::vector<float> tend((std::size_t)cap_.nspec * d.size3(), 0.f);
    advection::AdvectInputs in = cap_.inputs(tend.data());
    advection::AdvectTimings tm;
    if (cap_.pd) advection::run_pd(b, m, in, &tm);
    else advection::run_unlimited(b, m, in, &tm);
    t.h2d_ms = tm.h2d_ms; t.kernel_ms = tm.kernel_ms; t.d2h_ms = tm.d2h_ms; t.total_ms = tm.total_ms;
    // The tendency on this tile (mass points), in capture order (scalar, j, k, i).
    OutputField o;
    o.name = "tendency";
    o.ref_var = "tendency_out";
    o.shape = {(std::size_t)cap_.nspec, nj_, nk_, ni_};
    o.off_i = off_i_;
    o.off_j = off_j_;
    // A tendency's level mean is a flux divergence, often a cancellation to near zero.
    o.level_cancel = 1e-4;
    // ... and levels where the tracer is nearly absent (below 1e-6 of its largest level).
    o.level_floor = -1e-6;
    o.data.resize((std::size_t)cap_.nspec * nj_ * nk_ * ni_);
    std::size_t n = 0;
    for (int s = 0; s < cap_.nspec; ++s)
      for (std::size_t j = 0; j < nj_; ++j)
        for (std::size_t k = 0; k < nk_; ++k)
          for (std::size_t i = 0; i < ni_; ++i)
            o.data[n++] = tend[(std::size_t)s * d.size3() + d.idx3(d.its + (int)i, d.kms + (int)k, d.jts + (int)j)];
    return {o};
  }

  Thresholds thresholds(Mode m) const override {
    Thresholds t;
    // No transcendental functions: strict mode is bitwise with WRF's gfortran build on the
    // reference cases (docs/advection.md); the threshold leaves room for summation-order
    // ulps only.
    t.plmv_vs_ref = m == Mode::Strict ? 1e-6 : 1e-4;
    t.plmv_gpu_cpu = m == Mode::Strict ? 0.0 : 1e-5;
    t.basis = m == Mode::Strict ? "bitwise target; 1e-6 allows ulp-level order effects; GPU = CPU exactly"
                                : "fast mode";
    return t;
  }

  WorkCounts work() const override {
    const WrfDims& d = cap_.d;
    double cells = double(d.size3()), tile = double(ni_) * nj_ * nk_;
    WorkCounts w;
    // field, field_old per tracer and ru, rv, rom once (region), tendency per tracer (tile).
    w.h2d_bytes = 4.0 * (2.0 * cap_.nspec * cells + 3.0 * cells);
    w.d2h_bytes = 4.0 * cap_.nspec * tile;
    w.dev_bytes = w.h2d_bytes + w.d2h_bytes;
    w.flops = 210.0 * cap_.nspec * tile;  // wrf_interfaces.md B.7, pd step
    return w;
  }

 private:
  advection::AdvectCapture cap_;
  std::size_t ni_ = 0, nj_ = 0, nk_ = 0, off_i_ = 0, off_j_ = 0;
  std::string summary_;
};

std::unique_ptr<Replay> make(const NcFile& f, const Patch& p) {
  return std::unique_ptr<Replay>(new AdvectReplay(f, p));
}
RegisterReplay reg_pd("advect_scalar_pd", make);
RegisterReplay reg_un("advect_scalar", make);

}  // namespace
}  // namespace wrfgpu
