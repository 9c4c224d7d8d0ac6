#!/usr/bin/env python3
"""kpp_gen.py - wrfgpu's KPP mechanism generator (Python 3, standard library only).

Reads a WRF-Chem KPP mechanism (<model>.kpp, the <model>.def it names through #MODEL, the
#include'd atoms/.spc/.eqn files, the #INLINE F90_RATES functions and <model>_wrfkpp.equiv)
and writes C++ headers (WRFGPU_HD, templated on the real type) that reproduce what KPP 2.1
(chem/KPP/kpp/kpp-2.1, as WRF-Chem runs it with #WRFCONFORM, #DOUBLE ON,
#JACOBIAN SPARSE_LU_ROW, #INTEGRATOR WRF_conform/rosenbrock) generates in Fortran:

  <model>_parameters.h  sizes, species order (KPP's Markowitz reordering), WRF names,
                        equations, sparsity tables (LU_IROW/LU_ICOL/LU_CROW/LU_DIAG)
  <model>_rates.h       rate laws (WRFUserRateLaws.f90), #INLINE F90_RATES functions and
                        update_rconst (KPP gen.c GenerateUpdateRconstWRF)
  <model>_function.h    fun: aggregate time derivative (KPP gen.c GenerateFun)
  <model>_jacobian.h    jac_sp: sparse Jacobian in LU layout (KPP gen.c GenerateJac)
  <model>_linalg.h      kpp_decomp (WRF util/write_decomp: unrolled KppDecomp) and
                        kpp_solve (KPP gen.c GenerateSolve)
  <model>_mechanism.h   struct Mechanism bundling the above for the Rosenbrock solver
  <model>_split.h       one Ros3 step attempt for 32 cells split over the warps of a block
                        by matrix rows (kpp_split.py; the GPU's split solver)

Numerics follow the generated Fortran operation by operation: KPP keeps stoichiometric
coefficients as C floats and prints them with %g, so the Fortran sees single-precision
literals (e.g. 0.17 -> (double)0.17f); mixed sp/dp literals in rate expressions keep
their Fortran kinds (".20946e0" -> 0.20946e0f, "2.2D-10" -> 2.2e-10); sums are evaluated
left to right in KPP's term order.

Usage:
  kpp_gen.py [--mech-dir DIR] [--model NAME] [--out DIR] [--stats]
Errors name the file, the line and the reason, and exit with status 2.
"""
import argparse
import os
import re
import struct
import sys

import kpp_split

# ----------------------------------------------------------------------------------------
# errors and source positions


class GenError(Exception):
    pass


def err(where, msg):
    """where: (file, line) or None."""
    if where:
        raise GenError("%s:%d: %s" % (where[0], where[1], msg))
    raise GenError(msg)


def f32(x):
    """Round a Python float to IEEE single precision (C's float conversion)."""
    return struct.unpack("f", struct.pack("f", x))[0]


# ----------------------------------------------------------------------------------------
# reading the KPP input (mirrors kpp-2.1 scan.l: #INCLUDE / #MODEL / #INLINE handling)

DIRECTIVES = {
    "INCLUDE", "MODEL", "INTEGRATOR", "LANGUAGE", "DOUBLE", "DRIVER", "JACOBIAN", "HESSIAN",
    "STOICMAT", "WRFCONFORM", "REORDER", "FUNCTION", "ATOMS", "CHECK", "DEFVAR", "DEFFIX",
    "SETVAR", "SETFIX", "EQUATIONS", "INITVALUES", "LOOKAT", "LOOKATALL", "MONITOR",
    "TRANSPORT", "TRANSPORTALL", "INLINE", "ENDINLINE", "DUMMYINDEX", "EQNTAGS", "MEX",
    "USE", "USES", "STOCHASTIC", "INTFILE", "XGRID", "YGRID", "ZGRID", "RUN", "CHECKALL",
}


class Line:
    __slots__ = ("file", "no", "text")

    def __init__(self, file, no, text):
        self.file, self.no, self.text = file, no, text

    @property
    def where(self):
        return (self.file, self.no)


def read_lines(path, mech_dir, depth=0, where=None):
    if depth > 10:
        err(where, "include nested too deep")
    full = path if os.path.isabs(path) else os.path.join(mech_dir, path)
    try:
        with open(full, "r", encoding="latin-1") as fh:
            raw = fh.read().split("\n")
    except OSError as e:
        err(where, "cannot read file %s (%s)" % (full, e.strerror))
    out = []
    shown = os.path.relpath(full, mech_dir) if not os.path.isabs(path) else full
    inline = False
    for i, t in enumerate(raw, 1):
        t = t.rstrip("\r")
        s = t.strip()
        if inline:
            if s.upper().startswith("#ENDINLINE"):
                inline = False
            out.append(Line(shown, i, t))
            continue
        m = re.match(r"#\s*([A-Za-z]+)\s*(.*)$", s)
        if m and m.group(1).upper() in ("INCLUDE", "MODEL"):
            arg = m.group(2).strip()
            if not arg:
                err((shown, i), "#%s without a file name" % m.group(1).upper())
            name = arg + ".def" if m.group(1).upper() == "MODEL" else arg
            if m.group(1).upper() == "MODEL":
                out.append(Line(shown, i, "#MODEL " + arg))
            out.extend(read_lines(name, mech_dir, depth + 1, (shown, i)))
            continue
        if m and m.group(1).upper() == "INLINE":
            inline = True
        out.append(Line(shown, i, t))
    if inline:
        err((shown, len(raw)), "#INLINE without #ENDINLINE")
    return out


def strip_comments(text_lines):
    """Removes {...} comments (KPP comments, may span lines). Returns list of
    (char, where) pairs plus a list of (offset, comment text)."""
    chars, wh, comments = [], [], []
    depth = 0
    cur = []
    start = None
    for ln in text_lines:
        for ch in ln.text + "\n":
            if depth == 0 and ch == "{":
                depth = 1
                cur = []
                start = ln.where
                continue
            if depth > 0:
                if ch == "}":
                    depth = 0
                    comments.append((len(chars), "".join(cur).strip()))
                    chars.append(" ")
                    wh.append(ln.where)
                else:
                    cur.append(ch)
                continue
            chars.append(ch)
            wh.append(ln.where)
    if depth:
        err(start, "unterminated { comment")
    return "".join(chars), wh, comments


# ----------------------------------------------------------------------------------------
# the mechanism model

VAR_SPC, FIX_SPC = 1, 2


class Species:
    def __init__(self, name, typ, decl, where, atoms):
        self.name, self.type, self.decl, self.where, self.atoms = name, typ, decl, where, atoms


class Reaction:
    def __init__(self, lhs, rhs, rate, label, text, where):
        self.lhs, self.rhs, self.rate, self.label, self.text, self.where = lhs, rhs, rate, label, text, where
        self.photo = False
        self.number = None  # float value when KPP would treat the rate as a NUMBER


class Model:
    pass


NUM_RE = r"(?:\d+\.?\d*|\.\d+)(?:[eEdD][+-]?\d+)?"
C_FLOAT_ONLY = re.compile(r"^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$")


def parse(mech_dir, kpp_file):
    lines = read_lines(kpp_file, mech_dir)
    m = Model()
    m.model = None
    m.options = {}
    m.atoms = []
    m.species = []          # declaration order
    m.inline = {}           # type -> list of Line
    m.reactions = []
    sections = []           # (directive, arg, where, body lines)
    i = 0
    cur = None
    while i < len(lines):
        ln = lines[i]
        s = ln.text.strip()
        mm = re.match(r"#\s*([A-Za-z_]+)\s*(.*)$", s)
        if mm and mm.group(1).upper() in DIRECTIVES:
            d = mm.group(1).upper()
            arg = mm.group(2).strip()
            if d == "INLINE":
                body = []
                i += 1
                while not lines[i].text.strip().upper().startswith("#ENDINLINE"):
                    body.append(lines[i])
                    i += 1
                typ = arg.split()[0].upper() if arg else ""
                if not typ:
                    err(ln.where, "#INLINE without a type")
                m.inline.setdefault(typ, []).extend(body)
                i += 1
                cur = None
                continue
            cur = [d, arg, ln.where, []]
            sections.append(cur)
            i += 1
            continue
        if mm and s.startswith("#"):
            err(ln.where, "unknown KPP command #%s" % mm.group(1))
        if cur is None:
            if s and not s.startswith("//"):
                err(ln.where, "text outside any KPP section: %r" % s[:40])
        else:
            cur[3].append(ln)
        i += 1

    for d, arg, where, body in sections:
        if d == "MODEL":
            m.model = arg
        elif d in ("LANGUAGE", "DOUBLE", "INTEGRATOR", "DRIVER", "JACOBIAN", "HESSIAN",
                   "STOICMAT", "REORDER", "FUNCTION"):
            m.options[d] = (arg.split()[0] if arg else "", where)
            if arg.split()[1:]:
                err(where, "unexpected text after #%s %s" % (d, arg.split()[0]))
        elif d == "WRFCONFORM":
            m.options[d] = ("ON", where)
        elif d == "ATOMS":
            parse_atoms(m, body)
        elif d in ("DEFVAR", "DEFFIX"):
            parse_species(m, body, VAR_SPC if d == "DEFVAR" else FIX_SPC)
        elif d == "EQUATIONS":
            parse_equations(m, body, where)
        elif d in ("LOOKAT", "LOOKATALL", "MONITOR", "CHECK", "CHECKALL", "INITVALUES",
                   "TRANSPORT", "TRANSPORTALL", "EQNTAGS", "DUMMYINDEX", "MEX", "USE",
                   "USES", "STOCHASTIC", "INTFILE", "XGRID", "YGRID", "ZGRID", "RUN",
                   "SETVAR", "SETFIX"):
            pass  # no influence on the generated integrator arithmetic
        else:
            err(where, "#%s not supported here" % d)
    if not m.model:
        m.model = os.path.splitext(os.path.basename(kpp_file))[0]
    # options this generator reproduces
    chk = {"JACOBIAN": ("SPARSE_LU_ROW",), "DOUBLE": ("ON",), "LANGUAGE": ("FORTRAN90",),
           "HESSIAN": ("OFF",)}
    for k, allowed in chk.items():
        if k in m.options and m.options[k][0].upper() not in allowed:
            err(m.options[k][1], "#%s %s not supported (only %s)" % (k, m.options[k][0], "/".join(allowed)))
    if "INTEGRATOR" in m.options and m.options["INTEGRATOR"][0].lower() != "wrf_conform/rosenbrock":
        err(m.options["INTEGRATOR"][1], "#INTEGRATOR %s not supported (only WRF_conform/rosenbrock)"
            % m.options["INTEGRATOR"][0])
    m.reorder = True
    if "REORDER" in m.options:
        m.reorder = m.options["REORDER"][0].upper() == "ON"
    for typ in m.inline:
        if typ not in ("F90_RATES", "F90_GLOBAL", "F90_INIT", "F90_UTIL", "F90_DATA"):
            err(m.inline[typ][0].where if m.inline[typ] else None,
                "#INLINE %s not supported (only F90_RATES)" % typ)
        if typ == "F90_RCONST":
            err(None, "#INLINE F90_RCONST not supported")
    return m


