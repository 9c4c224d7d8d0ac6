// test_radm2sorg_device.cu - device tests of the RADM2SORG KPP chemistry, one per function
// group of the generated mechanism (src/radm2sorg/generated/: rate constants, Fun, the sparse
// Jacobian, the sparse LU decomposition and solve), of the Rosenbrock solver
// (src/radm2sorg/kpp_rosenbrock.h: its coefficients, controls, step-size control, error norm,
// matrix preparation, and whole integrations) and of the per-cell WRF interface around them
// (radm2sorg_interface.h: unit conversions, rc_n2o5, vdrog3, the store back). Each runs the
// group's WRFGPU_HD functions on the GPU, one thread per input (a cell, a matrix, a set of
// controls; bounds-checked, no shared memory, nothing but plain loads and stores, so the kernels
// can be run under compute-sanitizer), and on the host over the same inputs, all in double, and
// requires the same bits (memcmp of the results; two NaNs count as equal, zeros of opposite sign
// are counted and printed, see same_bits); the first mismatch is reported with its index, its
// meaning (species, reaction, matrix entry) and both values. Skipped when no GPU is visible
// (WRFGPU_REQUIRE_GPU).
//
// Compiled by nvcc with the flags of the strict GPU backends (NVCC_STRICT: no FMA contraction,
// IEEE division and square root, no flush to zero), the host half by g++ without FMA
// contraction or fast math (-Xcompiler -ffp-contract=off,-fno-fast-math, Makefile): both halves
// must perform the same IEEE operations in the same order.
//
// One libm for both halves, as in src/wsm5/tests/test_wsm5_device.cu. The rate constants call exp,
// pow and log10 (radm2sorg_rates.h), rc_n2o5 calls expf and powf (radm2sorg_interface.h), the
// step-size control calls pow (kpp_rosenbrock.h). CUDA's versions of these are not glibc's: they
// differ by an ulp on some arguments, and one ulp in a rate constant or in a step-size factor
// changes the accepted steps of an integration (which is why the production GPU and CPU results
// are held to RTOL-sized tolerances, docs/radm2sorg.md). Here the physics' calls of these
// functions go to one implementation (tests/device_libm.h), with IEEE double operations only (+ - * /,
// floor, frexp, ldexp), which gives the same bits on both sides; what is left to compare is the
// compiled physics itself, which must then agree bit for bit, rate constants and whole
// integrations included. The redirection is by name lookup: the functions are declared in the
// namespaces of the physics (wrfgpu::kpp_radm2sorg, wrfgpu::kpp, wrfgpu::radm2sorg) before the
// physics headers, so the physics' unqualified calls find them before the global ones (checked
// by Radm2sorgDeviceLibm.CloseToGlibc, which runs without a GPU). sqrt, fabs, fmin and fmax are
// exact on both sides and stay as they are. This file's copy of the physics, calling this
// libm, lives in its own physics namespace (phys_strict_devtest, from WRFGPU_MODE_NS
// strict_devtest, below): sharing the phys_strict symbols of the library and the host tests
// would let the linker keep either copy of an inline function (docs/design.md, "Numerical
// modes").
//
// Inputs: the bundled captures test_data/radm2sorg_{cold,warm}_40x15x20.nc (WRF-Chem's KPP
// Fortran in a per-cell harness) and quarter_ss_chem_radm2sorg_kpp_*.nc (a call captured inside
// WRF-Chem), read by radm2sorg_capture.h as the replay and the other tests read them; cells are sampled over every
// level of each file. Matrices and vectors for the linear algebra come from these cells'
// Jacobians, with singular and near-singular pivots added.
//
// Run alone:  bin/wrfgpu_tests --gtest_filter='Radm2sorgDevice*'
// Under compute-sanitizer (memcheck, racecheck, initcheck, synccheck):
//   compute-sanitizer --tool memcheck bin/wrfgpu_tests --gtest_filter='Radm2sorgDevice.*'
// Built with -DWRFGPU_DEVICE_TEST_DRY_RUN (by hand; the Makefile never sets it), the "GPU" half
// runs on the host over copies of the inputs and the tests run without a GPU: a check of the
// inputs, the coverage counts and the harness itself, not of the GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "capture_io.h"
#include "cuda_util.h"
#include "device_harness.h"
#include "device_libm.h"
#include "errors.h"
#include "test_util.h"
#include "wrfgpu_hd.h"

#ifdef WRFGPU_DEVICE_TEST_DRY_RUN
#undef WRFGPU_REQUIRE_GPU
#define WRFGPU_REQUIRE_GPU() std::printf("dry run: the GPU half runs on the host\n")
#endif

// ---- the libm both halves call: tests/device_libm.h (the WSM5 device test's) ----------------

// What the physics' unqualified calls find (single precision through double, rounded once).
namespace wrfgpu {
namespace kpp_radm2sorg {  // radm2sorg_rates.h
static WRFGPU_HD double exp(double x) { return wrfgpu_devtest_libm::exp_d(x); }
static WRFGPU_HD double pow(double x, double y) { return wrfgpu_devtest_libm::pow_d(x, y); }
static WRFGPU_HD double log10(double x) { return wrfgpu_devtest_libm::log10_d(x); }
}  // namespace kpp_radm2sorg
namespace kpp {  // kpp_rosenbrock.h (ros_step_control)
static WRFGPU_HD double pow(double x, double y) { return wrfgpu_devtest_libm::pow_d(x, y); }
}  // namespace kpp
namespace radm2sorg {  // radm2sorg_interface.h (rc_n2o5_sp)
static WRFGPU_HD float expf(float x) { return (float)wrfgpu_devtest_libm::exp_d((double)x); }
static WRFGPU_HD float powf(float x, float y) { return (float)wrfgpu_devtest_libm::pow_d((double)x, (double)y); }
}  // namespace radm2sorg
}  // namespace wrfgpu

// This file's copy of the physics: its own namespace (see above).
#undef WRFGPU_MODE_NS
#define WRFGPU_MODE_NS strict_devtest
#include "radm2sorg.h"
#include "radm2sorg_capture.h"
#include "kpp_split.h"

