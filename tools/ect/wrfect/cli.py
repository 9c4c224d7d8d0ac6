"""Command line of the WRF ensemble consistency test (tools/ect/ect --help)."""

import argparse
import os
import sys

import numpy as np

from . import stats as wstats
from .ensemble import MIN_PC_FAIL, MIN_RUN_FAIL, RUNS_PER_TEST, Pca, Summary, verdict, top_loadings
from .members import Runner, check_members_differ
from .stats import EctInputError

DEFAULTS = {"layers": 1, "npc": 10, "sigma": 2.0}


def _ids(text):
    """'0-39' or '1000,1001,1002' -> list of ints."""
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        try:
            out += list(range(int(a), int(b) + 1)) if b else [int(a)]
        except ValueError:
            raise EctInputError(f"--members {text!r}: expected a range like 0-39 or a list like 1,2,3")
    return out


def _env(pairs):
    env = {}
    for p in pairs or []:
        k, eq, v = p.partition("=")
        if not eq or not k:
            raise EctInputError(f"--env {p!r}: expected NAME=VALUE")
        env[k] = v
    return env


def _add_run_args(p):
    p.add_argument("--wrf-exe", help="the wrf.exe to run (stock or candidate build)")
    p.add_argument("--rundir", help="folder whose files each run links (WRF's run/ or test/<case>/ tables)")
    p.add_argument("--wrfinput", help="the unperturbed wrfinput_d01")
    p.add_argument("--namelist", help="namelist.input (history_interval sets the output times)")
    p.add_argument("--input", action="append", default=[], help="another input each run links (wrfbdy_d01, ...)")
    p.add_argument("--members", required=True, help="perturbation ids: 0-39 or 1000,1001,1002")
    p.add_argument("--out", required=True, help="folder for the member folders m<id>/ (each holds stats.npz)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs at once (default: cores)")
    p.add_argument("--mpi", type=int, default=1, help="MPI ranks per run (mpirun -np N)")
    p.add_argument("--env", action="append", help="NAME=VALUE for each run (e.g. WRFGPU_BACKEND=cpu)")
    p.add_argument("--seed", type=int, default=1, help="seed of the perturbation generator")
    p.add_argument("--keep-wrfout", action="store_true", help="keep each run's wrfout files")
    p.add_argument("--timeout", type=float, default=3600, help="seconds one run may take")
    p.add_argument("--inputs-from", help="take each member's wrfinput from DIR/m<id>/ (made by `ect perturb`)")


def _runner(a):
    for opt in ("wrf_exe", "wrfinput", "namelist", "members", "out"):
        if not getattr(a, opt, None):
            raise EctInputError(f"--{opt.replace('_', '-')} is needed to make runs")
    return Runner(a.wrf_exe, a.rundir, a.wrfinput, a.namelist, a.out, jobs=a.jobs, mpi=a.mpi,
                  env=_env(a.env), seed=a.seed, keep_wrfout=a.keep_wrfout, timeout=a.timeout,
                  extra_inputs=a.input, inputs_from=getattr(a, "inputs_from", None))


def cmd_run(a):
    ids = _ids(a.members)
    dirs = _runner(a).run(ids)
    sts = [wstats.load(os.path.join(d, "stats.npz")) for d in dirs]
    check_members_differ(sts, [os.path.basename(d) for d in dirs])
    print(f"ect run: {len(dirs)} runs in {a.out}; statistics in m*/stats.npz")
    return 0


def cmd_perturb(a):
    from .members import perturb_wrfinput, use_theta_m
    theta_m = use_theta_m(a.namelist)
    for m in _ids(a.members):
        d = os.path.join(a.out, f"m{m:04d}")
        os.makedirs(d, exist_ok=True)
        changed = perturb_wrfinput(a.wrfinput, os.path.join(d, "wrfinput_d01"), m, a.seed, theta_m)
        print(f"m{m:04d}: " + ", ".join(f"{k} {v} cells moved" for k, v in changed.items()))
    return 0


