"""The ensemble summary and the consistency test (the rule of CESM-ECT / pyCECT).

Ensemble: N stock runs whose initial potential temperature differs at round-off size. At the
test time every run gives a vector of V statistics (stats.py). The ensemble's mean and
standard deviation standardise each statistic; the principal components (PCs) of the
standardised ensemble span its natural spread, and the ensemble's own scores on PC j have
standard deviation sigma_j.

Test (Baker et al. 2015, Milroy et al. 2018): three runs of a candidate, standardised with
the ensemble's mean and deviation and projected on the first nPC PCs. A run fails PC j when
|score_j| > m * sigma_j; PC j fails when at least 2 of the 3 runs fail it; the candidate fails
when at least 3 PCs fail.
"""

import numpy as np

from .stats import EctInputError, layer_means

MIN_RUN_FAIL = 2   # runs out of three that must lie outside m*sigma for a PC to fail
MIN_PC_FAIL = 3    # failing PCs that fail the test
RUNS_PER_TEST = 3


class Summary:
    """All members' statistics, stacked: levels {name: (N, T, K)}, surface {name: (N, T)}."""

    def __init__(self, members, ids, settings=None, source=""):
        if not members:
            raise EctInputError(f"{source}: no ensemble members")
        first = members[0]
        self.times = list(first["times"])
        self.grid = first["grid"]
        self.vweights = first["vweights"]
        self.ids = list(ids)
        for st, mid in zip(members[1:], self.ids[1:]):
            check_compatible(first, st, f"member {mid}", f"member {self.ids[0]}")
        self.levels = {k: np.stack([m["levels"][k] for m in members]) for k in first["levels"]}
        self.surface = {k: np.stack([m["surface"][k] for m in members]) for k in first["surface"]}
        self.settings = dict(settings or {})

    @property
    def size(self):
        return len(self.ids)

    def time_index(self, time):
        if time is None:
            time = self.settings.get("time")
        if time is None:
            return len(self.times) - 1
        if time in self.times:
            return self.times.index(time)
        matches = [i for i, t in enumerate(self.times) if t.endswith(time)]
        if len(matches) != 1:
            raise EctInputError(f"ensemble: test time {time!r} is not one of its output times "
                                f"{self.times[0]} .. {self.times[-1]}")
        return matches[0]

    def matrix(self, ti, layers):
        """(N, V) statistics at output time index ti, and the V names."""
        names, cols = [], []
        for k in sorted(self.levels):
            lm = layer_means(self.levels[k][:, ti, :], self.vweights[k], layers)
            for l in range(lm.shape[1]):
                names.append(k if lm.shape[1] == 1 else f"{k}[{l + 1}/{lm.shape[1]}]")
                cols.append(lm[:, l])
        for k in sorted(self.surface):
            names.append(k)
            cols.append(self.surface[k][:, ti])
        return np.stack(cols, 1), names

    def unevolved(self, ti, layers):
        """Statistics the model never changed: in every member the same at output time ti as
        at the first output. Those that still differ between members (TSK and TMN of an
        idealised case, set once from the perturbed initial theta) carry the perturbation's
        fingerprint, not the build's: the test leaves them out."""
        if ti == 0:
            return np.zeros(self.matrix(0, layers)[0].shape[1], bool)
        return np.all(self.matrix(ti, layers)[0] == self.matrix(0, layers)[0], axis=0)

    def save(self, path):
        arrays = {"times": np.array(self.times), "grid": self.grid, "ids": np.array(self.ids)}
        for k, v in self.levels.items():
            arrays["levels:" + k] = v
            arrays["vweights:" + k] = self.vweights[k]
        for k, v in self.surface.items():
            arrays["surface:" + k] = v
        for k, v in self.settings.items():
            arrays["setting:" + k] = np.array(v)
        np.savez_compressed(path, **arrays)

    @classmethod
    def load(cls, path):
        try:
            z = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise EctInputError(f"{path}: not an ensemble summary of this tool ({e})")
        with z:
            if "ids" not in z:
                raise EctInputError(f"{path}: not an ensemble summary of this tool (no member ids)")
            self = cls.__new__(cls)
            self.times = [str(t) for t in z["times"]]
            self.grid = z["grid"]
            self.ids = [str(i) for i in z["ids"]]
            self.levels, self.surface, self.vweights, self.settings = {}, {}, {}, {}
            for k in z.files:
                kind, _, name = k.partition(":")
                if kind == "levels":
                    self.levels[name] = z[k]
                elif kind == "surface":
                    self.surface[name] = z[k]
                elif kind == "vweights":
                    self.vweights[name] = z[k]
                elif kind == "setting":
                    v = z[k]
                    self.settings[name] = v.item() if v.ndim == 0 else v.tolist()
        return self

    def run_vector(self, st, ti, layers, label):
        """One run's statistics at the ensemble's time index ti, in the ensemble's order."""
        check_compatible(self.as_stats(), st, label, "the ensemble")
        t = self.times[ti]
        if t not in st["times"]:
            raise EctInputError(f"{label}: has no output at the test time {t} "
                                f"(its times: {st['times'][0]} .. {st['times'][-1]})")
        i = st["times"].index(t)
        one = Summary.__new__(Summary)
        one.levels = {k: v[None, i:i + 1, :] for k, v in st["levels"].items()}
        one.surface = {k: v[None, i:i + 1] for k, v in st["surface"].items()}
        one.vweights = self.vweights
        x, _ = Summary.matrix(one, 0, layers)
        return x[0]

    def as_stats(self):
        return {"times": self.times, "grid": self.grid, "levels": self.levels,
                "surface": self.surface}


