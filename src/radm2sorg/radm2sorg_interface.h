// radm2sorg_interface.h - WRF-Chem's per-cell RADM2SORG KPP interface, one cell at a time.
//
// Mirrors the generated chem/module_kpp_radm2sorg_interface.F (radm2sorg_interface, written by
// chem/KPP/util/wkc gen_kpp_interface.c / gen_kpp_interf_utils.c with chem/KPP/inc/radm2sorg
// *.inc): the single-precision unit conversions, FIX(M), FIX(H2O), photolysis /60., rc_n2o5
// from RH (kpp_mechd_ibu), Update_Rconst, the Rosenbrock call, the SOA precursor production
// vdrog3 (kpp_mechd_ia) and the store back, with WRF's sp/dp steps reproduced.
// Differences from WRF: var(ind_CO2) is set to 0 for every cell (WRF never loads it and
// carries the previous cell's value, which enters the step-size control; CellOptions::co2_carry
// keeps WRF's behaviour for a serial run); the integrator status is returned instead of dropped.
//
// Cell data layout ("fields"): every field is an array over the ncell cells of a batch
// (cell index innermost), state fields in/out, met fields in, vdrog3 out.
#pragma once
#include <cmath>
#include <cstddef>
#include "wrfgpu_hd.h"
#include "kpp_rosenbrock.h"
#include "kpp_rosenbrock_team.h"
#include "generated/radm2sorg_mechanism.h"