namespace {

using namespace wrfgpu;
namespace r2 = wrfgpu::radm2sorg;
namespace mech = wrfgpu::kpp_radm2sorg;
namespace L = wrfgpu_devtest_libm;
using Mech = r2::Mech;
constexpr int NVAR = mech::NVAR, NFIX = mech::NFIX, NREACT = mech::NREACT, LU = mech::LU_NONZERO;

// ---------------------------------------------------------------------------------------
// The harness (tests/device_harness.h), for double results, 64 threads a block (the
// integrations' register use).
using wrfgpu_devtest::DevArena;
using wrfgpu_devtest::Describe;
using wrfgpu_devtest::hexbits;
using Both = wrfgpu_devtest::Both<double>;
template <class F>
Both run_both(const F& fh, const F& fd, int n, int nout) {
  return wrfgpu_devtest::run_both<double>(fh, fd, n, nout, 64);
}
std::string num(double x) { return wrfgpu_devtest::num(x, 17); }
using wrfgpu_devtest::same_bits;
using wrfgpu_devtest::count_if_out;

// ---------------------------------------------------------------------------------------
// The cells: sampled from the captures, as dense batches (r2::run_dense's layout).

struct Batch {
  std::size_t n = 0;
  float dtstepc = 0;
  int p_nu0 = 2;
  std::vector<float> state, met;  // kNState*n, kNMet*n, field-major
  std::vector<std::string> where;  // "file cell (i, k, j)"
};

// m cells spread over the file (every level), in the capture format test_radm2sorg.cpp reads.
Batch sample(const std::string& file, std::size_t m) {
  const std::string path = wrfgpu_test::data_file(file);
  const r2::Capture c = r2::load_capture(NcFile(path));  // the replay adapter's reader
  const std::size_t ni = c.ni, nk = c.nk, n = c.n;
  m = std::min(m, n);
  Batch b;
  b.n = m;
  b.dtstepc = c.dtstepc;
  b.p_nu0 = c.p_nu0;
  std::vector<std::size_t> cells(m);
  for (std::size_t q = 0; q < m; ++q) cells[q] = (std::size_t)(((double)q + 0.5) * (double)n / (double)m);
  b.state.resize((std::size_t)r2::kNState * m);
  b.met.resize((std::size_t)r2::kNMet * m);
  for (int f = 0; f < r2::kNState; ++f)
    for (std::size_t q = 0; q < m; ++q) b.state[(std::size_t)f * m + q] = c.state[(std::size_t)f * n + cells[q]];
  for (int f = 0; f < r2::kNMet; ++f)
    for (std::size_t q = 0; q < m; ++q) b.met[(std::size_t)f * m + q] = c.met[(std::size_t)f * n + cells[q]];
  for (std::size_t q = 0; q < m; ++q) {
    const std::size_t c = cells[q];
    b.where.push_back(file + " cell " + std::to_string(c) + " (i " + std::to_string(c % ni) + ", k " +
                      std::to_string((c / ni) % nk) + ", j " + std::to_string(c / (ni * nk)) + ")");
  }
  return b;
}

const char* kFiles[] = {"radm2sorg_cold_40x15x20.nc", "radm2sorg_warm_40x15x20.nc",
                        "quarter_ss_chem_radm2sorg_kpp_d01_step0010_rank3.nc"};
bool files_present() {
  for (const char* f : kFiles)
    if (!std::ifstream(wrfgpu_test::data_file(f)).good()) return false;
  return true;
}
std::vector<Batch> batches(std::size_t per_file) {
  std::vector<Batch> v;
  for (const char* f : kFiles) v.push_back(sample(f, per_file));
  return v;
}

r2::CellOptions options(const Batch& b, int method = kpp::kRos3) {
  r2::CellOptions o;
  o.dtstepc = b.dtstepc;
  o.p_nu0 = b.p_nu0;
  o.ctl.method = method;
  return o;
}

// The KPP arrays of every cell of a batch (cell_prologue on the host), contiguous per cell:
// VAR (NVAR), FIX (NFIX), RCONST (NREACT).
struct KppCells {
  std::size_t n = 0;
  std::vector<double> var, fix, rct;
  std::vector<std::string> where;
};
KppCells prologue(const std::vector<Batch>& bs) {
  KppCells k;
  const r2::StateMap map = r2::make_state_map();
  for (const Batch& b : bs) {
    const r2::CellOptions opt = options(b);
    for (std::size_t c = 0; c < b.n; ++c) {
      double v[NVAR], f[NFIX], r[NREACT];
      r2::cell_prologue<double>(c, b.n, b.state.data(), b.met.data(), map, opt, v, f, r, 1);
      k.var.insert(k.var.end(), v, v + NVAR);
      k.fix.insert(k.fix.end(), f, f + NFIX);
      k.rct.insert(k.rct.end(), r, r + NREACT);
      k.where.push_back(b.where[c]);
    }
    k.n += b.n;
  }
  return k;
}

std::string species(int i) { return i >= 0 && i < mech::NSPEC ? mech::kSpeciesNames[i] : "?"; }
std::string reaction(int k) { return std::string("RCONST(") + std::to_string(k + 1) + ") " + mech::kEquations[k]; }
std::string lu_entry(int e) {
  return "JVS(" + std::to_string(e) + ") = d(" + species(mech::LU_IROW[e]) + ")/d(" + species(mech::LU_ICOL[e]) + ")";
}

// ---------------------------------------------------------------------------------------
// The functors: one item each, the same code on both sides.

// radm2sorg_rates.h (update_rconst) through the WRF interface's first half (cell_prologue:
// FIX(M), FIX(H2O), photolysis /60., rc_n2o5, VAR from the state). Out: VAR, FIX, RCONST.
struct RatesF {
  const float *state, *met;
  std::size_t ncell;
  r2::StateMap map;
  r2::CellOptions opt;
  static constexpr int nout = NVAR + NFIX + NREACT;
  WRFGPU_HD void operator()(int n, double* o) const {
    r2::cell_prologue<double>((std::size_t)n, ncell, state, met, map, opt, o, o + NVAR, o + NVAR + NFIX, 1);
  }
};
// The rate laws of WRFUserRateLaws (radm2sorg_rates.h; most unused by RADM2SORG's equations)
// and rc_n2o5_sp. In: TEMP, cair, A0, B0, C0, A1, B1, C1, CF, CN, A, m, t_phy, p_phy, qv.
struct RateLawsF {
  const double* in;
  static constexpr int nin = 15, nout = 14;
  WRFGPU_HD void operator()(int n, double* o) const {
    const double* x = in + (std::size_t)n * nin;
    const double T = x[0], M = x[1], A0 = x[2], B0 = x[3], C0 = x[4], A1 = x[5], B1 = x[6], C1 = x[7];
    const double CF = x[8], CN = x[9], A = x[10];
    o[0] = mech::kpp_arr(A0, B0, C0, T);
    o[1] = mech::kpp_arr2(A0, B0, T);
    o[2] = mech::kpp_ep2(A0, B0, A1, B1, A0 * 1e-21, B1 - B0, T, M);
    o[3] = mech::kpp_ep3(A0, B0, A1 * 1e-21, B1, T, M);
    o[4] = mech::kpp_fall(A0 * 1e-19, B0, C0, A1, B1, C1, CF, T, M);
    o[5] = mech::kpp_f2(A0 * 1e-19, B0, C0, A1, B1, C1, CF, CN, T, M);
    o[6] = mech::kpp_troe(A0 * 1e-19, C0, A1, C1, T, M);
    o[7] = mech::kpp_troee(A, B1, A0 * 1e-19, C0, A1, C1, T, M);
    o[8] = mech::kpp_thermal_t2(A0, B0, T);
    o[9] = mech::kpp_k46(T, M);
    o[10] = mech::kpp_powi(T / 300.0, (int)x[11]);
    o[11] = mech::kpp_max(A0, A1);
    o[12] = mech::kpp_min(A0, A1);
    o[13] = (double)r2::rc_n2o5_sp((float)x[12], (float)x[13], (float)x[14]);
  }
};
const char* kRateLawNames[] = {"kpp_arr", "kpp_arr2", "kpp_ep2", "kpp_ep3", "kpp_fall", "kpp_f2", "kpp_troe",
                               "kpp_troee", "kpp_thermal_t2", "kpp_k46", "kpp_powi(T/300, m)", "kpp_max",
                               "kpp_min", "rc_n2o5_sp"};

// radm2sorg_function.h (fun) and radm2sorg_jacobian.h (jac_sp, jac_ghimj) of one cell's VAR,
// FIX, RCONST. Out: Vdot (NVAR), JVS (LU_NONZERO), then Ghimj (LU_NONZERO) for a ghinv per cell.
struct FunJacF {
  const double *var, *fix, *rct, *ghinv;
  static constexpr int nout = NVAR + 2 * LU;
  WRFGPU_HD void operator()(int n, double* o) const {
    const double* v = var + (std::size_t)n * NVAR;
    const double* f = fix + (std::size_t)n * NFIX;
    const double* r = rct + (std::size_t)n * NREACT;
    mech::fun<double>(v, f, r, o, 1);
    mech::jac_sp<double>(v, f, r, o + NVAR, 1);
    mech::jac_ghimj<double>(v, f, r, ghinv[n], o + NVAR + LU, 1);
  }
};

// radm2sorg_linalg.h: kpp_decomp of a matrix (in place) and kpp_solve with its factors.
// In: the matrix (LU_NONZERO), a right-hand side (NVAR). Out: the factors, ising, then
// kpp_solve(factors, rhs) when ising == 0 (else the rhs).
struct LinAlgF {
  const double *mat, *rhs;
  static constexpr int nout = LU + 1 + NVAR;
  WRFGPU_HD void operator()(int n, double* o) const {
    for (int e = 0; e < LU; ++e) o[e] = mat[(std::size_t)n * LU + e];
    const int ising = mech::kpp_decomp<double>(o, 1);
    o[LU] = (double)ising;
    double* x = o + LU + 1;
    for (int i = 0; i < NVAR; ++i) x[i] = rhs[(std::size_t)n * NVAR + i];
    if (ising == 0) mech::kpp_solve<double>(o, x, 1);
  }
};

// kpp_rosenbrock.h: ros_prepare_matrix (Ghimj = 1/(direction*H*gam) - Jac0, decomposed; H
// halved on a singular matrix), the matrix made from a given Jac0 as KPP does (the solver's
// jac_ghimj is held to that in FunAndJacobian). In: Jac0 (LU_NONZERO); H, direction, gam.
// Out: Ghimj, ok, H after, ndec, nsng.
struct PrepareF {
  const double* jac0;
  const double* hdg;  // H, direction, gam per item
  static constexpr int nout = LU + 4;
  WRFGPU_HD void operator()(int n, double* o) const {
    double H = hdg[3 * n];
    kpp::RosStats st;
    const double* j0 = jac0 + (std::size_t)n * LU;
    const auto matrix = [j0](double ghinv, double* g) {
      for (int e = 0; e < LU; ++e) g[e] = -j0[e];
      for (int i = 0; i < NVAR; ++i) g[Mech::lu_diag(i)] = g[Mech::lu_diag(i)] + ghinv;
    };
    const bool ok = kpp::ros_prepare_matrix<Mech, double>(H, (int)hdg[3 * n + 1], hdg[3 * n + 2],
                                                          matrix, o, st, 1);
    o[LU] = ok ? 1.0 : 0.0;
    o[LU + 1] = H;
    o[LU + 2] = (double)st.ndec;
    o[LU + 3] = (double)st.nsng;
  }
};

// kpp_rosenbrock.h: ros_coeffs of method m (0..6: 1..5 and two unknown ones). Out: S, A[15],
// C[15], M, E, Alpha, Gamma, NewF (6 each), ELO.
struct CoeffsF {
  static constexpr int nout = 1 + 15 + 15 + 6 * 5 + 1;
  WRFGPU_HD void operator()(int n, double* o) const {
    const kpp::RosCoeffs r = kpp::ros_coeffs(n);
    int q = 0;
    o[q++] = r.S;
    for (int i = 0; i < 15; ++i) o[q++] = r.A[i];
    for (int i = 0; i < 15; ++i) o[q++] = r.C[i];
    for (int i = 0; i < 6; ++i) o[q++] = r.M[i];
    for (int i = 0; i < 6; ++i) o[q++] = r.E[i];
    for (int i = 0; i < 6; ++i) o[q++] = r.Alpha[i];
    for (int i = 0; i < 6; ++i) o[q++] = r.Gamma[i];
    for (int i = 0; i < 6; ++i) o[q++] = r.NewF[i] ? 1.0 : 0.0;
    o[q++] = r.ELO;
  }
};
// kpp_rosenbrock.h: ros_settings (rosenbrock.f90's checks of ICNTRL/RCNTRL). In: method,
// max_no_steps, hmin, hmax, hstart, fac_min, fac_max, fac_rej, fac_safe, atol, rtol, tstart,
// tend. Out: IERR (0 or -1..-5), max_no_steps, hmin, hmax, h_initial, the four factors.
struct SettingsF {
  const double* in;
  static constexpr int nin = 13, nout = 9;
  WRFGPU_HD void operator()(int n, double* o) const {
    const double* x = in + (std::size_t)n * nin;
    kpp::RosControl c;
    c.method = (int)x[0];
    c.max_no_steps = (int)x[1];
    c.hmin = x[2]; c.hmax = x[3]; c.hstart = x[4];
    c.fac_min = x[5]; c.fac_max = x[6]; c.fac_rej = x[7]; c.fac_safe = x[8];
    c.atol = x[9]; c.rtol = x[10];
    kpp::RosSettings s;
    o[0] = kpp::ros_settings(c, x[11], x[12], s);
    o[1] = s.max_no_steps;
    o[2] = s.hmin; o[3] = s.hmax; o[4] = s.h_initial;
    o[5] = s.fac_min; o[6] = s.fac_max; o[7] = s.fac_rej; o[8] = s.fac_safe;
  }
};
// kpp_rosenbrock.h: ros_step_control (acceptance, the new step size: pow(err, 1/ELO)). In: err,
// ELO, hmin, hmax, direction, T, H, reject_last, reject_more, nacc. Out: accepted, T, H,
// reject_last, reject_more, nstp, nacc, nrej.
struct StepControlF {
  const double* in;
  static constexpr int nin = 10, nout = 8;
  WRFGPU_HD void operator()(int n, double* o) const {
    const double* x = in + (std::size_t)n * nin;
    kpp::RosSettings s;
    s.hmin = x[2];
    s.hmax = x[3];
    double T = x[5], H = x[6];
    bool rl = x[7] != 0.0, rm = x[8] != 0.0;
    kpp::RosStats st;
    st.nacc = (int)x[9];
    const bool acc = kpp::ros_step_control(x[0], x[1], s, (int)x[4], T, H, rl, rm, st);
    o[0] = acc ? 1.0 : 0.0;
    o[1] = T; o[2] = H;
    o[3] = rl ? 1.0 : 0.0; o[4] = rm ? 1.0 : 0.0;
    o[5] = st.nstp; o[6] = st.nacc; o[7] = st.nrej;
  }
};
// kpp_rosenbrock.h: ros_new_solution (Ynew = Y + sum M(j)*K(j) and the error norm of
// 0 + sum E(j)*K(j)) for a method's coefficients, and ros_combine (x0 + sum alpha(j)*K(j), a
// zero alpha skipped) on NVAR vectors. In: Y, K (6 stages), atol, rtol, method, alpha(3).
// Out: the norm, Ynew, then Y + alpha(0)*K(0) + alpha(1)*K(1) + alpha(2)*K(2).
struct VectorOpsF {
  const double* in;
  static constexpr int nin = 7 * NVAR + 6, nout = 1 + 2 * NVAR;
  WRFGPU_HD void operator()(int n, double* o) const {
    const double* x = in + (std::size_t)n * nin;
    const double *y = x, *k = x + NVAR, *p = x + 7 * NVAR;
    const kpp::RosCoeffs r = kpp::ros_coeffs((int)p[2]);
    o[0] = kpp::ros_new_solution<Mech, double>(y, r, k, NVAR, o + 1, p[0], p[1], 1);
    kpp::ros_combine<double>(NVAR, y, p + 3, 3, k, NVAR, o + 1 + NVAR, 1);
  }
};

// The whole cell (radm2sorg_interface.h run_cell: cell_prologue, ros_integrate, cell_epilogue)
// with the KPP arrays and the Rosenbrock work in global scratch, cell outermost (s = 1) or
// innermost (s = ncell, the thread-per-cell GPU layout). state is updated in place; vdrog3
// written. Out: the state (kNState), vdrog3 (kLdrog), VAR after the integration, the statistics.
constexpr int kStats = 11;
struct IntegrateF {
  float* state;
  const float* met;
  float* vdrog3;
  double* scratch;
  std::size_t ncell;
  r2::StateMap map;
  r2::CellOptions opt;
  bool innermost;
  WRFGPU_HD static std::size_t per_cell() { return NVAR + NFIX + NREACT + kpp::ros_work_size<Mech>(); }
  static constexpr int nout = r2::kNState + r2::kLdrog + NVAR + kStats;
  WRFGPU_HD void operator()(int n, double* o) const {
    const std::size_t c = (std::size_t)n;
    const std::ptrdiff_t s = innermost ? (std::ptrdiff_t)ncell : 1;
    double* base = innermost ? scratch + c : scratch + c * per_cell();
    double* var = base;
    double* fix = base + NVAR * s;
    double* rct = base + (NVAR + NFIX) * s;
    const kpp::RosWork<double> w = kpp::ros_work_at<Mech, double>(base + (NVAR + NFIX + NREACT) * s, s);
    kpp::RosStats st;
    const int ierr = r2::run_cell<double>(c, ncell, state, met, vdrog3, map, opt, var, fix, rct, w, s, st);
    int q = 0;
    for (int f = 0; f < r2::kNState; ++f) o[q++] = state[(std::size_t)f * ncell + c];
    for (int f = 0; f < r2::kLdrog; ++f) o[q++] = vdrog3[(std::size_t)f * ncell + c];
    for (int i = 0; i < NVAR; ++i) o[q++] = var[i * s];
    o[q++] = ierr;
    o[q++] = st.nfun; o[q++] = st.njac; o[q++] = st.nstp; o[q++] = st.nacc; o[q++] = st.nrej;
    o[q++] = st.ndec; o[q++] = st.nsol; o[q++] = st.nsng;
    o[q++] = st.texit; o[q++] = st.hexit;
  }
};
const char* kStatNames[kStats] = {"IERR", "Nfun", "Njac", "Nstp", "Nacc", "Nrej", "Ndec", "Nsol", "Nsng", "Texit", "Hexit"};

std::mt19937_64& rng() {
  static std::mt19937_64 g(2024);
  return g;
}
double unif(double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng()); }
double logu(double a, double b) { return a * std::pow(b / a, unif(0.0, 1.0)); }

}  // namespace