def parse_atoms(m, body):
    text, wh, _ = strip_comments(body)
    for k, part in iter_items(text, wh):
        name = part.strip()
        if not re.match(r"^[A-Za-z][A-Za-z0-9_]*$", name):
            err(k, "bad atom name %r" % name)
        m.atoms.append(name)


def iter_items(text, wh):
    """Splits on ';', yielding (where, item) for non-empty items."""
    start = 0
    for idx, ch in enumerate(text):
        if ch == ";":
            item = text[start:idx]
            if item.strip():
                off = start + (len(item) - len(item.lstrip()))
                yield wh[min(off, len(wh) - 1)], item
            start = idx + 1
    rest = text[start:]
    if rest.strip():
        off = start + (len(rest) - len(rest.lstrip()))
        err(wh[min(off, len(wh) - 1)], "missing ';' after %r" % rest.strip()[:40])


def parse_species(m, body, typ):
    text, wh, _ = strip_comments(body)
    atoms_lc = {a.lower(): a for a in m.atoms}
    for where, item in iter_items(text, wh):
        if "=" not in item:
            err(where, "species declaration without '=': %r" % item.strip())
        name, comp = [x.strip() for x in item.split("=", 1)]
        if not re.match(r"^[A-Za-z][A-Za-z0-9_]*$", name):
            err(where, "bad species name %r" % name)
        for s in m.species:
            if s.name.upper() == name.upper():
                err(where, "multiple declaration for species %s (first at %s:%d)" % (name, s.where[0], s.where[1]))
        atoms = {}
        if comp.upper() != "IGNORE":
            for term in comp.split("+"):
                t = term.strip()
                mm = re.match(r"^(\d*)\s*([A-Za-z][A-Za-z0-9_]*)$", t)
                if not mm:
                    err(where, "bad composition term %r for %s" % (t, name))
                a = mm.group(2)
                if a.upper() == "IGNORE":
                    continue
                if a.lower() not in atoms_lc:
                    err(where, "undefined atom %s in %s" % (a, name))
                atoms[atoms_lc[a.lower()]] = atoms.get(atoms_lc[a.lower()], 0) + int(mm.group(1) or 1)
        m.species.append(Species(name, typ, len(m.species) + 1, where, atoms))


def parse_equations(m, body, where0):
    text, wh, comments = strip_comments(body)
    start = 0
    cidx = 0
    for idx, ch in enumerate(text + ";"):
        if ch != ";":
            continue
        item = text[start:idx] if idx < len(text) else text[start:]
        # the label: the first comment inside this item's span (before its first character)
        label = ""
        while cidx < len(comments) and comments[cidx][0] < start:
            cidx += 1
        first = start + (len(item) - len(item.lstrip()))
        if cidx < len(comments) and comments[cidx][0] <= first:
            label = comments[cidx][1]
        if item.strip():
            where = wh[min(first, len(wh) - 1)]
            if idx >= len(text):
                err(where, "missing ';' at the end of equation %r" % item.strip()[:40])
            if ":" not in item:
                err(where, "equation without ':' and rate: %r" % " ".join(item.split())[:60])
            eq, rate = item.split(":", 1)
            if eq.count("=") != 1:
                err(where, "equation needs exactly one '=': %r" % " ".join(eq.split()))
            lhs_s, rhs_s = eq.split("=")
            lhs = parse_side(lhs_s, where, "left")
            rhs = parse_side(rhs_s, where, "right")
            r = Reaction(lhs, rhs, " ".join(rate.split()), label, " ".join(eq.split()), where)
            m.reactions.append(r)
        start = idx + 1


def parse_side(s, where, side):
    terms = []
    toks = re.findall(r"[+-]|[^\s+-]+(?:\s+[^\s+-]+)?", s.strip())
    # tokens: sign, or "coef name" / "name"
    sign = "+"
    expect_term = True
    for t in toks:
        if t in "+-":
            if not expect_term and terms:
                sign = t
                expect_term = True
                continue
            if expect_term and not terms:
                sign = t
                continue
            err(where, "unexpected %r on the %s side" % (t, side))
        parts = t.split()
        mm = re.match(r"^(" + NUM_RE + r")?\s*([A-Za-z][A-Za-z0-9_]*)$", "".join(parts) if len(parts) == 1 else parts[0] + " " + parts[1])
        if len(parts) == 2:
            if not re.match(r"^" + NUM_RE + r"$", parts[0]) or not re.match(r"^[A-Za-z][A-Za-z0-9_]*$", parts[1]):
                err(where, "bad term %r on the %s side" % (t, side))
            coef, name = parts
        else:
            mm = re.match(r"^(" + NUM_RE + r")?([A-Za-z][A-Za-z0-9_]*)$", parts[0])
            if not mm:
                err(where, "bad term %r on the %s side" % (t, side))
            coef, name = mm.group(1) or "1", mm.group(2)
        if re.search(r"[dD]", coef):
            err(where, "coefficient %r: use E exponents" % coef)
        terms.append((sign, coef, name))
        expect_term = False
        sign = "+"
    if expect_term and terms:
        err(where, "dangling sign on the %s side" % side)
    if not terms:
        err(where, "empty %s side" % side)
    return terms


# ----------------------------------------------------------------------------------------
# species codes, stoichiometry (kpp-2.1 scanner.c ProcessTerm / CheckEquation)

def build_stoich(m):
    by_name = {s.name.upper(): s for s in m.species}
    code_of = {}      # species name (upper) -> crtSpec (order of first appearance)
    m.code_list = []  # crtSpec -> Species or "HV"
    left, right, net = [], [], []   # per crtSpec: dict reaction -> float32
    reactive = []
    for k, r in enumerate(m.reactions):
        for side, terms in (("L", r.lhs), ("R", r.rhs)):
            for sign, coef, name in terms:
                u = name.upper()
                if u == "HV":
                    if side == "L":
                        r.photo = True
                    sp = "HV"
                elif u == "PROD":
                    sp = "PROD"
                else:
                    if u not in by_name:
                        err(r.where, "undefined species %s" % name)
                    sp = by_name[u]
                if u not in code_of:
                    code_of[u] = len(m.code_list)
                    m.code_list.append(sp)
                    left.append({}); right.append({}); net.append({})
                    reactive.append(False)
                c = code_of[u]
                val = float((sign if sign == "-" else "") + coef)
                if side == "L":
                    left[c][k] = f32(left[c].get(k, 0.0) + val)
                    net[c][k] = f32(net[c].get(k, 0.0) - val)
                    reactive[c] = True
                else:
                    right[c][k] = f32(right[c].get(k, 0.0) + val)
                    net[c][k] = f32(net[c].get(k, 0.0) + val)
        # rate type (scanner.c StoreEquationRate): a bare C number is a NUMBER
        if not r.photo and C_FLOAT_ONLY.match(r.rate):
            r.number = float(r.rate)
    # atom balance (scanner.c CheckEquation): a warning, as in KPP, for species with a
    # declared composition (IGNORE compositions are not checked)
    m.warnings = []
    for k, r in enumerate(m.reactions):
        cnt = {}
        for c, sp in enumerate(m.code_list):
            if sp in ("HV", "PROD"):
                continue
            d = left[c].get(k, 0.0) - right[c].get(k, 0.0)
            for a, n in sp.atoms.items():
                cnt[a] = cnt.get(a, 0.0) + d * n
        bad = sorted(a for a, v in cnt.items() if abs(v) > 1e-5)
        if bad:
            m.warnings.append("%s:%d: warning: (eqn %d) atom balance mismatch for: %s"
                              % (r.where[0], r.where[1], k + 1, " ".join(bad)))
    # duplicate equations (scanner.c CheckEquation)
    seen = {}
    for k, r in enumerate(m.reactions):
        key = tuple(sorted((c, left[c].get(k, 0.0), right[c].get(k, 0.0)) for c in range(len(m.code_list))
                           if left[c].get(k, 0.0) or right[c].get(k, 0.0)))
        if key in seen:
            err(r.where, "duplicate equation (same as equation %d)" % (seen[key] + 1))
        seen[key] = k
    # ReorderSpecies(UNSORT): variables sorted by (reactive first, declaration order);
    # fixed species by declaration order; dummies (hv) dropped
    var = [c for c, s in enumerate(m.code_list) if s not in ("HV", "PROD") and s.type == VAR_SPC]
    fix = [c for c, s in enumerate(m.code_list) if s not in ("HV", "PROD") and s.type == FIX_SPC]
    var.sort(key=lambda c: (0 if reactive[c] else 1, m.code_list[c].decl))
    fix.sort(key=lambda c: m.code_list[c].decl)
    m._left, m._right, m._net, m._reactive = left, right, net, reactive
    m._var0, m._fix = var, fix
    unused = [s.name for s in m.species if s.name.upper() not in code_of]
    m.unused_species = unused


def structure(m, order):
    """structJ over the variable order (kpp.c UpdateStructJ)."""
    n = len(order)
    nr = len(m.reactions)
    left, net = m._left, m._net
    J = [[1 if i == j else 0 for j in range(n)] for i in range(n)]
    for i in range(n):
        ni = net[order[i]]
        for j in range(n):
            lj = left[order[j]]
            for k in ni:
                if ni[k] != 0.0 and lj.get(k, 0.0) != 0.0:
                    J[i][j] = 1
                    break
    return J


def lu_structure(J):
    """kpp.c ComputeLUStructJ: symbolic fill-in without pivoting."""
    n = len(J)
    L = [row[:] for row in J]
    for j in range(n - 1):
        for i in range(j + 1, n):
            if L[i][j]:
                for k in range(j, n):
                    if L[j][k]:
                        L[i][k] = 1
    return L