namespace wrfgpu {
namespace radm2sorg {

namespace mech = ::wrfgpu::kpp_radm2sorg;
using Mech = mech::Mechanism;

constexpr int kNChem = 41;   // chem(:,:,:,P_x) species (ppmv) that KPP maps
constexpr int kNRad = 17;    // non-transported radical arrays grid%x (ppm)
constexpr int kNState = kNChem + kNRad;
constexpr int kNPh = mech::NJV;  // photolysis rates used (ph_*, min-1)
constexpr int kLdrog = 17;       // module_data_sorgam ldrog
// met fields: qv, t_phy, p_phy, rho_phy, then the kNPh photolysis rates (Pj_* order)
enum MetField : int { kQv = 0, kTphy = 1, kPphy = 2, kRho = 3, kPh0 = 4 };
constexpr int kNMet = kPh0 + kNPh;

// The 17 radicals (registry.chem "Radicals", the order of inc/call_to_kpp_mech_drive.inc).
inline constexpr const char* kRadicalNames[kNRad] = {
    "o1d", "o3p", "xno2", "tolp", "xylp", "oltp", "oln", "xo2", "ol2p",
    "hc5p", "hc8p", "tco3", "olip", "ketp", "mo2", "hc3p", "ethp"};

// Where each KPP variable lives: state field index (chem 0..40 in KPP order, radicals
// 41..57 in kRadicalNames order), or -1 (CO2: never mapped by WRF).
struct StateMap {
  signed char field[mech::NVAR];
};
StateMap make_state_map();                 // radm2sorg.cpp
const char* state_field_name(int field);   // WRF name of a state field

// WRF constants (module_wkppc_constants, sp PARAMETERs as gfortran folds them):
// dens2con_a = 1.e-3*(1./mwair)*navgdro, dens2con_w = 1.e-3*(1./mwh2o)*navgdro.
constexpr float kDens2conA = 0x1.207a58p+64f;  // 2.0787024e19 (bits 5F903D2C)
constexpr float kDens2conW = 0x1.cfe5bep+64f;  // 3.3427333e19 (bits 5FE7F2DF)

// Per-cell options.
struct CellOptions {
  float dtstepc = 0;   // chemistry time step (s)
  int p_nu0 = 0;       // vdrog3 is computed when p_nu0 > 1 (SORGAM aerosols on)
  kpp::RosControl ctl; // hstart is set from dtstepc (0.01*TIME_END) unless given
  bool co2_carry = false;  // keep var(ind_CO2) from the previous cell (Options::wrf_co2_carry)
};

// The per-cell code below lives in the mode's inline namespace WRFGPU_PHYS_NS (phys_strict,
// phys_fast; wrfgpu_hd.h), as the solver and the generated mechanism; StateMap, CellOptions
// and the constants above are shared by both modes (the dispatcher builds them).
inline namespace WRFGPU_PHYS_NS {

// kpp_mechd_ibu_radm2sorg.inc: N2O5 + H2O rate from relative humidity, all single precision.
WRFGPU_HD float rc_n2o5_sp(float t_phy, float p_phy, float qv) {
  const float es = 1000.f * 0.6112f * expf(17.67f * (t_phy - 273.15f) / (t_phy - 29.65f));
  const float qvs = es / (p_phy - es);
  float rh = qv / qvs;
  rh = rh > 0.f ? rh : 0.f;   // MAX(rh, 0.)
  rh = rh < 1.f ? rh : 1.f;   // MIN(.., 1.)
  return 1.0f / (3.6E4f * expf(-powf(rh / 0.28f, 2.8f)) + 300.0f);
}

// The integrator controls of a call (RCNTRL(3) = 0.01_dp*TIME_END unless given).
WRFGPU_HD kpp::RosControl cell_controls(const CellOptions& opt, double& time_end) {
  kpp::RosControl ctl = opt.ctl;
  time_end = (double)opt.dtstepc;
  if (ctl.hstart == 0) ctl.hstart = 0.01 * time_end;
  return ctl;
}

// First half of run_cell: reads state/met at `cell` into this cell's KPP arrays var, fix and
// rconst (stride s): unit conversions, FIX(M), FIX(H2O), photolysis, rc_n2o5, Update_Rconst.
template <class T>
WRFGPU_HD void cell_prologue(std::size_t cell, std::size_t ncell, const float* state,
                             const float* met, const StateMap& map, const CellOptions& opt,
                             T* var, T* fix, T* rconst, std::ptrdiff_t s) {
  const float rho = met[(std::size_t)kRho * ncell + cell];
  const float qv = met[(std::size_t)kQv * ncell + cell];
  const float tphy = met[(std::size_t)kTphy * ncell + cell];
  const float pphy = met[(std::size_t)kPphy * ncell + cell];
  // FIX(indf_M) = REAL(dens2con_a * rho_phy, dp); FIX(indf_H2O) = REAL(dens2con_w*qv*rho, dp)
  const double c_m = (double)(kDens2conA * rho);
  const double c_h2o = (double)(kDens2conW * qv * rho);
  fix[mech::indf_M * s] = (T)c_m;
  fix[mech::indf_H2O * s] = (T)c_h2o;
  const double TEMP = (double)tphy;
  const double conv = 1.E-6 * (double)kDens2conA * (double)rho;  // 1.E-6_dp*dens2con_a*rho
  // jv(Pj_x) = REAL(ph_x/60., dp)
  double jv[kNPh];
  for (int p = 0; p < kNPh; ++p) jv[p] = (double)(met[(std::size_t)(kPh0 + p) * ncell + cell] / 60.f);
  // var(ind_x) = conv * REAL(MAX(chem,0.), dp)
  for (int i = 0; i < mech::NVAR; ++i) {
    const int f = map.field[i];
    if (f < 0) {
      if (!opt.co2_carry) var[i * s] = T(0);  // CO2 (see the header comment)
    } else {
      const float x = state[(std::size_t)f * ncell + cell];
      var[i * s] = (T)(conv * (double)(x > 0.f ? x : 0.f));
    }
  }
  double extra[mech::NEXTRA > 0 ? mech::NEXTRA : 1];
  extra[mech::ex_rc_n2o5] = (double)rc_n2o5_sp(tphy, pphy, qv);
  mech::update_rconst<T>(jv, extra, c_m, c_h2o, TEMP, rconst, s);
}

// Second half of run_cell: vdrog3 from the integrated var (when p_nu0 > 1) and the store
// back to state.
template <class T>
WRFGPU_HD void cell_epilogue(std::size_t cell, std::size_t ncell, float* state,
                             const float* met, float* vdrog3, const StateMap& map,
                             const CellOptions& opt, const T* var, const T* rconst,
                             std::ptrdiff_t s) {
  const float rho = met[(std::size_t)kRho * ncell + cell];
  const double conv = 1.E-6 * (double)kDens2conA * (double)rho;
  const double oconv = 1.E0 / conv;
  if (opt.p_nu0 > 1) {  // kpp_mechd_ia_radm2sorg.inc (uses the integrated var)
    auto V = [&](int i) { return (double)var[i * s]; };
    auto R = [&](int k) { return (double)rconst[(k - 1) * s]; };  // RCONST(k), 1-based
    double prd[kLdrog];
    prd[0] = R(59) * V(mech::ind_XYL) * V(mech::ind_OH);          // PXYL
    prd[1] = R(58) * V(mech::ind_TOL) * V(mech::ind_OH);          // PTOL
    prd[2] = R(60) * V(mech::ind_CSL) * V(mech::ind_OH);          // PCSL1
    prd[3] = 0.50 * R(96) * V(mech::ind_CSL) * V(mech::ind_NO3);  // PCSL2
    prd[4] = R(54) * V(mech::ind_HC8) * V(mech::ind_OH);          // PHC8
    prd[5] = R(57) * V(mech::ind_OLI) * V(mech::ind_OH);          // POLI1
    prd[6] = R(99) * V(mech::ind_OLI) * V(mech::ind_NO3);         // POLI2
    prd[7] = R(103) * V(mech::ind_OLI) * V(mech::ind_O3);         // POLI3
    prd[8] = R(56) * V(mech::ind_OLT) * V(mech::ind_OH);          // POLT1
    prd[9] = R(98) * V(mech::ind_OLT) * V(mech::ind_NO3);         // POLT2
    prd[10] = R(102) * V(mech::ind_OLT) * V(mech::ind_O3);        // POLT3
    for (int n = 11; n < kLdrog; ++n) prd[n] = 0.0;               // PAPI*, PLIM*
    for (int n = 0; n < kLdrog; ++n) {
      // VDROG3 = oconv*PRDROG*DTSTEPC (dp, stored sp); VDROG3 = MAX(0., VDROG3)
      const float v = (float)(oconv * prd[n] * (double)opt.dtstepc);
      vdrog3[(std::size_t)n * ncell + cell] = 0.f > v ? 0.f : v;
    }
  }
  // chem = MAX(REAL(oconv*var, sp), 0.)
  for (int i = 0; i < mech::NVAR; ++i) {
    const int f = map.field[i];
    if (f < 0) continue;
    const float x = (float)(oconv * (double)var[i * s]);
    state[(std::size_t)f * ncell + cell] = x > 0.f ? x : 0.f;
  }
}

// The generated team tables of the mechanism (host arrays; the GPU backend copies them).
inline kpp::TeamTables team_tables_host() {
  namespace t = mech::team;
  static_assert(t::TEAM_LANES == 32, "the team schedules are made for 32 lanes");
  kpp::TeamTables tb;
  static_assert(t::NFAC_A <= kpp::kTeamMaxFac && t::NFAC_B <= kpp::kTeamMaxFac,
                "more rate factors than a TeamRate holds");
  struct Packed {
    std::vector<kpp::TeamRate> a, b;
    std::vector<kpp::TeamSum> vdot, jvs;
    std::vector<kpp::TeamTerm> vdot_term, jvs_term;
  };
  static const Packed pk = [] {
    Packed p;
    p.a = kpp::team_pack_rates(mech::NREACT, t::NFAC_A, t::A_RATE, t::A_CONST, nullptr, t::A_FAC);
    p.b = kpp::team_pack_rates(t::NB, t::NFAC_B, t::B_RATE, t::B_CONST, t::B_COEF, t::B_FAC);
    kpp::team_pack_sums(mech::NVAR, t::VDOT_PTR, t::VDOT_A, t::VDOT_C, t::VDOT_ORDER, p.vdot,
                        p.vdot_term);
    kpp::team_pack_sums(mech::LU_NONZERO, t::JVS_PTR, t::JVS_B, t::JVS_C, t::JVS_ORDER, p.jvs,
                        p.jvs_term);
    return p;
  }();
  tb.nb = t::NB;
  tb.lu_diag = mech::LU_DIAG;
  tb.a_rate = pk.a.data();
  tb.b_rate = pk.b.data();
  tb.vdot_sum = pk.vdot.data();
  tb.jvs_sum = pk.jvs.data();
  tb.vdot_term = pk.vdot_term.data();
  tb.jvs_term = pk.jvs_term.data();
  tb.decomp_nlev = t::DECOMP_NLEV;
  tb.decomp_lev = t::DECOMP_LEV;
  tb.decomp_op = reinterpret_cast<const int*>(t::DECOMP_OP);
  static const kpp::TeamSolveRuns runs = kpp::team_solve_runs(
      t::SOLVE_NSEG, t::SOLVE_SEG, reinterpret_cast<const int*>(t::SOLVE_OP));
  tb.solve_nseg = t::SOLVE_NSEG;
  tb.solve_nrun = (int)runs.run.size();
  tb.solve_rseg = runs.rseg.data();
  tb.solve_run = runs.run.data();
  return tb;
}

// Per-cell values of a team: TeamWork arrays plus y = [VAR, FIX] (stride 1) and the rate
// constants, in T units, laid out y, ynew, fcn0, fcn, yerr, k, ghimj, ab, rct. There is no
// Jac0 (team_prepare_matrix). Two arrays share space with arrays that are dead while they
// are live, so that more cells fit in a GPU's shared memory:
//   - B(n), live only inside jac_sp (at the start of a step, or when the matrix is rebuilt
//     after a rejected step), uses Fcn, Yerr and K when it fits;
//   - the error norm's terms (doubles) use K (dead once Ynew and Yerr are formed; the
//     integrator syncs the team before writing them).
// rct: last, so that the GPU kernel's shared block can end before it (the kernel reads the
// rate constants from the cell's record in global memory; the CPU passes its own array).
struct TeamLayout {
  int y, ynew, fcn0, fcn, yerr, k, ghimj, ab, b, q, rct, nT;  // offsets / size in T
};
WRFGPU_HD TeamLayout team_layout(int nstage) {
  const int n = mech::NVAR, nf = mech::NFIX, lu = mech::LU_NONZERO, nb = mech::team::NB;
  TeamLayout L;
  L.y = 0;
  L.ynew = L.y + n + nf;
  L.fcn0 = L.ynew + n + nf;
  L.fcn = L.fcn0 + n;
  L.yerr = L.fcn + n;
  L.k = (L.yerr + n + 1) & ~1;  // 8-byte aligned for the doubles of q when T is float
  L.q = L.k;
  L.ghimj = L.k + (nstage > 2 ? nstage : 2) * n;  // K holds the n doubles of q in float too
  L.ab = L.ghimj + lu;
  const bool b_shared = nb <= L.ghimj - L.fcn;
  L.b = b_shared ? L.fcn : L.ab + mech::NREACT;
  L.rct = L.ab + mech::NREACT + (b_shared ? 0 : nb);
  L.nT = L.rct + mech::NREACT;
  L.nT = (L.nT + 1) & ~1;  // the next cell's block 8-byte aligned too
  return L;
}
template <class T>
WRFGPU_HD kpp::TeamWork<T> team_work_at(const TeamLayout& L, T* block) {
  kpp::TeamWork<T> w;
  w.ynew = block + L.ynew;
  w.fcn0 = block + L.fcn0;
  w.fcn = block + L.fcn;
  w.yerr = block + L.yerr;
  w.k = block + L.k;
  w.ghimj = block + L.ghimj;
  w.ab = block + L.ab;
  w.b = block + L.b;
  w.q = reinterpret_cast<double*>(block + L.q);
  return w;
}

// stats: nstp, nacc, nrej, nsng, status of each cell, field-major (the GPU kernels' device
// array of a chunk; the host's are separate arrays, CellStatsOut).
WRFGPU_HD void store_stats(int* stats, std::size_t ncell, std::size_t c,
                           const kpp::RosStats& st) {
  stats[0 * ncell + c] = st.nstp;
  stats[1 * ncell + c] = st.nacc;
  stats[2 * ncell + c] = st.nrej;
  stats[3 * ncell + c] = st.nsng;
  stats[4 * ncell + c] = st.status;
}

// One cell: reads state/met at `cell`, integrates, writes state (and vdrog3 when p_nu0 > 1).
// var/fix/rconst/work are this cell's KPP arrays with stride s. Returns IERR.
template <class T>
WRFGPU_HD int run_cell(std::size_t cell, std::size_t ncell, float* state, const float* met,
                       float* vdrog3, const StateMap& map, const CellOptions& opt, T* var,
                       T* fix, T* rconst, const kpp::RosWork<T>& work, std::ptrdiff_t s,
                       kpp::RosStats& st) {
  cell_prologue<T>(cell, ncell, state, met, map, opt, var, fix, rconst, s);
  double time_end;
  const kpp::RosControl ctl = cell_controls(opt, time_end);
  const int ierr = kpp::ros_integrate<Mech, T>(var, fix, rconst, 0.0, time_end, ctl, st, work, s);
  cell_epilogue<T>(cell, ncell, state, met, vdrog3, map, opt, var, rconst, s);
  return ierr;
}

}  // inline namespace phys_<mode>
}  // namespace radm2sorg
}  // namespace wrfgpu
