"""Calibration of the test: the output time, nPC and m, and the false-positive rate.

- Time: at each output time, the share of varying statistics whose ensemble distribution the
  Shapiro-Wilk test does not reject at 5% (as MPAS-ECT chose its time step): the PCA
  thresholds assume roughly normal scores, so the test time should be one where the
  round-off perturbations have grown into a near-normal spread.
- False positives: the members are split into folds; each fold in turn is held out, the
  ensemble is the rest, and every combination of three held-out members is tested as if it
  were a candidate. Stock members are consistent by construction, so every FAIL is a false
  positive. Done for every (nPC, m) asked for, and for smaller ensembles (members drawn from
  the training part) to find the ensemble size the rate needs.
"""

import itertools

import numpy as np

from .ensemble import MIN_PC_FAIL, MIN_RUN_FAIL, Pca
from .stats import EctInputError


def normality_by_time(summary, layers, alpha=0.05):
    import warnings
    from scipy import stats as sps
    warnings.filterwarnings("ignore", message="Input data for shapiro has range zero")
    rows = []
    for ti, t in enumerate(summary.times):
        x, _ = summary.matrix(ti, layers)
        sd = x.std(0, ddof=1)
        keep = (sd > 0) & ~summary.unevolved(ti, layers)
        if keep.sum() == 0 or x.shape[0] < 3:
            rows.append((t, 0, 0.0, 0.0))
            continue
        p = np.array([sps.shapiro(x[:, j]).pvalue for j in np.flatnonzero(keep)])
        rel = np.median(sd[keep] / np.maximum(np.abs(x.mean(0)[keep]), 1e-30))
        rows.append((t, int(keep.sum()), float((p > alpha).mean()), float(rel)))
    return rows


def _fails_by_npc(pca, held, sigma_mult, npc_list, max_combos, rng):
    """For each nPC in npc_list: (fails, combinations) over 3-run combinations of `held`."""
    scores = pca.project(held)                      # (H, npc_max)
    outside = np.abs(scores) > sigma_mult * pca.sigma
    combos = np.array(list(itertools.combinations(range(len(held)), 3)))
    if len(combos) > max_combos:
        combos = combos[rng.choice(len(combos), max_combos, replace=False)]
    pc_fail = outside[combos].sum(1) >= MIN_RUN_FAIL   # (C, npc_max)
    cum = np.cumsum(pc_fail, 1)
    return {n: (int((cum[:, n - 1] >= MIN_PC_FAIL).sum()), len(combos)) for n in npc_list}


def false_positive_rates(summary, ti, layers, npc_list, sigma_list, folds=5, sizes=(),
                         seed=0, max_combos=20000):
    """FPR[(npc, m)] over all folds, and FPR by ensemble size for the same grid."""
    x, names = summary.matrix(ti, layers)
    frozen = summary.unevolved(ti, layers)
    n = x.shape[0]
    if folds < 2 or n // folds < 3:
        raise EctInputError(f"calibrate: {n} members cannot make {folds} folds of at least 3 held-out runs")
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    parts = np.array_split(perm, folds)
    npc_max = max(npc_list)

    def run(train_sizes):
        res = {}
        for size in train_sizes:
            acc = {(p, m): [0, 0] for p in npc_list for m in sigma_list}
            for f in range(folds):
                held = parts[f]
                train = np.concatenate([parts[g] for g in range(folds) if g != f])
                if size is not None:
                    train = rng.choice(train, size, replace=False)
                pca = Pca(x[train], names, npc_max, frozen=frozen)
                for m in sigma_list:
                    for p, (fails, count) in _fails_by_npc(pca, x[held], m, npc_list,
                                                           max_combos, rng).items():
                        acc[(p, m)][0] += fails
                        acc[(p, m)][1] += count
            res[size] = {k: (v[0], v[1]) for k, v in acc.items()}
        return res

    full = run([None])[None]
    by_size = run(list(sizes)) if sizes else {}
    return full, by_size, n - len(parts[0])