// ---------------------------------------------------------------------------------------
// This file's libm against glibc's: close enough that the physics takes the branches and the
// steps it takes with the real one, and called by the physics of this file (runs without a GPU).
TEST(Radm2sorgDeviceLibm, CloseToGlibc) {
  auto rel = [](double a, double b) { return a == b ? 0.0 : std::fabs(a - b) / std::fabs(b); };
  auto ulps = [](float a, float b) {
    if (a == b) return 0.0;
    return std::fabs((double)a - (double)b) / std::ldexp(1.0, std::ilogb(b) - 23);
  };
  double rd = 0, ue = 0, up = 0;
  for (int i = -200000; i <= 200000; ++i) {
    const double x = 700.0 * i / 200000.0;
    const double y = std::ldexp(1.0 + (i + 200000) / 400001.0, i % 1000);
    const double t = 150.0 + 200.0 * (i + 200000) / 400000.0, e = 12.0 * i / 200000.0;
    rd = std::max({rd, rel(mech::exp(x), std::exp(x)), rel(mech::log10(y), std::log10(y)),
                   rel(mech::pow(t / 300.0, e), std::pow(t / 300.0, e)), rel(kpp::pow(y, 1.0 / 3.0), std::pow(y, 1.0 / 3.0))});
    const float xf = 87.f * i / 200000.f, yf = (float)(1e-3 + 5.0 * (i + 200000) / 400000.0), ef = 2.8f;
    ue = std::max(ue, ulps(r2::expf(xf), std::exp(xf)));
    if (std::fabs(ef * std::log(yf)) < 80.f) up = std::max(up, ulps(r2::powf(yf, ef), std::pow(yf, ef)));
  }
  std::printf("this file's libm vs glibc: exp, log10, pow %.2e relative; expf %.0f ulp, powf %.0f ulp\n", rd, ue, up);
  EXPECT_LE(rd, 1e-13);
  EXPECT_LE(ue, 1.0);
  EXPECT_LE(up, 1.0);
  // the physics of this file calls it: the rate laws (exp), the step-size control (pow) and
  // rc_n2o5_sp (expf, powf), each where this libm and glibc's differ
  int arr2 = 0, step = 0, n2o5 = 0, arr2_checked = 0, step_checked = 0, n2o5_checked = 0;
  for (int i = 0; i < 20000; ++i) {
    const double T = 180.0 + 0.00731 * i, B = 1400.0;
    if (L::exp_d(-B / T) != std::exp(-B / T) && arr2_checked < 50) {
      ++arr2_checked;
      arr2 += mech::kpp_arr2(2.0e-12, B, T) == 2.0e-12 * L::exp_d(-B / T);
    }
    const double err = 1.0 + 0.001 * i;
    if (L::pow_d(err, 1.0 / 3.0) != std::pow(err, 1.0 / 3.0) && step_checked < 50) {
      ++step_checked;
      kpp::RosSettings s;
      s.hmax = 1e9;
      double Tt = 0, H = 1.0;
      bool rl = false, rm = false;
      kpp::RosStats st;
      kpp::ros_step_control(err, 3.0, s, 1, Tt, H, rl, rm, st);  // rejected: H = H*0.9/err^(1/3)
      step += H == 0.9 / L::pow_d(err, 1.0 / 3.0);
    }
    const float t = 250.f + 0.0041f * i, p = 80000.f, qv = 0.004f;
    const float es = 1000.f * 0.6112f * r2::expf(17.67f * (t - 273.15f) / (t - 29.65f));
    const float rh = std::min(std::max(qv / (es / (p - es)), 0.f), 1.f);
    const float mine = 1.0f / (3.6E4f * r2::expf(-r2::powf(rh / 0.28f, 2.8f)) + 300.0f);
    const float es_g = 1000.f * 0.6112f * std::exp(17.67f * (t - 273.15f) / (t - 29.65f));
    const float rh_g = std::min(std::max(qv / (es_g / (p - es_g)), 0.f), 1.f);
    const float glibc = 1.0f / (3.6E4f * std::exp(-std::pow(rh_g / 0.28f, 2.8f)) + 300.0f);
    if (mine != glibc && n2o5_checked < 50) {
      ++n2o5_checked;
      n2o5 += r2::rc_n2o5_sp(t, p, qv) == mine;
    }
  }
  EXPECT_GT(arr2_checked, 0);
  EXPECT_EQ(arr2, arr2_checked) << "kpp_arr2 does not call this file's exp";
  EXPECT_GT(step_checked, 0);
  EXPECT_EQ(step, step_checked) << "ros_step_control does not call this file's pow";
  EXPECT_GT(n2o5_checked, 0);
  EXPECT_EQ(n2o5, n2o5_checked) << "rc_n2o5_sp does not call this file's expf/powf";
  EXPECT_EQ(mech::exp(0.0), 1.0);
  EXPECT_EQ(mech::pow(0.0, 2.0), 0.0);
  EXPECT_EQ(mech::pow(2.0, 2.0), 4.0);
}

