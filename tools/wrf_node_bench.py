#!/usr/bin/env python3
"""wrf_node_bench.py - time whole WRF runs on one node, stock against patched, one table.

    tools/wrf_node_bench.py --rundir RUN --out OUT \\
        --run "stock16  /path/stock/wrf.exe   16x1" \\
        --run "gpu16    /path/patched/wrf.exe 16x1 WRFGPU_BACKEND=gpu" \\
        --run "gpu16mps /path/patched/wrf.exe 16x1 mps WRFGPU_BACKEND=gpu" \\
        --run "gpu4x4   /path/patched_sm/wrf.exe 4x4 mps WRFGPU_BACKEND=gpu" \\
        --same gpu16,gpu16mps [--skip 5] [--perf stock16]

Each --run is NAME EXE RANKSxTHREADS [mps] [perf] [VAR=VALUE ...]. It runs in OUT/NAME, a
folder of links to RUN's files (RUN itself is never written), as
    mpirun -np RANKS --map-by slot:PE=THREADS --bind-to core -x OMP_NUM_THREADS=THREADS ... EXE
with WRFGPU_TIMING=1 (the library prints its per-kernel totals at exit; stock WRF ignores it).
`mps` runs it with the CUDA MPS daemon up (tools/mps.sh start/stop around the run); `perf`
records it with `perf record -e cpu-clock` (from --perf-delay ms after the start) and writes
the top 60 routines by self time over all ranks to OUT/NAME/profile.txt (perf must be on PATH).

Per run it reports the seconds per step ("Timing for main" of rank 0, median and mean over
the steps after the first --skip), the whole wall time of mpirun, and, for patched runs, what
the library's calls took per step on the slowest rank: their wall time and their kernels plus
transfers (CUDA events; the first call of each kernel, which carries the set-up, left out of
both), and a second table of each kernel's calls after the first: ms per call on rank 0 and
call / (kernels + transfers) on rank 0 and at its highest over the ranks.
--same A,B checks that the last wrfout of runs A and B is bitwise the same (every variable).
Writes OUT/summary.md and prints it. Nothing of WRF is in this script: it runs what you built.
"""
import argparse
import glob
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def die(msg):
    print("wrf_node_bench.py: " + msg, file=sys.stderr)
    sys.exit(2)


class Run:
    def __init__(self, spec):
        words = shlex.split(spec)
        if len(words) < 3:
            die("--run needs NAME EXE RANKSxTHREADS [mps] [perf] [VAR=VALUE ...]: %r" % spec)
        self.name, self.exe, shape = words[:3]
        m = re.fullmatch(r"(\d+)x(\d+)", shape)
        if not m:
            die("--run %s: %r is not RANKSxTHREADS (e.g. 16x1)" % (self.name, shape))
        self.ranks, self.threads = int(m.group(1)), int(m.group(2))
        self.mps = self.perf = False
        self.env = {}
        for w in words[3:]:
            if w == "mps":
                self.mps = True
            elif w == "perf":
                self.perf = True
            elif "=" in w:
                k, v = w.split("=", 1)
                self.env[k] = v
            else:
                die("--run %s: %r is neither mps, perf nor VAR=VALUE" % (self.name, w))
        if not os.access(self.exe, os.X_OK):
            die("--run %s: %s is not an executable" % (self.name, self.exe))


def link_rundir(src, dst):
    os.makedirs(dst, exist_ok=True)
    for f in os.listdir(src):
        if f.startswith(("rsl.", "wrfout_", "wrf.exe")) or f == "namelist.output":
            continue
        d = os.path.join(dst, f)
        if not os.path.lexists(d):
            os.symlink(os.path.join(src, f), d)