def check_compatible(ref, st, label, ref_label):
    if not np.array_equal(np.asarray(ref["grid"]), np.asarray(st["grid"])):
        raise EctInputError(f"{label}: grid (nx, ny, nz, dx, dy) = {np.asarray(st['grid']).tolist()} "
                            f"differs from {ref_label}'s {np.asarray(ref['grid']).tolist()}")
    for kind in ("levels", "surface"):
        missing = sorted(set(ref[kind]) - set(st[kind]))
        if missing:
            raise EctInputError(f"{label}: variable {missing[0]} missing "
                                f"({len(missing)} of {ref_label}'s fields missing)")


class Pca:
    """The ensemble's standardisation and principal components at one time."""

    def __init__(self, x, names, npc, frozen=None):
        n, v = x.shape
        if n < 3:
            raise EctInputError(f"ensemble: {n} members; at least 3 are needed")
        self.mean = x.mean(0)
        self.std = x.std(0, ddof=1)
        # Statistics that do not vary across the ensemble (static fields, fields still zero at
        # the test time) carry no spread to test against: dropped, as pyCECT does.
        self.keep = self.std > 0
        if frozen is not None:
            self.keep &= ~frozen
        self.names = [nm for nm, k in zip(names, self.keep) if k]
        self.dropped = [nm for nm, k in zip(names, self.keep) if not k]
        z = (x[:, self.keep] - self.mean[self.keep]) / self.std[self.keep]
        corr = z.T @ z / (n - 1)
        evals, evecs = np.linalg.eigh(corr)
        order = np.argsort(evals)[::-1]
        evals, evecs = evals[order], evecs[:, order]
        # Fix each PC's sign (largest loading positive) so reports are reproducible.
        sign = np.sign(evecs[np.abs(evecs).argmax(0), np.arange(evecs.shape[1])])
        evecs *= np.where(sign == 0, 1, sign)
        rank = int((evals > 1e-10 * max(evals[0], 1e-300)).sum())
        self.rank = rank
        if npc > rank:
            raise EctInputError(
                f"ensemble: nPC = {npc} but the {n}-member ensemble spans only {rank} principal "
                f"components ({len(self.names)} varying statistics): use nPC <= {rank} or more members")
        self.npc = npc
        self.loadings = evecs[:, :npc]
        self.scores = z @ self.loadings
        self.sigma = self.scores.std(0, ddof=1)
        self.explained = evals[:npc] / evals.sum()

    def project(self, x):
        z = (x[..., self.keep] - self.mean[self.keep]) / self.std[self.keep]
        return z @ self.loadings


def verdict(pca, runs, sigma_mult):
    """runs: (R, V) statistics. Returns (passed, failing PC indices, per-run outside flags)."""
    scores = pca.project(runs)
    outside = np.abs(scores) > sigma_mult * pca.sigma
    pc_fail = outside.sum(0) >= MIN_RUN_FAIL
    failing = np.flatnonzero(pc_fail)
    return len(failing) < MIN_PC_FAIL, failing, outside, scores


def top_loadings(pca, pc, count=5):
    l = pca.loadings[:, pc]
    idx = np.argsort(-np.abs(l))[:count]
    return [(pca.names[i], float(l[i])) for i in idx]
