#!/usr/bin/env python3
"""Prototype (measurement only): one whole Ros3 step of 32 RADM2SORG cells (lanes), split over
P warps, as tools/radm2sorg_step_model.py builds it: fun(Y) -> Fcn0, jac_ghimj, kpp_decomp, the
three stages (K0 = Fcn0; Ynew = Y + K0, fun(Ynew) -> Fcn; K1 = Fcn + HC*K0; K2 = Fcn + HC*K0
+ HC*K1; each solved in place), the new solution and the error terms, summed in species order.
Every statement is the generated code's (fun's rates and sums, jac_ghimj's columns by rows,
the decomposition and solve written in place), so the split gives the serial code's bits.

The split: each matrix row (species) belongs to one warp, dealt longest first by operand loads;
a warp computes its rows' matrix entries (jac_ghimj by rows), their decomposition updates, its
entries of the vector being solved and its species' vector elements, and keeps its rows' matrix
and vector entries in registers. An entry another warp reads (a pivot row's, a solved unknown)
is stored to shared memory after the write that the read needs; fun's reaction rates and the
error sum go to the least loaded warp of their level; the other vectors are in global memory
(the L2), the rate constants in shared memory. A barrier separates every two accesses by
different warps to one memory location (92 of the 124 level boundaries).
(Measured and lost: every entry in shared memory with each level dealt over the warps, waits
between pairs of warps, a table of operations interpreted by a loop: docs/radm2sorg.md, "Cells
split over warps, measured".)
Usage: gen_step.py P OUT.h"""
import collections, os, re, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import radm2sorg_step_model as M

NV, NR, NNZ = M.NVAR, M.NREACT, M.NNZ
VECS = [('y', NV), ('fix', 2), ('ynew', NV), ('fcn0', NV), ('fcn', NV), ('k0', NV), ('k1', NV), ('k2', NV),
        ('a', NR), ('err', NV), ('errsum', 1)]
OFF, _o = {}, 0
for _n, _k in VECS:
    OFF[_n] = _o
    _o += _k
NGV = _o
ACC = re.compile(r'\b(rct|v|f|jvs)\[(\d+) \* s\]')
ATMP = re.compile(r'\ba(\d+)\b')


class St:
    def __init__(self, writes, reads, code):
        self.writes, self.reads, self.code = writes, reads, code


def vec(name, i):
    return ('v', OFF[name] + i)


def translate(expr, vin, reads):
    """The generated code's arrays as the split's: rct -> R, v -> V(vin), f -> V(fix), aN -> V(a)."""
    def acc(m):
        a, i = m.group(1), int(m.group(2))
        if a == 'rct':
            reads.append(('r', i))
            return f'R({i})'
        if a == 'jvs':
            raise SystemExit('jvs read: ' + expr)
        v = vec(vin if a == 'v' else 'fix', i)
        reads.append(v)
        return f'V({v[1]})'
    expr = ACC.sub(acc, expr)

    def tmp(m):
        v = vec('a', int(m.group(1)))
        reads.append(v)
        return f'V({v[1]})'
    return ATMP.sub(tmp, expr)


def fun(vin, out):
    st = []
    for _, _, s in M.statements(M.CODE['fun']):
        if not s or s.startswith('(void)'):
            continue
        m = re.match(r'const T a(\d+) = (.*)$', s, re.S)
        if m:
            reads = []
            e = translate(' '.join(m.group(2).split()), vin, reads)
            w = vec('a', int(m.group(1)))
            st.append(St([w], reads, f'V({w[1]}) = {e};'))
            continue
        m = re.match(r'vdot\[(\d+) \* s\] = (.*)$', s, re.S)
        if not m:
            raise SystemExit('fun: ' + s)
        reads, i = [], int(m.group(1))
        e = translate(' '.join(m.group(2).split()), vin, reads)
        w = vec(out, i)
        st.append(St([w], reads, f'V({w[1]}) = {e};'))
    return st