// (a) radm2sorg_rates.h, the rate constants: update_rconst through the interface's prologue
// (FIX, photolysis, rc_n2o5, VAR) on sampled cells of the three captures; every rate law of
// WRFUserRateLaws and rc_n2o5_sp over temperatures 150..350 K, air densities 1e16..5e19 cm-3
// and random coefficients.
TEST(Radm2sorgDevice, RateConstants) {
  WRFGPU_REQUIRE_GPU();
  ASSERT_TRUE(wrfgpu_test::data_present("radm2sorg captures", files_present()));
  const r2::StateMap map = r2::make_state_map();
  int cells = 0;
  for (const Batch& b : batches(1500)) {
    DevArena a;
    const RatesF fh{b.state.data(), b.met.data(), b.n, map, options(b)};
    const RatesF fd{a.copy(b.state), a.copy(b.met), b.n, map, options(b)};
    const Both r = run_both(fh, fd, (int)b.n, RatesF::nout);
    EXPECT_TRUE(same_bits(r, [&b](int i, int j) {
      const std::string what = j < NVAR ? "VAR(" + species(j) + ")"
                             : j < NVAR + NFIX ? std::string(j == NVAR + mech::indf_M ? "FIX(M)" : "FIX(H2O)")
                                               : reaction(j - NVAR - NFIX);
      return what + " of " + b.where[i];
    }));
    cells += (int)b.n;
  }
  std::vector<double> in;
  for (int n = 0; n < 30000; ++n) {
    const double T = n % 10 == 0 ? 150.0 + 10.0 * (n / 10 % 21) : unif(150.0, 350.0);
    const double M = logu(1e16, 5e19);
    in.insert(in.end(), {T, M, logu(1e-35, 1e-9), unif(-2000.0, 12000.0), unif(-5.0, 5.0), logu(1e-14, 1e-9),
                         unif(-2000.0, 2000.0), unif(-2.0, 2.0), unif(0.3, 0.9), unif(0.5, 2.0), logu(1e25, 1e28),
                         (double)((int)unif(-4.0, 7.0)), (float)unif(180.0, 320.0), (float)unif(1e4, 1.05e5),
                         n % 7 == 0 ? 0.0 : (float)logu(1e-7, 0.04)});
  }
  DevArena a;
  const RateLawsF fh{in.data()}, fd{a.copy(in)};
  const Both r = run_both(fh, fd, (int)(in.size() / RateLawsF::nin), RateLawsF::nout);
  EXPECT_TRUE(same_bits(r, [&in](int i, int j) {
    const double* x = &in[(std::size_t)i * RateLawsF::nin];
    std::string s = std::string(kRateLawNames[j]) + " of item " + std::to_string(i) + " (TEMP " + num(x[0]) +
                    ", cair " + num(x[1]) + ", coefficients";
    for (int k = 2; k < 12; ++k) s += " " + num(x[k]);
    return s + "; t_phy " + num(x[12]) + ", p_phy " + num(x[13]) + ", qv " + num(x[14]) + ")";
  }));
  // rc_n2o5: relative humidity clipped at 1 and unclipped
  const double rc_saturated = 1.0f / (3.6E4f * r2::expf(-r2::powf(1.f / 0.28f, 2.8f)) + 300.0f);
  EXPECT_GT(count_if_out(r, 13, [rc_saturated](double x) { return x == rc_saturated; }), 0);
  EXPECT_GT(count_if_out(r, 13, [](double x) { return x < 1.0 / 300.0 * 0.99; }), 0);
  std::printf("%d cells of the captures, %zu rate-law inputs\n", cells, in.size() / RateLawsF::nin);
}

