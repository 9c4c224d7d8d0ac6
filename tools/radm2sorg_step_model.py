#!/usr/bin/env python3
"""radm2sorg_step_model.py - a model of one Rosenbrock step (Ros3, accepted, a new step) of one
RADM2SORG cell, read from the generated straight-line code (src/radm2sorg/generated). Used by
docs/radm2sorg.md, "A model of the lane kernel's traffic, and of cells split over warps"; it
measures nothing on a GPU.

  traffic: the step's accesses to the lane kernel's per-lane block (cell record, then RosWork),
           in program order, through a two-level LRU model (L1: read-allocate, write-through;
           L2: write-back), each level's capacity the device's share per lane; prints DRAM KB
           per cell-step for 8, 12 and 16 warps per SM, and with the K most-missed elements
           pinned in shared memory (taken out of the same 256 KB per SM).
  dag:     the step's dataflow: arithmetic operations W and the critical path CP, each
           statement evaluated left to right as the generated code (and WRF's Fortran) orders it.

  schedule: the statements split over P warps (each to the warp that finishes it first, or by
           the matrix row they write), an operand from another warp arriving S operations
           late; prints the step's length and the operands that cross warps.

  supersteps: the statements by dependency level, a block barrier between levels, each
           level dealt over P warps.

Usage: tools/radm2sorg_step_model.py [traffic|dag|schedule|supersteps]"""
import collections, os, re, sys

G = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'src', 'radm2sorg', 'generated')
NVAR, NFIX, NREACT, NNZ = 59, 2, 156, 659
OFF = {}
_o = 0
for _n, _k in [('y', NVAR), ('fix', NFIX), ('rct', NREACT), ('ynew', NVAR), ('fcn0', NVAR), ('fcn', NVAR),
               ('k0', NVAR), ('k1', NVAR), ('k2', NVAR), ('k3', NVAR), ('k4', NVAR), ('k5', NVAR), ('g', NNZ)]:
    OFF[_n] = _o
    _o += _k
ACC = re.compile(r'\b([a-z]+)\[(\d+) \* s\]')
IDN = re.compile(r'\b([a-z]\w*)\b')
SKIP = {'const', 'if', 'return', 'kpp_abs_lu', 'value', 's', 'double', 'ghinv', 'f', 'void'}


def body(fname, start):
    src = open(os.path.join(G, fname)).read()
    j = src.index('{', src.index(start))
    depth = 0
    for p in range(j, len(src)):
        depth += {'{': 1, '}': -1}.get(src[p], 0)
        if depth == 0:
            return src[j + 1:p]


CODE = {'fun': body('radm2sorg_function.h', 'WRFGPU_KPP_BIG void fun('),
        'jac': body('radm2sorg_jacobian.h', 'WRFGPU_KPP_BIG void jac_ghimj('),
        'dec': body('radm2sorg_linalg.h', 'WRFGPU_KPP_BIG int kpp_decomp('),
        'sol': body('radm2sorg_linalg.h', 'WRFGPU_KPP_BIG void kpp_solve(')}


def statements(code):
    scope = 0
    for stmt in code.split(';'):
        s = re.sub(r'//[^\n]*', '', stmt)
        scope += s.count('{')
        fence = 'WRFGPU_KPP_FENCE' in s
        s = s.replace('{', ' ').replace('}', ' ').replace('WRFGPU_KPP_FENCE()', '').strip()
        yield scope, fence, s


# The step: (kind, code or sources, array names)
def step_parts():
    fun = lambda vin, out: ('code', 'fun', {'v': vin, 'f': 'fix', 'rct': 'rct', 'vdot': out})
    return [fun('y', 'fcn0'), ('code', 'jac', {'v': 'y', 'f': 'fix', 'rct': 'rct', 'jvs': 'g'}),
            ('code', 'dec', {'jvs': 'g'}),
            ('comb', ['fcn0'], 'k0'), ('code', 'sol', {'jvs': 'g', 'x': 'k0'}),
            ('comb', ['y', 'k0'], 'ynew'), fun('ynew', 'fcn'),
            ('comb', ['fcn', 'k0'], 'k1'), ('code', 'sol', {'jvs': 'g', 'x': 'k1'}),
            ('comb', ['fcn', 'k0', 'k1'], 'k2'), ('code', 'sol', {'jvs': 'g', 'x': 'k2'}),
            ('comb', ['y', 'k0', 'k1', 'k2'], 'ynew'), ('comb', ['ynew'], 'y')]


