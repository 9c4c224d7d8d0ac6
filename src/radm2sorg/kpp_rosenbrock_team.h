// kpp_rosenbrock_team.h - the Rosenbrock integrator of kpp_rosenbrock.h for one cell, shared
// by a team of threads (on the GPU: one warp per cell).
//
// Why: one cell per thread keeps a cell's 659-entry LU matrix and the Rosenbrock work in
// spilled registers and global scratch; every step is then a serial chain of memory-latency
// bound operations, and a call lasts as long as the thread with the most steps. A team holds
// the cell in shared memory and splits every phase of a step over its members:
//   - fun / jac_sp: one member per reaction rate A(k) or B(n), then one per Vdot(i) or JVS(n);
//   - kpp_decomp: the generated level schedule (src/<model>/generated/<model>_team.h): the
//     operations of a level are independent, the levels keep the serial order of every value;
//   - kpp_solve: by rows (lane r % 32 owns X(r)), with a barrier only where a lane needs a
//     value another lane writes: 25 segments instead of 126 levels for RADM2SORG; a lane's
//     consecutive operations on one X(t) keep X(t) in a register (team_solve_runs);
//   - vector updates (WAXPY, copies): one member per species;
//   - scalars (step size, error norm, acceptance): every member computes the same values.
// Each sum is still evaluated term by term in KPP's order by one member, the error norm's
// sum runs in species order, and every operation is the serial code's: the team result is
// bitwise the one-thread result (the tests check it on the CPU with every team loop run in
// order and backwards; on the GPU it gave the bits of the thread-per-cell kernel, measured in
// docs/radm2sorg.md and removed since).
//
// Mirrors rosenbrock.f90 (WRF_conform) like kpp_rosenbrock.h: ros_Integrator,
// ros_PrepareMatrix, ros_ErrorNorm, the Ros2/Ros3/Ros4/Rodas3/Rodas4 stages.
#pragma once
#include <cfloat>
#include <cmath>
#include <vector>
#include "wrfgpu_hd.h"
#include "kpp_rosenbrock.h"