// (b) radm2sorg_function.h (Fun) and (c) radm2sorg_jacobian.h (Jac_SP): the sampled cells of
// the captures, the same cells with every VAR scaled at random (0 to 3x) and with species set to
// zero, and the cold start's zero radicals.
TEST(Radm2sorgDevice, FunAndJacobian) {
  WRFGPU_REQUIRE_GPU();
  ASSERT_TRUE(wrfgpu_test::data_present("radm2sorg captures", files_present()));
  KppCells k = prologue(batches(400));
  const std::size_t n0 = k.n;
  for (std::size_t c = 0; c < n0; ++c) {  // perturbed copies
    for (int i = 0; i < NVAR; ++i) {
      const double v = k.var[c * NVAR + i];
      k.var.push_back(i % 5 == (int)(c % 5) ? 0.0 : v * unif(0.0, 3.0));
    }
    k.fix.insert(k.fix.end(), k.fix.begin() + c * NFIX, k.fix.begin() + (c + 1) * NFIX);
    k.rct.insert(k.rct.end(), k.rct.begin() + c * NREACT, k.rct.begin() + (c + 1) * NREACT);
    k.where.push_back(k.where[c] + ", VAR perturbed");
  }
  k.n = 2 * n0;
  // jac_ghimj's ghinv = 1/(direction*H*gamma) over step sizes 1e-5 s .. 3000 s, both directions
  std::vector<double> ghinv(k.n);
  for (std::size_t c = 0; c < k.n; ++c)
    ghinv[c] = (c % 3 == 0 ? -1.0 : 1.0) / (logu(1e-5, 3000.0) * kpp::ros_coeffs(kpp::kRos3).Gamma[0]);
  DevArena a;
  const FunJacF fh{k.var.data(), k.fix.data(), k.rct.data(), ghinv.data()},
      fd{a.copy(k.var), a.copy(k.fix), a.copy(k.rct), a.copy(ghinv)};
  const Both r = run_both(fh, fd, (int)k.n, FunJacF::nout);
  EXPECT_TRUE(same_bits(r, [&k](int i, int j) {
    return (j < NVAR ? "Vdot(" + species(j) + ")"
                     : j < NVAR + LU ? lu_entry(j - NVAR) : "Ghimj " + lu_entry(j - NVAR - LU)) + " of " + k.where[i];
  }));
  // jac_ghimj is KPP's ros_PrepareMatrix on jac_sp's Jacobian: Ghimj = -Jac0, then the diagonal
  // plus ghinv, the same bits (fill-in entries -0)
  std::size_t ghimj_differ = 0;
  for (std::size_t c = 0; c < k.n; ++c) {
    const double* o = &r.host[c * FunJacF::nout];
    for (int e = 0; e < LU; ++e) {
      double g = -o[NVAR + e];
      for (int i = 0; i < NVAR; ++i)
        if (mech::LU_DIAG[i] == e) g = g + ghinv[c];
      ghimj_differ += std::memcmp(&g, &o[NVAR + LU + e], sizeof g) != 0;
    }
  }
  EXPECT_EQ(ghimj_differ, 0u) << "jac_ghimj differs from -jac_sp with the diagonal shifted";
  int nonzero = 0;
  for (double x : r.host) nonzero += x != 0.0;
  EXPECT_GT(nonzero, (int)(k.n * NVAR));
  std::printf("%zu cells (half of them perturbed)\n", k.n);
}

