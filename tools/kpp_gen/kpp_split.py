"""kpp_split.py - the split solver's step, written by kpp_gen.py as <model>_split.h.

One Ros3 step attempt (rosenbrock.f90 ros_Integrator, as kpp_rosenbrock.h ros_attempt runs it)
for the 32 cells of a block, one cell per lane, split over the P warps of the block by matrix
rows (docs/radm2sorg.md, "The split kernel"):

  fun(Y) -> Fcn0; jac_ghimj; kpp_decomp; K0 = Fcn0, solved; Ynew = Y + A(1)*K0; fun(Ynew) -> Fcn;
  K1 = Fcn + HC(1)*K0, solved; K2 = Fcn + HC(2)*K0 + HC(3)*K1, solved; Ynew = Y + sum M(j)*K(j),
  the error terms (sum E(j)*K(j) / scale)^2 and their sum in species order.

Every statement is the generated code's (fun_statements, jac_columns, the decomposition and the
solve written in place), so a cell's bits are the serial integrator's. Each species (matrix row)
belongs to one warp: the warp computes its rows' matrix entries (jac_ghimj by rows: each row's
owner computes the column's B products its entries use, the same products, the same bits), their
decomposition updates, its entries of the vector being solved and its species' vector elements,
and keeps its rows' entries in registers. An entry another warp reads (a pivot row's, a solved
unknown) is stored to a shared-memory slot after the write that the read needs. fun's reaction
rates and the error sum go to the least loaded warp of their dependency level. The vectors live
in the block's global scratch, the rate constants in shared memory (the kernel's). A barrier
separates every two accesses by different warps to one location, placed as late as each pair
allows (interval stabbing).

Divisions are written KPP_DIV(a, b): the plain division in split_step_serial, and in split_step
kpp::split_div<Exact> (kpp_split.h), which with Exact false is the fast path of nvcc's division
without its branch, flagging the lanes it does not cover (the kernel then runs the attempt again
with Exact true). A division by a pivot (the decomposition's and the backward solves') is
KPP_DIVR(a, G(d), P(d)): P(d), the pivot's reciprocal as that division computes it
(kpp::split_rcp), is written by the statement that writes the pivot's final value, once, and
published with it; the division is then three operations (kpp::split_div_r).

Singular matrices: kpp_decomp returns at the first row k whose diagonal, before row k is
eliminated, is below TINY. Row k's diagonal is changed only by row k's own elimination, so that
is the jac_ghimj value: the owner of row k tests it right after computing it and sets the flag
that split_step returns (the kernel ORs the warps' flags and retries with H halved, as
ros_PrepareMatrix does).
"""
import collections
import re

WARPS = 8  # warps per block: 8 measured fastest (4 and 16 slower, docs/radm2sorg.md)

ACC = re.compile(r'\b(rct|v|f)\[(\d+) \* s\]')
ATMP = re.compile(r'\ba(\d+)\b')
TOK = re.compile(r'\b([GXP])\((\d+)\)')


class St:
    """A statement: what it writes and reads, its code; a forward-solve row also keeps its row
    and terms (chunk_forward_rows splits it)."""
    __slots__ = ('writes', 'reads', 'code', 'fwd')

    def __init__(self, writes, reads, code, fwd=None):
        self.writes, self.reads, self.code, self.fwd = writes, reads, code, fwd


