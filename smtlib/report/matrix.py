"""The tune-on-X / evaluate-on-Y matrix of a sweep over tuning metrics (``tuning.metric`` a list).

Each row is a (pair, feature set, method, tuning metric) cell: the runs on the dev sub-samples of that
method tuned toward that metric (``smtlib tune --metric``); each column an evaluation metric, the
cell's test score averaged as the tables average Test (over the test sets, then the runs, Cherry &
Foster 2012 §5): BLEU from the summaries' ``test``, the other metrics from their ``metrics``
(:func:`smtlib.report.runs.run_summary`). The metrics' sacrebleu signatures follow the rows in
``# signature`` lines, as the replay table's do. Scores are 0-100; TER is lower-is-better, the
others higher.
"""

from __future__ import annotations

import statistics

from smtlib.errors import InputError
from smtlib.report.tables import evaluation_metrics


def matrix_rows(runs: list[tuple[str, dict]]) -> tuple[list[str], list[list[str]], dict[str, list[str]]]:
    """Header, rows and signatures of the matrix.

    Parameters
    ----------
    runs
        ``(tuning metric, run summary)`` pairs; the cells keep the order in which they first appear.

    Returns
    -------
    tuple
        The header (``pair feature_set method tuning_metric runs`` then ``bleu`` and each other
        evaluation metric), the rows (scores with two decimals) and metric -> signatures met.
    """
    if not runs:
        raise InputError("a metric matrix needs at least one --run TUNING_METRIC=SUMMARY")
    metrics = evaluation_metrics([summary for _, summary in runs])
    cells: dict[tuple[str, str, str, str], list[dict]] = {}
    for tuning_metric, summary in runs:
        cells.setdefault((summary["pair"], summary["fs"], summary["method"], tuning_metric), []).append(summary)
    signatures: dict[str, set[str]] = {name: set() for name in ["bleu", *metrics]}
    rows = []
    for key, summaries in cells.items():
        samples = [s["sample"] for s in summaries]
        if len(set(samples)) != len(samples):
            raise InputError(f"{'/'.join(key)}: sub-sample listed twice ({sorted(samples)})")
        row = [*key, str(len(summaries)), f"{statistics.fmean(s['test'] for s in summaries):.2f}"]
        for s in summaries:
            signatures["bleu"].update(s.get("signatures", []))
        for name in metrics:
            scored = [s["metrics"][name] for s in summaries if name in s.get("metrics", {})]
            if len(scored) != len(summaries):
                raise InputError(f"{'/'.join(key)}: a run without {name} test scores (every run of the matrix is "
                                 "scored with the same metrics)", summaries[0].get("_path"))
            row.append(f"{statistics.fmean(m['test'] for m in scored):.2f}")
            for m in scored:
                signatures[name].update(m.get("signatures", []))
        rows.append(row)
    header = ["pair", "feature_set", "method", "tuning_metric", "runs", "bleu", *metrics]
    return header, rows, {name: sorted(found) for name, found in signatures.items()}


def format_matrix(header: list[str], rows: list[list[str]], signatures: dict[str, list[str]]) -> str:
    """The matrix TSV, each metric's signatures in ``# signature METRIC:`` lines at the end."""
    text = "".join("\t".join(r) + "\n" for r in [header, *rows])
    return text + "".join(f"# signature {name}: {s}\n" for name, found in signatures.items() for s in found)