def best_sparsity(J0, order):
    """kpp.c BestSparsity: greedy Markowitz-type ordering (criterion (cnz-1)*(lnz-1) over the
    active submatrix, first minimum wins, rows/columns swapped, symbolic elimination)."""
    n = len(order)
    L = [row[:] for row in J0]
    best = list(order)
    for s in range(n - 1):
        bestv, best_i = None, 0
        for i in range(s, n):
            cnz = sum(1 for j in range(s, n) if L[i][j])
            lnz = sum(1 for j in range(s, n) if L[j][i])
            crt = (cnz - 1) * (lnz - 1)
            if bestv is None or crt < bestv:
                bestv, best_i = crt, i
        L[s], L[best_i] = L[best_i], L[s]
        for row in L:
            row[s], row[best_i] = row[best_i], row[s]
        best[s], best[best_i] = best[best_i], best[s]
        for i in range(s + 1, n):
            if L[i][s]:
                for k in range(s, n):
                    L[i][k] += L[s][k]
    return best


def analyse(m):
    build_stoich(m)
    order = list(m._var0)
    if m.reorder:
        order = best_sparsity(structure(m, order), order)
    m.var = order
    m.nvar = len(order)
    m.nfix = len(m._fix)
    m.spc = order + m._fix           # kpp index -> code
    m.nspec = len(m.spc)
    m.nreact = len(m.reactions)
    m.nvaract = sum(1 for c in order if m._reactive[c])
    J = structure(m, order)
    L = lu_structure(J)
    m.J, m.L = J, L
    n = m.nvar
    m.nonzero = sum(J[i][j] for i in range(n) for j in range(n))
    # kpp gen.c NonZero(LU,...): row-compressed LU pattern (0-based here)
    irow, icol, crow, diag = [], [], [], []
    for i in range(n):
        crow.append(len(irow))
        for j in range(n):
            if i == j or L[i][j]:
                irow.append(i); icol.append(j)
            if i == j:
                diag.append(len(irow) - 1)
    crow.append(len(irow)); diag.append(len(irow))
    m.lu_irow, m.lu_icol, m.lu_crow, m.lu_diag = irow, icol, crow, diag
    m.lu_nonzero = len(irow)
    m.pos = {(irow[k], icol[k]): k for k in range(len(irow))}
    # per kpp-index stoichiometry
    m.sleft = [m._left[c] for c in m.spc]
    m.snet = [m._net[c] for c in m.spc]
    m.names = [m.code_list[c].name for c in m.spc]


# ----------------------------------------------------------------------------------------
# WRF names (wkc compare_kpp_to_species.c: lower case, <model>_wrfkpp.equiv, and
# CO2/M/H2O/N2/O2 never mapped)

def wrf_names(m, mech_dir):
    equiv = {}
    path = os.path.join(mech_dir, m.model + "_wrfkpp.equiv")
    if os.path.exists(path):
        with open(path, encoding="latin-1") as fh:
            for no, t in enumerate(fh, 1):
                t = t.split("!")[0].strip()
                if not t:
                    continue
                p = t.split()
                if len(p) != 2:
                    err((os.path.basename(path), no), "expected 'WRFNAME KPPNAME', got %r" % t)
                equiv[p[1].upper()] = (p[0], (os.path.basename(path), no))
    out = []
    known = {s.name.upper() for s in m.species}
    for k, (w, where) in equiv.items():
        if k not in known:   # wkc matches names ignoring case
            err(where, "KPP species %s in the equivalence file is not declared" % k)
    for nm in m.names:
        if nm.upper() in ("CO2", "M", "H2O", "N2", "O2"):
            out.append(None)
        else:
            out.append(equiv.get(nm.upper(), (nm, None))[0].lower())
    return out


# ----------------------------------------------------------------------------------------
# Fortran expression translation (rate expressions and #INLINE F90_RATES functions)

INTRINSICS = {"exp": ("exp", "expf"), "log": ("log", "logf"), "log10": ("log10", "log10f"),
              "sqrt": ("sqrt", "sqrtf"), "abs": ("fabs", "fabsf"), "sin": ("sin", "sinf"),
              "cos": ("cos", "cosf")}
RATE_LAWS = {  # WRFUserRateLaws.f90: name -> number of arguments (all REAL(dp))
    "arr": 4, "arr2": 3, "ep2": 8, "ep3": 6, "fall": 9, "f2": 10, "troe": 6, "troee": 8,
    "thermal_t2": 3}


class Tok:
    def __init__(self, kind, text):
        self.kind, self.text = kind, text


def lex_fortran(s, where):
    toks = []
    i = 0
    num = re.compile(r"(?:\d+\.\d*|\.\d+|\d+)(?:[eEdD][+-]?\d+)?(?:_[A-Za-z0-9]+)?")
    while i < len(s):
        c = s[i]
        if c.isspace():
            i += 1
            continue
        if c == "!":
            break
        mm = num.match(s, i)
        if mm and (c.isdigit() or (c == "." and i + 1 < len(s) and s[i + 1].isdigit())):
            toks.append(Tok("num", mm.group(0)))
            i = mm.end()
            continue
        if c.isalpha():
            mm = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(s, i)
            toks.append(Tok("id", mm.group(0)))
            i = mm.end()
            continue
        if s.startswith("**", i):
            toks.append(Tok("op", "**"))
            i += 2
            continue
        if c in "+-*/(),=":
            toks.append(Tok("op", c))
            i += 1
            continue
        err(where, "cannot read %r in expression %r" % (c, s))
    return toks


class Expr:
    """A translated expression: C++ text and Fortran kind ('i', 's', 'd')."""

    def __init__(self, code, kind):
        self.code, self.kind = code, kind


def num_literal(t, where):
    mm = re.match(r"^((?:\d+\.\d*|\.\d+|\d+))(?:([eEdD])([+-]?\d+))?(?:_([A-Za-z0-9]+))?$", t)
    if not mm:
        err(where, "bad number %r" % t)
    mant, ech, exp, kind = mm.groups()
    is_int = "." not in mant and ech is None
    if kind:
        if kind.lower() in ("dp", "8"):
            k = "d"
        elif kind.lower() in ("sp", "4"):
            k = "s"
        else:
            err(where, "unknown kind suffix _%s" % kind)
        if is_int:
            k = "i"
    elif ech and ech in "dD":
        k = "d"
    elif is_int:
        k = "i"
    else:
        k = "s"
    if mant.startswith("."):
        mant = "0" + mant
    if mant.endswith("."):
        mant = mant + "0"
    text = mant + ("e" + exp if exp is not None else "")
    if k == "i":
        return Expr(mant, "i")
    if k == "s":
        if "." not in text and "e" not in text:
            text += ".0"
        return Expr(text + "f", "s")
    if "." not in text and "e" not in text:
        text += ".0"
    return Expr(text, "d")


class Translator:
    """Fortran expression -> C++ (double arithmetic where the Fortran has dp, float where sp)."""

    def __init__(self, where, scope, funcs, photo, extra, allow_extra):
        self.where, self.scope, self.funcs = where, scope, funcs
        self.photo, self.extra, self.allow_extra = photo, extra, allow_extra

    def run(self, s):
        self.toks = lex_fortran(s, self.where)
        self.i = 0
        if not self.toks:
            err(self.where, "empty expression")
        e = self.expr()
        if self.i != len(self.toks):
            err(self.where, "unexpected %r in expression %r" % (self.toks[self.i].text, s))
        return e

    def peek(self, text=None):
        if self.i < len(self.toks):
            t = self.toks[self.i]
            if text is None or t.text == text:
                return t
        return None

    def take(self, text):
        t = self.peek(text)
        if not t:
            got = self.toks[self.i].text if self.i < len(self.toks) else "end of expression"
            err(self.where, "expected %r, found %r" % (text, got))
        self.i += 1
        return t

    @staticmethod
    def kind2(a, b):
        order = {"i": 0, "s": 1, "d": 2}
        return a if order[a] >= order[b] else b

    def expr(self):
        neg = False
        if self.peek("-") or self.peek("+"):
            neg = self.toks[self.i].text == "-"
            self.i += 1
        e = self.term()
        if neg:
            e = Expr("(-%s)" % e.code, e.kind)
        while self.peek("+") or self.peek("-"):
            op = self.toks[self.i].text
            self.i += 1
            r = self.term()
            e = Expr("(%s %s %s)" % (e.code, op, r.code), self.kind2(e.kind, r.kind))
        return e

    def term(self):
        e = self.factor()
        while self.peek("*") or self.peek("/"):
            op = self.toks[self.i].text
            self.i += 1
            r = self.factor()
            e = Expr("(%s %s %s)" % (e.code, op, r.code), self.kind2(e.kind, r.kind))
        return e

    def factor(self):
        b = self.primary()
        if self.peek("**"):
            self.i += 1
            if self.peek("-") or self.peek("+"):  # gfortran extension x**-y
                neg = self.toks[self.i].text == "-"
                self.i += 1
                x = self.factor()
                if neg:
                    x = Expr("(-%s)" % x.code, x.kind)
            else:
                x = self.factor()
            if x.kind == "i":
                return Expr("kpp_powi(%s, %s)" % (b.code, x.code), b.kind)
            k = self.kind2(b.kind, x.kind)
            if k == "s":
                return Expr("powf(%s, %s)" % (b.code, x.code), "s")
            return Expr("pow((double)%s, (double)%s)" % (b.code, x.code), "d")
        return b

    def args(self):
        self.take("(")
        out = []
        if self.peek(")"):
            self.i += 1
            return out
        while True:
            out.append(self.expr())
            if self.peek(","):
                self.i += 1
                continue
            self.take(")")
            return out

    def primary(self):
        t = self.peek()
        if t is None:
            err(self.where, "expression ends too early")
        if t.text == "(":
            self.i += 1
            e = self.expr()
            self.take(")")
            return Expr("(%s)" % e.code, e.kind)
        if t.kind == "num":
            self.i += 1
            return num_literal(t.text, self.where)
        if t.kind != "id":
            err(self.where, "unexpected %r" % t.text)
        self.i += 1
        name = t.text
        low = name.lower()
        if self.peek("("):
            if low == "j":
                self.take("(")
                a = self.peek()
                if not a or a.kind != "id" or not a.text.lower().startswith("pj_"):
                    err(self.where, "j(...) needs a Pj_<name> photolysis index")
                self.i += 1
                self.take(")")
                pj = a.text[3:].lower()
                if pj not in self.photo:
                    self.photo.append(pj)
                return Expr("j[Pj_%s]" % pj, "d")
            args = self.args()
            if low in INTRINSICS:
                if len(args) != 1:
                    err(self.where, "%s takes one argument" % name)
                a = args[0]
                if a.kind == "s":
                    return Expr("%s(%s)" % (INTRINSICS[low][1], a.code), "s")
                return Expr("%s((double)%s)" % (INTRINSICS[low][0], a.code), "d")
            if low in ("max", "min"):
                if len(args) < 2:
                    err(self.where, "%s needs two arguments" % name)
                k = args[0].kind
                for a in args[1:]:
                    k = self.kind2(k, a.kind)
                ty = {"i": "int", "s": "float", "d": "double"}[k]
                code = "(%s)%s" % (ty, args[0].code)
                for a in args[1:]:
                    code = "kpp_%s<%s>(%s, (%s)%s)" % (low, ty, code, ty, a.code)
                return Expr(code, k)
            if low in ("dble", "real", "float"):
                if low == "real" and len(args) == 2:
                    return Expr("((double)%s)" % args[0].code, "d")
                if len(args) != 1:
                    err(self.where, "%s takes one argument" % name)
                if low == "dble":
                    return Expr("((double)%s)" % args[0].code, "d")
                return Expr("((float)%s)" % args[0].code, "s")
            if low in RATE_LAWS or low in self.funcs:
                nargs = RATE_LAWS.get(low) if low in RATE_LAWS else len(self.funcs[low])
                if len(args) != nargs:
                    err(self.where, "%s takes %d arguments, %d given" % (name, nargs, len(args)))
                code = "kpp_%s(%s)" % (low, ", ".join("(double)%s" % a.code for a in args))
                return Expr(code, "d")
            err(self.where, "unknown function %s" % name)
        if low in self.scope:
            return Expr(self.scope[low][0], self.scope[low][1])
        if not self.allow_extra:
            err(self.where, "undefined variable %s" % name)
        if low not in self.extra:
            self.extra.append(low)
        return Expr("extra[ex_%s]" % low, "d")


