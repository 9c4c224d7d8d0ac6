// replay_advect.cpp - replays a captured call of WRF's positive-definite scalar advection
// (capture kernel "advect_scalar_pd": every tracer of one WRF 4-D array in one file, the last
// Runge-Kutta step). The unlimited scheme of RK steps 1-2 uses the same layout with kernel
// "advect_scalar" (reference files made from WRF's own module_advect_em.F).
//
// Each rank reads only its patch plus the halo the capture holds around the tile (hyperslab
// reads of the stored region), so every patch sees exactly the halo values WRF held.
//
// --steps N (N > 1): N forward steps with frozen winds and mass, exchanging halos between
// steps with MPI. Step n+1 starts from
//   scalar = scalar_old = scalar_old(n) + dt * tendency(n) / ((c1*mub + c2) + c1*mu_old),
// the mass-coupled update WRF's rk_update_scalar makes with the mass the PD limiter uses, so
// the tracers stay non-negative. Cells outside the tile keep their captured values unless
// the domain is periodic. It exercises the decomposition and the exchange (the result must
// not depend on the rank count); it is not a WRF run, so it has no WRF reference.
#include <algorithm>
#include <chrono>
#include <memory>
#include "advection.h"
#include "advection_capture.h"
#include "capture_io.h"
#include "errors.h"
#include "halo_exchange.h"
#include "replay.h"

namespace wrfgpu {
namespace {

// What the stored file says about the tile, before any window is read.
struct TileInfo {
  int its, ite, jts, jte, ie, je;  // ie/je: mass-point ends of the tile
  int ims, ime, jms, jme;          // the stored region
  int ids, ide, jds, jde;
  bool periodic_x, periodic_y;
};

TileInfo tile_info(const NcFile& f) {
  TileInfo t;
  t.its = f.att_int("its"); t.ite = f.att_int("ite"); t.jts = f.att_int("jts"); t.jte = f.att_int("jte");
  t.ids = f.att_int("ids"); t.ide = f.att_int("ide"); t.jds = f.att_int("jds"); t.jde = f.att_int("jde");
  t.ims = f.att_int("region_i0"); t.jms = f.att_int("region_j0");
  t.ime = t.ims + (int)f.dim_len("west_east") - 1;
  t.jme = t.jms + (int)f.dim_len("south_north") - 1;
  // WRF may pass the staggered end (ite = ide); patches cover mass points.
  t.ie = std::min(t.ite, t.ide - 1);
  t.je = std::min(t.jte, t.jde - 1);
  t.periodic_x = f.att_int_or("periodic_x", 0) != 0;
  t.periodic_y = f.att_int_or("periodic_y", 0) != 0;
  return t;
}

// A rank's patch (mass points) and the window it reads: the patch plus as many points as
// the capture holds on each side of the tile.
Box patch_box(const TileInfo& t, const Patch& p) {
  if (p.ni < 0) return Box{t.its, t.ie, t.jts, t.je};
  return Box{t.its + p.i0, t.its + p.i0 + p.ni - 1, t.jts + p.j0, t.jts + p.j0 + p.nj - 1};
}
Box window_box(const TileInfo& t, const Box& b) {
  const int hw = t.its - t.ims, he = t.ime - t.ie, hs = t.jts - t.jms, hn = t.jme - t.je;
  return Box{std::max(t.ims, b.i0 - hw), std::min(t.ime, b.i1 + he), std::max(t.jms, b.j0 - hs),
             std::min(t.jme, b.j1 + hn)};
}

class AdvectReplay : public Replay {
 public:
  AdvectReplay(const NcFile& f, const Patch& patch) : tile_(tile_info(f)), patch_(patch) {
    const Box own = patch_box(tile_, patch);
    const Box win = window_box(tile_, own);
    advection::CaptureWindow w{win.i0, win.i1, win.j0, win.j1};
    cap_ = advection::load_capture(f.path(), patch.ni < 0 ? nullptr : &w);
    WrfDims& d = cap_.d;
    if (patch.ni >= 0) {
      d.its = own.i0; d.jts = own.j0;
      d.ite = own.i1 == tile_.ie ? tile_.ite : own.i1;  // the last patch keeps WRF's end
      d.jte = own.j1 == tile_.je ? tile_.jte : own.j1;
    }
    ni_ = own.i1 - own.i0 + 1;
    nj_ = own.j1 - own.j0 + 1;
    nk_ = d.kme - d.kms + 1;
    off_i_ = d.its - tile_.ims;  // offsets within the capture's stored field
    off_j_ = d.jts - tile_.jms;
    summary_ = std::to_string(cap_.nspec) + " tracers (" + cap_.scalar_names + "), tile " +
               std::to_string(tile_.ite - tile_.its + 1) + "x" + std::to_string(tile_.jte - tile_.jts + 1) +
               "x" + std::to_string(nk_) + ", case " + cap_.case_name + ", " + (cap_.pd ? "pd" : "unlimited");
  }

  std::string kernel() const override { return cap_.pd ? "advect_scalar_pd" : "advect_scalar"; }
  std::string summary() const override {
    return steps_ > 1 ? summary_ + ", " + std::to_string(steps_) + " steps with halo exchange" : summary_;
  }