def trace():
    """(op, element) in program order; a value read twice between two fences is loaded once."""
    ev = []
    for part in step_parts():
        if part[0] == 'comb':
            for i in range(NVAR):
                ev += [('r', OFF[a] + i) for a in part[1]] + [('w', OFF[part[2]] + i)]
            continue
        names, seen = part[2], set()
        for _, fence, s in statements(CODE[part[1]]):
            if fence or part[1] == 'sol':  # the solve's stores may alias its loads: no reuse
                seen = set()
            m = re.match(r'([a-z]+)\[(\d+) \* s\]\s*=(?!=)', s)
            rhs = s[m.end():] if m else s
            for a, i in ACC.findall(rhs):
                e = OFF[names[a]] + int(i)
                if e not in seen:
                    seen.add(e)
                    ev.append(('r', e))
            if m:
                e = OFF[names[m.group(1)]] + int(m.group(2))
                seen.add(e)
                ev.append(('w', e))
    return ev


class LRU(collections.OrderedDict):
    def __init__(self, cap):
        super().__init__()
        self.cap = cap

    def touch(self, e, dirty=False):
        hit = e in self
        self[e] = self.pop(e, False) or dirty
        out = self.popitem(last=False) if len(self) > self.cap else None
        return hit, out


def dram_per_step(ev, c1, c2, pinned=frozenset(), steps=5):
    l1, l2 = LRU(c1), LRU(c2)
    for t in range(steps):
        byte = 0
        for op, e in ev:
            if e in pinned:
                continue
            if op == 'r':
                if e in l1:
                    l1.touch(e)
                    continue
                l1.touch(e)
                hit, out = l2.touch(e)
                byte += 0 if hit else 8
            else:
                if e in l1:
                    l1.touch(e)
                hit, out = l2.touch(e, True)
            byte += 8 if out and out[1] else 0
    return byte  # the last step's, caches warm


def traffic():
    ev = trace()
    print(f'{len(ev)} accesses per step, {len({e for _, e in ev})} elements')
    l2, sms, unified = 50 * 2**20, 132, 248 * 1024  # H100/H200; L1 with the smallest carveout
    for warps in (8, 12, 16):
        lanes = 32 * warps
        c1, c2 = unified // 8 // lanes, l2 // 8 // (lanes * sms)
        miss = collections.Counter()
        l1c, l2c = LRU(c1), LRU(c2)
        for t in range(3):  # the elements that miss L1 most, on the third step
            for op, e in ev:
                if op == 'r' and e in l1c:
                    l1c.touch(e)
                    continue
                if op == 'r':
                    l1c.touch(e)
                hit, _ = l2c.touch(e, op == 'w')
                if t == 2:
                    miss[e] += 1 if hit else 3
        order = [e for e, _ in miss.most_common()]
        row = []
        for k in (0, 16, 32, 48, 64):
            if c1 - k >= 8:
                row.append(f'{k} pinned {dram_per_step(ev, c1 - k, c2, frozenset(order[:k])) / 1024:.1f}')
        print(f'{warps} warps per SM (L1 {c1}, L2 {c2} values per lane): DRAM KB per step: ' + ', '.join(row))


def statement_nodes(parts=None):
    """The step (or the given parts of it) as statements in program order: (the value written,
    terms), terms a list of (the values the term reads, its multiplications), summed left to
    right."""
    out = []
    for part in parts or step_parts():
        if part[0] == 'comb':
            for i in range(NVAR):
                rd = [(a, i) for a in part[1]]
                out.append(((part[2], i), [([r], 0 if j == 0 else 1) for j, r in enumerate(rd)]))
            continue
        kind, names = part[1], part[2]
        tag = (kind, len(out))
        declared = set()
        for scope, _, s in statements(CODE[kind]):
            m = re.match(r'(?:const\s+)?(?:T\s+)?([a-z]\w*)(?:\[(\d+) \* s\])?\s*=(?!=)(.*)', s, re.S)
            if not m or s.startswith('if') or s.startswith('(void)'):
                continue

            def var(name, idx=None):
                if idx is not None:
                    return (names[name], int(idx))
                return (tag, scope, name) if (tag, scope, name) in declared or (tag, 0, name) not in declared else (tag, 0, name)
            lhs = var(m.group(1), m.group(2))
            declared.add(lhs)
            rhs = re.sub(r'T\([0-9.e+-]+f?\)', 'C', m.group(3))
            toks = re.split(r'(?<![eE])\s([-+])\s', ' ' + rhs.strip())
            terms = []
            for term in [toks[0]] + toks[2::2]:
                rd = [var(a, i) for a, i in ACC.findall(term)]
                rd += [var(t) for t in IDN.findall(ACC.sub(' ', term)) if t not in SKIP and t not in ('C', 'T')]
                terms.append((rd, len(re.findall(r'[*/]', term))))
            out.append((lhs, terms))
    return out


def chain_times(nodes):
    """Operations and critical path of statements evaluated as the code orders them: a term's
    products once its operands are there, the sum's terms added in their order."""
    fin, work = {}, 0
    for lhs, terms in nodes:
        t_acc = None
        for rd, nmul in terms:
            ready = max([fin.get(r, 0) for r in rd] + [0]) + nmul
            work += nmul
            if t_acc is None:
                t_acc = ready
            else:  # the sum's next term: one addition after both are ready
                t_acc = max(t_acc, ready) + 1
                work += 1
        fin[lhs] = max(t_acc, fin.get(lhs, 0))
    return work, max(fin.values())