def parse_inline_functions(lines):
    """#INLINE F90_RATES: straight-line REAL(dp) functions (declarations and assignments)."""
    funcs = {}   # name -> (args, body[(where, lhs, rhs)], locals{name: kind}, where)
    order = []
    # join continuation lines
    stmts = []
    buf, w = "", None
    for ln in lines:
        t = ln.text.split("!")[0].rstrip()
        if not t.strip():
            continue
        if w is None:
            w = ln.where
        if t.endswith("&"):
            buf += t[:-1] + " "
            continue
        buf += t.lstrip("& ") if buf else t
        stmts.append((w, buf.strip()))
        buf, w = "", None
    cur = None
    for where, s in stmts:
        u = s.upper()
        mm = re.match(r"^(REAL\s*(\(\s*(KIND\s*=\s*)?DP\s*\))?\s+)?FUNCTION\s+([A-Za-z_]\w*)\s*\((.*)\)$", s, re.I)
        if mm:
            if cur:
                err(where, "FUNCTION inside FUNCTION %s" % cur[0])
            if not mm.group(2):
                err(where, "only REAL(KIND=dp) functions are supported")
            cur = [mm.group(4).lower(), [a.strip().lower() for a in mm.group(5).split(",") if a.strip()], [], {}, where]
            continue
        if re.match(r"^END\s*FUNCTION", u):
            if not cur:
                err(where, "END FUNCTION without FUNCTION")
            funcs[cur[0]] = cur[1:]
            order.append(cur[0])
            cur = None
            continue
        if cur is None:
            err(where, "only FUNCTIONs are supported in #INLINE F90_RATES, found %r" % s[:40])
        if re.match(r"^(INTRINSIC|IMPLICIT)\b", u):
            continue
        md = re.match(r"^(REAL\s*(\(\s*(KIND\s*=\s*)?(DP|8)\s*\))?|DOUBLE\s+PRECISION|INTEGER)\s*(,[^:]*)?(::)?\s*(.*)$", s, re.I)
        if md and (md.group(6) or not re.match(r"^\s*=", md.group(7))):
            base = md.group(1).upper()
            kind = "i" if base.startswith("INTEGER") else ("d" if ("DP" in base or "8" in base or "DOUBLE" in base) else "s")
            for nm in md.group(7).split(","):
                nm = nm.strip().lower()
                if not re.match(r"^[a-z_]\w*$", nm):
                    err(where, "arrays and initialisers are not supported in declarations: %r" % s)
                cur[3][nm] = kind
            continue
        ma = re.match(r"^([A-Za-z_]\w*)\s*=\s*(.+)$", s)
        if ma:
            cur[2].append((where, ma.group(1).lower(), ma.group(2)))
            continue
        err(where, "statement not supported in #INLINE function %s: %r" % (cur[0], s[:50]))
    if cur:
        err(cur[4], "FUNCTION %s without END FUNCTION" % cur[0])
    return funcs, order


# ----------------------------------------------------------------------------------------
# code generation helpers

def coef_text(v):
    """A KPP stoichiometric coefficient as the Fortran sees it: C float printed with %g and
    read back as a default REAL literal. Returns the float32 value."""
    s = "%g" % abs(v)
    return f32(float(s))


def flit(v):
    """C++ float literal that reads back exactly to float32 value v."""
    for p in range(6, 12):
        s = "%.*g" % (p, v)
        if f32(float(s)) == v:
            break
    if "e" not in s and "." not in s:
        s += ".0"
    return s + "f"


def cxx_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def wrap_list(items, per=10, indent="    "):
    lines = []
    for i in range(0, len(items), per):
        lines.append(indent + ", ".join(items[i:i + per]) + ",")
    return "\n".join(lines)


HEADER = """// GENERATED by tools/kpp_gen/kpp_gen.py from the KPP mechanism '{model}'
// ({files}). Do not edit: regenerate with `make mech` (or tools/kpp_gen/kpp_gen.py).
// Mirrors the Fortran that KPP 2.1 (WRF-Chem chem/KPP/kpp/kpp-2.1, #WRFCONFORM) generates.
"""


