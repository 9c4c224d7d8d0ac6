// radm2sorg.cpp - public API of the RADM2SORG chemistry: WRF-array gather/scatter, backend and
// mode dispatch, failure reporting. Compiled once.
#include "config.h"
#include "radm2sorg.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>
#include "device.h"
#include "errors.h"
#include "finite_check.h"
#include "radm2sorg_backends.h"
#include "both.h"

namespace wrfgpu {
namespace radm2sorg {

StateMap make_state_map() {
  StateMap m;
  int nchem = 0;
  for (int i = 0; i < mech::NVAR; ++i) {
    m.field[i] = -1;
    const char* w = mech::kWrfNames[i];
    if (!w) continue;
    int r = -1;
    for (int q = 0; q < kNRad; ++q)
      if (std::strcmp(w, kRadicalNames[q]) == 0) r = q;
    m.field[i] = (signed char)(r >= 0 ? kNChem + r : nchem++);
  }
  if (nchem != kNChem) throw RuntimeError("radm2sorg: generated mechanism maps " +
                                          std::to_string(nchem) + " chem species, expected 41");
  return m;
}

const char* state_field_name(int field) {
  static const StateMap m = make_state_map();
  if (field >= kNChem) return kRadicalNames[field - kNChem];
  for (int i = 0; i < mech::NVAR; ++i)
    if (m.field[i] == field) return mech::kWrfNames[i];
  return "?";
}

std::vector<std::string> state_names() {
  std::vector<std::string> v;
  for (int f = 0; f < kNState; ++f) v.push_back(state_field_name(f));
  return v;
}
std::vector<std::string> met_names() {
  std::vector<std::string> v = {"qv", "t_phy", "p_phy", "rho_phy"};
  for (int p = 0; p < kNPh; ++p) v.push_back(std::string("ph_") + mech::kPhotolysisNames[p]);
  return v;
}

// The inputs of a call as the checks see them: input field f (state 0..kNState-1, then met)
// in pieces, each a run of consecutive cells in memory (the dense batch: blocks of a field;
// WRF's tile: its (j, k) rows), the value of a cell, and where a cell is.
struct CheckSource {
  virtual ~CheckSource() = default;
  virtual std::size_t pieces() const = 0;  // per field
  // piece p of field f: its first cell and length, and where its values are
  virtual const float* piece(int f, std::size_t p, std::size_t& c0, std::size_t& n) const = 0;
  virtual float value(int f, std::size_t c) const = 0;
  virtual std::string where(std::size_t c) const { return " at cell " + std::to_string(c); }
};
struct DenseCheck : CheckSource {
  static constexpr std::size_t kBlock = 4096;
  std::size_t ncell;
  const float *state, *met;
  DenseCheck(std::size_t n, const float* s, const float* m) : ncell(n), state(s), met(m) {}
  const float* field(int f) const {
    return f < kNState ? state + (std::size_t)f * ncell : met + (std::size_t)(f - kNState) * ncell;
  }
  std::size_t pieces() const override { return (ncell + kBlock - 1) / kBlock; }
  const float* piece(int f, std::size_t p, std::size_t& c0, std::size_t& n) const override {
    c0 = p * kBlock;
    n = std::min(kBlock, ncell - c0);
    return field(f) + c0;
  }
  float value(int f, std::size_t c) const override { return field(f)[c]; }
};

// The first bad cell of every input field (ncell if none): NaN/Inf, and not > 0 in t_phy,
// p_phy and rho. One parallel region over all fields' pieces, each tested with the
// vectorised row test first (a region per field, testing cell by cell, took 0.84 ms of an
// 11 ms call for 28,899 cells and 60 ms for CONUS on an H100 host).
// Pieces that end at or before cell `from` are skipped.
static std::vector<std::size_t> first_bad_cells(std::size_t ncell, const CheckSource& src,
                                                std::size_t from = 0) {
  const int nf = kNState + kNMet;
  std::vector<std::size_t> first((std::size_t)nf, ncell);
  const long np = (long)src.pieces();
#pragma omp parallel for schedule(dynamic, 16)
  for (long t = 0; t < (long)nf * np; ++t) {
    const int f = (int)(t / np);
    const bool positive = positive_field(f);
    std::size_t c0 = 0, n = 0;
    const float* x = src.piece(f, (std::size_t)(t % np), c0, n);
    if (c0 + n <= from || !field_has_bad(f, x, n)) continue;
    std::size_t i = 0;
    while (std::isfinite(x[i]) && !(positive && !(x[i] > 0))) ++i;
#pragma omp critical(radm2sorg_first_bad)
    first[(std::size_t)f] = std::min(first[(std::size_t)f], c0 + i);
  }
  return first;
}

static void check_options(const Options& opt) {
  if (!(opt.dtstepc > 0)) throw InputError("radm2sorg: dtstepc must be > 0");
  if (opt.method < 1 || opt.method > 5)
    throw InputError("radm2sorg: method must be 1..5 (Ros2, Ros3, Ros4, Rodas3, Rodas4)");
}

static void check_inputs(std::size_t ncell, const CheckSource& src, const Options& opt) {
  check_options(opt);
  const std::vector<std::size_t> first = first_bad_cells(ncell, src);
  for (int f = 0; f < kNMet; ++f) {
    const std::size_t c = first[(std::size_t)(kNState + f)];
    if (c < ncell)
      throw InputError("radm2sorg: bad " + met_names()[f] + " = " +
                       std::to_string(src.value(kNState + f, c)) + src.where(c));
  }
  for (int f = 0; f < kNState; ++f) {
    const std::size_t c = first[(std::size_t)f];
    if (c < ncell)
      throw InputError("radm2sorg: non-finite " + std::string(state_field_name(f)) + src.where(c));
  }
}

// The same checks, run by the GPU backend as the call goes (CellCheck, radm2sorg_backends.h).
struct CallCheck : CellCheck {
  std::size_t ncell;
  const CheckSource& src;
  const Options& opt;
  CallCheck(std::size_t n, const CheckSource& s, const Options& o) : ncell(n), src(s), opt(o) {}
  bool good_from(std::size_t from) const override {
    for (std::size_t c : first_bad_cells(ncell, src, from))
      if (c < ncell) return false;
    return true;
  }
  void report() const override { check_inputs(ncell, src, opt); }
};

// Step counts of the previous GPU call on the same cells (a WRF tile, or a dense batch of the
// same size), capped at 255: the next call hands its cells out to the warps longest expected
// first. A warp takes a cell when it finishes one, so a call ends when its last-started cell
// does; in index order the slow cells (a few levels of a column take 3 to 4 times the mean
// steps) are as likely to start last as first. WRF calls the chemistry with the same tiles
// every chemistry step, and a cell's stiffness changes little from one call to the next.
// Results do not depend on the order (cells are independent).
class StepHistory {
 public:
  using Key = std::vector<long>;
  using Counts = std::shared_ptr<const std::vector<std::uint8_t>>;
  // the counts recorded for `key`, or null when there are none for `ncell` cells
  Counts get(const Key& key, std::size_t ncell) {
    std::lock_guard<std::mutex> lk(m_);
    auto it = h_.find(key);
    if (it == h_.end() || it->second->size() != ncell) return nullptr;
    return it->second;
  }
  void put(const Key& key, const int* nstp, std::size_t ncell) {
    std::lock_guard<std::mutex> lk(m_);
    auto it = h_.find(key);
    // WRF calls with the same tiles every chemistry step: the tile's counts are refilled in
    // place when no call holds them (a new vector is a page fault per 4 KB: 4.5 MB at CONUS)
    if (it != h_.end() && it->second->size() == ncell && it->second.use_count() == 1) {
      fill(*it->second, nstp);
      return;
    }
    auto v = std::make_shared<std::vector<std::uint8_t>>(ncell);
    fill(*v, nstp);
    if (it != h_.end()) {
      bytes_ -= it->second->size();
      h_.erase(it);
    }
    if (h_.size() >= kMaxKeys || bytes_ + ncell > kMaxBytes) {  // bounded: many tiles or sizes
      h_.clear();
      bytes_ = 0;
    }
    bytes_ += ncell;
    h_[key] = std::move(v);
  }
 private:
  static void fill(std::vector<std::uint8_t>& v, const int* nstp) {
#pragma omp parallel for schedule(static)
    for (long c = 0; c < (long)v.size(); ++c)
      v[(std::size_t)c] = (std::uint8_t)std::min(std::max(nstp[c], 0), 255);
  }
  static constexpr std::size_t kMaxKeys = 256, kMaxBytes = std::size_t(1) << 28;
  std::mutex m_;
  std::map<Key, std::shared_ptr<std::vector<std::uint8_t>>> h_;
  std::size_t bytes_ = 0;
};
static StepHistory& step_history() {
  static StepHistory h;
  return h;
}

// A batch of cells: the dense arrays (state, met, vdrog3), or, for the GPU backend only, io
// and chk (WRF's arrays read and written chunk by chunk, no dense copy).
static Stats run_batch(const Options& opt, std::size_t ncell, float* state, const float* met,
                       float* vdrog3, const StepHistory::Key& key, const CellIO* io = nullptr,
                       const CheckSource* chk = nullptr) {
  if (opt.wrf_co2_carry && opt.backend != Backend::Cpu)
    throw InputError("radm2sorg: wrf_co2_carry (WRF's cell-to-cell CO2) is a serial chain: "
                     "ask for the CPU backend");
  // The input checks: before the call, except on the GPU backend, which runs them as it goes
  // (CellCheck), while the device integrates the call's first chunks.
  const Backend b = resolve_backend(opt.backend);
  const DenseCheck dense_check(ncell, state, met);
  const CheckSource& src = chk ? *chk : dense_check;
  const auto tc = std::chrono::steady_clock::now();
  if (b == Backend::Gpu) check_options(opt);
  else check_inputs(ncell, src, opt);
  double check_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - tc).count();
  const StateMap map = make_state_map();
  CellOptions co;
  co.dtstepc = opt.dtstepc;
  co.p_nu0 = opt.p_nu0;
  co.ctl.method = opt.method;
  co.ctl.max_no_steps = opt.max_no_steps;
  co.co2_carry = opt.wrf_co2_carry;
  const bool use_float = opt.precision == Precision::Float;
  if (b == Backend::Both) {
    // Both (both.h): the CPU on copies of the outputs, the GPU on the caller's; compare.
    if (io) throw RuntimeError("radm2sorg: the WRF-array path is GPU only");
    const bool vd = vdrog3 && opt.p_nu0 > 1;
    std::vector<float> cs(state, state + (std::size_t)kNState * ncell), cv;
    if (vd) cv.assign(vdrog3, vdrog3 + (std::size_t)kLdrog * ncell);
    Options oc = opt, og = opt;
    oc.backend = Backend::Cpu;
    og.backend = Backend::Gpu;
    (void)run_batch(oc, ncell, cs.data(), met, vd ? cv.data() : nullptr, key);
    Stats sg = run_batch(og, ncell, state, met, vdrog3, key);
    std::vector<BothOutput> outs;
    auto add = [&](std::string name, const float* cpu, const float* gpu) {
      BothOutput o;
      o.name = std::move(name);
      o.cpu.assign(cpu, cpu + ncell);
      o.gpu.assign(gpu, gpu + ncell);
      o.ni = ncell; o.nk = 1; o.nj = 1;
      o.where = [](std::size_t c) { return "cell " + std::to_string(c); };
      o.plmv_limit = gpu_cpu_plmv_limit(opt.mode);
      outs.push_back(std::move(o));
    };
    const std::vector<std::string> names = state_names();
    for (int f = 0; f < kNState; ++f)
      add(names[(std::size_t)f], cs.data() + (std::size_t)f * ncell, state + (std::size_t)f * ncell);
    for (int q = 0; vd && q < kLdrog; ++q)
      add("vdrog3 " + std::to_string(q), cv.data() + (std::size_t)q * ncell, vdrog3 + (std::size_t)q * ncell);
    compare_both("radm2sorg", opt.mode, outs);
    sg.backend_used = Backend::Both;
    return sg;
  }
  if (io && b != Backend::Gpu) throw RuntimeError("radm2sorg: the WRF-array path is GPU only");
  auto t0 = std::chrono::steady_clock::now();
  Stats s;  // the backends write every cell's counts straight into these
  for (CellCounts* v : {&s.nstp, &s.nacc, &s.nrej, &s.nsng, &s.status}) v->resize(ncell);
  const CellStatsOut cells{{s.nstp.data(), s.nacc.data(), s.nrej.data(), s.nsng.data(), s.status.data()}};
  if (b == Backend::Cpu) {
    (opt.mode == Mode::Strict ? strict::run_cpu : fast::run_cpu)(co, use_float, ncell, state, met,
                                                                vdrog3, map, cells);
  } else {
#if WRFGPU_HAVE_CUDA
    GpuTimes gt;
    // WRFGPU_RADM2SORG_ORDER=index|longest (measurement) overrides Options::gpu_longest_first
    bool longest = opt.gpu_longest_first;
    if (const auto o = config::choice("WRFGPU_RADM2SORG_ORDER")) longest = *o == "longest";
    StepHistory::Counts expected = longest ? step_history().get(key, ncell) : nullptr;
    const std::uint8_t* es = expected ? expected->data() : nullptr;
    s.gpu_longest_first = es != nullptr;
    const DenseIO dense(state, met, vdrog3, ncell);
    const CallCheck call_check(ncell, src, opt);
    const CellIO& cio = io ? *io : dense;
    // WRFGPU_RADM2SORG_SOLVER=warp|lane|split (measurement) overrides Options::gpu_solver
    GpuSolver solver = opt.gpu_solver;
    if (const auto v = config::choice("WRFGPU_RADM2SORG_SOLVER"))
      solver = *v == "lane" ? GpuSolver::Lane : *v == "split" ? GpuSolver::Split : GpuSolver::Warp;
    (opt.mode == Mode::Strict ? strict::run_gpu : fast::run_gpu)(
        co, use_float, ncell, cio, map, cells, opt.gpu_batch, solver, es, &call_check, &gt);
    s.gpu_solver = gt.solver;
    s.gpu_split_retries = gt.split_retries;
    expected.reset();  // the history may now refill its own counts in place
    if (longest) step_history().put(key, s.nstp.data(), ncell);
    s.gpu_h2d_ms = gt.h2d_ms;
    s.gpu_kernel_ms = gt.kernel_ms;
    s.gpu_d2h_ms = gt.d2h_ms;
    check_seconds += gt.check_ms * 1e-3;
#else
    throw RuntimeError("radm2sorg: GPU backend requested but this build has no CUDA");
#endif
  }
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.check_seconds = check_seconds;
  s.backend_used = b;
  bool failed = false;
#pragma omp parallel for reduction(|| : failed)
  for (long c = 0; c < (long)ncell; ++c) failed = failed || s.status[(std::size_t)c] < 0;
  for (std::size_t c = 0; failed && c < ncell; ++c)
    if (s.status[c] < 0) s.failures.push_back({c, -1, -1, -1, s.status[c]});
  return s;
}

static void throw_failures(const Stats& s) {
  if (s.failures.empty()) return;
  std::ostringstream o;
  o << "radm2sorg: the Rosenbrock integration failed in " << s.failures.size() << " cell(s):";
  for (std::size_t q = 0; q < s.failures.size() && q < 5; ++q) {
    const Failure& f = s.failures[q];
    o << " cell " << f.cell;
    if (f.i >= 0) o << " (i,k,j)=(" << f.i << "," << f.k << "," << f.j << ")";
    o << " status " << f.status << ";";
  }
  throw RuntimeError(o.str());
}

Stats run_dense(const Options& opt, std::size_t ncell, float* state, const float* met,
                float* vdrog3) {
  if (ncell == 0) return Stats();
  if (!state || !met || !vdrog3) throw InputError("radm2sorg: null array in run_dense");
  Stats s = run_batch(opt, ncell, state, met, vdrog3, {(long)ncell});
  if (opt.throw_on_failure) throw_failures(s);
  return s;
}

void DenseIO::get(int f, std::size_t c0, std::size_t n, float* dst) const {
  const float* src = f < kNState ? state + (std::size_t)f * ncell : met + (std::size_t)(f - kNState) * ncell;
  std::memcpy(dst, src + c0, n * sizeof(float));
}
void DenseIO::put(int f, std::size_t c0, std::size_t n, const float* src) const {
  float* dst = f < kNState ? state + (std::size_t)f * ncell : vdrog3 + (std::size_t)(f - kNState) * ncell;
  std::memcpy(dst + c0, src, n * sizeof(float));
}

namespace {

// A WRF tile as a batch: cell c = (j - jts)*per_j + (k - kts)*ni + (i - its) (WRF's loop
// order j, k, i), so a run of cells is a run of (j, k) rows of ni consecutive floats in WRF's
// arrays. in[f]: the array of input field f (state, then met); out[f]: of output field f
// (state, then vdrog3; null: not written).
struct WrfTile : CellIO, CheckSource {
  const WrfDims& d;
  int ni;
  std::size_t per_j;
  const float* in[kNState + kNMet];
  float* out[kNState + kLdrog];
  explicit WrfTile(const WrfDims& dims) : d(dims), ni(dims.tile_ni()), per_j((std::size_t)dims.tile_ni() * dims.tile_nk()) {}
  void ijk(std::size_t c, int& i, int& k, int& j) const {  // WRF's (i, k, j) of batch cell c
    i = d.its + (int)(c % ni);
    k = d.kts + (int)(c % per_j / ni);
    j = d.jts + (int)(c / per_j);
  }
  std::size_t at(std::size_t c) const {  // WRF index of batch cell c
    int i, k, j;
    ijk(c, i, k, j);
    return d.idx3(i, k, j);
  }
  // f(c, offset in WRF's array, length) for each row piece of cells [c0, c0 + n)
  template <class F>
  void rows(std::size_t c0, std::size_t n, F&& f) const {
    for (std::size_t c = c0, e = c0 + n; c < e;) {
      const std::size_t len = std::min<std::size_t>(ni - c % ni, e - c);
      f(c, at(c), len);
      c += len;
    }
  }
  void get(int f, std::size_t c0, std::size_t n, float* dst) const override {
    rows(c0, n, [&](std::size_t c, std::size_t o, std::size_t len) {
      std::memcpy(dst + (c - c0), in[f] + o, len * sizeof(float));
    });
  }
  void put(int f, std::size_t c0, std::size_t n, const float* src) const override {
    if (!out[f]) return;
    rows(c0, n, [&](std::size_t c, std::size_t o, std::size_t len) {
      std::memcpy(out[f] + o, src + (c - c0), len * sizeof(float));
    });
  }
  std::size_t pieces() const override {  // the (j, k) rows
    return ni > 0 && d.tile_nj() > 0 ? per_j / ni * d.tile_nj() : 0;
  }
  const float* piece(int f, std::size_t p, std::size_t& c0, std::size_t& n) const override {
    c0 = p * ni;
    n = ni;
    return in[f] + at(c0);
  }
  float value(int f, std::size_t c) const override { return in[f][at(c)]; }
  std::string where(std::size_t c) const override {
    int i, k, j;
    ijk(c, i, k, j);
    return " at cell " + std::to_string(c) + " (i,k,j)=(" + std::to_string(i) + "," +
           std::to_string(k) + "," + std::to_string(j) + ")";
  }
};

}  // namespace

Stats run_wrf(const Options& opt, WrfArrays& a) {
  const WrfDims& d = a.d;
  if (d.its < d.ims || d.ite > d.ime || d.kts < d.kms || d.kte > d.kme || d.jts < d.jms ||
      d.jte > d.jme)
    throw InputError("radm2sorg: tile bounds outside memory bounds");
  if (!a.chem || !a.qv || !a.t_phy || !a.p_phy || !a.rho)
    throw InputError("radm2sorg: null chem/qv/t_phy/p_phy/rho");
  for (int q = 0; q < kNRad; ++q)
    if (!a.rad[q]) throw InputError(std::string("radm2sorg: null radical array ") + kRadicalNames[q]);
  for (int p = 0; p < kNPh; ++p)
    if (!a.ph[p]) throw InputError(std::string("radm2sorg: null ph_") + mech::kPhotolysisNames[p]);
  for (int q = 0; q < kNChem; ++q)
    if (a.p_chem[q] < 1 || a.p_chem[q] > a.num_chem)
      throw InputError(std::string("radm2sorg: P_") + state_field_name(q) + " = " +
                       std::to_string(a.p_chem[q]) + " outside 1..num_chem");
  if (opt.p_nu0 > 1 && (!a.vdrog3 || a.ldrog < kLdrog))
    throw InputError("radm2sorg: vdrog3 needed (p_nu0 > 1) with ldrog >= 17");
  const std::size_t n = (std::size_t)d.tile_ni() * d.tile_nk() * d.tile_nj();
  const std::size_t s3 = d.size3();
  const bool out_vd = a.vdrog3 && opt.p_nu0 > 1;
  const StepHistory::Key key{(long)n, d.its, d.ite, d.kts, d.kte, d.jts, d.jte,
                             (long)reinterpret_cast<std::uintptr_t>(a.chem)};  // a tile of one domain
  WrfTile tile(d);
  for (int q = 0; q < kNChem; ++q) tile.in[q] = tile.out[q] = a.chem + (std::size_t)(a.p_chem[q] - 1) * s3;
  for (int q = 0; q < kNRad; ++q) tile.in[kNChem + q] = tile.out[kNChem + q] = a.rad[q];
  tile.in[kNState + kQv] = a.qv;
  tile.in[kNState + kTphy] = a.t_phy;
  tile.in[kNState + kPphy] = a.p_phy;
  tile.in[kNState + kRho] = a.rho;
  for (int p = 0; p < kNPh; ++p) tile.in[kNState + kPh0 + p] = a.ph[p];
  for (int q = 0; q < kLdrog; ++q) tile.out[kNState + q] = out_vd ? a.vdrog3 + (std::size_t)q * s3 : nullptr;
  auto name_failures = [&](Stats& s) {  // the batch index back to WRF's (i, k, j)
    for (Failure& f : s.failures) tile.ijk(f.cell, f.i, f.k, f.j);
  };
  if (n > 0 && resolve_backend(opt.backend) == Backend::Gpu) {
    // The GPU backend reads and writes WRF's arrays chunk by chunk, straight from and into its
    // page-locked staging (H100, 28,899 warm cells end to end: 11.4 ms through a dense batch
    // gathered and scattered here, 10.5 ms this way; a dense batch's own call 10.1 ms).
    Stats s = run_batch(opt, n, nullptr, nullptr, nullptr, key, &tile, &tile);
    name_failures(s);
    if (opt.throw_on_failure) throw_failures(s);
    return s;
  }
  // The CPU backend runs a dense batch gathered from the tile and scattered back. The batch is
  // kept per calling thread between calls (WRF calls with the same tiles every
  // chemistry step): fresh vectors would cost a zero fill and a page fault per 4 KB page
  // before the gather overwrites them (about 12 MB for a 39x39x19 tile, 1.8 GB for CONUS).
  // vdrog3 is an output only (every cell's 17 values written when p_nu0 > 1, else left
  // alone), so it is not gathered.
  struct Batch { std::vector<float> state, met, vd; };
  thread_local Batch bt;
  bt.state.resize(kNState * n);
  bt.met.resize(kNMet * n);
  bt.vd.resize(kLdrog * n);
  float* state = bt.state.data();
  float* met = bt.met.data();
  float* vd = bt.vd.data();
  // The tile's (j, k) rows copied field by field, spread over the threads (WrfTile).
#pragma omp parallel for schedule(dynamic)
  for (int f = 0; f < kNState + kNMet; ++f)
    tile.get(f, 0, n, f < kNState ? state + (std::size_t)f * n : met + (std::size_t)(f - kNState) * n);
  Stats s = run_batch(opt, n, state, met, vd, key, nullptr, &tile);  // checks name WRF's (i,k,j)
#pragma omp parallel for schedule(dynamic)
  for (int f = 0; f < kNState + kLdrog; ++f)  // put() skips vdrog3 when it is not an output
    tile.put(f, 0, n, f < kNState ? state + (std::size_t)f * n : vd + (std::size_t)(f - kNState) * n);
  name_failures(s);
  if (opt.throw_on_failure) throw_failures(s);
  return s;
}

double gpu_cpu_plmv_limit(Mode m) { return m == Mode::Strict ? 1e-4 : 1e-3; }

}  // namespace radm2sorg
}  // namespace wrfgpu
