"""Perturbed WRF runs: one folder per member, its wrfinput perturbed at round-off size.

The perturbation multiplies the initial potential temperature of every cell by
(1 + e * 2^-23), e in {-1, 0, 1} drawn per cell from a generator seeded with (seed, member):
one unit in the last place of a single-precision theta near 300 K. WRF is single precision,
so a smaller perturbation would vanish. WRF v4 integrates from wrfinput's THM (moist theta
perturbation) when use_theta_m = 1 (the default) and from T otherwise: the field the model
reads is perturbed (THM and T both when both are there), and the runs are checked to differ.
"""

import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import time

import numpy as np

from . import stats as wstats
from .stats import EctInputError

T0 = 300.0  # WRF's t0: T and THM hold theta - t0


def use_theta_m(namelist_path):
    with open(namelist_path) as f:
        text = f.read()
    m = re.search(r"^\s*use_theta_m\s*=\s*(\d+)", text, re.M | re.I)
    return int(m.group(1)) if m else 1   # Registry.EM_COMMON default: 1




def perturb_wrfinput(src, dst, member, seed, theta_m):
    """Copies src to dst with theta perturbed; returns the fields changed and cells moved."""
    with wstats.quiet_hdf5():
        return _perturb(src, dst, member, seed, theta_m)


def _perturb(src, dst, member, seed, theta_m):
    import netCDF4
    shutil.copyfile(src, dst)
    fields = ["THM", "T"] if theta_m else ["T"]
    rng = np.random.default_rng([seed, member])
    changed = {}
    with netCDF4.Dataset(dst, "r+") as nc:
        nc.set_auto_mask(False)
        present = [f for f in fields if f in nc.variables]
        if not present:
            raise EctInputError(f"{src}: variable {fields[0]} missing: cannot perturb theta")
        if theta_m and "THM" not in nc.variables:
            raise EctInputError(f"{src}: variable THM missing but use_theta_m = 1 in the namelist: "
                                "WRF would read theta from THM")
        e = None
        for f in present:
            v = nc.variables[f]
            old = np.asarray(v[:], dtype=np.float32)
            if e is None:
                e = rng.integers(-1, 2, size=old.shape)
            theta = old.astype(np.float64) + T0
            new = (theta * (1.0 + e * 2.0 ** -23) - T0).astype(np.float32)
            v[:] = new
            changed[f] = int((new != old).sum())
        if changed[present[0]] == 0:
            raise EctInputError(f"{src}: the perturbation changed no value of {present[0]}")
    return changed