def cmd_ensemble(a):
    ids = _ids(a.members)
    if not a.collect_only:
        _runner(a).run(ids)
    return _collect(a.out, ids, a.summary or os.path.join(a.out, "ensemble.npz"))


def _collect(out, ids, path):
    sts, labels = [], []
    for m in ids:
        f = os.path.join(out, f"m{m:04d}", "stats.npz")
        if not os.path.exists(f):
            raise EctInputError(f"{f}: missing (member {m} did not run)")
        sts.append(wstats.load(f))
        labels.append(f"m{m:04d}")
    check_members_differ(sts, labels)
    s = Summary(sts, labels, source=out)
    s.save(path)
    print(f"ect ensemble: {s.size} members, {len(s.times)} output times "
          f"({s.times[0]} .. {s.times[-1]}), {len(s.levels)} 3-D and {len(s.surface)} 2-D fields -> {path}")
    return 0


def cmd_stats(a):
    st = wstats.read_wrfout(a.wrfout)
    wstats.save(st, a.output)
    print(f"ect stats: {len(st['times'])} times, {len(st['levels'])} 3-D and "
          f"{len(st['surface'])} 2-D fields -> {a.output}")
    return 0


def _settings(s, a):
    get = lambda k: getattr(a, k) if getattr(a, k, None) is not None else s.settings.get(k, DEFAULTS[k])
    return int(get("layers")), int(get("npc")), float(get("sigma"))


def cmd_calibrate(a):
    from .calibrate import false_positive_rates, normality_by_time
    s = Summary.load(a.ensemble)
    layers = a.layers or s.settings.get("layers", DEFAULTS["layers"])
    print(f"ensemble: {s.size} members, {len(s.times)} output times, {layers} layer(s) per 3-D field")
    print("\nnormality over time (Shapiro-Wilk at 5%):")
    print("| time | varying statistics | share normal | median std/|mean| |")
    print("|---|---|---|---|")
    for t, nv, share, rel in normality_by_time(s, layers):
        print(f"| {t} | {nv} | {share:.2f} | {rel:.2e} |")
    ti = s.time_index(a.time)
    x, names = s.matrix(ti, layers)
    nvar = int(((x.std(0, ddof=1) > 0) & ~s.unevolved(ti, layers)).sum())
    npcs = [int(v) for v in a.npc_list.split(",")]
    small = min([nvar] + [int(v) for v in (a.sizes.split(",") if a.sizes else [])])
    if any(p >= small for p in npcs):
        print(f"\nnPC >= {small} left out: the smallest ensemble and {nvar} varying statistics "
              f"span fewer PCs ({[p for p in npcs if p >= small]})")
        npcs = [p for p in npcs if p < small]
        if not npcs:
            raise EctInputError(f"calibrate: every nPC asked for needs more than {small - 1} PCs")
    sigmas = [float(v) for v in a.sigma_list.split(",")]
    sizes = [int(v) for v in a.sizes.split(",")] if a.sizes else []
    full, by_size, train = false_positive_rates(s, ti, layers, npcs, sigmas, folds=a.folds,
                                                sizes=sizes, seed=a.seed)
    print(f"\nfalse-positive rate at {s.times[ti]}: {nvar} varying statistics; {a.folds} folds, "
          f"ensembles of {train} members, every 3 of the held-out members as a candidate")
    print("| nPC | " + " | ".join(f"m = {m:g}" for m in sigmas) + " |")
    print("|---|" + "---|" * len(sigmas))
    for p in npcs:
        print(f"| {p} | " + " | ".join(f"{100 * full[(p, m)][0] / full[(p, m)][1]:.2f}% "
                                        f"({full[(p, m)][0]}/{full[(p, m)][1]})" for m in sigmas) + " |")
    for size, res in by_size.items():
        print(f"\nensemble of {size} members:")
        for p in npcs:
            print(f"  nPC {p}: " + ", ".join(f"m={m:g} {100 * res[(p, m)][0] / res[(p, m)][1]:.2f}%"
                                             for m in sigmas))
    if a.write:
        s.settings.update({"time": s.times[ti], "layers": layers, "npc": a.write_npc or npcs[0],
                           "sigma": a.write_sigma or sigmas[0]})
        s.save(a.ensemble)
        print(f"\nwrote the test settings into {a.ensemble}: {s.settings}")
    return 0


