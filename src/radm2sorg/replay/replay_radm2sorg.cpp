// replay_radm2sorg.cpp - replays a captured call of WRF-Chem's RADM2SORG KPP chemistry
// (capture kernel "radm2sorg_kpp"): every cell of the tile integrated over dtstepc with the
// Rosenbrock Ros3 solver, from the chem species and radicals (ppmv/ppm), qv, t_phy, p_phy,
// rho_phy and 21 photolysis rates (min-1) WRF passed, read by radm2sorg_capture.h.
#include <algorithm>
#include <chrono>
#include "errors.h"
#include "radm2sorg.h"
#include "radm2sorg_capture.h"
#include "replay.h"

namespace wrfgpu {
namespace {

class Radm2sorgReplay : public Replay {
 public:
  Radm2sorgReplay(const NcFile& f, const Patch& patch) : patch_(patch) {
    c_ = radm2sorg::load_capture(f, patch);  // the tests' reader too
    if (patch_.ni < 0) {
      patch_.ni = (int)c_.ni;
      patch_.nj = (int)c_.nj;
    }
    names_ = radm2sorg::state_names();
    summary_ = std::to_string(f.dim_len("west_east") * f.dim_len("south_north") * c_.nk) + " cells (" +
               std::to_string(f.dim_len("west_east")) + "x" + std::to_string(f.dim_len("south_north")) + "x" +
               std::to_string(c_.nk) + "), dtstepc " + std::to_string((int)c_.dtstepc) + " s, case " +
               f.att_string_or("case_name", "?");
  }

  std::string kernel() const override { return "radm2sorg_kpp"; }
  std::string summary() const override { return summary_; }

