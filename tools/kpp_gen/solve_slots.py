#!/usr/bin/env python3
"""How much a reordered kpp_solve could save on the GPU warp kernel: an estimate.

Reads a generated team header (src/<model>/generated/<model>_team.h) and prints, for one
solve (L then U, KPP's operations):
  - the term slots the warp kernel pays now: per segment of the by-rows schedule, the most
    terms one lane runs, summed over the segments (a bound); and as the kernel runs them, the
    lanes' k-th runs side by side, each costing the longest of them;
  - the levels of the rows' dependences (a row needs every X(q) it reads: no order of the
    sums removes them);
  - the term slots if each row's sum were cut into chunks of C terms on separate lanes
    (phase A: the chunks, longest first over the 32 lanes; phase B: the row's lane adds its
    chunks' partial sums), a reordering that leaves KPP's bits.
Slots count multiply-subtract steps only (no divisions, loads or barriers).
Usage: solve_slots.py [src/radm2sorg/generated/radm2sorg_team.h]
"""
import math
import re
import sys


def table(src, name):
    m = re.search(r"%s\[[^\]]*\] = \{(.*?)\};" % name, src, re.S)
    if not m:
        sys.exit("solve_slots.py: no table %s in the header" % name)
    return [int(x) for x in re.findall(r"-?\d+", m.group(1))]


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "src/radm2sorg/generated/radm2sorg_team.h"
    src = open(path).read()
    flat = table(src, "SOLVE_OP")
    ops = [(flat[2 * i] & 1, flat[2 * i] >> 1, flat[2 * i + 1] & 0xFFFF, flat[2 * i + 1] >> 16)
           for i in range(len(flat) // 2)]
    seg = table(src, "SOLVE_SEG")
    lanes = int(re.search(r"TEAM_LANES = (\d+)", src).group(1))
    nseg = (len(seg) - 1) // lanes

    now = aligned = 0
    for s in range(nseg):
        runs = []  # per lane, the terms of each of its runs (a run: consecutive ops on one X(t))
        for l in range(lanes):
            r, last = [], None
            for i in range(seg[s * lanes + l], seg[s * lanes + l + 1]):
                kind, t = ops[i][0], ops[i][1]
                if t != last:
                    r.append(0)
                    last = t
                if kind == 0:
                    r[-1] += 1
                else:
                    last = None  # the division ends the run
            runs.append(r)
        now += max(sum(r) for r in runs)
        k = max(len(r) for r in runs)
        aligned += sum(max(r[j] if j < len(r) else 0 for r in runs) for j in range(k))

    # statements: consecutive operations on one X(t), ended by its division
    stmts = []
    for kind, t, p, q in ops:
        if not stmts or stmts[-1]["t"] != t or stmts[-1]["done"]:
            stmts.append({"t": t, "terms": [], "done": False})
        if kind == 0:
            stmts[-1]["terms"].append(q)
        else:
            stmts[-1]["done"] = True
    ready, level = {}, []
    for s in stmts:
        lv = 1 + max([ready.get(q, 0) for q in s["terms"]] + [ready.get(s["t"], 0)])
        ready[s["t"]] = lv
        level.append(lv)
    nlev = max(level)
    nterm = sum(len(s["terms"]) for s in stmts)
    print("%s: %d terms, %d statements" % (path, nterm, len(stmts)))
    print("warp kernel now: %d segments, %d term slots per solve (%d with the lanes' k-th runs "
          "side by side, as the kernel runs them)" % (nseg, now, aligned))
    print("row dependences: %d levels" % nlev)
    for C in (2, 3, 4, 6, 8):
        total = 0
        for lv in range(1, nlev + 1):
            rows = [s for s, x in zip(stmts, level) if x == lv]
            chunks = []
            for s in rows:
                n = len(s["terms"])
                chunks += [min(C, n - i * C) for i in range(max(1, math.ceil(n / C)))]
            load = [0] * lanes
            for c in sorted(chunks, reverse=True):
                load[load.index(min(load))] += c
            total += max(load) + max(math.ceil(len(s["terms"]) / C) for s in rows)
        print("chunks of %d terms: %d term slots (%+.0f%%)" % (C, total, 100.0 * (total - now) / now))


if __name__ == "__main__":
    main()