  // Page-locked runs: the tracers, the tendency and the mass-coupled winds in page-locked
  // arrays (one call per run; stepping updates the tracers in pageable memory between calls).
  bool set_host_locked(bool locked) override {
    if (locked && steps_ > 1) return false;
    locked_ = locked;
    return true;
  }

  bool set_steps(int steps) override {
    if (locked_ && steps > 1) return false;
    if (!cap_.pd && steps > 1) return false;  // the unlimited scheme is not positive: no stepping
    steps_ = steps;
    if (steps_ > 1 && !halo_) {
      // Stepping overwrites the tracers: keep the captured ones for every run() to start from.
      field0_ = cap_.field;
      field_old0_ = cap_.field_old;
      HaloGeometry g;
      g.tile = Box{tile_.its, tile_.ie, tile_.jts, tile_.je};
      g.domain = Box{tile_.ids, tile_.ide - 1, tile_.jds, tile_.jde - 1};
      g.periodic_x = tile_.periodic_x;
      g.periodic_y = tile_.periodic_y;
      const TileInfo t = tile_;
      const Tile tn{tile_.ie - tile_.its + 1, tile_.je - tile_.jts + 1};
      const int nranks = patch_.ni < 0 ? 1 : patch_.nranks;
      g.owned = [t, tn, nranks](int r) {
        return nranks == 1 ? patch_box(t, Patch()) : patch_box(t, decompose(tn.ni, tn.nj, r, nranks));
      };
      g.window = [t, g](int r) { return window_box(t, g.owned(r)); };
      halo_.reset(new HaloExchange(g, MPI_COMM_WORLD));
    }
    return true;
  }

  std::vector<OutputField> run(Backend b, Mode m, PhaseTimes& t) override {
    const WrfDims& d = cap_.d;
    if (steps_ > 1) {  // always from the captured inputs (a single step changes none of them)
      cap_.field = field0_;
      cap_.field_old = field_old0_;
    }
    std::vector<float> tend((std::size_t)cap_.nspec * d.size3(), 0.f);
    // Page-locked: the captured tracers copied into pinned arrays kept between runs, outside
    // the timed call, as a model's state would already be there.
    const float* fo_cap = cap_.inputs(tend.data()).field_old;
    const bool fo_is_f = fo_cap == nullptr || fo_cap == cap_.field.data();
    if (locked_) {
      if (locked_mem_.empty()) {
        for (int a = 0; a < 3; ++a) locked_mem_.emplace_back(tend.size());
        for (const std::vector<float>* m : {&cap_.ru, &cap_.rv, &cap_.rom})  // the winds: state
          locked_mem_.emplace_back(*m);
      }
      std::copy(cap_.field.begin(), cap_.field.end(), locked_mem_[0].p);
      if (!fo_is_f) std::copy(cap_.field_old.begin(), cap_.field_old.end(), locked_mem_[1].p);
      std::fill(locked_mem_[2].p, locked_mem_[2].p + tend.size(), 0.f);
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (int step = 1; step <= steps_; ++step) {
      // The scheme writes every tile value of the tendency (accumulate = false): no zeroing.
      advection::AdvectInputs in = cap_.inputs(tend.data());
      if (step > 1) in.field = in.field_old;  // after an update, scalar = scalar_old
      if (locked_) {
        in.field = locked_mem_[0].p;
        in.field_old = fo_is_f ? in.field : locked_mem_[1].p;
        in.tendency = locked_mem_[2].p;
        in.ru = locked_mem_[3].p;
        in.rv = locked_mem_[4].p;
        in.rom = locked_mem_[5].p;
      }
      advection::AdvectTimings tm;
      if (cap_.pd) advection::run_pd(b, m, in, &tm);
      else advection::run_unlimited(b, m, in, &tm);
      t.h2d_ms += tm.h2d_ms; t.kernel_ms += tm.kernel_ms; t.d2h_ms += tm.d2h_ms;
      t.check_ms += tm.check_ms;
      if (step == steps_ && steps_ == 1) break;
      update(tend);
      const auto th = std::chrono::steady_clock::now();
      halo_->exchange(cap_.field_old.data(), cap_.nspec, d.size3(), nk_);
      t.halo_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - th).count();
    }
    t.total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (locked_) std::copy(locked_mem_[2].p, locked_mem_[2].p + tend.size(), tend.begin());

    OutputField o;
    o.off_i = off_i_;
    o.off_j = off_j_;
    o.shape = {(std::size_t)cap_.nspec, nj_, nk_, ni_};
    o.dims = {"scalar", "south_north", "bottom_top_stag", "west_east"};  // when the file has no ref_var
    o.data.resize((std::size_t)cap_.nspec * nj_ * nk_ * ni_);
    const std::vector<float>& src = steps_ > 1 ? cap_.field_old : tend;
    if (steps_ > 1) {
      // The tracers after the last step, on this patch (no WRF counterpart).
      o.name = "scalar";
      o.ref_var = "field_after_steps";
      o.level_floor = -1e-6;
    } else {
      // The tendency on this tile (mass points), in capture order (scalar, j, k, i).
      o.name = "tendency";
      o.ref_var = "tendency_out";
      // A tendency's level mean is a flux divergence, often a cancellation to near zero.
      o.level_cancel = 1e-4;
      // ... and levels where the tracer is nearly absent (below 1e-6 of its largest level).
      o.level_floor = -1e-6;
    }
    std::size_t n = 0;
    for (int s = 0; s < cap_.nspec; ++s)
      for (std::size_t j = 0; j < nj_; ++j)
        for (std::size_t k = 0; k < nk_; ++k)
          for (std::size_t i = 0; i < ni_; ++i)
            o.data[n++] = src[(std::size_t)s * d.size3() + d.idx3(d.its + (int)i, d.kms + (int)k, d.jts + (int)j)];
    return {o};
  }

