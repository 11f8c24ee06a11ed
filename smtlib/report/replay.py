"""The replay table: our methods on Moses's recorded n-best lists next to the BLEU Moses's MERT recorded.

Moses's mert-moses regression tests (``../shared/data/moses-mert-nbest``) record the n-best lists of
each iteration and, in ``truth/results.dat``, the best BLEU of each iteration's MERT step. The
workflow tunes our methods on the pools of n-best lists 1..i and scores the pool reranked with
their weights; :func:`replay_rows` sets those scores by iteration next to Moses's recorded ones,
with each series' final and best BLEU (:func:`smtlib.report.runs.best_iteration`).
"""

from __future__ import annotations

import os
import re

from smtlib.errors import InputError
from smtlib.io import read_lines
from smtlib.report.figures import pyplot
from smtlib.report.runs import best_iteration
from smtlib.report.tables import paper_name

MOSES_LABEL = "moses-mert (recorded)"


def read_moses_results(path: str | os.PathLike) -> dict[int, float]:
    """Moses's ``truth/results.dat`` of mert-moses regression tests: iteration -> best BLEU (0-100)."""
    best = {}
    for n, line in enumerate(read_lines(path, what="Moses results.dat"), 1):
        m = re.match(r"^STDOUT_\d+=best_(\d+):\s+([0-9.eE+-]+)\s*$", line)
        if m:
            try:
                best[int(m.group(1))] = 100.0 * float(m.group(2))
            except ValueError:
                raise InputError("malformed best_N value", path, n) from None
    if not best:
        raise InputError("no 'best_N:' lines (not a mert-moses results.dat)", path)
    return best


def _row(name: str, iterations: list[int], series: list[float | None]) -> list[str]:
    present = [(i, s) for i, s in zip(iterations, series) if s is not None]
    b = best_iteration([s for _, s in present])
    return [name, f"{present[-1][1]:.2f}", f"{present[b][1]:.2f}", str(present[b][0])] + [
        "" if s is None else f"{s:.2f}" for s in series
    ]


def replay_rows(
    scores: dict[str, dict[int, float]], truth: dict[int, float]
) -> tuple[list[str], list[list[str]]]:
    """Header and rows: each method's final, best and per-iteration BLEU, then Moses's recorded BLEU.

    Parameters
    ----------
    scores
        Method -> iteration -> BLEU (0-100) of the pool of n-best lists 1..iteration reranked.
    truth
        :func:`read_moses_results`; its row covers the iterations of ``scores`` (left out when it
        has none of them).
    """
    iterations = sorted({i for s in scores.values() for i in s})
    header = ["method", "final_bleu", "best_bleu", "best_iteration"] + [f"it{i}" for i in iterations]
    rows = [_row(method, iterations, [by_it.get(i) for i in iterations]) for method, by_it in scores.items()]
    moses = [truth.get(i) for i in iterations]
    if any(s is not None for s in moses):
        rows.append(_row(MOSES_LABEL, iterations, moses))
    return header, rows


def format_replay(header: list[str], rows: list[list[str]], signatures: set[str]) -> str:
    """The replay TSV, the BLEU signatures in ``# signature:`` lines at the end."""
    text = "".join("\t".join(r) + "\n" for r in [header, *rows])
    return text + "".join(f"# signature: {s}\n" for s in sorted(signatures))


def plot_replay(scores: dict[str, dict[int, float]], truth: dict[int, float]):
    """BLEU by iteration of each method, Moses's recorded BLEU (over the methods' iterations) dashed."""
    plt = pyplot()
    iterations = sorted({i for s in scores.values() for i in s})
    fig, ax = plt.subplots(figsize=(7, 4))
    for method, by_it in scores.items():
        its = sorted(by_it)
        ax.plot(its, [by_it[i] for i in its], marker=".", label=paper_name(method))
    recorded = [i for i in iterations if i in truth]
    ax.plot(recorded, [truth[i] for i in recorded], "k--", linewidth=2, label="Moses MERT (recorded)")
    ax.set_xlabel("iteration (pool = n-best lists 1..i)")
    ax.set_ylabel("BLEU of the pool reranked")
    ax.legend(fontsize=7, ncol=2)
    return fig