class Gen:
    def __init__(self, m, mech_dir, sources):
        self.m = m
        self.mech_dir = mech_dir
        self.ns = "kpp_" + re.sub(r"\W", "_", m.model.lower())
        self.head = HEADER.format(model=m.model, files=", ".join(sources))

    # -- rates ------------------------------------------------------------------------
    def rates(self):
        m = self.m
        funcs, order = parse_inline_functions(m.inline.get("F90_RATES", []))
        self.photo, self.extra = [], []
        fdefs = []
        for name in order:
            args, body, locs, where = funcs[name]
            scope = {}
            for a in args:
                scope[a] = (a, locs.get(a, "d"))
                if locs.get(a, "d") != "d":
                    err(where, "argument %s of %s must be REAL(KIND=dp)" % (a, name))
            decl = []
            for v, k in locs.items():
                if v not in args:
                    scope[v] = (v, k)
                    decl.append("  %s %s = 0;" % ({"i": "int", "s": "float", "d": "double"}[k], v))
            scope[name] = (name + "_", "d")
            lines = ["// #INLINE F90_RATES function %s (%s:%d), translated" % (name.upper(), where[0], where[1]),
                     "WRFGPU_HD double kpp_%s(%s) {" % (name, ", ".join("double " + a for a in args)),
                     "  double %s_ = 0;" % name] + decl
            for w, lhs, rhs in body:
                if lhs not in scope:
                    err(w, "assignment to undeclared variable %s" % lhs)
                e = Translator(w, scope, {k: funcs[k][0] for k in order if k != name}, [], [], False).run(rhs)
                ty = {"i": "int", "s": "float", "d": "double"}[scope[lhs][1]]
                lines.append("  %s = (%s)%s;" % (scope[lhs][0], ty, e.code))
            lines.append("  return %s_;" % name)
            lines.append("}")
            fdefs.append("\n".join(lines))
        self.funcs = {k: funcs[k][0] for k in order}
        scope = {"temp": ("TEMP", "d"), "c_m": ("C_M", "d"), "c_h2o": ("C_H2O", "d")}
        body = []
        for k, r in enumerate(m.reactions):
            if r.number is not None:
                code = "(double)" + flit(f32(r.number))
                body.append("  rconst[%d * s] = T(%s);  // %s" % (k, code, r.rate))
                continue
            e = Translator(r.where, scope, self.funcs, self.photo, self.extra, True).run(r.rate)
            body.append("  rconst[%d * s] = T((double)%s);" % (k, e.code))
            body.append("  // R%d %s : %s" % (k + 1, r.text, r.rate))
        # swap comment before statement for readability
        for i in range(0, len(body) - 1):
            pass
        out = [self.head, "#pragma once", "#include <cmath>", "#include <cstddef>",
               '#include "wrfgpu_hd.h"', '#include "%s_parameters.h"' % m.model.lower(), "",
               "namespace wrfgpu {", "namespace %s {" % self.ns, PHYS_OPEN, "", RATE_LAW_CODE, ""]
        out += fdefs
        out += ["",
                "// update_rconst: RCONST(1:NREACT) as KPP's %s_Update_RCONST (GenerateUpdateRconstWRF)." % m.model,
                "// j: photolysis rates (s-1) indexed by Pj_*; extra: mechanism-specific inputs (ex_*);",
                "// C_M, C_H2O: FIX(indf_M), FIX(indf_H2O) (molec cm-3); TEMP (K). Computed in double,",
                "// stored as T with stride s (s = 1: one cell contiguous; s = ncell: cell index innermost).",
                "template <class T>",
                "WRFGPU_KPP_BIG void update_rconst(const double* j, const double* extra, double C_M, double C_H2O,",
                "                             double TEMP, T* rconst, std::ptrdiff_t s) {",
                "  (void)j; (void)extra; (void)C_M; (void)C_H2O; (void)TEMP;"]
        # reorder: comment first
        i = 0
        while i < len(body):
            if i + 1 < len(body) and body[i + 1].startswith("  // R"):
                out.append(body[i + 1])
                out.append(body[i])
                i += 2
            else:
                out.append(body[i])
                i += 1
        out += ["}", "", PHYS_CLOSE, "}  // namespace %s" % self.ns, "}  // namespace wrfgpu", ""]
        return "\n".join(out)

    # -- parameters -------------------------------------------------------------------
    def parameters(self, wrf):
        m = self.m
        o = [self.head, "#pragma once", "#include <cstddef>", '#include "wrfgpu_hd.h"', "",
             "// The generated code (rate laws, update_rconst, fun, jac_sp, kpp_decomp, kpp_solve,",
             "// Mechanism) lives in the mode's inline namespace WRFGPU_PHYS_NS (phys_strict, phys_fast;",
             "// wrfgpu_hd.h): the strict and the fast builds keep their own copies, never merged by the",
             "// linker. The sizes and tables (this file, the team tables) are data, shared by both.",
             "// WRFGPU_KPP_BIG marks the big functions (templates): not inlined into GPU kernels (each",
             "// gets its own register allocation).",
             "#ifndef WRFGPU_KPP_BIG",
             "#if defined(__CUDACC__)",
             "#define WRFGPU_KPP_BIG __host__ __device__ __noinline__",
             "#else",
             "#define WRFGPU_KPP_BIG inline",
             "#endif",
             "#endif",
             "// WRFGPU_KPP_FENCE: a compiler barrier (no instruction) between the steps of the generated",
             "// straight-line code on the GPU. Without it the compiler hoists the loads of later steps",
             "// into the current one (a register held for each), and a lane-per-cell kernel at 255",
             "// registers spills: kpp_decomp alone made 10 KB of spill loads per call in double",
             "// (docs/radm2sorg.md, \"Spill-free generated code\"). The CPU build needs none.",
             "#ifndef WRFGPU_KPP_FENCE",
             "#if defined(__CUDA_ARCH__)",
             "#define WRFGPU_KPP_FENCE() asm volatile(\"\" ::: \"memory\")",
             "#else",
             "#define WRFGPU_KPP_FENCE() ((void)0)",
             "#endif",
             "#endif", "",
             "namespace wrfgpu {", "namespace %s {" % self.ns, ""]
        o.append("// Sizes (KPP %s_Parameters). Indices below are 0-based (KPP's minus one)." % m.model)
        o.append("constexpr int NSPEC = %d;       // chemical species" % m.nspec)
        o.append("constexpr int NVAR = %d;        // variable species" % m.nvar)
        o.append("constexpr int NVARACT = %d;     // active (reactant) variable species" % m.nvaract)
        o.append("constexpr int NFIX = %d;        // fixed species" % m.nfix)
        o.append("constexpr int NREACT = %d;     // reactions" % m.nreact)
        o.append("constexpr int NONZERO = %d;    // nonzero Jacobian entries" % m.nonzero)
        o.append("constexpr int LU_NONZERO = %d; // nonzero entries of the LU factors (with fill-in)" % m.lu_nonzero)
        o.append("constexpr int NJV = %d;         // photolysis rates used (Pj_*)" % len(self.photo))
        o.append("constexpr int NEXTRA = %d;      // extra rate inputs (ex_*)" % len(self.extra))
        o.append("constexpr const char* kModel = %s;" % cxx_str(m.model))
        o.append("")
        o.append("// Species order after KPP's reordering (REORDER %s): variables, then fixed." % ("ON" if m.reorder else "OFF"))
        o.append("enum Species : int {")
        for k, nm in enumerate(m.names):
            o.append("  ind_%s = %d," % (nm, k))
        o.append("};")
        for k, c in enumerate(m._fix):
            o.append("constexpr int indf_%s = %d;  // index into FIX" % (m.code_list[c].name, k))
        o.append("")
        o.append("enum Photolysis : int {")
        for k, p in enumerate(self.photo):
            o.append("  Pj_%s = %d," % (p, k))
        o.append("};")
        o.append("enum ExtraInput : int {")
        for k, p in enumerate(self.extra):
            o.append("  ex_%s = %d," % (p, k))
        o.append("  ex_count_ = %d" % len(self.extra))
        o.append("};")
        o.append("")
        o.append("inline constexpr const char* kSpeciesNames[NSPEC] = {")
        o.append(wrap_list([cxx_str(n) for n in m.names]))
        o.append("};")
        o.append("// WRF name of each species (wkc: lower case, _wrfkpp.equiv); nullptr: never mapped.")
        o.append("inline constexpr const char* kWrfNames[NSPEC] = {")
        o.append(wrap_list([cxx_str(n) if n else "nullptr" for n in wrf]))
        o.append("};")
        o.append("// WRF photolysis arrays are ph_<name> (min-1); Pj_<name> here.")
        o.append("inline constexpr const char* kPhotolysisNames[NJV > 0 ? NJV : 1] = {")
        o.append(wrap_list([cxx_str(p) for p in self.photo] or ['""']))
        o.append("};")
        o.append("inline constexpr const char* kExtraNames[NEXTRA > 0 ? NEXTRA : 1] = {")
        o.append(wrap_list([cxx_str(p) for p in self.extra] or ['""']))
        o.append("};")
        o.append("inline constexpr const char* kEquations[NREACT] = {")
        for r in m.reactions:
            o.append("    %s," % cxx_str(r.text))
        o.append("};")
        o.append("// The comment that opens each equation in the .eqn file ({...} label).")
        o.append("inline constexpr const char* kLabels[NREACT] = {")
        for r in m.reactions:
            o.append("    %s," % cxx_str(r.label))
        o.append("};")
        o.append("")
        o.append("// Row-compressed LU sparsity (KPP %s_JacobianSP LU_IROW/LU_ICOL/LU_CROW/LU_DIAG, 0-based)." % m.model)
        o.append("inline constexpr int LU_IROW[LU_NONZERO] = {\n%s\n};" % wrap_list([str(x) for x in m.lu_irow], 20))
        o.append("inline constexpr int LU_ICOL[LU_NONZERO] = {\n%s\n};" % wrap_list([str(x) for x in m.lu_icol], 20))
        o.append("inline constexpr int LU_CROW[NVAR + 1] = {\n%s\n};" % wrap_list([str(x) for x in m.lu_crow], 20))
        o.append("inline constexpr int LU_DIAG[NVAR + 1] = {\n%s\n};" % wrap_list([str(x) for x in m.lu_diag], 20))
        o.append("// Jacobian entries that are structurally nonzero (1) vs fill-in (0), in LU order.")
        o.append("inline constexpr unsigned char JAC_STRUCT[LU_NONZERO] = {\n%s\n};" %
                 wrap_list([str(m.J[m.lu_irow[k]][m.lu_icol[k]]) for k in range(m.lu_nonzero)], 30))
        # stoichiometry (net, as the Fortran sees the coefficients), column-compressed by reaction
        ents = []
        for k in range(m.nreact):
            for i in range(m.nspec):
                v = m.snet[i].get(k, 0.0)
                if v != 0.0:
                    ents.append((k, i, v))
        o.append("// Net stoichiometry (species gains positive), for conservation checks.")
        o.append("constexpr int NSTOICH = %d;" % len(ents))
        o.append("struct StoichEntry { int reaction, species; double coef; };")
        o.append("inline constexpr StoichEntry kStoich[NSTOICH] = {")
        for k, i, v in ents:
            o.append("    {%d, %d, %s}," % (k, i, repr(v)))
        o.append("};")
        o.append("")
        o.append("}  // namespace %s" % self.ns)
        o.append("}  // namespace wrfgpu")
        o.append("")
        return "\n".join(o)

    # -- fun ----------------------------------------------------------------------------
    def rate_factor(self, k):
        r = self.m.reactions[k]
        if r.number is not None:
            return "T(%s)" % flit(f32(r.number))
        return "rct[%d * s]" % k

    def reactant_product(self, k, skip=None):
        """Factors V(l)^StoichLeft (and F) for reaction k, leaving out one V(skip)."""
        m = self.m
        fac = []
        for l in range(m.nspec):
            n = int(m.sleft[l].get(k, 0.0)) - (1 if l == skip else 0)
            for _ in range(max(n, 0)):
                fac.append("v[%d * s]" % l if l < m.nvar else "f[%d * s]" % (l - m.nvar))
        return fac

    def term(self, coef, operand, first):
        """KPP Add(sum, Mul(Const(coef), x)) rendered; coef float32."""
        c = coef_text(coef)
        neg = coef < 0
        body = operand if c == 1.0 else "T(%s) * %s" % (flit(c), operand)
        if first:
            return ("-" if neg else "") + body
        return (" - " if neg else " + ") + body

    def fun(self):
        m = self.m
        o = [self.head, "#pragma once", "#include <cstddef>", '#include "wrfgpu_hd.h"',
             '#include "%s_parameters.h"' % m.model.lower(), "", "namespace wrfgpu {", "namespace %s {" % self.ns,
             PHYS_OPEN, "",
             "// fun: time derivative of the variable species, aggregate form",
             "// (KPP gen.c GenerateFun -> %s_Fun: A(j) = RCT(j)*V..*F..; Vdot(i) = sum over j of" % m.model,
             "// Stoich(i,j)*A(j) in j order, one statement per species as KPP writes it).",
             "// v: VAR, f: FIX, rct: RCONST, vdot: out; every array has stride s.",
             "template <class T>",
             "WRFGPU_KPP_BIG void fun(const T* v, const T* f, const T* rct, T* vdot, std::ptrdiff_t s) {",
             "  (void)f;"]
        # Each A(k) computed just before the first species that needs it, and a fence after each
        # species: the compiler keeps live only the A(k) still to be used (WRFGPU_KPP_FENCE).
        for kind, i, e in self.fun_statements():
            if kind == "a":
                o.append("  const T a%d = %s;" % (i, e))
            else:
                o.append("  vdot[%d * s] = %s;  // %s" % (i, e, m.names[i]))
                o.append("  WRFGPU_KPP_FENCE();")
        o += ["}", "", PHYS_CLOSE, "}  // namespace %s" % self.ns, "}  // namespace wrfgpu", ""]
        return "\n".join(o)

    def fun_statements(self):
        """fun's statements in order: ("a", k, A(k)) just before the first species that needs
        it, ("vdot", i, Vdot(i)) as the sum over reactions in k order."""
        m = self.m
        out, done = [], set()
        for i in range(m.nvar):
            terms = []
            for k in range(m.nreact):
                c = m.snet[i].get(k, 0.0)
                if c != 0.0:
                    if k not in done:
                        done.add(k)
                        out.append(("a", k, " * ".join([self.rate_factor(k)] + self.reactant_product(k))))
                    terms.append(self.term(c, "a%d" % k, not terms))
            out.append(("vdot", i, "".join(terms) if terms else "T(0)"))
        return out

    def jac(self):
        m = self.m
        o = [self.head, "#pragma once", "#include <cstddef>", '#include "wrfgpu_hd.h"',
             '#include "%s_parameters.h"' % m.model.lower(), "", "namespace wrfgpu {", "namespace %s {" % self.ns,
             PHYS_OPEN, "",
             "// jac_sp: the Jacobian d(vdot)/d(v) in the LU sparsity layout, fill-in entries zero",
             "// (KPP gen.c GenerateJac -> %s_Jac_SP: B(n) = dA(k)/dV(j); JVS(i,j) = sum over k of" % m.model,
             "// Stoich(i,k)*B(k,j) in k order). b<n> is KPP's B(n+1).",
             "template <class T>",
             "WRFGPU_KPP_BIG void jac_sp(const T* v, const T* f, const T* rct, T* jvs, std::ptrdiff_t s) {",
             "  (void)v; (void)f;"]
        # ghimj: the same sums, stored negated, the diagonal shifted by ghinv
        for ghimj in (False, True):
            if ghimj:
                o += ["}", ""] + self.jac_ghimj_head() + ["  (void)v; (void)f;"]
            # Column by column: B(k,j) is used only in column j, so each b is computed right
            # before its column's entries and dies with it (a fence after each column keeps the
            # compiler from hoisting the next column's loads). Each entry is KPP's sum, in k order.
            for j, bdefs, entries in self.jac_columns(ghimj):
                o.append("  {  // column %d (%s)" % (j, m.names[j]))
                for b, k, e in bdefs:
                    o.append("    const T %s = %s;  // dA(%d)/dV(%s)" % (b, e, k + 1, m.names[j]))
                for n, e in entries:
                    o.append("    jvs[%d * s] = %s;  // J(%s,%s)" % (n, e, m.names[m.lu_irow[n]], m.names[j]))
                o.append("  }")
                o.append("  WRFGPU_KPP_FENCE();")
        o += ["}", "", PHYS_CLOSE, "}  // namespace %s" % self.ns, "}  // namespace wrfgpu", ""]
        return "\n".join(o)

    def jac_columns(self, ghimj):
        """The Jacobian column by column, as jac_sp (ghimj False) or jac_ghimj (True) computes
        it: [(j, [(b, k, expr of B(k,j))], [(n, expr of entry n)])], the entries in LU order.
        jac_ghimj stores each sum negated and adds ghinv on the diagonal."""
        m = self.m
        bidx = self.bindex()
        diag = set(m.lu_diag[:m.nvar])
        cols = []
        for j in range(m.nvar):
            bdefs = []
            for k in range(m.nreact):
                sl = m.sleft[j].get(k, 0.0)
                if sl != 0.0:
                    bdefs.append(("b%d" % bidx[(k, j)], k, " * ".join(self.bfactors(k, j, sl))))
            entries = []
            for n in range(m.lu_nonzero):
                i = m.lu_irow[n]
                if m.lu_icol[n] != j:
                    continue
                terms = []
                if m.L[i][j]:
                    for k in range(m.nreact):
                        c = m.snet[i].get(k, 0.0)
                        if c != 0.0 and (k, j) in bidx:
                            terms.append(self.term(c, "b%d" % bidx[(k, j)], not terms))
                e = "".join(terms) if terms else "T(0)"
                if ghimj:
                    e = "-(%s)" % e
                    if n in diag:
                        e = "(T)((double)%s + ghinv)" % e
                entries.append((n, e))
            cols.append((j, bdefs, entries))
        return cols

    def decomp_ops(self):
        """kpp_decomp's operations in KppDecomp's order, as (kind, t, a, b) on JVS entries: kind 0,
        row k's multiplier from its entry t in column j, a = -JVS(t)/JVS(a) and JVS(t) = -a (a =
        LU_DIAG(j)); kind 1, an update of row k's entry t, JVS(t) = JVS(t) + (-JVS(a))*JVS(b) (a the
        multiplier's entry, b = jj of row j)."""
        m = self.m
        crow, diag, icol = m.lu_crow, m.lu_diag, m.lu_icol
        ops = []
        for k in range(m.nvar):
            cols = {icol[kk]: kk for kk in range(crow[k], crow[k + 1])}
            for kk in range(crow[k], diag[k]):
                j = icol[kk]
                ops.append((0, kk, diag[j], 0))
                for jj in range(diag[j] + 1, crow[j + 1]):
                    if icol[jj] not in cols:
                        err(None, "internal: fill-in missing at (%d,%d)" % (k, icol[jj]))
                    ops.append((1, cols[icol[jj]], kk, jj))
        return ops

    def solve_rows(self):
        """kpp_solve row by row (KPP gen.c GenerateSolve): the forward rows with L terms, in order,
        as (i, [(jj, column)]); then every row backwards as (i, [(jj, column)] of U, LU_DIAG(i))."""
        m = self.m
        crow, diag, icol = m.lu_crow, m.lu_diag, m.lu_icol
        fwd = [(i, [(jj, icol[jj]) for jj in range(crow[i], diag[i])]) for i in range(m.nvar) if crow[i] < diag[i]]
        bwd = [(i, [(jj, icol[jj]) for jj in range(diag[i] + 1, crow[i + 1])], diag[i])
               for i in range(m.nvar - 1, -1, -1)]
        return fwd, bwd

    def jac_ghimj_head(self):
        return ["// jac_ghimj: the Rosenbrock matrix of ros_PrepareMatrix (rosenbrock.f90) straight from the",
                "// Jacobian: Ghimj = -Jac0, then Ghimj(diagonal) = Ghimj(diagonal) + ghinv, where ghinv is",
                "// 1/(direction*H*gamma). The same operations as jac_sp followed by those two loops, without",
                "// Jac0 (the solver evaluates the Jacobian again when it rebuilds the matrix).",
                "template <class T>",
                "WRFGPU_KPP_BIG void jac_ghimj(const T* v, const T* f, const T* rct, double ghinv, T* jvs,",
                "                              std::ptrdiff_t s) {"]

    def bindex(self):
        """KPP's structB numbering: over all species (variables, then fixed) with StoichLeft != 0."""
        m = self.m
        bidx, nb = {}, 0
        for k in range(m.nreact):
            for j in range(m.nspec):
                if m.sleft[j].get(k, 0.0) != 0.0:
                    bidx[(k, j)] = nb
                    nb += 1
        return bidx

    def bfactors(self, k, j, sl):
        fac = [self.rate_factor(k)]
        if coef_text(sl) != 1.0:
            fac.append("T(%s)" % flit(coef_text(sl)))
        return fac + self.reactant_product(k, skip=j)

    def linalg(self):
        m = self.m
        o = [self.head, "#pragma once", "#include <cstddef>", "#include <cfloat>", '#include "wrfgpu_hd.h"',
             '#include "%s_parameters.h"' % m.model.lower(), "", "namespace wrfgpu {", "namespace %s {" % self.ns,
             PHYS_OPEN, "",
             "template <class T> struct KppTiny;  // Fortran TINY(a)",
             "template <> struct KppTiny<double> { static constexpr double value = DBL_MIN; };",
             "template <> struct KppTiny<float> { static constexpr float value = FLT_MIN; };",
             "",
             "// kpp_decomp: sparse LU factorisation without pivoting, in place (KPP %s_KppDecomp as" % m.model,
             "// unrolled by WRF chem/KPP/util/write_decomp: W(:) holds row k; a = -W(j)/JVS(diag j);",
             "// W(j) = -a; W(c) = W(c) + a*JVS(jj)). Returns 0, or k+1 when |JVS(diag k)| < TINY",
             "// before row k is eliminated (as KPP checks it). A fence before each elimination step: its",
             "// loads are not started before the previous step's (WRFGPU_KPP_FENCE).",
             "template <class T>",
             "WRFGPU_KPP_BIG int kpp_decomp(T* jvs, std::ptrdiff_t s) {",
             "  T a;"]
        crow, diag, icol = m.lu_crow, m.lu_diag, m.lu_icol
        for k in range(m.nvar):
            o.append("  // row %d (%s)" % (k, m.names[k]))
            o.append("  if (!(kpp_abs_lu(jvs[%d * s]) >= KppTiny<T>::value)) return %d;" % (diag[k], k + 1))
            cols = {icol[kk]: kk for kk in range(crow[k], crow[k + 1])}
            elim = range(crow[k], diag[k])
            if not len(elim):
                continue
            o.append("  {")
            for c, kk in cols.items():
                o.append("    T w%d = jvs[%d * s];" % (c, kk))
            for kk in elim:
                j = icol[kk]
                o.append("    WRFGPU_KPP_FENCE();")
                o.append("    a = -w%d / jvs[%d * s];" % (j, diag[j]))
                o.append("    w%d = -a;" % j)
                for jj in range(diag[j] + 1, crow[j + 1]):
                    c = icol[jj]
                    if c not in cols:
                        err(None, "internal: fill-in missing at (%d,%d)" % (k, c))
                    o.append("    w%d = w%d + a * jvs[%d * s];" % (c, c, jj))
            for c, kk in cols.items():
                o.append("    jvs[%d * s] = w%d;" % (kk, c))
            o.append("  }")
        o.append("  return 0;")
        o.append("}")
        o.append("")
        o.append("// kpp_solve: x := (LU)^-1 x (KPP gen.c GenerateSolve -> %s_KppSolve)." % m.model)
        o.append("template <class T>")
        o.append("WRFGPU_KPP_BIG void kpp_solve(const T* jvs, T* x, std::ptrdiff_t s) {")
        fwd, bwd = self.solve_rows()
        for i, terms in fwd:
            o.append("  x[%d * s] = x[%d * s]%s;" % (i, i, "".join(" - jvs[%d * s] * x[%d * s]" % t for t in terms)))
        for i, terms, d in bwd:
            t = "x[%d * s]%s" % (i, "".join(" - jvs[%d * s] * x[%d * s]" % t for t in terms))
            o.append("  x[%d * s] = %s / jvs[%d * s];" % (i, "(%s)" % t if terms else t, d))
        o += ["}", "", PHYS_CLOSE, "}  // namespace %s" % self.ns, "}  // namespace wrfgpu", ""]
        # helper
        o.insert(o.index("template <class T> struct KppTiny;  // Fortran TINY(a)"),
                 "template <class T>\nWRFGPU_HD T kpp_abs_lu(T x) { return x < T(0) ? -x : x; }\n")
        return "\n".join(o)

    # -- tables for the team (warp-per-cell) solver -------------------------------------
    def team(self):
        """The same arithmetic as fun/jac_sp/kpp_decomp/kpp_solve, as data: one entry per
        rate term, Jacobian entry, decomposition or solve operation, in KPP's order, so that a
        team of threads (a GPU warp) can share one cell's work and still evaluate every sum
        term by term in the same order as the unrolled code (bitwise the same results).
        The decomposition and the solve are level-scheduled: the operations of one level are
        independent (no operation reads or writes a value another one of the level writes),
        and the levels keep every read-after-write, write-after-read and write-after-write
        order of the serial code."""
        m = self.m
        if m.lu_nonzero >= 32768 or m.nvar >= 32768:
            err(None, "team tables: LU_NONZERO %d too large for 16-bit operands" % m.lu_nonzero)
        mdl = m.model.lower()

        def rate(k):
            r = m.reactions[k]
            return (-1, f32(r.number)) if r.number is not None else (k, 0.0)

        def reactants(k, skip=None):
            fac = []
            for l in range(m.nspec):
                n = int(m.sleft[l].get(k, 0.0)) - (1 if l == skip else 0)
                fac += [l] * max(n, 0)
            return fac

        def signed(c):
            v = coef_text(c)
            return -v if c < 0 else v

        # A(k) = RCT(k) * V.. * F.. (factor index into [VAR, FIX]); Vdot(i) = sum c*A(k)
        a_rate, a_const, a_fac = [], [], []
        for k in range(m.nreact):
            r, c = rate(k)
            a_rate.append(r)
            a_const.append(c)
            a_fac.append(reactants(k))
        nfa = max(1, max(len(f) for f in a_fac))
        vd_ptr, vd_a, vd_c = [0], [], []
        for i in range(m.nvar):
            for k in range(m.nreact):
                c = m.snet[i].get(k, 0.0)
                if c != 0.0:
                    vd_a.append(k)
                    vd_c.append(signed(c))
            vd_ptr.append(len(vd_a))
        # B(n) = RCT(k) * coef * V.. (one V(j) left out); JVS(n) = sum c*B
        bidx = self.bindex()
        b_rate, b_const, b_coef, b_fac = [], [], [], []
        for (k, j), n in sorted(bidx.items(), key=lambda x: x[1]):
            r, c = rate(k)
            b_rate.append(r)
            b_const.append(c)
            sl = m.sleft[j].get(k, 0.0)
            b_coef.append(coef_text(sl))
            b_fac.append(reactants(k, skip=j))
        nfb = max(1, max(len(f) for f in b_fac)) if b_fac else 1
        jv_ptr, jv_b, jv_c = [0], [], []
        for n in range(m.lu_nonzero):
            i, j = m.lu_irow[n], m.lu_icol[n]
            if m.L[i][j]:
                for k in range(m.nreact):
                    c = m.snet[i].get(k, 0.0)
                    if c != 0.0 and (k, j) in bidx:
                        jv_b.append(bidx[(k, j)])
                        jv_c.append(signed(c))
            jv_ptr.append(len(jv_b))

        def by_length(ptr):
            """Outputs ordered by number of terms, longest first: the 32 lanes of a team take
            consecutive outputs, so a group's time is its longest sum (JVS: 60 term steps
            instead of 243 in LU order for RADM2SORG). Each sum keeps its own term order."""
            n = len(ptr) - 1
            return sorted(range(n), key=lambda i: (-(ptr[i + 1] - ptr[i]), i))

        vd_order, jv_order = by_length(vd_ptr), by_length(jv_ptr)

        def schedule(ops):
            """ops: (kind, target, a, b, reads, writes) in serial order -> levels."""
            last_w, last_r = {}, {}
            lev = []
            for op in ops:
                reads, writes = op[4], op[5]
                L = 0
                for x in reads:
                    L = max(L, last_w.get(x, -1) + 1)
                for x in writes:
                    L = max(L, last_w.get(x, -1) + 1, last_r.get(x, -1) + 1)
                for x in reads:
                    last_r[x] = max(last_r.get(x, -1), L)
                for x in writes:
                    last_w[x] = L
                lev.append(L)
            nlev = max(lev) + 1 if lev else 0
            # within a level: by kind (the decomposition's divisions first), so that a warp's
            # lanes take divisions and multiply-adds in separate passes where they can
            # (a pass that mixes them runs both code paths)
            order = sorted(range(len(ops)), key=lambda i: (lev[i], ops[i][0], i))
            ptr = [0] * (nlev + 1)
            for i in order:
                ptr[lev[i] + 1] += 1
            for l in range(nlev):
                ptr[l + 1] += ptr[l]
            return [ops[i] for i in order], ptr

        # kind 0: a = -JVS(t)/JVS(a); JVS(t) = -a.  kind 1: JVS(t) += (-JVS(a))*JVS(b)
        dops = [(kd, t, a, b, [t, a] if kd == 0 else [t, a, b], [t]) for kd, t, a, b in self.decomp_ops()]
        dsched, dptr = schedule(dops)
        sops = []   # kind 0: X(t) = X(t) - JVS(a)*X(b).  kind 1: X(t) = X(t) / JVS(a)
        fwd, bwd = self.solve_rows()
        for i, terms in fwd:
            sops += [(0, i, jj, c, [i, c], [i]) for jj, c in terms]
        for i, terms, d in bwd:
            sops += [(0, i, jj, c, [i, c], [i]) for jj, c in terms]
            sops.append((1, i, d, 0, [i], [i]))

        def segments(ops, lanes=32):
            """The solve by rows: lane r % lanes runs every operation on X(r), in serial order;
            a barrier (segment boundary) only where a lane needs a value another lane writes
            (or overwrites one another lane still reads). Few operations per level make the
            level schedule mostly barriers: 126 levels, against 25 segments for RADM2SORG."""
            last_w, reads_of = {}, {}
            lane_seg = [0] * lanes
            seg = []
            for op in ops:
                t = op[1]
                L = t % lanes
                sg = lane_seg[L]
                for x in op[4]:
                    if x in last_w and last_w[x][1] != L:
                        sg = max(sg, last_w[x][0] + 1)
                for (rs, rl) in reads_of.get(t, []):
                    if rl != L:
                        sg = max(sg, rs + 1)
                lane_seg[L] = sg
                for x in op[4]:
                    reads_of.setdefault(x, []).append((sg, L))
                last_w[t] = (sg, L)
                seg.append((sg, L))
            nseg = max(sg for sg, _ in seg) + 1 if seg else 0
            order = sorted(range(len(ops)), key=lambda i: (seg[i][0], seg[i][1], i))
            ptr = [0] * (nseg * lanes + 1)
            for i in order:
                ptr[seg[i][0] * lanes + seg[i][1] + 1] += 1
            for q in range(nseg * lanes):
                ptr[q + 1] += ptr[q]
            return [ops[i] for i in order], ptr, nseg

        ssched, sptr, nseg = segments(sops)
        self.team_stats = (len(dops), len(dptr) - 1, len(sops), nseg)

        def ints(v):
            return wrap_list([str(x) for x in v], 16) if v else "    0,"

        def floats(v):
            return wrap_list([flit(x) for x in v], 8) if v else "    0.0f,"

        def opcodes(ops):
            return wrap_list(["{%d, %d}" % ((o[1] << 1) | o[0], o[2] | (o[3] << 16)) for o in ops], 8)

        def fac_table(facs, n):
            out = []
            for f in facs:
                out += f + [-1] * (n - len(f))
            return out

        o = [self.head, "#pragma once", '#include "%s_parameters.h"' % mdl, "",
             "namespace wrfgpu {", "namespace %s {" % self.ns, "namespace team {", "",
             "// Tables for the team Rosenbrock solver (kpp_rosenbrock_team.h): fun, jac_sp,",
             "// kpp_decomp and kpp_solve of this mechanism as data, in KPP's order (see the",
             "// generator's Gen.team for the bitwise argument). Rates: RCONST index, or -1 and the",
             "// constant. Factors index [VAR(0..NVAR-1), FIX(NVAR..)], -1 = none. Coefficients are",
             "// KPP's single-precision literals with the sign of the term.",
             "constexpr int NFAC_A = %d, NFAC_B = %d, NB = %d;" % (nfa, nfb, len(b_rate)),
             "constexpr int NVDOT_TERMS = %d, NJVS_TERMS = %d;" % (len(vd_a), len(jv_b)),
             ]
        for ctype, decl, body in (
                ("int", "A_RATE[NREACT]", ints(a_rate)),
                ("float", "A_CONST[NREACT]", floats(a_const)),
                ("int", "A_FAC[NREACT * NFAC_A]", ints(fac_table(a_fac, nfa))),
                ("int", "VDOT_PTR[NVAR + 1]", ints(vd_ptr)),
                ("int", "VDOT_A[NVDOT_TERMS > 0 ? NVDOT_TERMS : 1]", ints(vd_a)),
                ("float", "VDOT_C[NVDOT_TERMS > 0 ? NVDOT_TERMS : 1]", floats(vd_c)),
                ("int", "B_RATE[NB > 0 ? NB : 1]", ints(b_rate)),
                ("float", "B_CONST[NB > 0 ? NB : 1]", floats(b_const)),
                ("float", "B_COEF[NB > 0 ? NB : 1]", floats(b_coef)),
                ("int", "B_FAC[(NB > 0 ? NB : 1) * NFAC_B]", ints(fac_table(b_fac, nfb))),
                ("int", "JVS_PTR[LU_NONZERO + 1]", ints(jv_ptr)),
                ("int", "JVS_B[NJVS_TERMS > 0 ? NJVS_TERMS : 1]", ints(jv_b)),
                ("float", "JVS_C[NJVS_TERMS > 0 ? NJVS_TERMS : 1]", floats(jv_c))):
            o += ["inline constexpr %s %s = {" % (ctype, decl), body, "};"]
        o.append("// The order in which a team's lanes take the Vdot and JVS outputs: longest sum first.")
        o += ["inline constexpr int VDOT_ORDER[NVAR] = {", ints(vd_order), "};",
              "inline constexpr int JVS_ORDER[LU_NONZERO] = {", ints(jv_order), "};"]
        o += [
             "",
             "// kpp_decomp level-scheduled (%d operations, %d levels); kpp_solve by rows (%d" % self.team_stats[:3],
             "// operations in %d segments: lane r %% 32 runs the operations on X(r) of a segment, in" % nseg,
             "// serial order, SOLVE_SEG[s*32 + lane] .. SOLVE_SEG[s*32 + lane + 1]; a barrier between",
             "// segments). Operation {x, y}: kind = x & 1, target = x >> 1, operands y & 0xffff, y >> 16.",
             "// decomp kind 0: a = -JVS(t)/JVS(p); JVS(t) = -a   (the multiplier of row k, column j)",
             "// decomp kind 1: JVS(t) = JVS(t) + (-JVS(p))*JVS(q)   (KPP's W(c) = W(c) + a*JVS(jj))",
             "// solve kind 0: X(t) = X(t) - JVS(p)*X(q);  solve kind 1: X(t) = X(t)/JVS(p)",
             "struct Op { int x, y; };",
             "constexpr int DECOMP_NOPS = %d, DECOMP_NLEV = %d;" % (len(dsched), len(dptr) - 1),
             "constexpr int SOLVE_NOPS = %d, SOLVE_NSEG = %d, TEAM_LANES = 32;" % (len(ssched), nseg),
             "inline constexpr int DECOMP_LEV[DECOMP_NLEV + 1] = {", ints(dptr), "};",
             "inline constexpr Op DECOMP_OP[DECOMP_NOPS > 0 ? DECOMP_NOPS : 1] = {",
             opcodes(dsched) if dsched else "    {0, 0},", "};",
             "inline constexpr int SOLVE_SEG[SOLVE_NSEG * TEAM_LANES + 1] = {", ints(sptr), "};",
             "inline constexpr Op SOLVE_OP[SOLVE_NOPS > 0 ? SOLVE_NOPS : 1] = {",
             opcodes(ssched) if ssched else "    {0, 0},", "};",
             "", "}  // namespace team", "}  // namespace %s" % self.ns, "}  // namespace wrfgpu", ""]
        return "\n".join(o)

    def mechanism(self):
        m = self.m
        mdl = m.model.lower()
        o = [self.head, "#pragma once", "#include <cstddef>", '#include "wrfgpu_hd.h"']
        for part in ("parameters", "rates", "function", "jacobian", "linalg", "team"):
            o.append('#include "%s_%s.h"' % (mdl, part))
        o += ["", "namespace wrfgpu {", "namespace %s {" % self.ns, "",
              "// The mechanism as the Rosenbrock solver sees it (kpp_rosenbrock.h), in the mode's",
              "// namespace as the functions it calls.",
              PHYS_OPEN,
              "struct Mechanism {",
              "  static constexpr int NVAR = %s::NVAR, NFIX = %s::NFIX, NREACT = %s::NREACT;" % ((self.ns,) * 3),
              "  static constexpr int LU_NONZERO = %s::LU_NONZERO;" % self.ns,
              "  static constexpr const int* LU_DIAG_HOST = %s::LU_DIAG;" % self.ns,
              "  template <class T>",
              "  WRFGPU_HD static void fun(const T* v, const T* f, const T* r, T* vdot, std::ptrdiff_t s) {",
              "    %s::fun(v, f, r, vdot, s);" % self.ns,
              "  }",
              "  template <class T>",
              "  WRFGPU_HD static void jac_sp(const T* v, const T* f, const T* r, T* jvs, std::ptrdiff_t s) {",
              "    %s::jac_sp(v, f, r, jvs, s);" % self.ns,
              "  }",
              "  template <class T>",
              "  WRFGPU_HD static void jac_ghimj(const T* v, const T* f, const T* r, double ghinv, T* jvs,",
              "                                 std::ptrdiff_t s) {",
              "    %s::jac_ghimj(v, f, r, ghinv, jvs, s);" % self.ns,
              "  }",
              "  template <class T>",
              "  WRFGPU_HD static int decomp(T* jvs, std::ptrdiff_t s) { return %s::kpp_decomp(jvs, s); }" % self.ns,
              "  template <class T>",
              "  WRFGPU_HD static void solve(const T* jvs, T* x, std::ptrdiff_t s) { %s::kpp_solve(jvs, x, s); }" % self.ns,
              "  // LU_DIAG(i) for the Rosenbrock matrix update (diagonal positions).",
              "  WRFGPU_HD static int lu_diag(int i) {",
              "    switch (i) {"]
        for i in range(m.nvar):
            o.append("      case %d: return %d;" % (i, m.lu_diag[i]))
        o += ["      default: return -1;", "    }", "  }", "};", PHYS_CLOSE, "",
              "}  // namespace %s" % self.ns, "}  // namespace wrfgpu", ""]
        return "\n".join(o)