def dag():
    for kind, name in (('fun', 'fun'), ('jac', 'jac_ghimj'), ('dec', 'kpp_decomp'), ('sol', 'kpp_solve')):
        part = [p for p in step_parts() if p[0] == 'code' and p[1] == kind][:1]
        w, c = chain_times(statement_nodes(part))
        print(f'  {name} alone: {w} operations, critical path {c}')
    work, cp = chain_times(statement_nodes())
    print(f'one step: {work} arithmetic operations, critical path {cp}')
    for p in (4, 8, 16):
        print(f'  split over {p} warps: at least max(W/{p}, CP) = {max(work / p, cp):.0f} dependent operations per warp')


def lu_rows():
    src = open(os.path.join(G, 'radm2sorg_parameters.h')).read()
    i = src.index('LU_IROW[LU_NONZERO] = {')
    return [int(x) for x in re.findall(r'\d+', src[i + 23:src.index('}', i)])]


def row_of(var, irow):
    """The matrix row (species) an array element belongs to; None for a temporary."""
    if len(var) != 2:
        return None
    return irow[var[1]] if var[0] == 'g' else var[1]


def schedule():
    """Each statement to a warp, which runs its statements in program order (a product as soon
    as its operands are there, a sum's terms in their order); an operand written by another
    warp arrives S operations after it was written. Splits: 'greedy', each statement to the
    warp that finishes it first; 'rows', the statements that write a row's values (a species'
    vector entries, a matrix row) to the row's warp, rows dealt round robin, temporaries
    greedy. Prints the step's length (the busiest warp) and the operands that cross warps."""
    st = statement_nodes()
    irow = lu_rows()
    for split in ('greedy', 'rows'):
        for p in (8, 16):
            for S in (0, 4, 10):
                ready, owner = {}, {}
                clock = [0] * p
                cross = 0
                for lhs, terms in st:
                    r = row_of(lhs, irow)
                    cands = [r % p] if split == 'rows' and r is not None else range(p)
                    best = None
                    for w in cands:
                        t, acc = clock[w], None
                        for rd, nmul in terms:
                            arrive = max([ready.get(x, 0) + (S if owner.get(x, w) != w else 0) for x in rd] + [0])
                            t = max(t, arrive) + nmul
                            acc = t if acc is None else max(acc, t) + 1
                            t = max(t, acc)
                        if lhs in ready:
                            acc = max(acc, ready[lhs] + (S if owner[lhs] != w else 0))
                        if best is None or acc < best[0]:
                            best = (acc, w, t)
                    acc, w, t = best
                    cross += sum(1 for rd, _ in terms for x in rd if owner.get(x, w) != w)
                    ready[lhs], owner[lhs], clock[w] = acc, w, max(t, acc)
                print(f'  {split:6s} {p:2d} warps, an operand from another warp after {S:2d}: {max(clock)} operations '
                      f'per step (busiest warp), {cross} operands cross warps')

def supersteps():
    """The statements by dependency level (a statement one level after the latest of its
    operands), a block barrier between levels, each level's work dealt to P warps (longest
    first, each to the least loaded warp). 'whole': a statement is one piece of work; 'products
    apart': a sum of several terms has its products computed a level earlier, spread over the
    warps, and only its additions, in their order, in one piece. Prints the levels (barriers)
    per step and the step's length, the sum over levels of the busiest warp's operations, plus
    B operations per barrier."""
    st = statement_nodes()
    for split in ('whole', 'products apart'):
        level, work = {}, collections.defaultdict(list)
        for lhs, terms in st:
            lv_in = max([level[x] + 1 for t, _ in terms for x in t if x in level] + [0])
            if lhs in level:
                lv_in = max(lv_in, level[lhs] + 1)
            if split == 'whole' or len(terms) < 3:
                lv = lv_in
                work[lv].append(max(sum(n for _, n in terms) + len(terms) - 1, 1))
            else:
                for rd, nmul in terms:  # each product a level after its own operands
                    if nmul:
                        work[max([level[x] + 1 for x in rd if x in level] + [0])].append(nmul)
                lv = lv_in + 1
                work[lv].append(len(terms) - 1)
            level[lhs] = lv
        for p in (8, 16):
            length = 0
            for costs in work.values():
                w = [0] * p
                for c in sorted(costs, reverse=True):
                    w[w.index(min(w))] += c
                length += max(w)
            for B in (5, 20):
                print(f'  {split:14s} {p:2d} warps: {len(work)} levels (barriers) per step, the busiest warp {length} '
                      f'operations, with B = {B} per barrier {length + B * len(work)}')

if __name__ == '__main__':
    {'traffic': traffic, 'dag': dag, 'schedule': schedule, 'supersteps': supersteps}[sys.argv[1] if len(sys.argv) > 1 else 'traffic']()