def jac(irow):
    """jac_ghimj, each column's entries as one statement per matrix row (the row's owner
    computes them), with the column's b products that row's entries use: a product taken by
    several rows is recomputed by each, the same product, the same bits."""
    st = []
    for block in M.CODE['jac'].split('WRFGPU_KPP_FENCE();'):
        block = re.sub(r'//[^\n]*', '', block).replace('{', ' ').replace('}', ' ')
        parts = [' '.join(p.split()) for p in block.split(';') if p.strip() and not p.strip().startswith('(void)')]
        bdef, byrow = {}, collections.defaultdict(list)  # b -> (code, reads); row -> [(entry, code)]
        for p in parts:
            m = re.match(r'const T (b\d+) = (.*)$', p)
            if m:
                reads = []
                bdef[m.group(1)] = (translate(m.group(2), 'y', reads), reads)
                continue
            m = re.match(r'jvs\[(\d+) \* s\] = (.*)$', p)
            if not m:
                raise SystemExit('jac: ' + p)
            e = int(m.group(1))
            byrow[irow[e]].append((e, translate(m.group(2), 'y', [])))
        for lst in byrow.values():
            used = sorted({b for _, ex in lst for b in re.findall(r'\bb\d+\b', ex)}, key=lambda b: int(b[1:]))
            code = ' '.join(['{'] + [f'const T {b} = {bdef[b][0]};' for b in used] +
                            [f'G({e}) = {ex};' for e, ex in lst] + ['}'])
            st.append(St([('g', e) for e, _ in lst], [r for b in used for r in bdef[b][1]], code))
    return st


ACC_LU = re.compile(r'\b(jvs|x)\[(\d+) \* s\]')
TOK = re.compile(r'\b([GX])\((\d+)\)')


def lu_statements():
    """kpp_decomp and kpp_solve as statements in place on G and X: (write, reads, C++). The
    decomposition's work values of a row live in G itself (stored and reloaded exactly) and the
    multiplier is minus the stored L entry (exact), so the bits are the generated code's."""
    out = []
    alias, a_elem = {}, None
    for _, _, s in M.statements(M.CODE['dec']):
        if not s or s.startswith('if') or s.startswith('return') or s == 'T a':
            continue
        m = re.match(r'T (w\d+) = jvs\[(\d+) \* s\]$', s)
        if m:
            alias[m.group(1)] = int(m.group(2))
            continue
        m = re.match(r'a = -(w\d+) / jvs\[(\d+) \* s\]$', s)
        if m:  # with the next 'wN = -a': L = -((-w)/d), a = -L
            e, d = alias[m.group(1)], int(m.group(2))
            out.append((('g', e), [('g', e), ('g', d)], f'G({e}) = -((-G({e})) / G({d}));'))
            a_elem = e
            continue
        if re.match(r'w\d+ = -a$', s):
            continue
        m = re.match(r'(w\d+) = (w\d+) \+ a \* jvs\[(\d+) \* s\]$', s)
        if m:
            e, p = alias[m.group(1)], int(m.group(3))
            out.append((('g', e), [('g', e), ('g', a_elem), ('g', p)], f'G({e}) = G({e}) + (-G({a_elem})) * G({p});'))
            continue
        if re.match(r'jvs\[\d+ \* s\] = w\d+$', s):
            continue
        raise SystemExit('unexpected: ' + s)
    for _, _, s in M.statements(M.CODE['sol']):
        if not s:
            continue
        m = re.match(r'x\[(\d+) \* s\] = (.*)$', s, re.S)
        if not m:
            raise SystemExit('unexpected: ' + s)
        reads = [('g' if a == 'jvs' else 'x', int(i)) for a, i in ACC_LU.findall(m.group(2))]
        expr = ACC_LU.sub(lambda t: ('G' if t.group(1) == 'jvs' else 'X') + f'({t.group(2)})', m.group(2))
        out.append((('x', int(m.group(1))), reads, f'X({m.group(1)}) = {" ".join(expr.split())};'))
    return out


def decomp_solve():
    """kpp_decomp's statements and kpp_solve's, apart."""
    dec, sol = [], []
    for (w, reads, code) in lu_statements():
        (dec if w[0] == 'g' else sol).append(St([w], list(reads), code))
    return dec, sol


def per_species(fmt, writes, reads):
    return [St([w(i) for w in writes], [r(i) for r in reads], fmt.format(i=i, **{n: OFF[n] + i for n, _ in VECS}))
            for i in range(NV)]