namespace wrfgpu {
namespace kpp {

// The generated rate and sum tables packed one record per rate term or output (team_pack_*,
// built once on the host), so that a lane's table reads are one or two vector loads, none
// depending on another. (Read through the generated order table, then the CSR offsets, then
// the terms, each output cost three dependent global loads: 8% of the warp kernel's stall
// samples on the H100.)
constexpr int kTeamMaxFac = 5;
struct alignas(16) TeamRate {  // A(k) or B(n): RCONST(rate), or cst when rate < 0; [* coef]
  int rate;
  float cst, coef;
  int fac[kTeamMaxFac];  // [VAR, FIX] indices of the factors, -1 = none
};
struct alignas(16) TeamSum {  // output out = sum of the terms [b, e)
  int out, b, e, pad;
};
struct alignas(8) TeamTerm {  // c * x[idx]
  int idx;
  float c;
};

// A mechanism's team tables (on the host or the device).
struct TeamTables {
  int nb = 0;
  const int* lu_diag = nullptr;                          // LU_DIAG[NVAR]
  const TeamRate *a_rate = nullptr, *b_rate = nullptr;   // A(k) [NREACT], B(n) [nb]
  const TeamSum *vdot_sum = nullptr, *jvs_sum = nullptr;  // Vdot(i), JVS(n), in the lanes' order
  const TeamTerm *vdot_term = nullptr, *jvs_term = nullptr;
  int decomp_nlev = 0, solve_nseg = 0, solve_nrun = 0;
  const int* decomp_lev = nullptr;  // level offsets of decomp_op
  const int* decomp_op = nullptr;   // {x, y} pairs
  const int* solve_rseg = nullptr;  // [segment * 32 + lane] offsets of solve_run
  const int* solve_run = nullptr;   // the solve's runs (team_solve_runs)
};

// The code below lives in the mode's inline namespace WRFGPU_PHYS_NS, as kpp_rosenbrock.h's
// solver (wrfgpu_hd.h); the table records above are plain data.
inline namespace WRFGPU_PHYS_NS {

// The packed rate terms: rate, cst, coef (1 when null: B's coefficient where KPP writes
// none, A's never used), fac[k*nfac ..] padded with -1. nfac <= kTeamMaxFac.
inline std::vector<TeamRate> team_pack_rates(int n, int nfac, const int* rate, const float* cst,
                                             const float* coef, const int* fac) {
  std::vector<TeamRate> r((std::size_t)n);
  for (int k = 0; k < n; ++k) {
    r[k].rate = rate[k];
    r[k].cst = cst[k];
    r[k].coef = coef ? coef[k] : 1.0f;
    for (int f = 0; f < kTeamMaxFac; ++f) r[k].fac[f] = f < nfac ? fac[k * nfac + f] : -1;
  }
  return r;
}
// The packed sums: the terms as {idx, c} in table order; the outputs in the lanes' order.
inline void team_pack_sums(int n, const int* ptr, const int* idx, const float* c,
                           const int* order, std::vector<TeamSum>& sum,
                           std::vector<TeamTerm>& term) {
  term.resize((std::size_t)(ptr[n] > 0 ? ptr[n] : 1));
  for (int j = 0; j < ptr[n]; ++j) term[j] = TeamTerm{idx[j], c[j]};
  sum.resize((std::size_t)n);
  for (int m = 0; m < n; ++m) {
    const int i = order[m];
    sum[m] = TeamSum{i, ptr[i], ptr[i + 1], 0};
  }
}

// kpp_solve's by-rows schedule (the generated SOLVE_SEG / SOLVE_OP) as runs: a lane's
// consecutive operations on one X(t) within a segment become one run, so that X(t) is read
// once, updated in a register and stored once. (Operation by operation, every term was a
// shared-memory read-modify-write of X(t) and the solve was a chain of memory latencies: 59%
// of the warp kernel's instructions on the H100.) A run is
//   {8t | n << 16, 8 p_div + 8 (0: none)}, then n terms {8p | 8q << 16}:
//   X(t) = X(t) - JVS(p)*X(q) for each term in order, then X(t) = X(t)/JVS(p_div),
// the operations and their order unchanged. Indices are stored as byte offsets of doubles
// (8 * index; team_solve halves them for float), so that a term's two addresses are one
// mask or shift and one add each. op: the {x, y} pairs of the generated table.
struct TeamSolveRuns {
  std::vector<int> run, rseg;
};
inline TeamSolveRuns team_solve_runs(int nseg, const int* seg, const int* op) {
  TeamSolveRuns r;
  r.rseg.push_back(0);
  for (int s = 0; s < nseg * 32; ++s) {
    for (int i = seg[s]; i < seg[s + 1];) {
      const int t = op[2 * i] >> 1;
      const std::size_t h = r.run.size();
      r.run.push_back(0);
      r.run.push_back(0);
      int n = 0;
      while (i < seg[s + 1] && (op[2 * i] >> 1) == t) {
        const bool div = (op[2 * i] & 1) != 0;
        const int p = op[2 * i + 1] & 0xffff, q = op[2 * i + 1] >> 16;
        if (div) r.run[h + 1] = 8 * p + 8;
        else { r.run.push_back(8 * p | (8 * q) << 16); ++n; }
        ++i;
        if (div) break;  // the division ends the row's run
      }
      r.run[h] = 8 * t | (n << 16);
    }
    r.rseg.push_back((int)r.run.size());
  }
  return r;
}

// CPU team: one member runs every index of a team loop, forwards or (reverse, for the tests:
// a level whose operations were not independent would then give other results) backwards.
struct SerialTeam {
  bool reverse = false;
  template <class F>
  void range(int b, int e, F&& f) const {
    if (reverse)
      for (int i = e - 1; i >= b; --i) f(i);
    else
      for (int i = b; i < e; ++i) f(i);
  }
  void sync() const {}
  // the smallest i < n with pred(i), or n
  template <class F>
  int first(int n, F&& pred) const {
    for (int i = 0; i < n; ++i)
      if (pred(i)) return i;
    return n;
  }
  // the 32 lanes of a generated per-lane schedule, one after the other
  template <class F>
  void lanes(F&& f) const {
    if (reverse)
      for (int l = 31; l >= 0; --l) f(l);
    else
      for (int l = 0; l < 32; ++l) f(l);
  }
};

#ifdef __CUDACC__
// GPU team: the 32 lanes of a warp; index i of a loop runs on lane i % 32.
struct WarpTeam {
  template <class F>
  __device__ void range(int b, int e, F&& f) const {
    for (int i = b + (int)(threadIdx.x & 31u); i < e; i += 32) f(i);
  }
  __device__ void sync() const { __syncwarp(); }
  template <class F>
  __device__ int first(int n, F&& pred) const {
    const int lane = (int)(threadIdx.x & 31u);
    for (int b = 0; b < n; b += 32) {
      const unsigned m = __ballot_sync(0xffffffffu, b + lane < n && pred(b + lane));
      if (m) return b + __ffs((int)m) - 1;
    }
    return n;
  }
  template <class F>
  __device__ void lanes(F&& f) const { f((int)(threadIdx.x & 31u)); }
};
#endif

// Table reads (read-only for the whole kernel: the read-only data path on the GPU, one
// vector load per record).
WRFGPU_HD int team_ldg(const int* p) {
#ifdef __CUDA_ARCH__
  return __ldg(p);
#else
  return *p;
#endif
}
WRFGPU_HD TeamSum team_load(const TeamSum* p) {
#ifdef __CUDA_ARCH__
  const int4 v = __ldg(reinterpret_cast<const int4*>(p));
  return TeamSum{v.x, v.y, v.z, v.w};
#else
  return *p;
#endif
}
WRFGPU_HD TeamTerm team_load(const TeamTerm* p) {
#ifdef __CUDA_ARCH__
  const int2 v = __ldg(reinterpret_cast<const int2*>(p));
  return TeamTerm{v.x, __int_as_float(v.y)};
#else
  return *p;
#endif
}
WRFGPU_HD TeamRate team_load(const TeamRate* p) {
#ifdef __CUDA_ARCH__
  static_assert(kTeamMaxFac == 5, "TeamRate is two int4");
  const int4 a = __ldg(reinterpret_cast<const int4*>(p));
  const int4 b = __ldg(reinterpret_cast<const int4*>(p) + 1);
  TeamRate r;
  r.rate = a.x;
  r.cst = __int_as_float(a.y);
  r.coef = __int_as_float(a.z);
  r.fac[0] = a.w;
  r.fac[1] = b.x;
  r.fac[2] = b.y;
  r.fac[3] = b.z;
  r.fac[4] = b.w;
  return r;
#else
  return *p;
#endif
}

// One cell's arrays for the team (shared memory on the GPU). y and ynew hold [VAR, FIX]: the
// factor indices of the tables address both; fix is copied into ynew once.
template <class T>
struct TeamWork {
  T* ynew;    // NVAR + NFIX
  T* fcn0;    // NVAR
  T* fcn;     // NVAR
  T* k;       // S * NVAR
  T* yerr;    // NVAR
  T* ghimj;   // LU_NONZERO
  T* ab;      // NREACT: the rate terms A(k) of fun
  T* b;       // NB: the rate terms B(n) of jac_sp (may share the space of Fcn, Yerr, K)
  double* q;  // NVAR: the error norm's terms (may share K's space)
};

// A rate term RCT(k) [* coef] * V.. * F.. (KPP's A(k) and B(n) statements, left to right):
// coef only for B (1 where KPP writes no coefficient: exact).
template <class T>
WRFGPU_HD T team_term(const TeamRate& q, bool coef, const T* rct, const T* v) {
  T x = q.rate >= 0 ? rct[q.rate] : T(q.cst);
  if (coef) x = x * T(q.coef);
#pragma unroll
  for (int f = 0; f < kTeamMaxFac; ++f)
    if (q.fac[f] >= 0) x = x * v[q.fac[f]];
  return x;
}

// sum_t c_t * x[idx_t] term by term in table order, as KPP's one-statement sum (the first
// term alone; c = +-1 multiplies exactly).
template <class T>
WRFGPU_HD T team_sum(const TeamSum& s, const TeamTerm* term, const T* x) {
  if (s.b == s.e) return T(0);
  TeamTerm t = team_load(term + s.b);
  T acc = T(t.c) * x[t.idx];
  for (int j = s.b + 1; j < s.e; ++j) {
    t = team_load(term + j);
    acc = acc + T(t.c) * x[t.idx];
  }
  return acc;
}

// fun: A(k) = RCT(k)*V..*F..; Vdot(i) = sum Stoich(i,k)*A(k) (v holds [VAR, FIX]).
template <class Mech, class T, class Team>
WRFGPU_HD void team_fun(const Team& tm, const TeamTables& tb, const T* v, const T* rct,
                        T* a, T* vdot) {
  tm.range(0, Mech::NREACT, [&](int k) { a[k] = team_term(team_load(tb.a_rate + k), false, rct, v); });
  tm.sync();
  tm.range(0, Mech::NVAR, [&](int m) {
    const TeamSum s = team_load(tb.vdot_sum + m);
    vdot[s.out] = team_sum(s, tb.vdot_term, a);
  });
  tm.sync();
}

// jac_sp: B(n) = RCT(k)*coef*V.. (one V(j) left out); JVS(n) = sum Stoich*B.
template <class Mech, class T, class Team>
WRFGPU_HD void team_jac(const Team& tm, const TeamTables& tb, const T* v, const T* rct,
                        T* b, T* jvs) {
  tm.range(0, tb.nb, [&](int n) { b[n] = team_term(team_load(tb.b_rate + n), true, rct, v); });
  tm.sync();
  tm.range(0, Mech::LU_NONZERO, [&](int m) {
    const TeamSum s = team_load(tb.jvs_sum + m);
    jvs[s.out] = team_sum(s, tb.jvs_term, b);
  });
  tm.sync();
}

// An operation {x, y} of a schedule. Plain loads: on the GPU the schedules are copied to
// shared memory (read every level of every step, they are the latency-critical tables).
WRFGPU_HD void team_op(const int* ops, int i, int& x, int& y) {
#ifdef __CUDA_ARCH__
  const int2 o = reinterpret_cast<const int2*>(ops)[i];
  x = o.x;
  y = o.y;
#else
  x = ops[2 * i];
  y = ops[2 * i + 1];
#endif
}

// kpp_decomp, level by level. The pivot check comes first: KPP checks |JVS(diag k)| before
// row k is eliminated, and row k is only changed while it is eliminated, so the checks see
// the matrix as it enters; the first failing row is KPP's IER.
template <class Mech, class T, class Team>
WRFGPU_HD int team_decomp(const Team& tm, const TeamTables& tb, T* jvs) {
  const int k = tm.first(Mech::NVAR, [&](int r) {
    const T d = jvs[team_ldg(tb.lu_diag + r)];
    return !((d < T(0) ? -d : d) >= (sizeof(T) == sizeof(float) ? (T)FLT_MIN : (T)DBL_MIN));
  });
  if (k < Mech::NVAR) return k + 1;
  tm.sync();  // every member has read the diagonals before any of them is changed
  for (int l = 0; l < tb.decomp_nlev; ++l) {
    tm.range(tb.decomp_lev[l], tb.decomp_lev[l + 1], [&](int i) {
      int x, y;
      team_op(tb.decomp_op, i, x, y);
      const int t = x >> 1, p = y & 0xffff, q = y >> 16;
      if ((x & 1) == 0) {
        const T a = -jvs[t] / jvs[p];  // a = -W(j)/JVS(LU_DIAG(j)); W(j) = -a
        jvs[t] = -a;
      } else {
        const T a = -jvs[p];  // the a of the multiplier (stored as -a): exact
        jvs[t] = jvs[t] + a * jvs[q];
      }
    });
    tm.sync();
  }
  return 0;
}

// kpp_solve by rows: in segment sg, lane l runs its runs (team_solve_runs) in serial order;
// the segments are separated by barriers. (Measured on the H100 for 28,899 warm cells: the
// level schedule, 126 levels, 31.7 ms; lane 0 running the unrolled kpp_solve, 33.7 ms.)
template <class T, class Team>
WRFGPU_HD void team_solve(const Team& tm, const TeamTables& tb, const T* jvs, T* x) {
  constexpr int sh = sizeof(T) == 8 ? 0 : 1;  // the runs' offsets are 8 * index
  const char* jb = reinterpret_cast<const char*>(jvs);
  char* xb = reinterpret_cast<char*>(x);
  auto J = [&](unsigned off) -> T { return *reinterpret_cast<const T*>(jb + (off >> sh)); };
  auto X = [&](unsigned off) -> T& { return *reinterpret_cast<T*>(xb + (off >> sh)); };
  for (int sg = 0; sg < tb.solve_nseg; ++sg) {
    tm.lanes([&](int lane) {
      const int e = tb.solve_rseg[sg * 32 + lane + 1];
      for (int i = tb.solve_rseg[sg * 32 + lane]; i < e;) {
        const unsigned h = (unsigned)tb.solve_run[i], dv = (unsigned)tb.solve_run[i + 1];
        const unsigned t = h & 0xffffu;
        const int n = (int)(h >> 16);
        T acc = X(t);
        for (int j = i + 2; j < i + 2 + n; ++j) {
          const unsigned w = (unsigned)tb.solve_run[j];
          acc = acc - J(w & 0xffffu) * X(w >> 16);  // X(t) = X(t) - JVS(p)*X(q)
        }
        if (dv) acc = acc / J(dv - 8);  // X(t) = X(t)/JVS(p)
        X(t) = acc;
        i += 2 + n;
      }
    });
    tm.sync();
  }
}

// y := y + alpha*x over the species, skipped when alpha == 0 (WAXPY).
template <class T, class Team>
WRFGPU_HD void team_waxpy(const Team& tm, int n, double alpha, const T* x, T* y) {
  if (alpha == 0.0) return;
  const T a = (T)alpha;
  tm.range(0, n, [&](int i) { y[i] = y[i] + a * x[i]; });
}
template <class T, class Team>
WRFGPU_HD void team_copy(const Team& tm, int n, const T* x, T* y) {
  tm.range(0, n, [&](int i) { y[i] = x[i]; });
}

// ros_PrepareMatrix (see kpp_rosenbrock.h): Ghimj = -Jac0 + 1/(H*gam) on the diagonal, then
// kpp_decomp. The team keeps no copy of Jac0 (one LU-sized array per cell in shared memory,
// not two): jac_sp writes the Jacobian into Ghimj at the start of a step (fresh), and when
// the matrix has to be rebuilt (a rejected step, a singular matrix) jac_sp is evaluated again
// from the same y and rate constants, which gives the same Jacobian bitwise. Not counted
// again in st.njac: KPP evaluates it once per step.
template <class Mech, class T, class Team>
WRFGPU_HD bool team_prepare_matrix(const Team& tm, const TeamTables& tb, double& H,
                                   int direction, double gam, const T* y,
                                   const T* rconst, T* b, T* ghimj, bool& fresh,
                                   RosStats& st) {
  int nconsecutive = 0;
  for (;;) {
    if (!fresh) team_jac<Mech>(tm, tb, y, rconst, b, ghimj);
    fresh = false;
    tm.range(0, Mech::LU_NONZERO, [&](int i) { ghimj[i] = -ghimj[i]; });
    tm.sync();
    const double ghinv = 1.0 / ((double)direction * H * gam);
    tm.range(0, Mech::NVAR, [&](int i) {
      const int d = team_ldg(tb.lu_diag + i);
      ghimj[d] = (T)((double)ghimj[d] + ghinv);
    });
    tm.sync();
    const int ising = team_decomp<Mech>(tm, tb, ghimj);
    st.ndec++;
    if (ising == 0) return true;
    tm.sync();  // before the matrix is rebuilt
    st.nsng++;
    nconsecutive++;
    if (nconsecutive <= 5) {
      H = H * 0.5;
    } else {
      return false;
    }
  }
}

// ros_integrate for one cell by a team: y holds [VAR, FIX] (fix read only), rconst the rate
// constants. Every member returns the same IERR and statistics.
template <class Mech, class T, class Team>
WRFGPU_HD int ros_integrate_team(const Team& tm, const TeamTables& tb, T* y,
                                 const T* rconst, double tstart, double tend,
                                 const RosControl& c, RosStats& st, const TeamWork<T>& w) {
  const int N = Mech::NVAR;
  st = RosStats();
  RosSettings o;
  if (const int bad = ros_settings(c, tstart, tend, o)) return st.status = bad;
  const double roundoff = kRosRoundoff;
  const RosCoeffs r = ros_coeffs(c.method);

  // FIX behind VAR in ynew too, for the stage function evaluations
  tm.range(N, N + Mech::NFIX, [&](int i) { w.ynew[i] = y[i]; });

  double T_ = tstart;
  st.hexit = 0.0;
  double H = o.h_initial;
  const int direction = tend >= tstart ? +1 : -1;
  bool reject_last = false, reject_more = false;

  while ((direction > 0 && ((T_ - tend) + roundoff <= 0.0)) ||
         (direction < 0 && ((tend - T_) + roundoff <= 0.0))) {
    if (st.nstp > o.max_no_steps) { st.texit = T_; return st.status = -6; }
    if (((T_ + 0.1 * H) == T_) || (H <= roundoff)) { st.texit = T_; return st.status = -7; }
    st.hexit = H;
    H = fmin(H, fabs(tend - T_));
    tm.sync();  // y complete (accepted step) before it is read across members
    team_fun<Mech>(tm, tb, y, rconst, w.ab, w.fcn0);
    st.nfun++;
    team_jac<Mech>(tm, tb, y, rconst, w.b, w.ghimj);  // Jac0, negated in place by prepare
    st.njac++;
    bool fresh = true;

    for (;;) {  // UntilAccepted
      if (!team_prepare_matrix<Mech>(tm, tb, H, direction, r.Gamma[0], y, rconst, w.b, w.ghimj,
                                     fresh, st)) {
        st.texit = T_;
        return st.status = -8;
      }
      for (int istage = 0; istage < r.S; ++istage) {
        T* ki = w.k + N * istage;
        if (istage == 0) {
          team_copy(tm, N, w.fcn0, w.fcn);
        } else if (r.NewF[istage]) {
          team_copy(tm, N, y, w.ynew);
          for (int j = 0; j < istage; ++j)
            team_waxpy(tm, N, r.A[istage * (istage - 1) / 2 + j], w.k + N * j, w.ynew);
          tm.sync();
          team_fun<Mech>(tm, tb, w.ynew, rconst, w.ab, w.fcn);
          st.nfun++;
        }
        team_copy(tm, N, w.fcn, ki);
        for (int j = 0; j < istage; ++j) {
          const double HC = r.C[istage * (istage - 1) / 2 + j] / ((double)direction * H);
          team_waxpy(tm, N, HC, w.k + N * j, ki);
        }
        tm.sync();
        team_solve(tm, tb, w.ghimj, ki);
        st.nsol++;
      }
      // new solution and error estimate (member i owns species i in all of these)
      team_copy(tm, N, y, w.ynew);
      for (int j = 0; j < r.S; ++j) team_waxpy(tm, N, r.M[j], w.k + N * j, w.ynew);
      tm.range(0, N, [&](int i) { w.yerr[i] = T(0); });
      for (int j = 0; j < r.S; ++j) team_waxpy(tm, N, r.E[j], w.k + N * j, w.yerr);
      // ros_ErrorNorm: the terms by species, the sum in species order by every member (q may
      // share K's space: every member is done with K first)
      tm.sync();
      tm.range(0, N, [&](int i) {
        const double a = fabs((double)y[i]), b = fabs((double)w.ynew[i]);
        const double ymax = a > b ? a : b;
        const double scale = c.atol + c.rtol * ymax;
        const double q = (double)w.yerr[i] / scale;
        w.q[i] = q * q;
      });
      tm.sync();
      double err = 0.0;
      for (int i = 0; i < N; ++i) err = err + w.q[i];
      err = sqrt(err / (double)N);
      if (ros_step_control(err, r.ELO, o, direction, T_, H, reject_last, reject_more, st)) {
        team_copy(tm, N, w.ynew, y);
        break;
      }
      tm.sync();  // rejected: the error terms are read before the next attempt rewrites them
    }
  }
  tm.sync();
  st.texit = T_;
  return st.status = 1;
}

}  // inline namespace phys_<mode>
}  // namespace kpp
}  // namespace wrfgpu
