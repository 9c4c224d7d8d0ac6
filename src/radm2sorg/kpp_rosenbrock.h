// kpp_rosenbrock.h - the Rosenbrock integrator of WRF-Chem's KPP, for one cell, generic over
// a generated mechanism (struct Mechanism of src/<model>/generated/<model>_mechanism.h).
//
// Mirrors chem/KPP/kpp/kpp-2.1/int/WRF_conform/rosenbrock.f90 as KPP instantiates it
// (<model>_Rosenbrock, _ros_Integrator, _ros_ErrorNorm, _ros_PrepareMatrix, _Ros2/_Ros3/
// _Ros4/_Rodas3/_Rodas4, _WAXPY) operation by operation: same step-size control, rejection
// logic, singular-matrix retries and error codes. Sparse LU (no FULL_ALGEBRA). Two things are
// arranged differently with the same operations on every element (the same bits): the Jacobian
// is evaluated straight into the Rosenbrock matrix (no Jac0), and the WCOPY/WAXPY passes of a
// stage and the error norm are one pass each (ros_combine, ros_new_solution).
//
// Layout: every per-cell array (state, work, rate constants) is addressed as p[i * s]: s = 1
// for one cell stored contiguously (CPU, or "cell outermost" on the GPU), s = ncell for the
// cell index innermost (coalesced GPU layout, MICM / Linford et al.).
// Precision: the state and linear algebra use T (double by default; float as an option);
// time, step size and error norm are double as in the Fortran.
// The solver lives in the mode's inline namespace WRFGPU_PHYS_NS (phys_strict, phys_fast;
// wrfgpu_hd.h): the strict and the fast builds of the backends each keep their own copy (one
// inline or template function in both would be merged by the linker, and one mode could run
// the other mode's code). The controls and statistics (RosMethod, RosControl, RosStats) are
// plain data shared by both modes: the dispatcher passes RosControl to either (CellOptions).
#pragma once
#include <cfloat>
#include <cmath>
#include <cstddef>
#include "wrfgpu_hd.h"

