"""Learning curves of many tuning runs: dev score by iteration, one line per run, one panel per feature set.

The curves are the runs' learning-curve TSVs (:func:`smtlib.report.runs.read_curve`); the figure
marks each run's kept weights (Cherry & Foster 2012, §4: the iteration with the best dev BLEU). Runs
tuned toward another metric (``smtlib tune --metric``) keep the iteration best in that metric, so their curves are
drawn in it (their ``dev_tuning`` column), not in BLEU, where the marker would not sit on the best
point; runs tuned toward different metrics are not drawn in one figure.
"""

from __future__ import annotations

from smtlib.errors import InputError
from smtlib.report.figures import pyplot
from smtlib.report.runs import META_KEYS, TUNING_COLUMNS
from smtlib.report.tables import FEATURE_SET_TITLES, paper_name


def tuning_metric(curves: list[list[dict]]) -> str | None:
    """The metric all ``curves`` were tuned toward, None for BLEU (their curves have no tuning columns)."""
    metrics = {rows[0].get("tuning_metric") for rows in curves}
    if len(metrics) > 1:
        names = ", ".join(sorted(m or "bleu" for m in metrics))
        raise InputError(f"learning curves of runs tuned toward different metrics ({names}) in one figure: "
                         "their kept weights are the best by different scores")
    return metrics.pop() if metrics else None


#: how a figure names a tuning metric: without chrF's beta (sacrebleu's "chrF2"), which a curve does not record
_NAMES = {"bleu": "BLEU", "chrf": "chrF", "chrf++": "chrF++", "ter": "TER"}


def _score_name(metric: str | None) -> str:
    """How a figure names the dev score of runs tuned toward ``metric`` (a mixture by its own spelling)."""
    return "BLEU" if metric is None else _NAMES.get(metric, metric)


def format_curves(curves: list[list[dict]]) -> str:
    """All curves in one TSV: :data:`~smtlib.report.runs.META_KEYS`, iteration, dev BLEU, best, and
    for runs tuned toward another metric its :data:`~smtlib.report.runs.TUNING_COLUMNS`."""
    tuned = tuning_metric(curves) is not None
    lines = ["\t".join([*META_KEYS, "iteration", "dev_bleu", "best", *(TUNING_COLUMNS if tuned else ())]) + "\n"]
    for rows in curves:
        for r in rows:
            values = [str(r[k]) for k in META_KEYS]
            values += [str(r["iteration"]), f"{r['dev_bleu']:.4f}", "1" if r["best"] else "0"]
            if tuned:
                values += [r["tuning_metric"], f"{r['dev_tuning']:.4f}", r["better"]]
            lines.append("\t".join(values) + "\n")
    return "".join(lines)


#: the paper's rows first (Table 4's order), then any other method in name order
_PAPER_ORDER = ("mert", "lbmert", "mira", "kbmira", "lbmira", "pro", "mr", "svm")
#: 7 markers against 10 colours: 70 methods before a (colour, marker) pair repeats
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def method_styles(methods) -> dict[str, tuple[int, str]]:
    """One (tab10 colour index, marker) per method, the same in every panel and figure."""
    rank = {m: i for i, m in enumerate(_PAPER_ORDER)}
    ordered = sorted(set(methods), key=lambda m: (rank.get(m, len(rank)), m))
    return {m: (i % 10, _MARKERS[i % len(_MARKERS)]) for i, m in enumerate(ordered)}


def plot_curves(curves: list[list[dict]], title: str | None = None):
    """One panel per feature set (the paper's order first), one line per run, a marker on the kept weights.

    Each method has its own colour and marker (:func:`method_styles`), the same in every panel; the
    full dev set's run (sub-sample 0) is drawn thick, the other sub-samples thin; the legend says so.
    The score drawn is dev BLEU, or the tuning metric of runs tuned toward another (:func:`tuning_metric`).
    """
    plt = pyplot()
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    metric = tuning_metric(curves)
    key, name = ("dev_bleu", "") if metric is None else ("dev_tuning", " " + _score_name(metric))
    lower = metric is not None and curves[0][0]["better"] == "lower"
    groups: dict[str, list[list[dict]]] = {}
    for rows in curves:
        groups.setdefault(rows[0]["fs"], []).append(rows)
    order = [fs for fs in FEATURE_SET_TITLES if fs in groups] + sorted(set(groups) - set(FEATURE_SET_TITLES))
    styles = method_styles(rows[0]["method"] for rows in curves)
    fig, axes = plt.subplots(1, len(order), figsize=(5 * len(order), 4.5), squeeze=False)
    for ax, fs in zip(axes[0], order):
        shown = set()
        for rows in groups[fs]:
            m = rows[0]["method"]
            color, marker = plt.cm.tab10(styles[m][0]), styles[m][1]
            first = rows[0]["sample"] == "0"
            ax.plot([r["iteration"] for r in rows], [r[key] for r in rows], color=color, alpha=0.85,
                    linewidth=1.8 if first else 0.6)
            b = next(r for r in rows if r["best"])
            ax.plot([b["iteration"]], [b[key]], marker, color=color, markersize=6 if first else 4)
            shown.add(m)
        handles = [Line2D([], [], color=plt.cm.tab10(styles[m][0]), marker=styles[m][1], label=paper_name(m))
                   for m in styles if m in shown]
        handles += [Line2D([], [], color="grey", linewidth=1.8, label="full dev set (s0)"),
                    Line2D([], [], color="grey", linewidth=0.6, label="dev sub-samples"),
                    Line2D([], [], color="grey", marker="o", linestyle="", label=f"its marker: kept weights (best dev{name})")]
        ax.set_title(f"{FEATURE_SET_TITLES.get(fs, fs)}")
        ax.set_xlabel("iteration (weights decoded)")
        ax.set_ylabel(f"dev {_score_name(metric)}" + (" (lower is better)" if lower else ""))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(handles=handles, fontsize=7)
    fig.suptitle(title or f"learning curves: dev {_score_name(metric)} of each iteration's weights")
    return fig