def execute(run, rundir, out, mpirun, perf_delay_ms=0):
    wd = os.path.join(out, run.name)
    link_rundir(rundir, wd)
    env = dict(os.environ)
    env.update(run.env)
    env["OMP_NUM_THREADS"] = str(run.threads)
    env.setdefault("WRFGPU_TIMING", "1")
    exported = sorted(set(run.env) | {"OMP_NUM_THREADS", "WRFGPU_TIMING"})
    if run.mps:
        env.setdefault("CUDA_MPS_PIPE_DIRECTORY", "/tmp/nvidia-mps")
        exported.append("CUDA_MPS_PIPE_DIRECTORY")
        subprocess.run([os.path.join(HERE, "mps.sh"), "start"], env=env, check=True)
    cmd = mpirun + ["-np", str(run.ranks), "--map-by", "slot:PE=%d" % run.threads, "--bind-to", "core"]
    for k in exported:
        cmd += ["-x", k]
    cmd.append(os.path.abspath(run.exe))
    if run.perf:
        cmd = ["perf", "record", "-e", "cpu-clock", "-F", "199", "-D", str(perf_delay_ms),
               "-o", "perf.data", "--"] + cmd
    print("== %s: %s" % (run.name, " ".join(shlex.quote(c) for c in cmd)), flush=True)
    t0 = time.monotonic()
    with open(os.path.join(wd, "mpirun.log"), "w") as log:
        rc = subprocess.run(cmd, cwd=wd, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
    wall = time.monotonic() - t0
    if run.mps:
        subprocess.run([os.path.join(HERE, "mps.sh"), "stop"], env=env)
    if run.perf and rc == 0:
        write_profile(wd, os.path.basename(run.exe))  # the kernel's comm: the file name, 15 chars
    return wd, rc, wall


def pretty_symbol(sym):
    """WRF's Fortran names as module::routine, C++ names without arguments or templates."""
    m = re.fullmatch(r"__(\w+?)_MOD_(\w+)", sym)
    if m:
        return "%s::%s" % m.groups()
    if sym.startswith("0x"):
        return "(no symbol)"
    # "(anonymous namespace)" is part of the name, not the argument list.
    anon = "(anonymous namespace)"
    depth, out = 0, ""
    for ch in sym.replace(anon, "\0").split("(")[0].replace("\0", anon):
        depth += ch == "<"
        if depth == 0:
            out += ch
        depth -= ch == ">"
    return out or sym


def write_profile(wd, comm):
    rep = subprocess.run(["perf", "report", "-i", "perf.data", "--stdio", "--no-children",
                          "--sort", "dso,sym", "--comms", comm[:15]], cwd=wd,
                         capture_output=True, text=True)
    agg = {}
    for line in rep.stdout.splitlines():
        m = re.match(r"\s*([0-9.]+)%\s+(\S+)\s+\[.\]\s+(.*\S)", line)
        if m:
            key = (m.group(2), pretty_symbol(m.group(3)))
            agg[key] = agg.get(key, 0.0) + float(m.group(1))
    rows = sorted(agg.items(), key=lambda kv: -kv[1])
    with open(os.path.join(wd, "profile.txt"), "w") as f:
        if not rows:  # say why rather than print an empty profile
            by_comm = subprocess.run(["perf", "report", "-i", "perf.data", "--stdio", "--sort", "comm"],
                                     cwd=wd, capture_output=True, text=True)
            f.write("no samples of %s: perf report said:\n%s\n%s\nby command:\n%s\n" % (comm,
                rep.stderr[-1500:], rep.stdout[-1500:], by_comm.stdout[-1500:] + by_comm.stderr[-800:]))
            return
        f.write("self time over all ranks (perf record -e cpu-clock, %s processes), %%\n" % comm)
        for (dso, sym), pct in rows[:60]:
            f.write("%6.2f  %-26s %s\n" % (pct, dso[:26], sym))


def step_times(wd):
    f = os.path.join(wd, "rsl.error.0000")
    if not os.path.exists(f):
        return []
    pat = re.compile(r"Timing for main.*?:\s+([0-9.]+) elapsed seconds")
    with open(f, errors="replace") as log:
        return [float(m.group(1)) for m in map(pat.search, log) if m]


def library_times(wd):
    """Per rank: {kernel: (calls, kernel_ms, h2d_ms, d2h_ms, call_ms, first_ms, first_kc_ms)}.
    first_kc_ms (the first call's kernels + transfers) is None in the logs of libraries that
    did not print it."""
    ranks = {}
    for f in sorted(glob.glob(os.path.join(wd, "rsl.error.*"))):
        t = {}
        with open(f, errors="replace") as log:
            lines = log.readlines()
        for line in lines:
            m = re.match(r"wrfgpu timing: (\S+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)"
                         r"\s+([0-9.]+)(?:\s+([0-9.]+))?", line)
            if m:
                t[m.group(1)] = tuple(None if x is None else float(x) for x in m.groups()[1:])
        if t:
            ranks[f] = t
    return ranks


def after_first(v):
    """A kernel's calls after its first (which carries the one-off set-up: device memory,
    registrations, tables): (calls, ms per call, kernels + transfers ms per call), the last None
    where the log has no first_kc_ms; None for a kernel called once."""
    n = v[0] - 1
    if n < 1:
        return None
    return n, (v[4] - v[5]) / n, None if v[6] is None else (v[1] + v[2] + v[3] - v[6]) / n


def library_column(lib, nsteps):
    """The table's library column: per step on the slowest rank, the calls' wall time and their
    kernels + transfers, then each kernel's ms per call on its slowest rank; first calls left
    out throughout (their kernels + transfers only where the log has first_kc_ms)."""
    call = max(sum(v[4] - v[5] for v in t.values()) / nsteps for t in lib.values())
    ktx = max(sum(v[1] + v[2] + v[3] - (v[6] or 0.0) for v in t.values()) / nsteps for t in lib.values())
    def ms_per_call(v):  # after the first call; a kernel called once: that call
        a = after_first(v)
        return a[1] if a else v[4]
    per = {k: max(ms_per_call(t[k]) for t in lib.values() if k in t)
           for k in sorted({k for t in lib.values() for k in t})}
    return "%.1f / %.1f (%s)" % (call, ktx, ", ".join("%s %.2f" % kv for kv in per.items()))


def steady_calls(lib):
    """Per kernel, the calls after the first (after_first): {kernel: (calls, ms per call on rank
    0, its kernels + transfers per call, call / (kernels + transfers) on rank 0, the highest such
    ratio over the ranks)}. Needs first_kc_ms in the log (the first call's kernels + transfers,
    left out of both); kernels with a single call or without it are not listed."""
    def per_call(v):
        a = after_first(v)
        if a is None or a[2] is None:
            return None
        _, call, kc = a
        return call, kc, (call / kc if kc > 0 else float("inf"))
    out = {}
    r0 = next((t for f, t in lib.items() if f.endswith("rsl.error.0000")), None)
    for k in sorted({k for t in lib.values() for k in t}):
        each = [per_call(t[k]) for t in lib.values() if k in t]
        if r0 is None or k not in r0 or per_call(r0[k]) is None or None in each:
            continue
        call, kc, ratio = per_call(r0[k])
        out[k] = (int(r0[k][0]) - 1, call, kc, ratio, max(e[2] for e in each))
    return out


def same_wrfout(a, b):
    fa, fb = sorted(glob.glob(os.path.join(a, "wrfout_*"))), sorted(glob.glob(os.path.join(b, "wrfout_*")))
    if not fa or not fb:
        return "no wrfout to compare"
    fa, fb = fa[-1], fb[-1]
    if subprocess.run(["cmp", "-s", fa, fb]).returncode == 0:
        return "bitwise the same (cmp: the files are identical)"
    try:
        import numpy as np
        from scipy.io import netcdf_file
    except ImportError:
        return "files differ byte for byte (cmp); numpy/scipy missing to compare variables"
    with netcdf_file(fa, "r", mmap=False) as x, netcdf_file(fb, "r", mmap=False) as y:
        diff = [v for v in x.variables if v in y.variables and
                not np.array_equal(x.variables[v].data, y.variables[v].data)]
    return "bitwise the same in every variable (headers differ)" if not diff else \
        "DIFFERENT in %d variables: %s" % (len(diff), " ".join(diff[:12]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rundir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--run", action="append", required=True)
    ap.add_argument("--skip", type=int, default=5, help="spin-up steps left out of the step statistics")
    ap.add_argument("--same", action="append", default=[], help="A,B: last wrfout of runs A and B must be bitwise the same")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--perf-delay", type=int, default=0, metavar="MS",
                    help="perf starts recording this long after the start (leaves out start-up and input)")
    a = ap.parse_args()
    if not os.path.isfile(os.path.join(a.rundir, "namelist.input")):
        die("%s/namelist.input not found" % a.rundir)
    runs = [Run(s) for s in a.run]
    names = [r.name for r in runs]
    for pair in a.same:
        for n in pair.split(","):
            if n not in names:
                die("--same %s: no run named %s" % (pair, n))
    os.makedirs(a.out, exist_ok=True)
    rundir = os.path.abspath(a.rundir)
    rows, results, failed = [], {}, 0
    for r in runs:
        wd, rc, wall = execute(r, rundir, a.out, shlex.split(a.mpirun), a.perf_delay)
        st = step_times(wd)
        results[r.name] = wd
        if rc != 0 or not st:
            failed += 1
            tail = ""
            if os.path.exists(os.path.join(wd, "rsl.error.0000")):
                with open(os.path.join(wd, "rsl.error.0000"), errors="replace") as log:
                    tail = log.read()[-600:]
            print("wrf_node_bench.py: run %s failed (mpirun exit %d); see %s\n%s" % (r.name, rc, wd, tail), file=sys.stderr)
            rows.append((r, None))
            continue
        body = st[a.skip:] if len(st) > a.skip else st
        lib = library_times(wd)
        nst = len(st)
        libcol = library_column(lib, nst) if lib else ""
        rows.append((r, dict(n=len(body), med=statistics.median(body), mean=statistics.fmean(body),
                             wall=wall, lib=libcol, steady=steady_calls(lib) if lib else {})))
    base = next((d for _, d in rows if d), None)
    lines = ["| run | ranks x threads | MPS | steps timed | s/step median | s/step mean | speed-up (median) | wall s | library ms/step, slowest rank: calls / kernels+copies (ms per call), first calls left out |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r, d in rows:
        if not d:
            lines.append("| %s | %dx%d | %s | failed | | | | | |" % (r.name, r.ranks, r.threads, "yes" if r.mps else "no"))
            continue
        lines.append("| %s | %dx%d | %s | %d | %.3f | %.3f | %.2fx | %.1f | %s |" % (
            r.name, r.ranks, r.threads, "yes" if r.mps else "no", d["n"], d["med"], d["mean"],
            base["med"] / d["med"], d["wall"], d["lib"]))
    steady = [(r, d["steady"]) for r, d in rows if d and d["steady"]]
    if steady:
        lines += ["", "Library calls after the first (one-off set-up left out of both columns): "
                  "ms per call and call / (kernels + transfers, CUDA events)",
                  "", "| run | kernel | calls | rank 0: ms per call | rank 0: kernels+copies ms | "
                  "rank 0: call / kernels+copies | highest over ranks |", "|---|---|---|---|---|---|---|"]
        for r, st in steady:
            for k, (n, call, kc, ratio, worst) in st.items():
                lines.append("| %s | %s | %d | %.2f | %.2f | %.2fx | %.2fx |" % (r.name, k, n, call, kc, ratio, worst))
    for pair in a.same:
        x, y = pair.split(",")
        lines.append("")
        lines.append("wrfout of %s and %s: %s" % (x, y, same_wrfout(results[x], results[y])))
    for r in runs:
        p = os.path.join(results[r.name], "profile.txt")
        if os.path.exists(p):
            with open(p) as prof:
                lines += ["", "profile of %s:" % r.name, "```"] + prof.read().splitlines()[:26] + ["```"]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write(text)
    print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