class Step:
    """One Ros3 attempt as statements on G (matrix entries), X (the vector being solved),
    V (vector elements in global memory) and R (rate constants)."""

    def __init__(self, g):
        m = self.m = g.m
        self.g = g
        nv = m.nvar
        self.vecs = [('y', nv), ('fix', m.nfix), ('ynew', nv), ('fcn0', nv), ('fcn', nv), ('k0', nv),
                     ('k1', nv), ('k2', nv), ('a', m.nreact), ('err', nv), ('errsum', 1)]
        self.off, o = {}, 0
        for n, k in self.vecs:
            self.off[n] = o
            o += k
        self.ngv = o
        self.irow = m.lu_irow

    def vec(self, name, i):
        return ('v', self.off[name] + i)

    def species_of(self, o):
        """The species of vector element V(o); None for fun's rates, the sum and FIX."""
        for n, k in self.vecs:
            if n in ('a', 'errsum', 'fix'):
                continue
            if self.off[n] <= o < self.off[n] + k:
                return o - self.off[n]
        return None

    def translate(self, expr, vin, reads, temps=False):
        """The generated code's arrays as the split's: rct -> R, v -> V(vin), f -> V(fix),
        fun's aN -> V(a + N)."""
        def acc(mt):
            a, i = mt.group(1), int(mt.group(2))
            if a == 'rct':
                reads.append(('r', i))
                return 'R(%d)' % i
            v = self.vec(vin if a == 'v' else 'fix', i)
            reads.append(v)
            return 'V(%d)' % v[1]
        expr = ACC.sub(acc, expr)
        if temps:
            def tmp(mt):
                v = self.vec('a', int(mt.group(1)))
                reads.append(v)
                return 'V(%d)' % v[1]
            expr = ATMP.sub(tmp, expr)
        return expr

    def fun(self, vin, out):
        st = []
        for kind, i, e in self.g.fun_statements():
            reads = []
            e = self.translate(e, vin, reads, temps=(kind == 'vdot'))
            w = self.vec('a' if kind == 'a' else out, i)
            st.append(St([w], reads, 'V(%d) = %s;' % (w[1], e)))
        return st

    def jac(self):
        m = self.m
        diag = {m.lu_diag[i]: i for i in range(m.nvar)}
        st = []
        for _, bdefs, entries in self.g.jac_columns(True):
            bdef = {b: e for b, _, e in bdefs}
            byrow = collections.defaultdict(list)
            for n, e in entries:
                byrow[self.irow[n]].append((n, e))
            for row in sorted(byrow):
                lst = byrow[row]
                used = sorted({b for _, e in lst for b in re.findall(r'\bb\d+\b', e)}, key=lambda b: int(b[1:]))
                reads, code = [], ['{']
                for b in used:
                    code.append('const T %s = %s;' % (b, self.translate(bdef[b], 'y', reads)))
                for n, e in lst:
                    code.append('G(%d) = %s;' % (n, self.translate(e, 'y', reads)))
                    if n in diag:  # kpp_decomp's test of row `row`, before its elimination
                        code.append('sing = sing | !(kpp_abs_lu(G(%d)) >= KppTiny<T>::value);' % n)
                code.append('}')
                st.append(St([('g', n) for n, _ in lst], reads, ' '.join(code)))
        return st

    def decomp(self):
        """kpp_decomp in place (Gen.decomp_ops): a row's work values W live in G itself (stored
        and reloaded exactly); a = -W(j)/JVS(diag j), W(j) = -a is G(kk) = -((-G(kk)) / G(d)),
        written G(kk) = -KPP_DIVR((-G(kk)), G(d), P(d)); W(c) = W(c) + a*JVS(jj) is
        G(c) = G(c) + (-G(kk)) * G(jj) (a = -G(kk) exactly)."""
        st = []
        for kind, t, a, b in self.g.decomp_ops():
            if kind == 0:
                st.append(St([('g', t)], [('g', t), ('g', a), ('p', a)],
                             'G(%d) = -KPP_DIVR((-G(%d)), G(%d), P(%d));' % (t, t, a, a)))
            else:
                st.append(St([('g', t)], [('g', t), ('g', a), ('g', b)],
                             'G(%d) = G(%d) + (-G(%d)) * G(%d);' % (t, t, a, b)))
        return st

    def solve(self):
        """kpp_solve as the generated code writes it (Gen.solve_rows)."""
        fwd, bwd = self.g.solve_rows()
        st = [forward_row(i, terms) for i, terms in fwd]
        for i, terms, d in bwd:
            reads = [('x', i)] + [r for jj, c in terms for r in (('g', jj), ('x', c))] + [('g', d), ('p', d)]
            t = 'X(%d)' % i + ''.join(' - G(%d) * X(%d)' % tc for tc in terms)
            st.append(St([('x', i)], reads, 'X(%d) = KPP_DIVR(%s, G(%d), P(%d));' % (i, t, d, d)))
        return st

    def per_species(self, fmt, writes, reads):
        out = []
        for i in range(self.m.nvar):
            out.append(St([w(i) for w in writes], [r(i) for r in reads],
                          fmt.format(i=i, **{n: self.off[n] + i for n, _ in self.vecs})))
        return out

    def statements(self):
        X = lambda i: ('x', i)
        V = lambda n: (lambda i: self.vec(n, i))
        sol = self.solve()
        lu = self.jac() + self.decomp()
        # each pivot's reciprocal, written with the pivot's final value (its last write)
        last = {}
        for k, s in enumerate(lu):
            for w in s.writes:
                last[w] = k
        for d in self.m.lu_diag[:self.m.nvar]:
            s = lu[last[('g', d)]]
            s.writes.append(('p', d))
            s.code += ' P(%d) = KPP_RCP(G(%d));' % (d, d)
        st = self.fun('y', 'fcn0') + lu
        # stage 1: K0 = Fcn0 (ros_combine with no term), solved
        st += self.per_species('X({i}) = V({fcn0});', [X], [V('fcn0')]) + sol
        st += self.per_species('V({k0}) = X({i});', [V('k0')], [X])
        # stage 2: Ynew = Y + A(1)*K0, Fcn = fun(Ynew), K1 = Fcn + HC(1)*K0, solved
        st += self.per_species('V({ynew}) = V({y}) + (T)a10 * V({k0});', [V('ynew')], [V('y'), V('k0')])
        st += self.fun('ynew', 'fcn')
        st += self.per_species('X({i}) = V({fcn}) + (T)hc10 * V({k0});', [X], [V('fcn'), V('k0')]) + sol
        st += self.per_species('V({k1}) = X({i});', [V('k1')], [X])
        # stage 3 (NewF false: Fcn kept): K2 = Fcn + HC(2)*K0 + HC(3)*K1, solved
        st += self.per_species('X({i}) = V({fcn}) + (T)hc20 * V({k0}) + (T)hc21 * V({k1});',
                               [X], [V('fcn'), V('k0'), V('k1')]) + sol
        st += self.per_species('V({k2}) = X({i});', [V('k2')], [X])
        # ros_new_solution: Ynew, the error term of species i; then the sum in species order
        st += self.per_species(
            '{{ const T yi = V({y}); '
            'T yn = yi + (T)m0 * V({k0}) + (T)m1 * V({k1}) + (T)m2 * V({k2}); '
            'T ye = T(0) + (T)e0 * V({k0}) + (T)e1 * V({k1}) + (T)e2 * V({k2}); V({ynew}) = yn; '
            'const double a_ = fabs((double)yi), b_ = fabs((double)yn); const double ymax = a_ > b_ ? a_ : b_; '
            'const double scale = atol + rtol * ymax; const double q = KPP_DIV((double)ye, scale); V({err}) = q * q; }}',
            [V('ynew'), V('err')], [V('y'), V('k0'), V('k1'), V('k2')])
        e = self.off['err']
        st.append(St([self.vec('errsum', 0)], [self.vec('err', i) for i in range(self.m.nvar)],
                     '{ double s_ = 0.0; ' + ' '.join('s_ = s_ + V(%d);' % (e + i) for i in range(self.m.nvar)) +
                     ' V(%d) = s_; }' % self.off['errsum']))
        return chunk_forward_rows(st)


