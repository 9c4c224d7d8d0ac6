"""One picture per case: the ensemble's min-max band with the candidate runs drawn over it.

Everything is drawn as the difference from the ensemble mean: round-off spread is far too
narrow to see against the level means themselves.
"""

import numpy as np

PROFILES = ("QRAIN", "QCLOUD", "W", "T")
SERIES = "RAINNC"


def draw(summary, ti, runs, labels, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [f for f in PROFILES if f in summary.levels] + ([SERIES] if SERIES in summary.surface else [])
    fig, axes = plt.subplots(1, len(panels), figsize=(3.4 * len(panels), 4.6))
    axes = np.atleast_1d(axes)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, f in zip(axes, panels):
        if f in summary.levels:
            ens = summary.levels[f][:, ti, :]                    # (N, K)
            mean = ens.mean(0)
            k = np.arange(1, ens.shape[1] + 1)
            ax.fill_betweenx(k, ens.min(0) - mean, ens.max(0) - mean, color="0.75",
                             label=f"stock, {ens.shape[0]} members")
            for i, (st, lab) in enumerate(zip(runs, labels)):
                j = st["times"].index(summary.times[ti])
                ax.plot(st["levels"][f][j] - mean, k, color=colours[i % len(colours)], lw=0.9, label=lab)
            ax.set_ylabel("model level k")
            ax.set_xlabel(f"{f} level mean minus ensemble mean", fontsize=8)
            ax.ticklabel_format(axis="x", style="sci", scilimits=(-3, 4))
        else:
            ens = summary.surface[f]                             # (N, T)
            mean = ens.mean(0)
            t = np.arange(len(summary.times))
            ax.fill_between(t, ens.min(0) - mean, ens.max(0) - mean, color="0.75")
            for i, (st, lab) in enumerate(zip(runs, labels)):
                idx = [st["times"].index(x) for x in summary.times if x in st["times"]]
                tt = [summary.times.index(st["times"][j]) for j in idx]
                ax.plot(tt, st["surface"][f][idx] - mean[tt], color=colours[i % len(colours)], lw=0.9)
            ax.axvline(ti, color="k", lw=0.5, ls=":")
            step = max(1, -(-len(t) // 4))
            ax.set_xticks(t[::step])
            ax.set_xticklabels([summary.times[i][11:16] for i in t[::step]], fontsize=8)
            ax.set_xlabel("time (test time dotted)")
            ax.set_ylabel(f"{f} domain mean minus ensemble mean (mm)", fontsize=8)
    axes[0].legend(fontsize=7, loc="best")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