  std::vector<OutputField> run(Backend b, Mode m, PhaseTimes& t) override {
    std::vector<float> state = c_.state;  // every run starts from the captured state
    std::vector<float> vdrog3((std::size_t)radm2sorg::kLdrog * c_.n, 0.f);
    radm2sorg::Options o;
    o.backend = b;
    o.mode = m;
    o.dtstepc = c_.dtstepc;
    o.p_nu0 = c_.p_nu0;
    o.precision = single_ ? radm2sorg::Precision::Float : radm2sorg::Precision::Double;
    radm2sorg::Stats st;
    if (wrf_arrays_) {
      // The capture's fields are (south_north, bottom_top, west_east): each one is a WRF 3-D
      // array chem(i,k,j) of the tile with memory dimensions = tile dimensions, and the chem
      // species are consecutive 3-D arrays of one 4-D array. Timed whole, as the Fortran
      // bridge's call costs.
      const std::size_t n = c_.n;
      radm2sorg::WrfArrays a;
      a.d.ids = a.d.ims = a.d.its = 1;
      a.d.ide = a.d.ime = a.d.ite = patch_.ni;
      a.d.kds = a.d.kms = a.d.kts = 1;
      a.d.kde = a.d.kme = a.d.kte = (int)c_.nk;
      a.d.jds = a.d.jms = a.d.jts = 1;
      a.d.jde = a.d.jme = a.d.jte = patch_.nj;
      a.chem = state.data();
      a.num_chem = radm2sorg::kNChem;
      for (int q = 0; q < radm2sorg::kNChem; ++q) a.p_chem[q] = q + 1;
      for (int q = 0; q < radm2sorg::kNRad; ++q) a.rad[q] = state.data() + (radm2sorg::kNChem + q) * n;
      const float* met = c_.met.data();
      a.qv = met + radm2sorg::kQv * n;
      a.t_phy = met + radm2sorg::kTphy * n;
      a.p_phy = met + radm2sorg::kPphy * n;
      a.rho = met + radm2sorg::kRho * n;
      for (int p = 0; p < radm2sorg::kNPh; ++p) a.ph[p] = met + (radm2sorg::kPh0 + p) * n;
      a.vdrog3 = vdrog3.data();
      const auto t0 = std::chrono::steady_clock::now();
      st = radm2sorg::run_wrf(o, a);
      t.total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    } else {
      // Timed whole, as the run_wrf call above: the input checks, the integration and the
      // copies (Stats::seconds alone leaves the checks out).
      const auto t0 = std::chrono::steady_clock::now();
      st = radm2sorg::run_dense(o, c_.n, state.data(), c_.met.data(), vdrog3.data());
      t.total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    t.check_ms = st.check_seconds * 1e3;
    // GPU: the kernel and the copies as timed by CUDA events; CPU: the whole call.
    t.kernel_ms = st.backend_used == Backend::Cpu ? t.total_ms : st.gpu_kernel_ms;
    t.h2d_ms = st.gpu_h2d_ms;
    t.d2h_ms = st.gpu_d2h_ms;
    std::vector<std::size_t> sh3 = {(std::size_t)patch_.nj, c_.nk, (std::size_t)patch_.ni};
    std::vector<OutputField> out;
    auto add = [&](const std::string& name, const std::string& ref, std::vector<std::size_t> sh,
                   const float* data, std::size_t n, bool plmv) {
      OutputField f;
      f.name = name;
      f.ref_var = ref;
      f.shape = sh;
      f.data.assign(data, data + n);
      f.compare_plmv = plmv;
      f.off_i = patch_.i0;
      f.off_j = patch_.j0;
      out.push_back(std::move(f));
    };
    for (std::size_t s = 0; s < names_.size(); ++s)
      add(names_[s], names_[s] + "_out", sh3, state.data() + s * c_.n, c_.n, true);
    std::vector<std::size_t> shv = {(std::size_t)radm2sorg::kLdrog, sh3[0], sh3[1], sh3[2]};
    if (c_.p_nu0 > 1) add("vdrog3", "vdrog3_out", shv, vdrog3.data(), vdrog3.size(), true);
    std::vector<float> nstp(st.nstp.begin(), st.nstp.end());
    add("kpp_nstp", "kpp_nstp_out", sh3, nstp.data(), nstp.size(), false);
    return out;
  }

  Thresholds thresholds(Mode m) const override {
    Thresholds t;
    // Adaptive step control amplifies rounding differences up to RTOL where a step is
    // accepted in one build and rejected in the other (docs/radm2sorg.md).
    t.plmv_vs_ref = 1e-3;
    t.plmv_gpu_cpu = radm2sorg::gpu_cpu_plmv_limit(m);
    t.basis = "RTOL = 1e-3 of WRF's Ros3 (step acceptance can differ between builds)";
    return t;
  }

  WorkCounts work() const override {
    WorkCounts w;
    w.h2d_bytes = 4.0 * (c_.state.size() + c_.met.size());
    w.d2h_bytes = 4.0 * (c_.state.size() + (double)radm2sorg::kLdrog * c_.n);
    w.dev_bytes = w.h2d_bytes + w.d2h_bytes;
    // ~12 kflop per Ros3 step (docs/wrf_reference.md C.7) x a typical 10 steps, + rate constants.
    w.flops = c_.n * (12e3 * 10 + 1e3);
    w.cells = (double)c_.n;
    return w;
  }

  bool set_single(bool single) override {
    single_ = single;
    return true;
  }
  bool set_wrf_arrays(bool wrf) override {
    wrf_arrays_ = wrf;
    return true;
  }

 private:
  Patch patch_;
  radm2sorg::Capture c_;
  std::vector<std::string> names_;
  bool single_ = false;  // the solver in single precision (bench)
  bool wrf_arrays_ = false;  // through run_wrf (bench)
  std::string summary_;
};

RegisterReplay reg("radm2sorg_kpp", [](const NcFile& f, const Patch& p) {
  return std::unique_ptr<Replay>(new Radm2sorgReplay(f, p));
});
// wrfgpu_bench, last (--kernels radm2sorg names it too): 28,889 cells and CONUS, each from a
// warm start (radicals carried) and a cold start (radicals 0), and a typical WRF-Chem patch of
// one GPU (a tenth of CONUS) warm. (The seeds' case is 40x40x20
// with 28,889 cells; the mirror tiling gives 39x39x19 = 28,899.)
RegisterBench bench(3, {{"radm2sorg_kpp", "28,899 cells (39x39x19), warm", "radm2sorg_warm", 39, 39, 19, 0},
                        {"radm2sorg_kpp", "28,899 cells (39x39x19), cold", "radm2sorg_cold", 39, 39, 19, 0},
                        {"radm2sorg_kpp", "446,250 cells (85x150x35), warm", "radm2sorg_warm", 85, 150, 35, 0},
                        {"radm2sorg_kpp", "CONUS 425x300x35 (4.46 M), warm", "radm2sorg_warm", 425, 300, 35, 0},
                        {"radm2sorg_kpp", "CONUS 425x300x35 (4.46 M), cold", "radm2sorg_cold", 425, 300, 35, 0}},
                    "radm2sorg");

}  // namespace
}  // namespace wrfgpu