def step(irow):
    dec, solve = decomp_solve()
    st = fun('y', 'fcn0') + jac(irow) + dec
    X, V = (lambda i: ('x', i)), (lambda n: lambda i: vec(n, i))
    st += per_species('X({i}) = V({fcn0});', [X], [V('fcn0')]) + solve
    st += per_species('V({k0}) = X({i});', [V('k0')], [X])
    st += per_species('V({ynew}) = V({y}) + (T)1.0 * V({k0});', [V('ynew')], [V('y'), V('k0')])
    st += fun('ynew', 'fcn')
    st += per_species('X({i}) = V({fcn}) + (T)hc1 * V({k0});', [X], [V('fcn'), V('k0')]) + solve
    st += per_species('V({k1}) = X({i});', [V('k1')], [X])
    st += per_species('X({i}) = V({fcn}) + (T)hc20 * V({k0}) + (T)hc21 * V({k1});', [X], [V('fcn'), V('k0'), V('k1')]) + solve
    st += per_species('V({k2}) = X({i});', [V('k2')], [X])
    st += per_species('{{ T yn = V({y}) + (T)ROS_M0 * V({k0}) + (T)ROS_M1 * V({k1}) + (T)ROS_M2 * V({k2}); '
                      'T ye = T(0) + (T)ROS_E0 * V({k0}) + (T)ROS_E1 * V({k1}) + (T)ROS_E2 * V({k2}); V({ynew}) = yn; '
                      'const double sc = ATOL + RTOL * fmax(fabs((double)V({y})), fabs((double)yn)); '
                      'const double q = (double)ye / sc; V({err}) = q * q; }}',
                      [V('ynew'), V('err')], [V('y'), V('k0'), V('k1'), V('k2')])
    e = OFF['err']
    st.append(St([vec('errsum', 0)], [vec('err', i) for i in range(NV)],
                 f'{{ double s_ = 0.0; ' + ' '.join(f's_ = s_ + V({e + i});' for i in range(NV)) + f' V({OFF["errsum"]}) = s_; }}'))
    return st


def levels(st):
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


def species_of(o):
    """The species of a per-species vector element V(o); None for fun's rates and the sums."""
    for n, k in VECS:
        if n in ('a', 'errsum', 'fix'):
            continue
        if OFF[n] <= o < OFF[n] + k:
            return o - OFF[n]
    return None


def row_of(st, irow):
    """The matrix row (species) a statement writes."""
    rows = set()
    for w in st.writes:
        rows.add(irow[w[1]] if w[0] == 'g' else w[1] if w[0] == 'x' else species_of(w[1]))
    assert len(rows) == 1, (st.code, rows)
    return rows.pop()


def needed_barriers(st, lv, L, warp_of, own, publish):
    """The levels after which a barrier is needed: a set that puts one between every pair of
    conflicting accesses by different warps to one memory location (a published matrix or
    vector entry's shared-memory slot, written by its owner's publishing stores and final
    store; a vector element or rate in global memory), chosen greedily by the latest level each
    pair allows (interval stabbing). Registers are private; the last level always ends with one
    (before the final stores)."""
    acc = collections.defaultdict(list)  # location -> [(level, 0 read | 1 write, warp)]
    first = {}
    for i in sorted(range(len(st)), key=lambda i: (lv[i], i)):
        w, l = warp_of[i], lv[i]
        for v in st[i].reads:
            if v[0] in ('g', 'x'):
                if own(v) != w:
                    acc[v].append((l, 0, w))
                elif v not in first:  # the owner's first touch loads the input from the slot
                    first[v] = l
                    acc[v].append((l, 0, w))
            elif v[0] == 'v':
                acc[v].append((l, 0, w))
        for v in st[i].writes:
            if v[0] in ('g', 'x'):
                first.setdefault(v, l)
                if v in publish.get(i, ()):
                    acc[v].append((l, 1, w))
            elif v[0] == 'v':
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
    chosen = {L - 1}
    for a, b in sorted(spans, key=lambda s: s[1]):
        assert a < b, (a, b)
        if not any(a <= k < b for k in chosen):
            chosen.add(b - 1)
    return chosen