def cmd_test(a):
    s = Summary.load(a.ensemble)
    layers, npc, sigma = _settings(s, a)
    ti = s.time_index(a.time)
    if a.wrf_exe:
        if a.runs:
            raise EctInputError("test: give either --runs or --wrf-exe, not both")
        a.members, a.out = a.members or "1000,1001,1002", a.out or "ect_candidate"
        a.runs = _runner(a).run(_ids(a.members))
    if not a.runs or len(a.runs) != RUNS_PER_TEST:
        raise EctInputError(f"test: {len(a.runs or [])} candidate runs given; the test needs {RUNS_PER_TEST} "
                            "(pyCECT's rule counts failures out of three; `ect plot` draws any number)")
    labels = a.labels.split(",") if a.labels else [os.path.basename(os.path.normpath(r)) for r in a.runs]
    sts = [wstats.load_run(r) for r in a.runs]
    x, names = s.matrix(ti, layers)
    runs = np.stack([s.run_vector(st, ti, layers, r) for st, r in zip(sts, a.runs)])
    pca = Pca(x, names, npc, frozen=s.unevolved(ti, layers))
    if s.size <= len(pca.names):
        print(f"warning: {s.size} members for {len(pca.names)} varying statistics: the PCs are "
              f"estimated from fewer members than statistics")
    ok, failing, outside, scores = verdict(pca, runs, sigma)
    print(f"ensemble {a.ensemble}: {s.size} members; test time {s.times[ti]}; {len(pca.names)} varying "
          f"statistics ({len(pca.dropped)} left out: no spread, or never changed by the model), "
          f"{layers} layer(s) per 3-D field")
    print(f"rule: a run fails PC j when |score| > {sigma:g} sigma_j; PC j fails when >= {MIN_RUN_FAIL} "
          f"of {len(runs)} runs fail it; FAIL when >= {MIN_PC_FAIL} of the first {npc} PCs fail")
    print("| PC | sigma | explained | " + " | ".join(f"{l} score/sigma" for l in labels) + " |")
    print("|---|---|---|" + "---|" * len(labels))
    for j in range(npc):
        mark = " **fails**" if j in failing else ""
        print(f"| {j + 1}{mark} | {pca.sigma[j]:.3g} | {100 * pca.explained[j]:.1f}% | " +
              " | ".join(f"{scores[r, j] / pca.sigma[j]:+.2f}" for r in range(len(runs))) + " |")
    for j in failing:
        tops = ", ".join(f"{n} {l:+.2f}" for n, l in top_loadings(pca, j))
        print(f"PC {j + 1} fails; it loads most on: {tops}")
    # Which statistics lie furthest outside the ensemble (independent of the PCs): a pointer to
    # the field and layer to look at with the replay driver.
    z = (runs[:, pca.keep] - pca.mean[pca.keep]) / pca.std[pca.keep]
    worst = np.argsort(-np.abs(z).min(0))[:5]
    print("largest standardised departures (smallest |z| of the runs): " +
          ", ".join(f"{pca.names[i]} {np.abs(z[:, i]).min():.1f}" for i in worst))
    for j in np.flatnonzero(pca.std == 0):   # not the unevolved ones: those do vary
        for r, lab in zip(runs, labels):
            ref = pca.mean[j]
            if abs(r[j] - ref) > 1e-6 * max(abs(ref), 1e-30):
                print(f"note: {names[j]} does not vary across the ensemble ({ref:.6g}) but is "
                      f"{r[j]:.6g} in {lab} (not counted by the test)")
    if a.plot:
        from .plot import draw
        draw(s, ti, sts, labels, a.plot, a.title or f"{a.ensemble} at {s.times[ti]}")
        print(f"picture: {a.plot}")
    print(f"ECT verdict: {'PASS' if ok else 'FAIL'} ({len(failing)} of {npc} PCs fail"
          + (f": {', '.join(str(j + 1) for j in failing)}" if len(failing) else "") + ")")
    return 0 if ok else 1


