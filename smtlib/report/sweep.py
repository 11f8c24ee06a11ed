"""Figure 1 of Cherry & Foster (2012): tune and test BLEU against each method's regularization setting.

The sweep's runs carry a ``PARAM=VALUE`` setting (e.g. ``C=0.01`` for kb-mira); :func:`sweep_points`
groups their summaries by method and value, and the figure draws the mean Tune and Test over each
value's runs on a log scale, one panel per method, as the paper's Figure 1 does for MIRA's C.
"""

from __future__ import annotations

import re
import statistics

from smtlib.errors import InputError
from smtlib.report.figures import pyplot
from smtlib.report.tables import paper_name

#: method -> (parameter name, value -> the summaries of its runs)
SweepPoints = dict[str, tuple[str, dict[float, list[dict]]]]


def sweep_points(runs: list[dict]) -> SweepPoints:
    """Group run summaries by method and setting value; every run needs a ``PARAM=VALUE`` setting.

    A method keeps the parameter name of its first run (methods appear in the order of ``runs``).
    """
    points: dict[str, dict[float, list[dict]]] = {}
    params: dict[str, str] = {}
    for r in runs:
        setting = r["setting"]
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)=(.+)", setting)
        if not m:
            raise InputError(f"figure 1 needs runs with a PARAM=VALUE setting, got {setting!r}", r.get("_path"))
        params.setdefault(r["method"], m.group(1))
        points.setdefault(r["method"], {}).setdefault(float(m.group(2)), []).append(r)
    return {method: (params[method], by_value) for method, by_value in points.items()}


def format_sweep(points: SweepPoints) -> str:
    """TSV: method, parameter, value, runs, mean tune and test BLEU (values ascending per method)."""
    lines = ["method\tparameter\tvalue\truns\ttune\ttest\n"]
    for method, (param, by_value) in points.items():
        for value in sorted(by_value):
            rs = by_value[value]
            tune = statistics.fmean(r["tune"] for r in rs)
            test = statistics.fmean(r["test"] for r in rs)
            lines.append(f"{method}\t{param}\t{value:g}\t{len(rs)}\t{tune:.4f}\t{test:.4f}\n")
    return "".join(lines)


def plot_sweep(points: SweepPoints, title: str | None = None):
    """One panel per method: mean Tune and Test BLEU against the setting (log scale)."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(points), figsize=(4.5 * len(points), 3.8), squeeze=False)
    for ax, (method, (param, by_value)) in zip(axes[0], points.items()):
        values = sorted(by_value)
        for key, style in (("tune", "o-"), ("test", "s--")):
            ax.plot(values, [statistics.fmean(r[key] for r in by_value[v]) for v in values], style,
                    label=key.capitalize())
        ax.set_xscale("log")
        ax.set_xlabel(f"{param} (log scale)")
        ax.set_ylabel("BLEU")
        ax.set_title(paper_name(method))
        ax.legend(fontsize=8)
    fig.suptitle(title or "Figure 1: regularization (Cherry & Foster 2012)")
    return fig