def forward_row(i, terms):
    """X(i) = X(i) - G(a1)*X(c1) - ..., the terms (a, c) in kpp_solve's order."""
    reads = [('x', i)] + [v for a, c in terms for v in (('g', a), ('x', c))]
    return St([('x', i)], reads, 'X(%d) = X(%d)%s;' % (i, i, ''.join(' - G(%d) * X(%d)' % t for t in terms)),
              fwd=(i, terms))


def chunk_forward_rows(st):
    """A forward-solve row X(i) = X(i) - G(a1)*X(c1) - G(a2)*X(c2) - ... as one statement per run
    of terms whose X(c) are ready at one dependency level: a term starts a new statement where
    its X(c) is written at a later level than the run's. The subtractions stay in their order
    (each statement continues from X(i) as the last left it), so the bits are the same; but the
    terms whose X(c) are long known no longer wait for the row's last ones. The last nine rows
    of the solve (the inorganic species, 13-40 terms each) form a chain in which each row needs
    the ones before: whole, each sat alone between two barriers while the other warps waited
    (docs/radm2sorg.md, "Pivot reciprocals computed once; forward-solve rows in runs")."""
    lv = levels(st)
    written, out = {}, []
    for k, s in enumerate(st):
        if s.fwd:
            i, terms = s.fwd
            runs, ready = [], None
            for a, c in terms:
                r = written.get(('x', c), -1)
                if ready is None or r > ready:
                    runs.append([])
                    ready = r
                runs[-1].append((a, c))
            out += [forward_row(i, ts) for ts in runs]
        else:
            out.append(s)
        for w in s.writes:
            written[w] = lv[k]
    return out


