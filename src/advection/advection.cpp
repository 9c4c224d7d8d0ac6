// advection.cpp - validation, boundary rule and backend/mode dispatch of the scalar advection
// kernel (see advection.h, docs/advection.md). Compiled once.
#include "advection.h"
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <sstream>
#include <vector>
#include "advection_impl.h"
#include "advection_synth.h"
#include "both.h"
#include "device.h"
#include "errors.h"
#include "finite_check.h"

namespace wrfgpu {
namespace advection {

namespace {

std::string ijk(int i, int k, int j) {
  std::ostringstream o;
  o << "(i,k,j)=(" << i << "," << k << "," << j << ")";
  return o.str();
}

[[noreturn]] void bad(const std::string& what) {
  throw InputError("advection: " + what);
}

// The boxes an array is read in: one, or two (the cross of the tracers' x and y stencils).
// Held in place: prepare() runs at every call.
struct Boxes {
  Box b[2];
  int n = 0;
  Boxes(std::initializer_list<Box> l) {
    if (l.size() < 1 || l.size() > 2) throw std::logic_error("advection: an array is read in one or two boxes");
    for (const Box& x : l) b[n++] = x;
  }
  const Box* begin() const { return b; }
  const Box* end() const { return b + n; }
  const Box& operator[](int q) const { return b[q]; }
};

// One array the scheme reads and the boxes it reads from it.
struct Need {
  const char* name;
  const float* p;
  int kind;  // 3: 3-D, 2: 2-D, 1: 1-D (k only), 4: tracer (all species)
  Boxes boxes;
};

// The rows of the union of n's boxes: the bounding box, and per j the boxes' i-intervals
// that cover it, in increasing i, merged where they touch.
RowCheck row_check(const Need& n, int nspec) {
  RowCheck rc;
  rc.name = n.name;
  rc.kind = n.kind;
  rc.p = n.p;
  rc.nsp = n.kind == 4 ? nspec : 1;
  Box u = n.boxes[0];
  for (const Box& b : n.boxes) {
    u.i0 = std::min(u.i0, b.i0); u.i1 = std::max(u.i1, b.i1);
    u.j0 = std::min(u.j0, b.j0); u.j1 = std::max(u.j1, b.j1);
    u.k0 = std::min(u.k0, b.k0); u.k1 = std::max(u.k1, b.k1);
  }
  rc.u = u;
  rc.k0 = n.kind == 2 ? 0 : u.k0;
  rc.k1 = n.kind == 2 ? 0 : u.k1;
  rc.ivs.resize((std::size_t)u.nj());
  for (int j = u.j0; j <= u.j1; ++j) {
    RowCheck::Intervals& m = rc.ivs[(std::size_t)(j - u.j0)];
    for (const Box& b : n.boxes)
      if (j >= b.j0 && j <= b.j1 && !b.empty()) m.iv[m.n++] = {b.i0, b.i1};
    if (m.n == 2) {
      if (m.iv[1] < m.iv[0]) std::swap(m.iv[0], m.iv[1]);
      if (m.iv[1].first <= m.iv[0].second + 1) {
        m.iv[0].second = std::max(m.iv[0].second, m.iv[1].second);
        m.n = 1;
      }
    }
  }
  return rc;
}

// The smallest RowCheck code of a non-finite value in the caller's array (species stride
// sst), LONG_MAX if none.
long first_bad(const RowCheck& rc, const WrfDims& d, std::size_t sst) {
  const int nkb = rc.nk(), njb = rc.u.nj();
  const long nrow = (long)rc.nsp * njb * nkb;
  long first = LONG_MAX;
#pragma omp parallel for schedule(static) reduction(min : first) if (nrow * rc.u.ni() > 65536)
  for (long r = 0; r < nrow; ++r) {
    const int k = rc.k0 + (int)(r % nkb), j = rc.u.j0 + (int)(r / nkb % njb), s = (int)(r / nkb / njb);
    const std::size_t at = rc.kind == 2 ? d.idx2(rc.u.i0, j) : d.idx3(rc.u.i0, k, j);
    first = std::min(first, rc.first_in_row(rc.p + (std::size_t)s * sst + at, s, k, j));
  }
  return first;
}

}  // namespace

std::string first_bad_tracer(const Prepared& p) {
  for (const RowCheck& rc : p.tracer_checks) {
    const long first = first_bad(rc, p.in->dims, p.sst);
    if (first != LONG_MAX) return rc.message(first, p.in->dims, p.sst, *p.in);
  }
  return "";
}

std::string first_bad_met(const Prepared& p) {
  for (const RowCheck& rc : p.met_checks) {
    const long first = first_bad(rc, p.in->dims, 0);
    if (first != LONG_MAX) return rc.message(first, p.in->dims, 0, *p.in);
  }
  return "";
}

std::string RowCheck::message(long code, const WrfDims& d, std::size_t sst, const AdvectInputs& in) const {
  const long ni = u.ni(), nkb = nk(), njb = u.nj();
  const int i = u.i0 + (int)(code % ni);
  const long r = code / ni;
  const int k = k0 + (int)(r % nkb), j = u.j0 + (int)(r / nkb % njb), s = (int)(r / nkb / njb);
  const float v = p[(std::size_t)s * sst + (kind == 2 ? d.idx2(i, j) : d.idx3(i, k, j))];
  std::ostringstream o;
  if (kind == 4 && !in.array_name.empty()) {  // WRF's element: moist_old(i,k,j,im), tke_1(i,k,j)
    if (std::string(name) != "field_old") o << in.array_name;
    else if (!in.array_name_old.empty()) o << in.array_name_old;
    else o << in.array_name << "_old";
    o << "(" << i << "," << k << "," << j;
    if (in.first_index > 0) o << "," << in.first_index + s;
    o << "): non-finite value " << v;
    return o.str();
  }
  o << name << ": non-finite value " << v;
  if (kind == 4) o << " in species " << s;
  if (kind == 2) o << " at (i,j)=(" << i << "," << j << ")";
  else o << " at " << ijk(i, k, j);
  return o.str();
}

View cpu_view(const Prepared& p) {
  const AdvectInputs& in = *p.in;
  View v;
  v.g = in.dims;
  v.mt = v.mm = v.mo = in.dims;
  v.f = in.field;
  v.fo = in.field_old ? in.field_old : in.field;
  v.sst = v.ost = p.sst;
  v.tend = in.tendency;
  v.htend = in.h_tendency;
  v.ztend = in.z_tendency;
  v.ru = in.ru; v.rv = in.rv; v.rom = in.rom;
  v.mut = in.mut; v.mub = in.mub; v.mu_old = in.mu_old;
  v.msftx = in.msftx; v.msfty = in.msfty;
  v.c1 = in.c1; v.c2 = in.c2; v.fzm = in.fzm; v.fzp = in.fzp; v.rdzw = in.rdzw;
  v.k1d = in.dims.kms;
  v.rdx = in.rdx; v.rdy = in.rdy; v.dt = in.dt; v.ts = p.ts;
  v.itf = p.itf; v.jtf = p.jtf; v.ktf = p.ktf;
  v.accumulate = in.accumulate ? 1 : 0;
  v.bc = p.bc;
  return v;
}

Prepared prepare(const AdvectInputs& in, bool pd, bool defer_tracers) {
  const WrfDims& d = in.dims;
  const AdvectFlags& fl = in.flags;
  // ---- options WRF supports that this port does not --------------------------------------
  if (fl.polar) bad("polar not supported (polar boundary conditions of advect_scalar_pd)");
  if (fl.h_order != 5)
    bad("h_sca_adv_order=" + std::to_string(fl.h_order) + " not supported (only 5)");
  if (fl.v_order != 3)
    bad("v_sca_adv_order=" + std::to_string(fl.v_order) + " not supported (only 3)");
  if (in.nspec < 1) bad("nspec=" + std::to_string(in.nspec) + " (need >= 1)");
  // ---- pointers ------------------------------------------------------------------------
  struct P { const char* n; const void* p; bool need; };
  const P ptrs[] = {{"field", in.field, true},       {"field_old", in.field_old, pd},
                    {"tendency", in.tendency, true}, {"ru", in.ru, true},
                    {"rv", in.rv, true},             {"rom", in.rom, true},
                    {"mut", in.mut, pd},             {"mub", in.mub, pd},
                    {"mu_old", in.mu_old, pd},       {"msftx", in.msftx, true},
                    {"msfty", in.msfty, pd},         {"c1", in.c1, pd},
                    {"c2", in.c2, pd},               {"fzm", in.fzm, true},
                    {"fzp", in.fzp, true},           {"rdzw", in.rdzw, true}};
  for (const P& q : ptrs)
    if (q.need && !q.p) bad(std::string(q.n) + " is a null pointer");
  bool any_open = fl.open_xs || fl.open_xe || fl.open_ys || fl.open_ye;
  if (!pd && any_open && !in.field_old) bad("field_old is a null pointer (open boundaries read it)");
  if (!pd && (in.h_tendency || in.z_tendency))
    bad("h_tendency/z_tendency are outputs of advect_scalar_pd only");
  // ---- bounds --------------------------------------------------------------------------
  if (d.kts != d.kds) bad("kts=" + std::to_string(d.kts) + " must equal kds=" + std::to_string(d.kds));
  if (d.kte != d.kde)
    bad("kte=" + std::to_string(d.kte) + " must equal kde=" + std::to_string(d.kde) +
        " (WRF passes the staggered top; the top flux is zero at kde)");
  if (d.kms > d.kts || d.kme < d.kde)
    bad("memory kms..kme=" + std::to_string(d.kms) + ".." + std::to_string(d.kme) +
        " does not hold kts..kde");
  if (d.kde - d.kds < 4) bad("fewer than 4 mass levels (v order 3 needs kts+2 < ktf)");
  // Near a non-periodic, non-symmetric edge WRF degrades the stencil; both edges' degraded
  // stencils must fit. Periodic and symmetric directions read the halo instead (WRF runs
  // e.g. 2-D squall lines with 2 mass points in a periodic y).
  bool x_halo_only = fl.periodic_x || (fl.symmetric_xs && fl.symmetric_xe);
  bool y_halo_only = fl.periodic_y || (fl.symmetric_ys && fl.symmetric_ye);
  if ((!x_halo_only && d.ide - d.ids < 7) || (!y_halo_only && d.jde - d.jds < 7))
    bad("domain smaller than 6 mass points in a direction that is neither periodic nor symmetric "
        "(boundary stencils would overlap)");
  if (d.its < d.ids || d.ite > d.ide || d.jts < d.jds || d.jte > d.jde)
    bad("tile its..ite,jts..jte outside the domain");
  const int itf = std::min(d.ite, d.ide - 1), jtf = std::min(d.jte, d.jde - 1),
            ktf = std::min(d.kte, d.kde - 1);
  if (itf < d.its || jtf < d.jts) {
    // A tile on the staggered end row/column only (OpenMP tiling of a narrow patch): WRF's
    // loops run zero times and write nothing, and so do we.
    Prepared e;
    e.in = &in;
    e.pd = pd;
    e.empty = true;
    return e;
  }
  if (d.ims > d.its || d.ime < itf || d.jms > d.jts || d.jme < jtf)
    bad("memory ims..ime, jms..jme does not hold the tile");
  const std::size_t s3 = d.size3();
  const std::size_t sst = in.spec_stride ? in.spec_stride : s3;
  if (sst < s3) bad("spec_stride=" + std::to_string(sst) + " < one 3-D array (" + std::to_string(s3) + ")");
  if (!(std::isfinite(in.rdx) && in.rdx > 0 && std::isfinite(in.rdy) && in.rdy > 0))
    bad("rdx/rdy must be finite and > 0");
  if (pd && !(std::isfinite(in.dt) && in.dt != 0)) bad("dt must be finite and non-zero");
  // ---- boundary rule -------------------------------------------------------------------
  Prepared p;
  p.in = &in;
  p.pd = pd;
  p.itf = itf; p.jtf = jtf; p.ktf = ktf;
  p.ts = in.time_step >= 0 ? 1.0f : -1.0f;  // Fortran SIGN(1,0) = 1
  p.sst = sst;
  Bc& bc = p.bc;
  bc.dxs = !(fl.periodic_x || fl.symmetric_xs);
  bc.dxe = !(fl.periodic_x || fl.symmetric_xe);
  bc.dys = !(fl.periodic_y || fl.symmetric_ys);
  bc.dye = !(fl.periodic_y || fl.symmetric_ye);
  const bool sn = fl.specified || fl.nested;
  // A degradable side must have a lateral condition; otherwise WRF's limiter reads the
  // uncomputed flux at the domain face (ids, ide, jds, jde).
  if (pd) {
    if (bc.dxs && !(sn || fl.open_xs)) bad("west boundary: not periodic/symmetric/open/specified/nested");
    if (bc.dxe && !(sn || fl.open_xe)) bad("east boundary: not periodic/symmetric/open/specified/nested");
    if (bc.dys && !(sn || fl.open_ys)) bad("south boundary: not periodic/symmetric/open/specified/nested");
    if (bc.dye && !(sn || fl.open_ye)) bad("north boundary: not periodic/symmetric/open/specified/nested");
  }
  bc.lim_i0 = bc.dxs ? d.ids + 1 : INT_MIN / 2;
  bc.lim_i1 = bc.dxe ? d.ide - 2 : INT_MAX / 2;
  bc.lim_j0 = bc.dys ? d.jds + 1 : INT_MIN / 2;
  bc.lim_j1 = bc.dye ? d.jde - 2 : INT_MAX / 2;
  bc.open_xs = fl.open_xs && d.its == d.ids;
  bc.open_xe = fl.open_xe && d.ite == d.ide;
  bc.open_ys = fl.open_ys && d.jts == d.jds;
  bc.open_ye = fl.open_ye && d.jte == d.jde;
  if ((bc.open_xs || bc.open_xe) && itf - d.its < 1) bad("open x boundary needs a tile >= 2 wide");
  if ((bc.open_ys || bc.open_ye) && jtf - d.jts < 1) bad("open y boundary needs a tile >= 2 wide");
  // ---- boxes ---------------------------------------------------------------------------
  p.tile = Box{d.its, itf, d.kts, ktf, d.jts, jtf};
  p.ring = Box{d.its - 1, itf + 1, d.kts, ktf, d.jts - 1, jtf + 1};
  // Clipping of read ranges at degradable boundaries: mass points ids..ide-1, faces ids..ide.
  auto cm_i = [&](int lo, int hi) { return std::make_pair(bc.dxs ? std::max(lo, d.ids) : lo, bc.dxe ? std::min(hi, d.ide - 1) : hi); };
  auto cs_i = [&](int lo, int hi) { return std::make_pair(bc.dxs ? std::max(lo, d.ids) : lo, bc.dxe ? std::min(hi, d.ide) : hi); };
  auto cm_j = [&](int lo, int hi) { return std::make_pair(bc.dys ? std::max(lo, d.jds) : lo, bc.dye ? std::min(hi, d.jde - 1) : hi); };
  auto cs_j = [&](int lo, int hi) { return std::make_pair(bc.dys ? std::max(lo, d.jds) : lo, bc.dye ? std::min(hi, d.jde) : hi); };
  auto box = [&](std::pair<int, int> ii, std::pair<int, int> jj, int k0, int k1) {
    return Box{ii.first, ii.second, k0, k1, jj.first, jj.second};
  };
  const int ts = d.its, js = d.jts, ks = d.kts;
  std::vector<Need> needs;
  needs.reserve(16);
  if (pd) {
    needs.push_back({"field", in.field, 4,
                     {box(cm_i(ts - 4, itf + 4), cm_j(js - 1, jtf + 1), ks, ktf),
                      box(cm_i(ts - 1, itf + 1), cm_j(js - 4, jtf + 4), ks, ktf)}});
    needs.push_back({"field_old", in.field_old, 4,
                     {box(cm_i(ts - 2, itf + 2), cm_j(js - 1, jtf + 1), ks, ktf),
                      box(cm_i(ts - 1, itf + 1), cm_j(js - 2, jtf + 2), ks, ktf)}});
    needs.push_back({"ru", in.ru, 3, {box(cs_i(ts - 1, itf + 2), cm_j(js - 1, jtf + 1), ks, ktf)}});
    needs.push_back({"rv", in.rv, 3, {box(cm_i(ts - 1, itf + 1), cs_j(js - 1, jtf + 2), ks, ktf)}});
    needs.push_back({"rom", in.rom, 3, {box(cm_i(ts - 1, itf + 1), cm_j(js - 1, jtf + 1), ks + 1, ktf)}});
    needs.push_back({"mut", in.mut, 2,
                     {box(cm_i(ts - 2, itf + 2), cm_j(js - 1, jtf + 1), 0, 0),
                      box(cm_i(ts - 1, itf + 1), cm_j(js - 2, jtf + 2), 0, 0)}});
    needs.push_back({"mub", in.mub, 2, {box(cm_i(ts - 1, itf + 1), cm_j(js - 1, jtf + 1), 0, 0)}});
    needs.push_back({"mu_old", in.mu_old, 2, {box(cm_i(ts - 1, itf + 1), cm_j(js - 1, jtf + 1), 0, 0)}});
    needs.push_back({"msftx", in.msftx, 2, {box(cm_i(ts - 1, itf + 1), cm_j(js - 2, jtf + 2), 0, 0)}});
    needs.push_back({"msfty", in.msfty, 2, {box(cm_i(ts - 2, itf + 2), cm_j(js - 1, jtf + 1), 0, 0)}});
    needs.push_back({"c1", in.c1, 1, {Box{0, 0, ks, ktf, 0, 0}}});
    needs.push_back({"c2", in.c2, 1, {Box{0, 0, ks, ktf, 0, 0}}});
  } else {
    needs.push_back({"field", in.field, 4,
                     {box(cm_i(ts - 3, itf + 3), std::make_pair(js, jtf), ks, ktf),
                      box(std::make_pair(ts, itf), cm_j(js - 3, jtf + 3), ks, ktf)}});
    if (any_open && in.field_old != in.field)
      needs.push_back({"field_old", in.field_old, 4, {Box{ts, itf, ks, ktf, js, jtf}}});
    needs.push_back({"ru", in.ru, 3, {Box{ts, itf + 1, ks, ktf, js, jtf}}});
    needs.push_back({"rv", in.rv, 3, {Box{ts, itf, ks, ktf, js, jtf + 1}}});
    needs.push_back({"rom", in.rom, 3, {Box{ts, itf, ks + 1, ktf, js, jtf}}});
    needs.push_back({"msftx", in.msftx, 2, {Box{ts, itf, 0, 0, js, jtf}}});
  }
  needs.push_back({"rdzw", in.rdzw, 1, {Box{0, 0, ks, ktf, 0, 0}}});
  needs.push_back({"fzm", in.fzm, 1, {Box{0, 0, ks + 1, ktf, 0, 0}}});
  needs.push_back({"fzp", in.fzp, 1, {Box{0, 0, ks + 1, ktf, 0, 0}}});

  // Halo check: every box inside memory; region = bounding box of the 2-D/3-D reads.
  Box R{INT_MAX, INT_MIN, d.kts, ktf, INT_MAX, INT_MIN};
  for (const Need& n : needs) {
    for (const Box& b : n.boxes) {
      if (n.kind == 1) continue;
      if (b.i0 < d.ims || b.i1 > d.ime || b.j0 < d.jms || b.j1 > d.jme) {
        std::ostringstream o;
        o << n.name << ": halo too narrow for the " << (pd ? "pd" : "unlimited")
          << " scheme: it reads i=" << b.i0 << ".." << b.i1 << ", j=" << b.j0 << ".." << b.j1
          << " (tile its=" << d.its << " ite=" << d.ite << " jts=" << d.jts << " jte=" << d.jte
          << ") but memory is ims=" << d.ims << " ime=" << d.ime << " jms=" << d.jms
          << " jme=" << d.jme;
        bad(o.str());
      }
      R.i0 = std::min(R.i0, b.i0); R.i1 = std::max(R.i1, b.i1);
      R.j0 = std::min(R.j0, b.j0); R.j1 = std::max(R.j1, b.j1);
    }
  }
  p.region = R;
  p.fo_is_f = (in.field_old == nullptr || in.field_old == in.field);

  // Finite check of everything read: each value once (the rows of the union of an array's
  // boxes, RowCheck), one parallel region per array over all its species and rows. (Box by
  // box and species by species, 324 regions for 81 tracers read most values twice.) With
  // defer_tracers the GPU backend checks the tracers while it packs them (tracer_checks).
  if (in.check_finite) {
    p.tracer_checks.reserve(2);
    p.met_checks.reserve(3);
    for (const Need& n : needs) {
      if (n.kind == 1) {
        for (const Box& b : n.boxes)
          for (int k = b.k0; k <= b.k1; ++k)
            if (!std::isfinite(n.p[k - d.kms])) {
              std::ostringstream o;
              o << n.name << ": non-finite value " << n.p[k - d.kms] << " at k=" << k;
              bad(o.str());
            }
        continue;
      }
      RowCheck rc = row_check(n, in.nspec);
      if (n.kind == 4 && defer_tracers) {
        // field_old that is field: its boxes lie inside field's, which the backend checks
        if (!(std::string(n.name) == "field_old" && p.fo_is_f)) p.tracer_checks.push_back(std::move(rc));
        continue;
      }
      if (n.kind == 3 && defer_tracers) {  // ru, rv, rom: the GPU backend checks them
        p.met_checks.push_back(std::move(rc));
        continue;
      }
      const long first = first_bad(rc, d, sst);
      if (first != LONG_MAX) bad(rc.message(first, d, n.kind == 4 ? sst : 0, in));
      // The column mass and the map factors divide the fluxes: zero or a negative value is
      // not a state WRF can be in, and would give Inf or a sign-flipped flux without a message.
      const std::string nm = n.name;
      // The rows in parallel (at CONUS size the PD scheme's three arrays are about 0.5 M
      // values, 0.3-0.4 ms on one core); the first bad value in (box, j, i) order is named.
      if (n.kind == 2 && (nm == "mut" || nm == "msftx" || nm == "msfty"))
        for (const Box& b : n.boxes) {
          const int ni = b.ni(), nj = b.nj();
          long first = LONG_MAX;
#pragma omp parallel for schedule(static) reduction(min : first) if ((long)ni * nj > 65536)
          for (int jj = 0; jj < nj; ++jj) {
            const float* row = n.p + d.idx2(b.i0, b.j0 + jj);
            for (int ii = 0; ii < ni; ++ii)
              if (!(row[ii] > 0.f)) {
                first = std::min(first, (long)jj * ni + ii);
                break;
              }
          }
          if (first == LONG_MAX) continue;
          const int i = b.i0 + (int)(first % ni), j = b.j0 + (int)(first / ni);
          bad(nm + ": value " + std::to_string(n.p[d.idx2(i, j)]) + " at (i,j)=(" + std::to_string(i) +
              "," + std::to_string(j) + ") is not positive (" +
              (nm == "mut" ? "the column's dry-air mass" : "a map-scale factor") + ")");
        }
    }
    p.tracers_unchecked = defer_tracers;
  }
  return p;
}

void validate(const AdvectInputs& in, bool pd) { (void)prepare(in, pd); }

// ---- dispatch -------------------------------------------------------------------------------
static void run_backend(Backend b, Mode m, const Prepared& p, AdvectTimings* t, const GpuOptions& o) {
  if (b == Backend::Cpu) {
    if (m == Mode::Strict) strict::run_cpu(p, t); else fast::run_cpu(p, t);
    if (t) t->backend = "cpu";
    return;
  }
#if WRFGPU_HAVE_CUDA
  if (m == Mode::Strict) strict::run_gpu(p, t, o); else fast::run_gpu(p, t, o);
  if (t) t->backend = "gpu";
#else
  (void)o;
  throw RuntimeError("advection: GPU backend requested but this build has no CUDA");
#endif
}

static void run(Backend backend, Mode mode, const AdvectInputs& in, bool pd, AdvectTimings* t,
                const GpuOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  // The GPU backend checks the tracers for NaN/Inf as it packs them (one host pass over them
  // instead of two). Bad input is still reported before a missing GPU: the backend is
  // resolved after the checks when it cannot be resolved now.
  Backend b = Backend::Cpu;
  bool resolved = true;
  try {
    b = resolve_backend(backend);
  } catch (const RuntimeError&) {
    resolved = false;
  }
  Prepared p = prepare(in, pd, resolved && b == Backend::Gpu);
  AdvectTimings local;
  if (!t) t = &local;
  *t = AdvectTimings();
  t->check_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (p.empty) {
    t->backend = "none";
    return;
  }
  if (!resolved) b = resolve_backend(backend);
  if (b != Backend::Both) {
    run_backend(b, mode, p, t, o);
    return;
  }
  // Both: the CPU into private copies of the outputs, the GPU into the caller's; compare.
  const WrfDims& d = in.dims;
  const std::size_t n = p.sst * (std::size_t)(in.nspec - 1) + d.size3();
  std::vector<float> ct(in.tendency, in.tendency + n), ch, cz;
  AdvectInputs ci = in;
  ci.tendency = ct.data();
  if (in.h_tendency) { ch.assign(in.h_tendency, in.h_tendency + n); ci.h_tendency = ch.data(); }
  if (in.z_tendency) { cz.assign(in.z_tendency, in.z_tendency + n); ci.z_tendency = cz.data(); }
  Prepared pc = p;
  pc.in = &ci;
  AdvectTimings tc;
  run_backend(Backend::Cpu, mode, pc, &tc, o);
  run_backend(Backend::Gpu, mode, p, t, o);
  t->backend = "both";
  // Every output over the tile, species by species (both.h: strict mode throws on a difference).
  const Box& T = p.tile;
  const std::size_t ni = T.ni(), nk = T.nk(), nj = T.nj();
  std::vector<BothOutput> outs;
  auto add = [&](const char* name, const float* cpu, const float* gpu) {
    BothOutput o;
    o.name = name;
    o.ni = ni; o.nk = nk; o.nj = nj * (std::size_t)in.nspec;
    for (int s = 0; s < in.nspec; ++s)
      for (int j = T.j0; j <= T.j1; ++j)
        for (int k = T.k0; k <= T.k1; ++k)
          for (int i = T.i0; i <= T.i1; ++i) {
            const std::size_t c = (std::size_t)s * p.sst + d.idx3(i, k, j);
            o.cpu.push_back(cpu[c]);
            o.gpu.push_back(gpu[c]);
          }
    o.where = [=](std::size_t x) {
      const std::size_t i = x % ni, k = x / ni % nk, j = x / ni / nk % nj, s = x / ni / nk / nj;
      return "species " + std::to_string(s) + " at (i,k,j)=(" + std::to_string(T.i0 + (int)i) +
             "," + std::to_string(T.k0 + (int)k) + "," + std::to_string(T.j0 + (int)j) + ")";
    };
    o.plmv_limit = gpu_cpu_plmv_limit(mode);
    outs.push_back(std::move(o));
  };
  add("tendency", ct.data(), in.tendency);
  if (in.h_tendency) add("h_tendency", ch.data(), in.h_tendency);
  if (in.z_tendency) add("z_tendency", cz.data(), in.z_tendency);
  const BothSummary sum = compare_both(pd ? "advect_pd" : "advect", mode, outs);
  t->both_max_abs_diff = sum.max_abs;
  t->both_cells_differing = sum.differing;
}

double gpu_cpu_plmv_limit(Mode m) { return m == Mode::Strict ? 0.0 : 1e-5; }

void run_pd(Backend backend, Mode mode, const AdvectInputs& in, AdvectTimings* t,
            const GpuOptions& gpu) {
  run(backend, mode, in, true, t, gpu);
}
void run_unlimited(Backend backend, Mode mode, const AdvectInputs& in, AdvectTimings* t,
                   const GpuOptions& gpu) {
  run(backend, mode, in, false, t, gpu);
}

// ---- benchmark helper ----------------------------------------------------------------------
BenchResult bench_pd(Backend backend, Mode mode, int nx, int ny, int nz, int nspec, int reps,
                     bool run_cpu, const GpuOptions& gpu) {
  SynthSpec sp;
  sp.nx = nx; sp.ny = ny; sp.nz = nz; sp.nspec = nspec; sp.seed = 2024;
  sp.flags.specified = true;  // real-data lateral boundaries: degraded edges, limiter ranges
  sp.courant = 0.5f;
  SynthCase c = make_synth(sp);
  AdvectInputs in = c.inputs();
  in.check_finite = false;  // time the kernel, not the validation scan
  BenchResult r;
  const WrfDims& d = c.d;
  const std::size_t tile = (std::size_t)nx * ny * nz;
  r.cells = tile * nspec;
  // Minimum traffic: field and field_old of the region read once, tendency of the tile written
  // once, met 3-D fields read once (2-D/1-D negligible but counted).
  const std::size_t region = (std::size_t)(nx + 8) * (ny + 8) * nz;
  r.bytes_min = 4 * (2 * region * nspec + tile * nspec + 3 * region + 5 * (std::size_t)(nx + 8) * (ny + 8));
  (void)d;
  r.best.total_ms = 1e300;
  for (int q = 0; q < std::max(1, reps) + 1; ++q) {  // first call warms up (allocations)
    AdvectTimings t;
    run_pd(backend, mode, in, &t, gpu);
    if (q > 0 && t.total_ms < r.best.total_ms) r.best = t;
  }
  if (run_cpu) {
    double best = 1e300;
    for (int q = 0; q < std::max(1, reps); ++q) {
      AdvectTimings t;
      run_pd(Backend::Cpu, mode, in, &t);
      best = std::min(best, t.total_ms);
    }
    r.cpu_ms = best;
  }
  r.note = std::to_string(nspec) + " tracers on " + std::to_string(nx) + "x" + std::to_string(ny) + "x" +
           std::to_string(nz) + ", specified boundaries, Courant 0.5, " + to_string(mode);
  return r;
}

}  // namespace advection
}  // namespace wrfgpu