  Thresholds thresholds(Mode m) const override {
    Thresholds t;
    // No transcendental functions: strict mode is bitwise with WRF's gfortran build on the
    // reference cases (docs/advection.md); the threshold leaves room for summation-order
    // ulps only.
    t.plmv_vs_ref = m == Mode::Strict ? 1e-6 : 1e-4;
    t.plmv_gpu_cpu = advection::gpu_cpu_plmv_limit(m);
    t.basis = m == Mode::Strict ? "bitwise target; 1e-6 allows ulp-level order effects; GPU = CPU exactly"
                                : "fast mode";
    return t;
  }

  WorkCounts work() const override {
    const WrfDims& d = cap_.d;
    double cells = double(d.size3()), tile = double(ni_) * nj_ * nk_;
    WorkCounts w;
    // field, field_old per tracer and ru, rv, rom once (region), tendency per tracer (tile).
    w.h2d_bytes = steps_ * 4.0 * (2.0 * cap_.nspec * cells + 3.0 * cells);
    w.d2h_bytes = steps_ * 4.0 * cap_.nspec * tile;
    w.dev_bytes = w.h2d_bytes + w.d2h_bytes;
    w.flops = steps_ * 210.0 * cap_.nspec * tile;  // docs/wrf_reference.md B.7, pd step
    return w;
  }

 private:
  struct Tile { int ni, nj; };

  // scalar_old <- scalar_old + dt*tendency/mass on this patch's mass points (k < kde).
  void update(const std::vector<float>& tend) {
    const WrfDims& d = cap_.d;
    const int ie = std::min(d.ite, d.ide - 1), je = std::min(d.jte, d.jde - 1);
    const int ke = std::min(d.kte, d.kde - 1);
#pragma omp parallel for collapse(2) schedule(static)
    for (int s = 0; s < cap_.nspec; ++s)
      for (int j = d.jts; j <= je; ++j)
        for (int k = d.kts; k <= ke; ++k)
          for (int i = d.its; i <= ie; ++i) {
            const std::size_t c = (std::size_t)s * d.size3() + d.idx3(i, k, j);
            const std::size_t c2 = d.idx2(i, j);
            const float c1k = cap_.c1[k - d.kms], c2k = cap_.c2[k - d.kms];
            const float mass = (c1k * cap_.mub[c2] + c2k) + c1k * cap_.mu_old[c2];
            cap_.field_old[c] = cap_.field_old[c] + cap_.dt * tend[c] / mass;
          }
  }

  TileInfo tile_;
  Patch patch_;
  advection::AdvectCapture cap_;
  std::vector<float> field0_, field_old0_;  // captured tracers, kept only for --steps > 1
  int steps_ = 1;
  std::unique_ptr<HaloExchange> halo_;
  bool locked_ = false;
  std::vector<LockedArray> locked_mem_;  // field, field_old, tendency, ru, rv, rom (page-locked runs)
  std::size_t ni_ = 0, nj_ = 0, nk_ = 0, off_i_ = 0, off_j_ = 0;
  std::string summary_;
};

std::unique_ptr<Replay> make(const NcFile& f, const Patch& p) {
  return std::unique_ptr<Replay>(new AdvectReplay(f, p));
}
RegisterReplay reg_pd("advect_scalar_pd", make);
RegisterReplay reg_un("advect_scalar", make);
// wrfgpu_bench, after WSM5: 81 tracers on the WRF-Chem 27 km grid and 5 on CONUS, with the
// PD scheme of the last RK step and the unlimited scheme of RK steps 1 and 2 (the same case
// relabelled: LargeCaseSpec::kernel).
RegisterBench bench(2, {{"advect_scalar_pd", "chem 134x110x35, 81 tracers", "quarter_ss_advect", 134, 110, 35, 81},
                        {"advect_scalar_pd", "CONUS 425x300x35, 5 tracers", "quarter_ss_advect", 425, 300, 35, 0},
                        {"advect_scalar", "chem 134x110x35, 81 tracers", "quarter_ss_advect", 134, 110, 35, 81},
                        {"advect_scalar", "CONUS 425x300x35, 5 tracers", "quarter_ss_advect", 425, 300, 35, 0}});

}  // namespace
}  // namespace wrfgpu