// (d) radm2sorg_linalg.h: kpp_decomp and kpp_solve on the Rosenbrock matrices of the sampled
// cells (1/(H*gamma) - Jac for step sizes 1e-5 s .. 3000 s), with right-hand sides from Fun and
// at random; and singular or near-singular pivots (0, -0, a subnormal, TINY, NaN) on chosen rows;
// then ros_prepare_matrix (kpp_rosenbrock.h) on the same Jacobians, both directions, with a
// pivot that is singular at the first H (halved until it is not).
TEST(Radm2sorgDevice, LinearAlgebra) {
  WRFGPU_REQUIRE_GPU();
  ASSERT_TRUE(wrfgpu_test::data_present("radm2sorg captures", files_present()));
  const KppCells k = prologue(batches(120));
  std::vector<double> jac(k.n * LU), fcn(k.n * NVAR);
  for (std::size_t c = 0; c < k.n; ++c) {
    mech::fun<double>(&k.var[c * NVAR], &k.fix[c * NFIX], &k.rct[c * NREACT], &fcn[c * NVAR], 1);
    mech::jac_sp<double>(&k.var[c * NVAR], &k.fix[c * NFIX], &k.rct[c * NREACT], &jac[c * LU], 1);
  }
  const double gam = kpp::ros_coeffs(kpp::kRos3).Gamma[0];
  std::vector<double> mat, rhs;
  std::vector<std::string> what;
  const double hs[] = {1e-5, 3e-3, 0.1, 3.0, 60.0, 3000.0};
  const double pivots[] = {0.0, -0.0, 1e-310, DBL_MIN, std::nextafter(DBL_MIN, 0.0), NAN};
  for (std::size_t c = 0; c < k.n; ++c)
    for (int h = 0; h < 6; ++h) {
      std::vector<double> m(LU);
      for (int e = 0; e < LU; ++e) m[e] = -jac[c * LU + e];
      for (int i = 0; i < NVAR; ++i) m[mech::LU_DIAG[i]] += 1.0 / (hs[h] * gam);
      std::string w = k.where[c] + ", H " + num(hs[h]);
      if ((c + h) % 4 == 3) {  // a bad pivot on a row chosen at random
        const int row = (int)(rng()() % NVAR);
        m[mech::LU_DIAG[row]] = pivots[(c + h) % 6];
        w += ", pivot of row " + std::to_string(row) + " (" + species(row) + ") = " + num(pivots[(c + h) % 6]);
      }
      mat.insert(mat.end(), m.begin(), m.end());
      for (int i = 0; i < NVAR; ++i) rhs.push_back(h % 2 ? fcn[c * NVAR + i] : unif(-1.0, 1.0) * logu(1e-3, 1e12));
      what.push_back(w);
    }
  DevArena a;
  const LinAlgF fh{mat.data(), rhs.data()}, fd{a.copy(mat), a.copy(rhs)};
  const Both r = run_both(fh, fd, (int)what.size(), LinAlgF::nout);
  EXPECT_TRUE(same_bits(r, [&what](int i, int j) {
    const std::string o = j < LU ? "factor " + lu_entry(j) : j == LU ? std::string("ising") : "x(" + species(j - LU - 1) + ")";
    return o + " of " + what[i];
  }));
  const int singular = count_if_out(r, LU, [](double x) { return x > 0.0; });
  EXPECT_GT(singular, 0);
  EXPECT_GT(count_if_out(r, LU, [](double x) { return x == 0.0; }), singular);
  // ros_prepare_matrix
  std::vector<double> jac0, hdg;
  std::vector<std::string> pw;
  for (std::size_t c = 0; c < k.n; ++c)
    for (int h = 0; h < 4; ++h) {
      const double H = hs[h + 1 + (c % 2)], dir = h % 2 ? -1.0 : 1.0;
      std::vector<double> j0(jac.begin() + c * LU, jac.begin() + (c + 1) * LU);
      std::string w = k.where[c] + ", H " + num(H) + ", direction " + num(dir);
      if (h == 2) {  // Ghimj(SULF, SULF) exactly 0 at the first H (row 0 has nothing left of it)
        j0[mech::LU_DIAG[0]] = 1.0 / (dir * H * gam);
        w += ", singular at H";
      }
      jac0.insert(jac0.end(), j0.begin(), j0.end());
      hdg.insert(hdg.end(), {H, dir, gam});
      pw.push_back(w);
    }
  const PrepareF ph{jac0.data(), hdg.data()}, pd{a.copy(jac0), a.copy(hdg)};
  const Both rp = run_both(ph, pd, (int)pw.size(), PrepareF::nout);
  EXPECT_TRUE(same_bits(rp, [&pw](int i, int j) {
    const char* tail[] = {"ok", "H after", "Ndec", "Nsng"};
    return (j < LU ? "Ghimj " + lu_entry(j) : std::string(tail[j - LU])) + " of " + pw[i];
  }));
  EXPECT_GT(count_if_out(rp, LU + 3, [](double x) { return x > 0.0; }), 0) << "a singular matrix retried";
  std::printf("%zu matrices (%d singular), %zu ros_prepare_matrix calls\n", what.size(), singular, pw.size());
}