def levels(st):
    """Each statement's dependency level: after the last write of what it reads and of what it
    writes, and after the last read of what it writes."""
    last_w, last_r = {}, collections.defaultdict(lambda: -1)
    lv = []
    for s in st:
        l = max([last_w.get(r, -1) + 1 for r in s.reads] + [last_w.get(w, -1) + 1 for w in s.writes]
                + [last_r[w] + 1 for w in s.writes] + [0])
        lv.append(l)
        for r in s.reads:
            last_r[r] = max(last_r[r], l)
        for w in s.writes:
            last_w[w] = l
    return lv


class Split:
    """The statements over P warps: owners, publishing stores, shared slots and barriers."""

    def __init__(self, step, P):
        self.step, self.P = step, P
        st = self.st = step.statements()
        irow = step.irow
        lv = self.lv = levels(st)
        L = self.L = max(lv) + 1
        is_reg = lambda v: v[0] in ('g', 'x', 'p')
        self.row_of_loc = lambda v: irow[v[1]] if v[0] in ('g', 'p') else v[1]

        def row_of(s):
            rows = set()
            for w in s.writes:
                if w[0] == 'v' and step.species_of(w[1]) is None:
                    return None
                rows.add(self.row_of_loc(w) if is_reg(w) else step.species_of(w[1]))
            assert len(rows) == 1, (s.code, rows)
            return rows.pop()
        rows = [row_of(s) for s in st]
        cost = [sum(1 for r in s.reads if r[0] != 'p') for s in st]  # a reciprocal goes with its pivot
        # rows to warps longest first by operand loads (weighting divisions measured no better)
        rc = collections.Counter()
        for r, c in zip(rows, cost):
            if r is not None:
                rc[r] += c
        owner, tot = {}, [0] * P
        for r, c in sorted(rc.items(), key=lambda t: (-t[1], t[0])):
            owner[r] = tot.index(min(tot))
            tot[owner[r]] += c
        self.by = by = collections.defaultdict(list)
        for i, l in enumerate(lv):
            by[l].append(i)
        warp_of, total = {}, list(tot)
        for l in range(L):
            load = [0] * P
            for i in by[l]:
                if rows[i] is not None:
                    warp_of[i] = owner[rows[i]]
                    load[warp_of[i]] += cost[i]
            for i in sorted((i for i in by[l] if rows[i] is None), key=lambda i: (-cost[i], i)):
                w = min(range(P), key=lambda k: (load[k], total[k], k))
                warp_of[i] = w
                load[w] += cost[i]
                total[w] += cost[i]
        self.warp_of, self.loads = warp_of, total
        own = self.own = lambda v: owner[self.row_of_loc(v)]
        order = sorted(range(len(st)), key=lambda i: (lv[i], i))
        # publishing: an entry read by another warp is stored after the owner's write that the
        # read sees; the owner's first touch of every entry is a write (nothing is loaded back)
        events = collections.defaultdict(list)
        for i in order:
            for r in st[i].reads:
                if is_reg(r):
                    events[r].append((lv[i], 0, i, warp_of[i]))
            for w in st[i].writes:
                if is_reg(w):
                    events[w].append((lv[i], 1, i, warp_of[i]))
        publish = collections.defaultdict(set)
        for v, ev in events.items():
            ev.sort()
            assert ev[0][1] == 1, ('read before written', v)
            last = None
            for l, kind, i, w in ev:
                if kind == 1:
                    assert w == own(v), (st[i].code, v)
                    last = i
                elif w != own(v):
                    publish[last].add(v)
        self.publish = publish
        slots = sorted({v for s in publish.values() for v in s}, key=lambda v: (v[0], v[1]))
        self.slot = {v: k for k, v in enumerate(slots)}
        self.barriers = self.needed_barriers(order)

    def needed_barriers(self, order):
        """The levels after which a barrier stands: one between every two accesses by different
        warps to one location (a shared slot: the owner's publishing stores, the other warps'
        reads; a vector element in global memory: every access), each as late as its pair
        allows; the last level always ends with one (the kernel reads the results)."""
        st, lv, warp_of = self.st, self.lv, self.warp_of
        acc = collections.defaultdict(list)  # location -> [(level, 0 read | 1 write, warp)]
        for i in order:
            w, l = warp_of[i], lv[i]
            for v in st[i].reads:
                if (v[0] in ('g', 'x', 'p') and self.own(v) != w) or v[0] == 'v':
                    acc[v].append((l, 0, w))
            for v in st[i].writes:
                if (v[0] in ('g', 'x', 'p') and v in self.publish.get(i, ())) or v[0] == 'v':
                    acc[v].append((l, 1, w))
        spans = []
        for v, ev in acc.items():
            ev.sort(key=lambda t: (t[0], t[1]))
            last_w, reads = None, []
            for l, kind, w in ev:
                if kind == 0:
                    if last_w and last_w[1] != w:
                        spans.append((last_w[0], l))
                    reads.append((l, w))
                else:
                    spans += [(lr, l) for lr, wr in reads if wr != w]
                    if last_w and last_w[1] != w:
                        spans.append((last_w[0], l))
                    last_w, reads = (l, w), []
        chosen = {self.L - 1}
        for a, b in sorted(spans, key=lambda s: s[1]):
            assert a < b, (a, b)
            if not any(a <= k < b for k in chosen):
                chosen.add(b - 1)
        return chosen