# The generated code's namespace: the mode's (wrfgpu_hd.h, docs/design.md "Numerical modes").
PHYS_OPEN = "inline namespace WRFGPU_PHYS_NS {"
PHYS_CLOSE = "}  // inline namespace phys_<mode>"

RATE_LAW_CODE = r"""// Rate laws of WRF-Chem's KPP (chem/KPP/kpp/kpp-2.1/util/WRF_conform/WRFUserRateLaws.f90),
// all arguments and results REAL(dp). Rewritten, same operations in the same order.
WRFGPU_HD double kpp_arr(double A0, double B0, double C0, double TEMP) {
  return A0 * exp(-B0 / TEMP) * pow(TEMP / 300.0, C0);
}
WRFGPU_HD double kpp_arr2(double A0, double B0, double TEMP) { return A0 * exp(-B0 / TEMP); }
WRFGPU_HD double kpp_ep2(double A0, double C0, double A2, double C2, double A3, double C3,
                         double TEMP, double cair) {
  double K0 = A0 * exp(-C0 / TEMP);
  double K2 = A2 * exp(-C2 / TEMP);
  double K3 = A3 * exp(-C3 / TEMP);
  K3 = K3 * cair;
  return K0 + K3 / (1.0 + K3 / K2);
}
WRFGPU_HD double kpp_ep3(double A1, double C1, double A2, double C2, double TEMP, double cair) {
  double K1 = A1 * exp(-C1 / TEMP);
  double K2 = A2 * exp(-C2 / TEMP);
  return K1 + K2 * cair;
}
WRFGPU_HD double kpp_fall(double A0, double B0, double C0, double A1, double B1, double C1,
                          double CF, double TEMP, double cair) {
  double K0 = A0 * exp(-B0 / TEMP) * pow(TEMP / 300.0, C0);
  double K1 = A1 * exp(-B1 / TEMP) * pow(TEMP / 300.0, C1);
  K0 = K0 * cair;
  K1 = K0 / K1;
  double l = log10(K1);
  return (K0 / (1.0 + K1)) * pow(CF, 1.0 / (1.0 + l * l));
}
WRFGPU_HD double kpp_f2(double A0, double B0, double C0, double A1, double B1, double C1,
                        double CF, double CN, double TEMP, double cair) {
  double K0 = A0 * exp(-B0 / TEMP) * pow(TEMP / 300.0, C0);
  double K1 = A1 * exp(-B1 / TEMP) * pow(TEMP / 300.0, C1);
  K0 = K0 * cair;
  K1 = K0 / K1;
  double l = log10(K1) / CN;
  return (K0 / (1.0 + K1)) * pow(CF, 1.0 / (1.0 + l * l));
}
WRFGPU_HD double kpp_troe(double k0_300K, double n, double kinf_300K, double m, double temp,
                          double cair) {
  double zt_help = 300.0 / temp;
  double k0_T = k0_300K * pow(zt_help, n) * cair;
  double kinf_T = kinf_300K * pow(zt_help, m);
  double k_ratio = k0_T / kinf_T;
  double l = log10(k_ratio);
  return k0_T / (1.0 + k_ratio) * pow(0.6, 1.0 / (1.0 + l * l));
}
WRFGPU_HD double kpp_troee(double A, double B, double k0_300K, double n, double kinf_300K,
                           double m, double temp, double cair) {
  double zt_help = 300.0 / temp;
  double k0_T = k0_300K * pow(zt_help, n) * cair;
  double kinf_T = kinf_300K * pow(zt_help, m);
  double k_ratio = k0_T / kinf_T;
  double l = log10(k_ratio);
  double troe = k0_T / (1.0 + k_ratio) * pow(0.6, 1.0 / (1.0 + l * l));
  return A * exp(-B / temp) * troe;
}
WRFGPU_HD double kpp_thermal_t2(double c, double d, double temp) {
  return pow(temp, 2.0) * c * exp(-d / temp);
}
// Fortran x**n for integer n (gfortran/libgcc __powidf2: binary powering).
template <class X>
WRFGPU_HD X kpp_powi(X x, int m) {
  unsigned n = m < 0 ? -(unsigned)m : (unsigned)m;
  X y = (n % 2) ? x : X(1);
  while (n >>= 1) {
    x = x * x;
    if (n % 2) y = y * x;
  }
  return m < 0 ? X(1) / y : y;
}
template <class X>
WRFGPU_HD X kpp_max(X a, X b) { return a > b ? a : b; }
template <class X>
WRFGPU_HD X kpp_min(X a, X b) { return a < b ? a : b; }"""