// (e) kpp_rosenbrock.h, the solver's pieces: the coefficients of the five methods (and of
// unknown ones), ros_settings over valid and invalid controls, ros_step_control over error norms
// from 0 to 1e12 in every rejection state, ros_new_solution / ros_combine on vectors of the
// captures' magnitudes.
TEST(Radm2sorgDevice, RosenbrockPieces) {
  WRFGPU_REQUIRE_GPU();
  {
    const CoeffsF f{};
    const Both r = run_both(f, f, 7, CoeffsF::nout);
    EXPECT_TRUE(same_bits(r, [](int i, int j) {
      return "ros_coeffs(" + std::to_string(i) + ") value " + std::to_string(j) +
             " (S, A[15], C[15], M, E, Alpha, Gamma, NewF, ELO)";
    }));
  }
  {
    std::vector<double> in;
    for (int n = 0; n < 4000; ++n) {
      const double tend = n % 9 == 0 ? -300.0 : unif(1.0, 3600.0);
      auto maybe = [&](double good, double bad) {
        const int p = (int)(rng()() % 10);
        return p < 6 ? 0.0 : p < 9 ? good : bad;
      };
      in.insert(in.end(), {(double)(int)unif(0.0, 7.0), maybe(unif(1.0, 1e5), -1.0), maybe(unif(1e-8, 1.0), -1e-3),
                           maybe(unif(1.0, 1e4), -1.0), maybe(unif(1e-12, 100.0), -1.0), maybe(unif(0.05, 0.5), -0.1),
                           maybe(unif(2.0, 10.0), -1.0), maybe(unif(0.05, 0.5), -1.0), maybe(unif(0.5, 0.99), -1.0),
                           n % 17 == 0 ? 0.0 : 1.0, n % 19 == 0 ? 1e-20 : n % 23 == 0 ? 1.0 : 1.0000000474974513e-3,
                           0.0, tend});
    }
    DevArena a;
    const SettingsF fh{in.data()}, fd{a.copy(in)};
    const Both r = run_both(fh, fd, (int)(in.size() / SettingsF::nin), SettingsF::nout);
    EXPECT_TRUE(same_bits(r, [&in](int i, int j) {
      const char* w[] = {"IERR", "max_no_steps", "hmin", "hmax", "h_initial", "fac_min", "fac_max", "fac_rej", "fac_safe"};
      std::string s = std::string(w[j]) + " of controls";
      for (int k = 0; k < SettingsF::nin; ++k) s += " " + num(in[(std::size_t)i * SettingsF::nin + k]);
      return s;
    }));
    for (int e : {0, -1, -2, -3, -4, -5})
      EXPECT_GT(count_if_out(r, 0, [e](double x) { return x == e; }), 0) << "IERR " << e;
  }
  {
    std::vector<double> in;
    const double errs[] = {0.0, 1e-300, 1e-12, 1e-3, 0.5, 1.0, std::nextafter(1.0, 2.0), 2.0, 1e3, 1e12};
    for (int n = 0; n < 20000; ++n) {
      const double err = n % 3 ? errs[n % 10] : logu(1e-8, 1e8);
      const double elo = (double)(2 + n % 3);
      const double hmin = n % 7 == 0 ? 1e-2 : 0.0, H = logu(1e-5, 300.0);
      in.insert(in.end(), {err, elo, hmin, n % 5 == 0 ? 1.0 : 300.0, n % 11 == 0 ? -1.0 : 1.0, unif(0.0, 300.0), H,
                           (double)(n % 2), (double)(n / 2 % 2), (double)(n % 3)});
    }
    DevArena a;
    const StepControlF fh{in.data()}, fd{a.copy(in)};
    const Both r = run_both(fh, fd, (int)(in.size() / StepControlF::nin), StepControlF::nout);
    EXPECT_TRUE(same_bits(r, [&in](int i, int j) {
      const char* w[] = {"accepted", "T", "H", "reject_last", "reject_more", "Nstp", "Nacc", "Nrej"};
      const double* x = &in[(std::size_t)i * StepControlF::nin];
      return std::string(w[j]) + " of ros_step_control(err " + num(x[0]) + ", ELO " + num(x[1]) + ", hmin " +
             num(x[2]) + ", hmax " + num(x[3]) + ", direction " + num(x[4]) + ", T " + num(x[5]) + ", H " + num(x[6]) +
             ", reject_last " + num(x[7]) + ", reject_more " + num(x[8]) + ", Nacc " + num(x[9]) + ")";
    }));
    EXPECT_GT(count_if_out(r, 0, [](double x) { return x == 1.0; }), 0);
    EXPECT_GT(count_if_out(r, 0, [](double x) { return x == 0.0; }), 0);
  }
  {
    ASSERT_TRUE(wrfgpu_test::data_present("radm2sorg captures", files_present()));
    const KppCells k = prologue(batches(100));
    std::vector<double> in;
    for (std::size_t c = 0; c < k.n; ++c) {
      for (int i = 0; i < NVAR; ++i) in.push_back(k.var[c * NVAR + i]);
      for (int st = 0; st < 6; ++st)  // stage vectors: increments of Y's magnitude, some zero
        for (int i = 0; i < NVAR; ++i)
          in.push_back((i + st) % 11 == 0 ? 0.0 : k.var[c * NVAR + i] * unif(-1e-2, 1e-2) + unif(-1.0, 1.0));
      in.insert(in.end(), {1.0, 1.0000000474974513e-3, (double)(1 + c % 5), c % 4 == 0 ? 0.0 : unif(-2.0, 2.0),
                           unif(-10.0, 10.0), c % 3 == 0 ? 0.0 : unif(-2.0, 2.0)});
    }
    DevArena a;
    const VectorOpsF fh{in.data()}, fd{a.copy(in)};
    const Both r = run_both(fh, fd, (int)k.n, VectorOpsF::nout);
    EXPECT_TRUE(same_bits(r, [&k](int i, int j) {
      const std::string o = j == 0 ? std::string("ros_new_solution error norm")
                          : j <= NVAR ? "ros_new_solution Ynew(" + species(j - 1) + ")"
                                      : "ros_combine out(" + species(j - 1 - NVAR) + ")";
      return o + " of vectors from " + k.where[i] + ", method " + std::to_string(1 + i % 5);
    }));
  }
}