def main():
    P, out = int(sys.argv[1]), sys.argv[2]
    irow = M.lu_rows()
    st = step(irow)
    lv = levels(st)
    L = max(lv) + 1
    rows = [row_of(s, irow) if not any(w[0] == 'v' and species_of(w[1]) is None for w in s.writes) else None for s in st]
    cost = [len(s.reads) for s in st]
    rc = collections.Counter()
    for r, c in zip(rows, cost):
        if r is not None:
            rc[r] += c
    owner, tot = {}, [0] * P
    for r, c in rc.most_common():
        owner[r] = tot.index(min(tot)); tot[owner[r]] += c
    by = collections.defaultdict(list)
    for i, l in enumerate(lv):
        by[l].append(i)
    warp_of, total = {}, list(tot)
    for l in range(L):
        load = [0] * P
        for i in by[l]:
            if rows[i] is not None:
                warp_of[i] = owner[rows[i]]; load[warp_of[i]] += cost[i]
        for i in sorted((i for i in by[l] if rows[i] is None), key=lambda i: -cost[i]):
            w = min(range(P), key=lambda k: (load[k], total[k]))
            warp_of[i] = w; load[w] += cost[i]; total[w] += cost[i]
    REG = lambda v: v[0] in ('g', 'x')
    own = lambda v: owner[irow[v[1]] if v[0] == 'g' else v[1]]
    order = sorted(range(len(st)), key=lambda i: (lv[i], i))
    events = collections.defaultdict(list)
    for i in order:
        for r in st[i].reads:
            if REG(r):
                events[r].append((lv[i], 0, i, warp_of[i]))
        for w in st[i].writes:
            if REG(w):
                events[w].append((lv[i], 1, i, warp_of[i]))
    publish = collections.defaultdict(set)  # statement -> elements to store after it
    for v, ev in events.items():
        ev.sort()
        last = None
        for l, kind, i, w in ev:
            if kind == 1:
                assert w == own(v), (st[i].code, v)
                last = i
            elif w != own(v) and last is not None:
                publish[last].add(v)
    barriers = needed_barriers(st, lv, L, warp_of, own, publish)
    nm = lambda v: f'r{v[0]}{v[1]}'
    args = 'T* g, T* x, const T* r, T* gv'
    scal = 'double ghinv, double hc1, double hc20, double hc21'
    lines = [f'// GENERATED by tools/split_proto/gen_step.py {P}: {len(st)} statements in {L} levels, the rows of the',
             f'// matrix and vector over {P} warps, each warp\'s in its registers', '#pragma once',
             f'#define SPLIT_P {P}', f'#define SPLIT_LEVELS {L}', f'#define SPLIT_NGV {NGV}'] + \
            [f'#define SPLIT_OFF_{n.upper()} {OFF[n]}' for n, _ in VECS] + \
            ['#define ROS_M0 0.1E+01', '#define ROS_M1 0.61697947043828245592553615689730E+01',
             '#define ROS_M2 -0.42772256543218573326238373806514E+00', '#define ROS_E0 0.5E+00',
             '#define ROS_E1 -0.29079558716805469821718236208017E+01', '#define ROS_E2 0.22354069897811569627360909276199E+00',
             '#define ATOL 1.0E-3', '#define RTOL 1.0E-3',
             '#define G(e) g[(e) * 32 + lane]', '#define X(i) x[(i) * 32 + lane]', '#define R(j) r[(j) * 32 + lane]',
             '#define V(o) gv[(o) * 32 + lane]',
             '// The statements in program order, one thread per lane: the reference.',
             f'template <class T> WRFGPU_HD_SPLIT void split_step_serial({args}, int lane, {scal}) {{', '  (void)ghinv;'] + \
            ['  ' + s.code for s in st] + ['}',
             '// The split, one thread per (warp, lane). SPLIT_BARRIER() is the includer\'s: every warp reaches',
             '// it once per level, but from its own code, so on the device it must be the non-aligned',
             '// barrier.sync, not __syncthreads (bar.sync, which requires one instruction for all). g and x',
             '// carry no __restrict__: other warps write them, and with it nvcc moved loads of the published',
             '// entries across the barriers (wrong bits, measured).',
             f'template <class T> WRFGPU_HD_SPLIT void split_step({args}, int warp, int lane, {scal}) {{']
    for w in range(P):
        lines.append(f'  {"if" if w == 0 else "else if"} (warp == {w}) {{')
        seen, touched = set(), []
        for l in range(L):
            for i in by[l]:
                if warp_of[i] != w:
                    continue
                s = st[i]
                for v in s.reads:
                    if REG(v) and own(v) == w and v not in seen:
                        seen.add(v); touched.append(v)
                        lines.append(f'    T {nm(v)} = {"G" if v[0] == "g" else "X"}({v[1]});')
                for v in s.writes:
                    if REG(v) and v not in seen:
                        seen.add(v); touched.append(v)
                        lines.append(f'    T {nm(v)};')
                code = TOK.sub(lambda m: nm(('g' if m.group(1) == 'G' else 'x', int(m.group(2))))
                               if own(('g' if m.group(1) == 'G' else 'x', int(m.group(2)))) == w else m.group(0), s.code)
                lines.append('    ' + code)
                for v in sorted(publish.get(i, ())):
                    lines.append(f'    {"G" if v[0] == "g" else "X"}({v[1]}) = {nm(v)};')
            if l in barriers:
                lines.append('    SPLIT_BARRIER();')
        for v in touched:
            lines.append(f'    {"G" if v[0] == "g" else "X"}({v[1]}) = {nm(v)};')
        lines.append('  }')
    lines += ['}', '#undef G', '#undef X', '#undef R', '#undef V']
    open(out, 'w').write('\n'.join(lines) + '\n')
    print(f'P={P}: {len(st)} statements, {L} levels, {len(barriers)} barriers, '
          f'{sum(len(v) for v in publish.values())} stores published, '
          f'operand loads per warp {total}')


if __name__ == '__main__':
    main()