namespace wrfgpu {
namespace kpp {

// ICNTRL(3): 1 Ros2, 2 Ros3 (WRF's choice), 3 Ros4, 4 Rodas3, 5 Rodas4.
enum RosMethod : int { kRos2 = 1, kRos3 = 2, kRos4 = 3, kRodas3 = 4, kRodas4 = 5 };

// Integrator controls (ICNTRL/RCNTRL as WRF's interface sets them; zeros mean KPP defaults).
struct RosControl {
  int method = kRos3;           // ICNTRL(3)
  bool autonomous = true;       // ICNTRL(1)=1 (autonomous: no dF/dT term)
  int max_no_steps = 0;         // ICNTRL(4): 0 -> 100000
  double atol = 1.0;            // ATOL(:) = REAL(atols,dp)
  double rtol = 1.0000000474974513e-3;  // RTOL(:) = REAL(rtols,dp), sp 1e-3 promoted
  double hmin = 0;              // RCNTRL(1)
  double hmax = 0;              // RCNTRL(2): 0 -> |Tend-Tstart|
  double hstart = 0;            // RCNTRL(3): WRF sets 0.01*TIME_END; 0 -> DeltaMin
  double fac_min = 0, fac_max = 0, fac_rej = 0, fac_safe = 0;  // RCNTRL(4:7): 0 -> defaults
};

// Per-cell statistics (ISTATUS / RSTATUS) and the IERR status (1 success, < 0 failure:
// -1..-5 bad controls, -6 too many steps, -7 step size too small, -8 matrix singular).
struct RosStats {
  int nfun = 0, njac = 0, nstp = 0, nacc = 0, nrej = 0, ndec = 0, nsol = 0, nsng = 0;
  int status = 0;
  double texit = 0, hexit = 0;
};

inline namespace WRFGPU_PHYS_NS {

struct RosCoeffs {
  int S = 0;
  double A[15] = {}, C[15] = {}, M[6] = {}, E[6] = {}, Alpha[6] = {}, Gamma[6] = {};
  bool NewF[6] = {};
  double ELO = 0;
};

// Method coefficients (rosenbrock.f90 Ros2/Ros3/Ros4/Rodas3/Rodas4).
WRFGPU_HD RosCoeffs ros_coeffs(int method) {
  RosCoeffs r;
  switch (method) {
    case kRos2: {
      const double g = 1.0 + 1.0 / sqrt(2.0);
      r.S = 2;
      r.A[0] = (1.0) / g;
      r.C[0] = (-2.0) / g;
      r.NewF[0] = r.NewF[1] = true;
      r.M[0] = (3.0) / (2.0 * g);
      r.M[1] = (1.0) / (2.0 * g);
      r.E[0] = 1.0 / (2.0 * g);
      r.E[1] = 1.0 / (2.0 * g);
      r.ELO = 2.0;
      r.Alpha[0] = 0.0; r.Alpha[1] = 1.0;
      r.Gamma[0] = g; r.Gamma[1] = -g;
      break;
    }
    case kRos3:
      r.S = 3;
      r.A[0] = 1.0; r.A[1] = 1.0; r.A[2] = 0.0;
      r.C[0] = -0.10156171083877702091975600115545E+01;
      r.C[1] = 0.40759956452537699824805835358067E+01;
      r.C[2] = 0.92076794298330791242156818474003E+01;
      r.NewF[0] = true; r.NewF[1] = true; r.NewF[2] = false;
      r.M[0] = 0.1E+01;
      r.M[1] = 0.61697947043828245592553615689730E+01;
      r.M[2] = -0.42772256543218573326238373806514E+00;
      r.E[0] = 0.5E+00;
      r.E[1] = -0.29079558716805469821718236208017E+01;
      r.E[2] = 0.22354069897811569627360909276199E+00;
      r.ELO = 3.0;
      r.Alpha[0] = 0.0;
      r.Alpha[1] = 0.43586652150845899941601945119356E+00;
      r.Alpha[2] = 0.43586652150845899941601945119356E+00;
      r.Gamma[0] = 0.43586652150845899941601945119356E+00;
      r.Gamma[1] = 0.24291996454816804366592249683314E+00;
      r.Gamma[2] = 0.21851380027664058511513169485832E+01;
      break;
    case kRos4:
      r.S = 4;
      r.A[0] = 0.2000000000000000E+01; r.A[1] = 0.1867943637803922E+01;
      r.A[2] = 0.2344449711399156E+00; r.A[3] = r.A[1]; r.A[4] = r.A[2]; r.A[5] = 0.0;
      r.C[0] = -0.7137615036412310E+01; r.C[1] = 0.2580708087951457E+01;
      r.C[2] = 0.6515950076447975E+00; r.C[3] = -0.2137148994382534E+01;
      r.C[4] = -0.3214669691237626E+00; r.C[5] = -0.6949742501781779E+00;
      r.NewF[0] = r.NewF[1] = r.NewF[2] = true; r.NewF[3] = false;
      r.M[0] = 0.2255570073418735E+01; r.M[1] = 0.2870493262186792E+00;
      r.M[2] = 0.4353179431840180E+00; r.M[3] = 0.1093502252409163E+01;
      r.E[0] = -0.2815431932141155E+00; r.E[1] = -0.7276199124938920E-01;
      r.E[2] = -0.1082196201495311E+00; r.E[3] = -0.1093502252409163E+01;
      r.ELO = 4.0;
      r.Alpha[0] = 0.0; r.Alpha[1] = 0.1145640000000000E+01;
      r.Alpha[2] = 0.6552168638155900E+00; r.Alpha[3] = r.Alpha[2];
      r.Gamma[0] = 0.5728200000000000E+00; r.Gamma[1] = -0.1769193891319233E+01;
      r.Gamma[2] = 0.7592633437920482E+00; r.Gamma[3] = -0.1049021087100450E+00;
      break;
    case kRodas3:
      r.S = 4;
      r.A[0] = 0.0; r.A[1] = 2.0; r.A[2] = 0.0; r.A[3] = 2.0; r.A[4] = 0.0; r.A[5] = 1.0;
      r.C[0] = 4.0; r.C[1] = 1.0; r.C[2] = -1.0; r.C[3] = 1.0; r.C[4] = -1.0;
      r.C[5] = -(8.0 / 3.0);
      r.NewF[0] = true; r.NewF[1] = false; r.NewF[2] = true; r.NewF[3] = true;
      r.M[0] = 2.0; r.M[1] = 0.0; r.M[2] = 1.0; r.M[3] = 1.0;
      r.E[0] = 0.0; r.E[1] = 0.0; r.E[2] = 0.0; r.E[3] = 1.0;
      r.ELO = 3.0;
      r.Alpha[0] = 0.0; r.Alpha[1] = 0.0; r.Alpha[2] = 1.0; r.Alpha[3] = 1.0;
      r.Gamma[0] = 0.5; r.Gamma[1] = 1.5; r.Gamma[2] = 0.0; r.Gamma[3] = 0.0;
      break;
    case kRodas4:
      r.S = 6;
      r.Alpha[0] = 0.000; r.Alpha[1] = 0.386; r.Alpha[2] = 0.210;
      r.Alpha[3] = 0.630; r.Alpha[4] = 1.000; r.Alpha[5] = 1.000;
      r.Gamma[0] = 0.2500000000000000E+00; r.Gamma[1] = -0.1043000000000000E+00;
      r.Gamma[2] = 0.1035000000000000E+00; r.Gamma[3] = -0.3620000000000023E-01;
      r.Gamma[4] = 0.0; r.Gamma[5] = 0.0;
      r.A[0] = 0.1544000000000000E+01; r.A[1] = 0.9466785280815826E+00;
      r.A[2] = 0.2557011698983284E+00; r.A[3] = 0.3314825187068521E+01;
      r.A[4] = 0.2896124015972201E+01; r.A[5] = 0.9986419139977817E+00;
      r.A[6] = 0.1221224509226641E+01; r.A[7] = 0.6019134481288629E+01;
      r.A[8] = 0.1253708332932087E+02; r.A[9] = -0.6878860361058950E+00;
      r.A[10] = r.A[6]; r.A[11] = r.A[7]; r.A[12] = r.A[8]; r.A[13] = r.A[9];
      r.A[14] = 1.0E+00;
      r.C[0] = -0.5668800000000000E+01; r.C[1] = -0.2430093356833875E+01;
      r.C[2] = -0.2063599157091915E+00; r.C[3] = -0.1073529058151375E+00;
      r.C[4] = -0.9594562251023355E+01; r.C[5] = -0.2047028614809616E+02;
      r.C[6] = 0.7496443313967647E+01; r.C[7] = -0.1024680431464352E+02;
      r.C[8] = -0.3399990352819905E+02; r.C[9] = 0.1170890893206160E+02;
      r.C[10] = 0.8083246795921522E+01; r.C[11] = -0.7981132988064893E+01;
      r.C[12] = -0.3152159432874371E+02; r.C[13] = 0.1631930543123136E+02;
      r.C[14] = -0.6058818238834054E+01;
      r.M[0] = r.A[6]; r.M[1] = r.A[7]; r.M[2] = r.A[8]; r.M[3] = r.A[9];
      r.M[4] = 1.0; r.M[5] = 1.0;
      for (int i = 0; i < 5; ++i) r.E[i] = 0.0;
      r.E[5] = 1.0;
      for (int i = 0; i < 6; ++i) r.NewF[i] = true;
      r.ELO = 4.0;
      break;
    default:
      r.S = 0;
  }
  return r;
}

// Work arrays of one cell, each addressed with the solver's stride s. (KPP's Jac0 and Yerr are
// not kept: jac_ghimj writes the Jacobian straight into Ghimj, evaluated again when the matrix
// is rebuilt, and ros_new_solution folds Yerr into the error norm.)
template <class T>
struct RosWork {
  T* ynew;   // NVAR
  T* fcn0;   // NVAR
  T* fcn;    // NVAR
  T* k;      // S*NVAR (6*NVAR covers every method)
  T* ghimj;  // LU_NONZERO
};
// Number of T values of work per cell for a mechanism.
template <class Mech>
WRFGPU_HD constexpr std::size_t ros_work_size() {
  return (std::size_t)(3 + 6) * Mech::NVAR + (std::size_t)Mech::LU_NONZERO;
}
// Carves a RosWork out of one block of ros_work_size<Mech>() * s values, the cell's first
// value at `base` (base = block + cell for stride s = ncell; block + cell*size for s = 1).
template <class Mech, class T>
WRFGPU_HD RosWork<T> ros_work_at(T* base, std::ptrdiff_t s) {
  RosWork<T> w;
  const std::ptrdiff_t n = Mech::NVAR;
  w.ynew = base;
  w.fcn0 = base + n * s;
  w.fcn = base + 2 * n * s;
  w.k = base + 3 * n * s;
  w.ghimj = base + 9 * n * s;
  return w;
}

// out := x0 + alpha(0)*K(0) + ... + alpha(nterm-1)*K(nterm-1), element by element, a term
// skipped where its alpha is 0; K(j) = k + j*kstride. The same operations, element for element,
// as KPP's ros_Integrator does with one WAXPY call per term after a copy of x0 (CALL
// WCOPY(N,X0,1,OUT,1); CALL WAXPY(N,alpha(j),K(j),1,OUT,1), WAXPY returning at once for
// alpha 0), in one pass over memory instead of one per term.
template <class T>
WRFGPU_HD void ros_combine(int n, const T* x0, const double* alpha, int nterm, const T* k,
                           std::ptrdiff_t kstride, T* out, std::ptrdiff_t s) {
  for (int i = 0; i < n; ++i) {
    T v = x0[i * s];
    for (int j = 0; j < nterm; ++j)
      if (alpha[j] != 0.0) v = v + (T)alpha[j] * k[j * kstride + i * s];
    out[i * s] = v;
  }
}

// The end of a step attempt in ros_Integrator, in one pass: Ynew = Y + sum M(j)*K(j), Yerr =
// 0 + sum E(j)*K(j) (WCOPY, WSCAL by 0, WAXPY per stage; Yerr is never stored) and
// ros_ErrorNorm (vector tolerances, all equal: the sum over i in order). Returns the norm.
template <class Mech, class T>
WRFGPU_HD double ros_new_solution(const T* y, const RosCoeffs& r, const T* k, std::ptrdiff_t kstride,
                                  T* ynew, double atol, double rtol, std::ptrdiff_t s) {
  double err = 0.0;
  for (int i = 0; i < Mech::NVAR; ++i) {
    const T yi = y[i * s];
    T yn = yi, ye = T(0);
    for (int j = 0; j < r.S; ++j)
      if (r.M[j] != 0.0) yn = yn + (T)r.M[j] * k[j * kstride + i * s];
    for (int j = 0; j < r.S; ++j)
      if (r.E[j] != 0.0) ye = ye + (T)r.E[j] * k[j * kstride + i * s];
    ynew[i * s] = yn;
    const double a = fabs((double)yi), b = fabs((double)yn);
    const double ymax = a > b ? a : b;  // MAX(ABS(Y),ABS(Ynew))
    const double scale = atol + rtol * ymax;
    const double q = (double)ye / scale;
    err = err + q * q;
  }
  return sqrt(err / (double)Mech::NVAR);
}

// ros_PrepareMatrix: Ghimj = 1/(H*gam) - Jac0, LU-decomposed; on a singular matrix H is
// halved (at most 5 times). matrix(ghinv, ghimj) writes -Jac0 with ghinv added on the
// diagonal (Mech::jac_ghimj from the cell's Y, FIX and RCONST). Returns false when still
// singular (IERR -8).
template <class Mech, class T, class Matrix>
WRFGPU_HD bool ros_prepare_matrix(double& H, int direction, double gam, const Matrix& matrix,
                                  T* ghimj, RosStats& st, std::ptrdiff_t s) {
  int nconsecutive = 0;
  for (;;) {
    const double ghinv = 1.0 / ((double)direction * H * gam);
    matrix(ghinv, ghimj);
    const int ising = Mech::decomp(ghimj, s);
    st.ndec++;
    if (ising == 0) return true;
    st.nsng++;
    nconsecutive++;
    if (nconsecutive <= 5) {
      H = H * 0.5;
    } else {
      return false;
    }
  }
}

constexpr double kRosRoundoff = DBL_EPSILON;  // WLAMCH('E')
constexpr double kRosDeltaMin = 1.0E-5;

// The integrator's controls after rosenbrock.f90's checks (zero means the default).
struct RosSettings {
  int max_no_steps = 100000;
  double hmin = 0, hmax = 0;
  double h_initial = 0;  // the first step: MIN(Hstart, Hmax), DeltaMin when ~0
  double fac_min = 0.2, fac_max = 6.0, fac_rej = 0.1, fac_safe = 0.9;
};
// Returns 0, or the IERR of a bad control (-1..-5).
WRFGPU_HD int ros_settings(const RosControl& c, double tstart, double tend, RosSettings& o) {
  o = RosSettings();
  if (c.method < 1 || c.method > 5) return -2;
  if (c.max_no_steps > 0) o.max_no_steps = c.max_no_steps;
  else if (c.max_no_steps < 0) return -1;
  if (c.hmin > 0) o.hmin = c.hmin;
  else if (c.hmin < 0) return -3;
  o.hmax = fabs(tend - tstart);
  if (c.hmax > 0) o.hmax = fmin(fabs(c.hmax), fabs(tend - tstart));
  else if (c.hmax < 0) return -3;
  double hstart = o.hmin > kRosDeltaMin ? o.hmin : kRosDeltaMin;
  if (c.hstart > 0) hstart = fmin(fabs(c.hstart), fabs(tend - tstart));
  else if (c.hstart < 0) return -3;
  if (c.fac_min < 0 || c.fac_max < 0 || c.fac_rej < 0 || c.fac_safe < 0) return -4;
  if (c.fac_min > 0) o.fac_min = c.fac_min;
  if (c.fac_max > 0) o.fac_max = c.fac_max;
  if (c.fac_rej > 0) o.fac_rej = c.fac_rej;
  if (c.fac_safe > 0) o.fac_safe = c.fac_safe;
  if (c.atol <= 0 || c.rtol <= 10.0 * kRosRoundoff || c.rtol >= 1.0) return -5;
  o.h_initial = hstart < o.hmax ? hstart : o.hmax;
  if (fabs(o.h_initial) <= 10.0 * kRosRoundoff) o.h_initial = kRosDeltaMin;
  return 0;
}

// ros_Integrator's step-size control after an attempt with error norm err: FacMin <=
// Hnew/H <= FacMax, no increase right after a rejection, FacRej after two. Returns true when
// the step is accepted (T advanced; the caller copies Ynew to Y).
WRFGPU_HD bool ros_step_control(double err, double elo, const RosSettings& o,
                                int direction, double& T_, double& H,
                                bool& reject_last, bool& reject_more, RosStats& st) {
  double q = o.fac_safe / pow(err, 1.0 / elo);
  q = o.fac_min > q ? o.fac_min : q;                 // MAX(FacMin, ...)
  const double fac = o.fac_max < q ? o.fac_max : q;  // MIN(FacMax, ...)
  double hnew = H * fac;
  st.nstp++;
  if ((err <= 1.0) || (H <= o.hmin)) {  // accept
    st.nacc++;
    T_ = T_ + (double)direction * H;
    hnew = fmax(o.hmin, fmin(hnew, o.hmax));
    if (reject_last) hnew = fmin(hnew, H);  // no increase after a rejection
    reject_last = false;
    reject_more = false;
    H = hnew;
    return true;
  }
  // reject
  if (reject_more) hnew = H * o.fac_rej;
  reject_more = reject_last;
  reject_last = true;
  H = hnew;
  if (st.nacc >= 1) st.nrej++;
  return false;
}

// ros_Integrator's loop, one step attempt at a time. An integration is ros_start, then
// ros_attempt until it returns a status (ros_integrate below, on the CPU and in the warp-team
// kernel's serial twin); the GPU's lane-per-cell kernel calls the same two functions, so that
// a lane whose cell is done can take another cell while the other lanes of its warp go on.
// What ros_Integrator keeps in local variables between attempts:
struct RosLane {
  RosSettings o;
  double T_ = 0, H = 0, tend = 0;
  int direction = 1;
  bool reject_last = false, reject_more = false;
  bool new_step = true;  // the next attempt starts a step: Fcn0 and Jac0 at Y first
  RosStats st;
};

// The top of ros_Integrator's loop: returns 1 when T has reached Tend, -6 or -7 when a step
// may not begin, else 0 with H cut to what is left (Hexit the step before the cut).
WRFGPU_HD int ros_begin_step(RosLane& L) {
  const double roundoff = kRosRoundoff;
  if (!((L.direction > 0 && ((L.T_ - L.tend) + roundoff <= 0.0)) ||
        (L.direction < 0 && ((L.tend - L.T_) + roundoff <= 0.0)))) {
    L.st.texit = L.T_;
    return L.st.status = 1;
  }
  if (L.st.nstp > L.o.max_no_steps) { L.st.texit = L.T_; return L.st.status = -6; }
  if (((L.T_ + 0.1 * L.H) == L.T_) || (L.H <= roundoff)) { L.st.texit = L.T_; return L.st.status = -7; }
  L.st.hexit = L.H;
  L.H = fmin(L.H, fabs(L.tend - L.T_));
  L.new_step = true;
  return 0;
}

// <model>_Rosenbrock's checks and ros_Integrator's start: returns 0 when the first step
// begins, else the IERR (bad controls -1..-5; or 1 when tstart = tend).
WRFGPU_HD int ros_start(const RosControl& c, double tstart, double tend, RosLane& L) {
  L = RosLane();
  if (const int bad = ros_settings(c, tstart, tend, L.o)) return L.st.status = bad;
  L.T_ = tstart;
  L.tend = tend;
  L.H = L.o.h_initial;
  L.direction = tend >= tstart ? +1 : -1;
  return ros_begin_step(L);
}

// One pass of ros_Integrator's UntilAccepted loop for the step that ros_begin_step began:
// Fcn0 and Jac0 when the step is new, the matrix (-8 when it stays singular), the stages, the
// error estimate and the step-size control. Returns 0 while the integration goes on (the step
// rejected, or accepted and the next one begun), else its IERR (1 done, -6, -7, -8).
template <class Mech, class T>
WRFGPU_HD int ros_attempt(RosLane& L, T* y, const T* fix, const T* rconst, const RosControl& c,
                          const RosCoeffs& r, const RosWork<T>& w, std::ptrdiff_t s) {
  const int N = Mech::NVAR;
  RosStats& st = L.st;
  if (L.new_step) {
    Mech::fun(y, fix, rconst, w.fcn0, s);
    st.nfun++;
    // (non-autonomous dF/dT: WRF runs autonomous; not implemented)
    st.njac++;  // KPP's Jac0 = Jacobian at Y, evaluated into Ghimj below
    L.new_step = false;
  }
  const auto matrix = [&](double ghinv, T* g) { Mech::jac_ghimj(y, fix, rconst, ghinv, g, s); };
  if (!ros_prepare_matrix<Mech>(L.H, L.direction, r.Gamma[0], matrix, w.ghimj, st, s)) {
    st.texit = L.T_;
    return st.status = -8;
  }
  const std::ptrdiff_t ks = (std::ptrdiff_t)N * s;  // from one stage's K to the next
  const T* fcn = w.fcn0;  // the latest Fcn: Fcn0 until a stage evaluates a new one
  for (int istage = 0; istage < r.S; ++istage) {
    T* ki = w.k + istage * ks;
    const int a0 = istage * (istage - 1) / 2;  // this stage's A(j) and C(j)
    if (istage > 0 && r.NewF[istage]) {
      ros_combine(N, y, r.A + a0, istage, w.k, ks, w.ynew, s);  // Ynew = Y + sum A(j)*K(j)
      Mech::fun(w.ynew, fix, rconst, w.fcn, s);
      st.nfun++;
      fcn = w.fcn;
    }
    double hc[6];  // HC = C(j)/(direction*H)
    for (int j = 0; j < istage; ++j) hc[j] = r.C[a0 + j] / ((double)L.direction * L.H);
    ros_combine(N, fcn, hc, istage, w.k, ks, ki, s);  // K(i) = Fcn + sum HC(j)*K(j)
    Mech::solve(w.ghimj, ki, s);
    st.nsol++;
  }
  // new solution and error estimate
  const double err = ros_new_solution<Mech>(y, r, w.k, ks, w.ynew, c.atol, c.rtol, s);
  if (ros_step_control(err, r.ELO, L.o, L.direction, L.T_, L.H, L.reject_last, L.reject_more, st)) {
    for (int i = 0; i < N; ++i) y[i * s] = w.ynew[i * s];
    return ros_begin_step(L);
  }
  return 0;
}

// <model>_Rosenbrock + ros_Integrator for one cell: integrates y (NVAR) from tstart to tend
// with fixed species fix (NFIX) and rate constants rconst (NREACT). Returns IERR and fills st.
template <class Mech, class T>
WRFGPU_HD int ros_integrate(T* y, const T* fix, const T* rconst, double tstart, double tend,
                            const RosControl& c, RosStats& st, const RosWork<T>& w,
                            std::ptrdiff_t s) {
  RosLane L;
  int status = ros_start(c, tstart, tend, L);
  if (status == 0) {
    const RosCoeffs r = ros_coeffs(c.method);
    while (status == 0) status = ros_attempt<Mech>(L, y, fix, rconst, c, r, w, s);
  }
  st = L.st;
  return status;
}

}  // inline namespace phys_<mode>
}  // namespace kpp
}  // namespace wrfgpu
