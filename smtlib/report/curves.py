"""Learning curves of many tuning runs: dev BLEU by iteration, one line per run, one panel per feature set.

The curves are the runs' learning-curve TSVs (:func:`smtlib.report.runs.read_curve`); the figure
marks each run's kept weights (Cherry & Foster 2012, §4: the iteration with the best dev BLEU).
"""

from __future__ import annotations

from smtlib.report.figures import pyplot
from smtlib.report.runs import META_KEYS
from smtlib.report.tables import FEATURE_SET_TITLES, paper_name


def format_curves(curves: list[list[dict]]) -> str:
    """All curves in one TSV: :data:`~smtlib.report.runs.META_KEYS`, iteration, dev BLEU, best."""
    lines = ["\t".join([*META_KEYS, "iteration", "dev_bleu", "best"]) + "\n"]
    for rows in curves:
        for r in rows:
            values = [str(r[k]) for k in META_KEYS]
            values += [str(r["iteration"]), f"{r['dev_bleu']:.4f}", "1" if r["best"] else "0"]
            lines.append("\t".join(values) + "\n")
    return "".join(lines)


def plot_curves(curves: list[list[dict]], title: str | None = None):
    """One panel per feature set (the paper's order first), one line per run, a dot on the kept weights.

    The first sub-sample's run of each method is drawn thicker and named in the legend.
    """
    plt = pyplot()
    groups: dict[str, list[list[dict]]] = {}
    for rows in curves:
        groups.setdefault(rows[0]["fs"], []).append(rows)
    order = [fs for fs in FEATURE_SET_TITLES if fs in groups] + sorted(set(groups) - set(FEATURE_SET_TITLES))
    fig, axes = plt.subplots(1, len(order), figsize=(5 * len(order), 4), squeeze=False)
    for ax, fs in zip(axes[0], order):
        methods = sorted({rows[0]["method"] for rows in groups[fs]})
        colors = {m: plt.cm.tab20(i % 20) for i, m in enumerate(methods)}
        for rows in groups[fs]:
            m = rows[0]["method"]
            first = rows[0]["sample"] == "0"
            ax.plot([r["iteration"] for r in rows], [r["dev_bleu"] for r in rows], color=colors[m], alpha=0.8,
                    linewidth=1.5 if first else 0.7, label=paper_name(m) if first else None)
            b = next(r for r in rows if r["best"])
            ax.plot([b["iteration"]], [b["dev_bleu"]], "o", color=colors[m], markersize=3)
        ax.set_title(f"{FEATURE_SET_TITLES.get(fs, fs)}")
        ax.set_xlabel("iteration (weights decoded)")
        ax.set_ylabel("dev BLEU")
        ax.legend(fontsize=7)
    fig.suptitle(title or "learning curves (one line per run; dots: kept weights)")
    return fig