SCALARS = ('ghinv', 'a10', 'hc10', 'hc20', 'hc21', 'm0', 'm1', 'm2', 'e0', 'e1', 'e2', 'atol', 'rtol')


def header(g, P=WARPS):
    """<model>_split.h: the sizes, split_step (the split) and split_step_serial (the same
    statements in program order, one thread per lane: the CPU tests' reference)."""
    m = g.m
    step = Step(g)
    sp = Split(step, P)
    st, by, L = sp.st, sp.by, sp.L
    nm = lambda v: 'r%s%d' % v
    unpack = ' '.join('const double %s = c.%s;' % (n, n) for n in SCALARS)
    o = [g.head, "#pragma once", "#include <cmath>", "#include <cstddef>", '#include "wrfgpu_hd.h"',
         '#include "kpp_split.h"', '#include "%s_parameters.h"' % m.model.lower(),
         '#include "%s_linalg.h"' % m.model.lower(), "",
         "namespace wrfgpu {", "namespace %s {" % g.ns, "",
         "// The split step's sizes (tools/kpp_gen/kpp_split.py): %d statements in %d dependency levels," % (len(st), L),
         "// %d barriers, %d publishing stores to %d shared slots; operand loads per warp %s." % (
             len(sp.barriers), sum(len(v) for v in sp.publish.values()), len(sp.slot), sp.loads),
         "namespace split {",
         "constexpr int WARPS = %d;  // warps per block (32 cells: one per lane)" % P,
         "constexpr int LEVELS = %d;" % L,
         "constexpr int SLOTS = %d;  // shared slots of published entries, 32 values each" % len(sp.slot),
         "constexpr int NGV = %d;  // vector values per lane in the block's global scratch" % step.ngv]
    o += ["constexpr int OFF_%s = %d;" % (n.upper(), step.off[n]) for n, _ in step.vecs]
    o += ["}  // namespace split", "", PHYS_OPEN, "",
          "#define R(j) r[(j) * 32 + lane]",
          "#define V(o) gv[(o) * 32 + lane]",
          "// The statements in program order, one thread per lane, with G and X whole arrays",
          "// ([entry][lane]): the reference of the CPU tests. Returns kpp_decomp's singular flag.",
          "template <class T>",
          "WRFGPU_KPP_SPLIT int split_step_serial(T* g, T* x, const T* r, T* gv, int lane, const kpp::SplitScalars& c) {",
          "#define G(e) g[(e) * 32 + lane]",
          "#define X(i) x[(i) * 32 + lane]",
          "#define KPP_DIV(a, b) ((a) / (b))",
          "#define KPP_DIVR(a, b, r) ((a) / (b))",
          "#define KPP_RCP(b) (b)",
          "#define P(e) rcp_",
          "  %s" % unpack, "  int sing = 0;", "  T rcp_ = T(0);  // the pivots' reciprocals: not needed (KPP_DIVR divides)"]
    o += ['  ' + s.code for s in st]
    o += ["  (void)rcp_;", "  return sing;", "}", "#undef G", "#undef X", "#undef P", "#undef KPP_DIV", "#undef KPP_DIVR", "#undef KPP_RCP", "",
          "// The split: one thread per (warp, lane) of a block of split::WARPS warps. Each warp's rows",
          "// live in its registers; S(k) is shared slot k ([slot][lane]). Every warp reaches",
          "// WRFGPU_SPLIT_BARRIER() as often as the others, from its own code (kpp_split.h). pub, r",
          "// and gv carry no __restrict__: other warps write them between barriers (with it, nvcc",
          "// moved loads across the barriers). Every division is kpp::split_div, or split_div_r with the",
          "// pivot's reciprocal P(d) from split_rcp (kpp_split.h): with",
          "// Exact false the division's fast path without its branch, a lane whose operands it does not",
          "// cover setting SPLIT_INEXACT in the result, for the caller to run the attempt again with",
          "// Exact true (the plain division). Returns the warp's share of kpp_decomp's singular flag",
          "// (SPLIT_SINGULAR), and SPLIT_INEXACT.",
          "template <class T, bool Exact>",
          "WRFGPU_KPP_SPLIT int split_step(T* pub, const T* r, T* gv, int warp, int lane, const kpp::SplitScalars& c) {",
          "#define S(k) pub[(k) * 32 + lane]",
          "#define KPP_DIV(a, b) ::wrfgpu::kpp::split_div<Exact>((a), (b), inexact)",
          "#define KPP_DIVR(a, b, r) ::wrfgpu::kpp::split_div_r<Exact>((a), (b), (r), inexact)",
          "#define KPP_RCP(b) ::wrfgpu::kpp::split_rcp<Exact>((b), inexact)",
          "  %s" % unpack, "  int sing = 0;", "  bool inexact = false;"]
    for w in range(P):
        o.append('  %s (warp == %d) {' % ('if' if w == 0 else '} else if', w))
        seen = set()
        for l in range(L):
            for i in by[l]:
                if sp.warp_of[i] != w:
                    continue
                s = st[i]
                for v in s.writes:
                    if v[0] in ('g', 'x', 'p') and v not in seen:
                        seen.add(v)
                        o.append('    T %s;' % nm(v))

                def ref(mt):
                    v = (mt.group(1).lower(), int(mt.group(2)))
                    return nm(v) if sp.own(v) == w else 'S(%d)' % sp.slot[v]
                o.append('    ' + TOK.sub(ref, s.code))
                for v in sorted(sp.publish.get(i, ())):
                    o.append('    S(%d) = %s;' % (sp.slot[v], nm(v)))
            if l in sp.barriers:
                o.append('    WRFGPU_SPLIT_BARRIER();')
    o += ["  }", "  return (sing ? kpp::SPLIT_SINGULAR : 0) | (inexact ? kpp::SPLIT_INEXACT : 0);", "}",
          "#undef S", "#undef R", "#undef V", "#undef KPP_DIV", "#undef KPP_DIVR", "#undef KPP_RCP", "", PHYS_CLOSE,
          "}  // namespace %s" % g.ns, "}  // namespace wrfgpu", ""]
    return "\n".join(o)


PHYS_OPEN = "inline namespace WRFGPU_PHYS_NS {"
PHYS_CLOSE = "}  // inline namespace phys_<mode>"