// (e) kpp_rosenbrock.h + radm2sorg_interface.h, whole integrations: run_cell (prologue, the
// Rosenbrock integration over dtstepc, epilogue: state and vdrog3) on sampled cells of the three
// captures with WRF's controls (Ros3), on fewer cells with Ros2, Ros4, Rodas3 and Rodas4, with
// an over-optimistic step-size control (FacSafe 5: steps rejected after accepted ones, which
// WRF's controls never do on these cells), with RTOL 1e-7, and with at most 3 steps (IERR -6);
// on the GPU with the KPP arrays cell outermost and cell innermost (the
// thread-per-cell backend's layout).
TEST(Radm2sorgDevice, Integration) {
  WRFGPU_REQUIRE_GPU();
  ASSERT_TRUE(wrfgpu_test::data_present("radm2sorg captures", files_present()));
  const r2::StateMap map = r2::make_state_map();
  const auto sn = r2::state_names();
  struct Variant {
    const char* name;
    int method;
    std::size_t cells;
    double rtol, fac_safe;
    int max_no_steps;
  };
  const Variant variants[] = {{"Ros3 (WRF)", kpp::kRos3, 256, 0, 0, 0},   {"Ros2", kpp::kRos2, 24, 0, 0, 0},
                              {"Ros4", kpp::kRos4, 24, 0, 0, 0},          {"Rodas3", kpp::kRodas3, 24, 0, 0, 0},
                              {"Rodas4", kpp::kRodas4, 24, 0, 0, 0},      {"Ros3, FacSafe 5", kpp::kRos3, 48, 0, 5, 0},
                              {"Ros3, RTOL 1e-7", kpp::kRos3, 24, 1e-7, 0, 0},
                              {"Ros3, at most 3 steps", kpp::kRos3, 24, 0, 0, 3}};
  int runs = 0, rejected = 0, too_many = 0, cells = 0;
  long steps = 0;
  for (const Variant& v : variants)
    for (const char* file : kFiles) {
      const Batch b = sample(file, v.cells);
      r2::CellOptions opt = options(b, v.method);
      if (v.rtol > 0) opt.ctl.rtol = v.rtol;
      if (v.fac_safe > 0) opt.ctl.fac_safe = v.fac_safe;
      opt.ctl.max_no_steps = v.max_no_steps;
      const std::size_t per = IntegrateF::per_cell() * b.n;
      std::vector<float> st_h = b.state, vd_h((std::size_t)r2::kLdrog * b.n, 0.f);
      std::vector<double> scratch_h(per, std::nan(""));  // written before it is read
      const IntegrateF fh{st_h.data(), b.met.data(), vd_h.data(), scratch_h.data(), b.n, map, opt, false};
      for (bool innermost : {false, true}) {
        DevArena a;
        const IntegrateF fd{a.copy(b.state), a.copy(b.met), a.alloc<float>(vd_h.size()), a.alloc<double>(per, false),
                            b.n, map, opt, innermost};
        std::copy(b.state.begin(), b.state.end(), st_h.begin());  // fh's arrays, fresh
        std::fill(vd_h.begin(), vd_h.end(), 0.f);
        const Both r = run_both(fh, fd, (int)b.n, IntegrateF::nout);
        EXPECT_TRUE(same_bits(r, [&b, &sn](int i, int j) {
          std::string o;
          if (j < r2::kNState) o = "state " + sn[j];
          else if (j < r2::kNState + r2::kLdrog) o = "vdrog3(" + std::to_string(j - r2::kNState) + ")";
          else if (j < r2::kNState + r2::kLdrog + NVAR) o = "VAR(" + species(j - r2::kNState - r2::kLdrog) + ")";
          else o = kStatNames[j - r2::kNState - r2::kLdrog - NVAR];
          return o + " of " + b.where[i];
        })) << v.name << ", KPP arrays cell " << (innermost ? "innermost" : "outermost");
        const int s0 = r2::kNState + r2::kLdrog + NVAR;
        std::size_t nonfinite = 0;
        for (double x : r.host) nonfinite += !std::isfinite(x);  // the scratch's NaN fill read, on the host
        EXPECT_EQ(nonfinite, 0u) << v.name << ", " << file;
        const int ok = count_if_out(r, s0, [](double x) { return x == 1.0; });
        if (v.max_no_steps == 0) EXPECT_EQ(ok, (int)b.n) << v.name << ": IERR 1 in every cell of " << file;
        if (!innermost) {
          rejected += count_if_out(r, s0 + 5, [](double x) { return x > 0.0; });
          too_many += count_if_out(r, s0, [](double x) { return x == -6.0; });
          for (std::size_t c = 0; c < b.n; ++c) steps += (long)r.host[c * IntegrateF::nout + s0 + 3];
          cells += (int)b.n;
        }
        ++runs;
      }
    }
  EXPECT_EQ(runs, 48);
  EXPECT_GT(rejected, 0) << "cells with steps rejected after an accepted one";
  EXPECT_GT(too_many, 0) << "cells ending with IERR -6";
  std::printf("%d cell integrations (8 variants, 3 captures), %ld steps, %d cells with rejected steps, %d "
              "with IERR -6; each run on the GPU with both layouts\n", cells, steps, rejected, too_many);
}

// (g) kpp_split.h, the split kernel's division: on the device, nvcc's fast path without its
// branch (split_rcp once per divisor, split_div_r per division) and a flag where the fast path
// does not cover the operands; the kernel then divides again with `/` (the attempt's plain
// copy). Here each flagged quotient is taken from `/` likewise, so every result must be the host's
// a / b, bit for bit, over numerators and divisors from the smallest subnormal to the largest
// double, both signs, zeros and infinities (no NaN: its bits are the platform's). Out: the
// quotient as the kernel uses it through split_div_r and through split_div; on the device, the
// flags (1: the division was done again).
namespace {
struct SplitDivF {
  const double* ab;  // a, b per item
  static constexpr int nout = 4;
  WRFGPU_HD void operator()(int n, double* o) const {
    const double a = ab[2 * n], b = ab[2 * n + 1];
    bool off = false;
    const double r = kpp::split_rcp<false>(b, off);
    const double q = kpp::split_div_r<false>(a, b, r, off);
    bool off2 = false;
    const double q2 = kpp::split_div<false>(a, b, off2);
    o[0] = off ? a / b : q;
    o[1] = off2 ? a / b : q2;
    o[2] = off ? 1.0 : 0.0;  // always 0 on the host
    o[3] = off2 ? 1.0 : 0.0;
  }
};
}  // namespace

TEST(Radm2sorgDevice, SplitDivision) {
  WRFGPU_REQUIRE_GPU();
  std::vector<double> ab;
  const double special[] = {0.0, 4.9406564584124654e-324, 1e-310, DBL_MIN, 1e-300, 0x1p-968, 0x1p-966,
                            1e-200, 1e-30, 0.75, 1.0, 3.7, 1e30, 1e200, 1e300, 0x1p1016, 0x1p1018,
                            DBL_MAX, INFINITY};
  for (double a : special)
    for (double b : special)
      for (int sg = 0; sg < 4; ++sg) {
        if (b == 0.0 || (std::isinf(a) && std::isinf(b))) continue;  // NaN quotients left out
        ab.push_back(sg & 1 ? -a : a);
        ab.push_back(sg & 2 ? -b : b);
      }
  const std::size_t nspecial = ab.size() / 2;
  // log-uniform over every exponent, and over the exponents of the chemistry's values
  for (int k = 0; k < 40000; ++k) {
    const bool wide = k % 2 == 0;
    const double ea = wide ? unif(-1074.0, 1023.0) : unif(-250.0, 250.0);
    const double eb = wide ? unif(-1074.0, 1023.0) : unif(-250.0, 250.0);
    ab.push_back((rng()() & 1 ? -1.0 : 1.0) * std::exp2(ea));
    ab.push_back((rng()() & 1 ? -1.0 : 1.0) * std::exp2(eb));
  }
  const int n = (int)(ab.size() / 2);
  DevArena a;
  const SplitDivF fh{ab.data()}, fd{a.copy(ab)};
  const Both r = run_both(fh, fd, n, SplitDivF::nout);
  auto bits = [](double x) { std::uint64_t u; std::memcpy(&u, &x, 8); return u; };
  int differ = 0, flagged = 0, flagged_narrow = 0;
  for (int i = 0; i < n; ++i) {
    const double* h = &r.host[(std::size_t)i * SplitDivF::nout];
    const double* d = &r.dev[(std::size_t)i * SplitDivF::nout];
    for (int j = 0; j < 2; ++j)
      if (bits(h[j]) != bits(d[j]) && differ++ < 10)
        ADD_FAILURE() << (j ? "split_div" : "split_div_r") << "(" << num(ab[2 * i]) << ", " << num(ab[2 * i + 1])
                      << "): " << num(d[j]) << " (" << hexbits(d[j]) << ") against a / b = " << num(h[j]) << " ("
                      << hexbits(h[j]) << ")";
    EXPECT_EQ(d[2], d[3]) << "the two forms flag alike, item " << i;
    flagged += d[2] != 0.0;
    flagged_narrow += d[2] != 0.0 && i >= (int)nspecial && (i - (int)nspecial) % 2 == 1;
  }
  EXPECT_EQ(differ, 0);
  // the fast path's limits show: zeros over huge divisors, subnormals, quotients out of range
  EXPECT_GT(flagged, 1000);
  // and it covers every division whose operands and quotient are within 2^-250..2^250
  EXPECT_EQ(flagged_narrow, 0);
  std::printf("%d divisions (%zu of special values), %d left nvcc's fast path (done again with /)\n", n,
              nspecial, flagged);
}