def generate(mech_dir, model, out_dir, stats=False):
    kpp = model + ".kpp"
    m = parse(mech_dir, kpp)
    if not m.reactions:
        err(None, "%s: no #EQUATIONS" % kpp)
    analyse(m)
    wrf = wrf_names(m, mech_dir)
    sources = [kpp, m.model + ".def", m.model + "_wrfkpp.equiv"]
    g = Gen(m, mech_dir, sources)
    files = {}
    files["rates"] = g.rates()          # first: collects photolysis/extra names
    files["parameters"] = g.parameters(wrf)
    files["function"] = g.fun()
    files["jacobian"] = g.jac()
    files["linalg"] = g.linalg()
    files["team"] = g.team()
    files["mechanism"] = g.mechanism()
    files["split"] = kpp_split.header(g)
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for part, text in files.items():
        p = os.path.join(out_dir, "%s_%s.h" % (m.model.lower(), part))
        with open(p, "w") as fh:
            fh.write(text)
        written.append(p)
    for w in m.warnings:
        print("kpp_gen: " + w, file=sys.stderr)
    if stats:
        print("model %s: NSPEC %d NVAR %d NVARACT %d NFIX %d NREACT %d NONZERO %d LU_NONZERO %d NJV %d extra %s"
              % (m.model, m.nspec, m.nvar, m.nvaract, m.nfix, m.nreact, m.nonzero, m.lu_nonzero,
                 len(g.photo), ",".join(g.extra) or "-"))
        print("species order: " + " ".join(m.names))
        if m.unused_species:
            print("declared but unused (left out, as KPP does): " + " ".join(m.unused_species))
    return m, written


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mech-dir", default=os.environ.get("MECH_DIR") or
                    os.path.join(repo, "..", "shared", "mechanisms", "radm2sorg"))
    ap.add_argument("--model", default=None, help="mechanism name (default: the *.kpp in --mech-dir)")
    ap.add_argument("--out", default=None, help="output folder (default src/<model>/generated)")
    ap.add_argument("--stats", action="store_true", help="print sizes and the species order")
    a = ap.parse_args(argv)
    try:
        if not os.path.isdir(a.mech_dir):
            raise GenError("mechanism folder %s not found (set MECH_DIR or --mech-dir)" % a.mech_dir)
        model = a.model
        if model is None:
            kpps = sorted(f for f in os.listdir(a.mech_dir) if f.endswith(".kpp"))
            if len(kpps) != 1:
                raise GenError("%s: expected one .kpp file, found %d (use --model)" % (a.mech_dir, len(kpps)))
            model = kpps[0][:-4]
        out = a.out or os.path.join(repo, "src", model.lower(), "generated")
        generate(a.mech_dir, model, out, a.stats)
    except GenError as e:
        print("kpp_gen: error: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