def cmd_plot(a):
    from .plot import draw
    s = Summary.load(a.ensemble)
    ti = s.time_index(a.time)
    labels = a.labels.split(",") if a.labels else [os.path.basename(os.path.normpath(r)) for r in a.runs]
    sts = [wstats.load_run(r) for r in a.runs]
    for st, r in zip(sts, a.runs):
        s.run_vector(st, ti, 1, r)        # same grid, fields and test time as the ensemble
    draw(s, ti, sts, labels, a.output, a.title or f"{a.ensemble} at {s.times[ti]}")
    print(f"picture: {a.output}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="ect", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("ensemble", help="run N perturbed members of a stock build and summarise them")
    _add_run_args(p)
    p.add_argument("--summary", help="summary file (default OUT/ensemble.npz)")
    p.add_argument("--collect-only", action="store_true", help="summarise members already run")
    p.set_defaults(func=cmd_ensemble)

    p = sub.add_parser("run", help="run perturbed members of any build (candidate runs)")
    _add_run_args(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("perturb", help="only write the perturbed wrfinputs (OUT/m<id>/wrfinput_d01)")
    p.add_argument("--wrfinput", required=True)
    p.add_argument("--namelist", required=True, help="read for use_theta_m")
    p.add_argument("--members", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(func=cmd_perturb)

    p = sub.add_parser("stats", help="statistics of one run from its wrfout file(s)")
    p.add_argument("wrfout", nargs="+")
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("calibrate", help="normality over time and false-positive rates")
    p.add_argument("--ensemble", required=True)
    p.add_argument("--time", help="test time (a wrfout time, or its end such as 00:10:00)")
    p.add_argument("--layers", type=int)
    p.add_argument("--npc-list", default="5,10,15,20")
    p.add_argument("--sigma-list", default="2,2.5,3")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--sizes", help="smaller ensemble sizes to measure, e.g. 20,40")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--write", action="store_true", help="store time, layers, nPC and m in the summary")
    p.add_argument("--write-npc", type=int)
    p.add_argument("--write-sigma", type=float)
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("test", help="three candidate runs against the ensemble: PASS or FAIL")
    p.add_argument("--ensemble", required=True)
    p.add_argument("--runs", nargs="+", help="candidate runs: stats.npz, wrfout files or member folders")
    p.add_argument("--labels", help="comma-separated names of the runs for the report")
    p.add_argument("--time")
    p.add_argument("--layers", type=int)
    p.add_argument("--npc", type=int)
    p.add_argument("--sigma", type=float)
    p.add_argument("--plot", help="PNG: the ensemble's band with the runs drawn over it")
    p.add_argument("--title")
    # Optional: make the three runs here (as `ect run`).
    p.add_argument("--wrf-exe")
    p.add_argument("--rundir")
    p.add_argument("--wrfinput")
    p.add_argument("--namelist")
    p.add_argument("--input", action="append", default=[])
    p.add_argument("--members")
    p.add_argument("--out")
    p.add_argument("--jobs", type=int, default=3)
    p.add_argument("--mpi", type=int, default=1)
    p.add_argument("--env", action="append")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--keep-wrfout", action="store_true")
    p.add_argument("--timeout", type=float, default=3600)
    p.set_defaults(func=cmd_test)

    p = sub.add_parser("plot", help="PNG: the ensemble's band with any number of runs drawn over it")
    p.add_argument("--ensemble", required=True)
    p.add_argument("--runs", nargs="+", required=True)
    p.add_argument("--labels")
    p.add_argument("--time")
    p.add_argument("--title")
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=cmd_plot)

    a = ap.parse_args(argv)
    try:
        return a.func(a)
    except EctInputError as e:
        print(f"ect {a.cmd}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
