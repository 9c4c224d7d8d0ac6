#!/usr/bin/env python3
"""Prototype (measurement only): one whole Ros3 step of 32 RADM2SORG cells (lanes), split over
P warps, as tools/radm2sorg_step_model.py builds it: fun(Y) -> Fcn0, jac_ghimj, kpp_decomp, the
three stages (K0 = Fcn0; Ynew = Y + K0, fun(Ynew) -> Fcn; K1 = Fcn + HC*K0; K2 = Fcn + HC*K0
+ HC*K1; each solved in place), the new solution and the error terms, summed in species order.
The matrix G, the vector being solved X and the rate constants R are in shared memory; the
other vectors and fun's reaction rates A are in global memory (V(offset), per block, L2-sized).
Every statement is the generated code's (fun's rates and sums, jac_ghimj's columns, the
decomposition and solve written in place), so the split gives the serial code's bits.
Each level of the step's dependency graph is dealt over the warps; a block barrier follows each
level. (Waits between pairs of warps instead of barriers, and each matrix row's statements
kept on one warp, were measured and lost: docs/radm2sorg.md, "Cells split over warps, measured".)
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


def jac():
    """jac_ghimj's columns, each one statement (its b temporaries are the column's own)."""
    body = M.CODE['jac']
    st = []
    for block in body.split('WRFGPU_KPP_FENCE();'):
        block = re.sub(r'//[^\n]*', '', block).replace('{', ' ').replace('}', ' ')
        parts = [p.strip() for p in block.split(';') if p.strip() and not p.strip().startswith('(void)')]
        if not parts:
            continue
        reads, writes, code = [], [], []
        for p in parts:
            p = ' '.join(p.split())
            m = re.match(r'const T (b\d+) = (.*)$', p)
            if m:
                code.append(f'const T {m.group(1)} = {translate(m.group(2), "y", reads)};')
                continue
            m = re.match(r'jvs\[(\d+) \* s\] = (.*)$', p)
            if not m:
                raise SystemExit('jac: ' + p)
            e = int(m.group(1))
            writes.append(('g', e))
            code.append(f'G({e}) = {translate(m.group(2), "y", reads)};')
        st.append(St(writes, reads, '{ ' + ' '.join(code) + ' }'))
    return st


ACC_LU = re.compile(r'\b(jvs|x)\[(\d+) \* s\]')


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


def decomp_solve(which):
    out = []
    for (w, reads, code) in lu_statements():
        if (which == 'dec') != (w[0] == 'g'):
            continue
        out.append(St([w], list(reads), code))
    return out


def per_species(fmt, writes, reads):
    return [St([w(i) for w in writes], [r(i) for r in reads], fmt.format(i=i, **{n: OFF[n] + i for n, _ in VECS}))
            for i in range(NV)]


def step():
    st = fun('y', 'fcn0') + jac() + decomp_solve('dec')
    X, V = (lambda i: ('x', i)), (lambda n: lambda i: vec(n, i))
    solve = decomp_solve('sol')
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


def main():
    P, out = int(sys.argv[1]), sys.argv[2]
    st = step()
    lv = levels(st)
    L = max(lv) + 1
    cost = [len(s.reads) for s in st]
    by = collections.defaultdict(list)
    for i, l in enumerate(lv):
        by[l].append(i)
    # Each level's statements, most operand loads first, to the warp least loaded in the level
    # (ties: the least loaded over the step).
    total, split, busiest = [0] * P, {}, 0
    for l in range(L):
        load, warps = [0] * P, [[] for _ in range(P)]
        for i in sorted(by[l], key=lambda i: -cost[i]):
            w = min(range(P), key=lambda k: (load[k], total[k]))
            warps[w].append(st[i].code)
            load[w] += cost[i]
            total[w] += cost[i]
        split[l] = warps
        busiest += max(load)
    args = 'T* __restrict__ g, T* __restrict__ x, const T* __restrict__ r, T* __restrict__ gv'
    scal = 'double ghinv, double hc1, double hc20, double hc21'
    lines = [f'// GENERATED by tools/split_proto/gen_step.py {" ".join(sys.argv[1:])}: {len(st)} statements in {L} levels',
             '#pragma once', f'#define SPLIT_P {P}', f'#define SPLIT_LEVELS {L}', f'#define SPLIT_NGV {NGV}'] + \
            [f'#define SPLIT_OFF_{n.upper()} {OFF[n]}' for n, _ in VECS] + \
            ['#define ROS_M0 0.1E+01', '#define ROS_M1 0.61697947043828245592553615689730E+01',
             '#define ROS_M2 -0.42772256543218573326238373806514E+00', '#define ROS_E0 0.5E+00',
             '#define ROS_E1 -0.29079558716805469821718236208017E+01', '#define ROS_E2 0.22354069897811569627360909276199E+00',
             '#define ATOL 1.0E-3', '#define RTOL 1.0E-3',
             '#define G(e) g[(e) * 32 + lane]', '#define X(i) x[(i) * 32 + lane]', '#define R(j) r[(j) * 32 + lane]',
             '#define V(o) gv[(o) * 32 + lane]',
             '// The statements in program order (one thread per lane: the reference).',
             f'template <class T> WRFGPU_HD_SPLIT void split_step_serial({args}, int lane, {scal}) {{',
             '  (void)ghinv;'] + ['  ' + s.code for s in st] + ['}',
             '// One level of one warp (the CPU check runs the levels in order, the warps in any order).',
             f'template <class T> void split_step_level(int level, int warp, {args}, int lane, {scal}) {{',
             '  switch (level) {']

    def cases(warps, indent):
        return [y for w in range(P) if warps[w]
                for y in [f'{indent}case {w}:'] + [indent + '  ' + c for c in warps[w]] + [indent + '  break;']]
    for l in range(L):
        lines += [f'  case {l}: switch (warp) {{'] + cases(split[l], '    ') + ['  } break;']
    lines += ['  }', '}', '#ifdef __CUDACC__', '// The split: a block barrier after each level.',
              f'template <class T> __device__ __forceinline__ void split_step({args}, int warp, int lane, {scal}) {{']
    for l in range(L):
        lines += [f'  switch (warp) {{  // level {l}'] + cases(split[l], '    ') + ['  }', '  __syncthreads();']
    lines += ['}', '#endif', '#undef G', '#undef X', '#undef R', '#undef V']
    open(out, 'w').write('\n'.join(lines) + '\n')
    print(f'P={P}: {len(st)} statements, {L} levels, the busiest warp {busiest} operand loads summed over levels, '
          f'{max(total)} over the step (all warps {sum(total)})')


if __name__ == '__main__':
    main()