class Runner:
    """Runs members of one build in parallel, with a progress line."""

    def __init__(self, wrf_exe, rundir, wrfinput, namelist, out, jobs=1, mpi=1,
                 env=None, seed=1, keep_wrfout=False, timeout=3600, extra_inputs=(),
                 inputs_from=None):
        for label, p in (("wrf.exe", wrf_exe), ("wrfinput", wrfinput), ("namelist", namelist)):
            if not os.path.isfile(p):
                raise EctInputError(f"{p}: no such file (the {label} to run)")
        if not os.access(wrf_exe, os.X_OK):
            raise EctInputError(f"{wrf_exe}: not executable")
        if rundir and not os.path.isdir(rundir):
            raise EctInputError(f"{rundir}: no such folder (WRF's run files)")
        self.wrf_exe = os.path.abspath(wrf_exe)
        self.rundir = os.path.abspath(rundir) if rundir else None
        self.wrfinput = os.path.abspath(wrfinput)
        self.namelist = os.path.abspath(namelist)
        self.extra_inputs = [os.path.abspath(p) for p in extra_inputs]
        self.out = out
        self.jobs = max(1, jobs)
        self.mpi = mpi
        self.env = dict(os.environ)
        self.env.update(env or {})
        if os.geteuid() == 0:
            # Open MPI refuses root unless told; runs here are as the user asked.
            self.env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            self.env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        if "OMP_NUM_THREADS" not in (env or {}):
            # Members run side by side: one thread each unless asked otherwise.
            self.env["OMP_NUM_THREADS"] = "1"
        self.seed = seed
        self.keep = keep_wrfout
        self.timeout = timeout
        self.theta_m = use_theta_m(self.namelist)
        # Perturbed wrfinputs made earlier (`ect perturb`), e.g. on a host whose Python lacks
        # netCDF4: copied, not made again.
        self.inputs_from = os.path.abspath(inputs_from) if inputs_from else None

    def member_dir(self, member):
        return os.path.join(self.out, f"m{member:04d}")

    def _prepare(self, member):
        d = self.member_dir(member)
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
        skip = {"namelist.input", "wrfinput_d01", "wrf.exe"}
        if self.rundir:
            for f in os.listdir(self.rundir):
                if f in skip or f.startswith(("wrfout", "rsl.", "wrfrst")):
                    continue
                os.symlink(os.path.join(self.rundir, f), os.path.join(d, f))
        for p in self.extra_inputs:
            os.symlink(p, os.path.join(d, os.path.basename(p)))
        shutil.copyfile(self.namelist, os.path.join(d, "namelist.input"))
        if self.inputs_from:
            src = os.path.join(self.inputs_from, f"m{member:04d}", "wrfinput_d01")
            if not os.path.isfile(src):
                raise EctInputError(f"{src}: no such file (perturbed input of member {member})")
            shutil.copyfile(src, os.path.join(d, "wrfinput_d01"))
            return d, None
        changed = perturb_wrfinput(self.wrfinput, os.path.join(d, "wrfinput_d01"), member,
                                   self.seed, self.theta_m)
        return d, changed

    def _run_one(self, member):
        d, _ = self._prepare(member)
        cmd = [self.wrf_exe]
        if self.mpi > 1:
            cmd = ["mpirun", "-np", str(self.mpi), "--oversubscribe", "--bind-to", "none"] + cmd
        t0 = time.time()
        with open(os.path.join(d, "wrf.log"), "w") as log:
            try:
                rc = subprocess.run(cmd, cwd=d, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                    timeout=self.timeout).returncode
            except subprocess.TimeoutExpired:
                raise EctInputError(f"{d}: wrf.exe ran past {self.timeout} s and was stopped")
        text = ""
        for f in [os.path.join(d, "wrf.log")] + sorted(glob.glob(os.path.join(d, "rsl.error.*"))):
            with open(f, errors="replace") as fh:
                text += fh.read()
        if rc != 0 or "SUCCESS COMPLETE WRF" not in text:
            tail = "\n".join(text.strip().splitlines()[-5:])
            raise EctInputError(f"{d}: wrf.exe failed (exit {rc}); last lines:\n{tail}")
        outs = sorted(glob.glob(os.path.join(d, "wrfout_d01_*")))
        if not outs:
            raise EctInputError(f"{d}: wrf.exe wrote no wrfout_d01_* file")
        st = wstats.read_wrfout(outs)
        wstats.save(st, os.path.join(d, "stats.npz"))
        if not self.keep:
            for f in outs:
                os.remove(f)
        return time.time() - t0

    def run(self, members, progress=print):
        done, t_start = 0, time.time()
        errors = []
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
            futs = {pool.submit(self._run_one, m): m for m in members}
            for fut in concurrent.futures.as_completed(futs):
                m = futs[fut]
                done += 1
                try:
                    sec = fut.result()
                    msg = f"m{m:04d} done in {sec:.1f} s"
                except EctInputError as e:
                    errors.append(str(e))
                    msg = f"m{m:04d} FAILED"
                el = time.time() - t_start
                eta = el / done * (len(members) - done)
                progress(f"[{done}/{len(members)}] {msg}; elapsed {el:.0f} s, about {eta:.0f} s left",
                         flush=True)
        if errors:
            raise EctInputError(f"{len(errors)} of {len(members)} runs failed; first: {errors[0]}")
        return [self.member_dir(m) for m in members]


def check_members_differ(sts, labels):
    """Perturbed members must not be bit-identical (a perturbation WRF does not read)."""
    seen = {}
    for st, lab in zip(sts, labels):
        key = tuple(np.concatenate([v[-1].ravel() for _, v in sorted(st["levels"].items())] +
                                   [v[-1:] for _, v in sorted(st["surface"].items())]).tolist())
        if key in seen:
            raise EctInputError(
                f"{lab} and {seen[key]} have identical statistics at {st['times'][-1]}: the "
                "perturbation did not reach the model (is use_theta_m right in the namelist?)")
        seen[key] = lab
