"""One tuning run's results: its BLEU scores, the iteration it keeps, its learning curve and summary.

Cherry & Foster (2012), §4: each tuning loop "return[s] the weights that achieve the best development
BLEU score" over its iterations; :func:`best_iteration` picks them (ties go to the earliest
iteration, i.e. fewer tuning steps: the paper does not say how ties are broken). The learning curve
(dev BLEU of the weights 0..N, one TSV per run) records every iteration with the kept one marked;
:func:`run_summary` reduces a run to what the tables average: the kept weights' dev BLEU (Tune) and
their BLEU on each test set (Test = the mean over the test sets, §5).

BLEU results are the JSON output of ``smtlib bleu`` (``score`` on the 0-100 scale and the BLEU
``signature``). A run's test sets may also be scored with other metrics (``smtlib score --metric``,
the workflow's ``evaluation.metrics``): :func:`read_score` tells the metric from the result's ``name``
and :func:`run_summary` keeps those scores under ``metrics``, BLEU staying the run's ``test``.
"""

from __future__ import annotations

import math
import os
import statistics

from smtlib.errors import InputError
from smtlib.io import read_json, read_lines

#: the columns that name a run, in every learning curve and run summary
META_KEYS = ("pair", "fs", "method", "setting", "sample")
#: the learning curve's columns after :data:`META_KEYS`
CURVE_COLUMNS = ("iteration", "dev_bleu", "best", "signature")


def read_bleu(path: str | os.PathLike) -> dict:
    """A ``smtlib bleu`` JSON result (``score`` 0-100 and ``signature``), checked."""
    data = read_json(path, "BLEU result")
    score = data.get("score") if isinstance(data, dict) else None
    if not isinstance(score, (int, float)) or not 0.0 <= score <= 100.0 or not math.isfinite(score):
        raise InputError("no BLEU 'score' between 0 and 100", path)
    return data


def read_score(path: str | os.PathLike) -> tuple[str, dict]:
    """A ``smtlib bleu`` or ``smtlib score`` JSON result as (metric name of
    :data:`smtlib.bleu.metrics.METRICS`, the result), checked; the metric is told by the result's
    ``name`` (sacrebleu's: ``BLEU``, ``chrF2``, ``chrF2++``, ``TER``; chrF's with another beta too)."""
    from smtlib.bleu.metrics import METRICS, metric_of_label

    data = read_json(path, "score")
    label = data.get("name") if isinstance(data, dict) else None
    metric = metric_of_label(label) if isinstance(label, str) else None
    if metric is None:
        raise InputError(f"not a result of smtlib bleu or smtlib score (name {label!r}, expected one of "
                         f"{', '.join(cls.label for cls in METRICS.values())})", path)
    if metric == "bleu":
        return metric, read_bleu(path)
    score = data.get("score")
    # TER, an error rate, exceeds 100 when a hypothesis needs more edits than its reference has words
    top = math.inf if not METRICS[metric].higher_is_better else 100.0
    if not isinstance(score, (int, float)) or not 0.0 <= score <= top or not math.isfinite(score):
        raise InputError(f"no {label} 'score' between 0 and {top:g}", path)
    return metric, data


def best_iteration(scores: list[float]) -> int:
    """Index of the best dev BLEU; ties go to the earliest iteration (fewer tuning steps)."""
    if not scores:
        raise InputError("no dev BLEU scores")
    best = 0
    for i, s in enumerate(scores):
        if s > scores[best]:
            best = i
    return best


def best_weights_header(results: list[dict], best: int) -> str:
    """The comment line put above the kept weights: their dev BLEU, iteration and BLEU signature."""
    scores = [r["score"] for r in results]
    return (
        f"# best dev BLEU {scores[best]:.2f} at iteration {best} of {len(scores) - 1} "
        f"({results[best].get('signature', '')})\n"
    )


def format_curve(results: list[dict], best: int, meta: dict[str, str]) -> str:
    """The learning-curve TSV of one run: its :data:`META_KEYS`, then one row per iteration 0..N.

    Parameters
    ----------
    results
        ``smtlib bleu`` results of decoding the dev set with the weights of iterations 0..N.
    best
        The kept iteration (:func:`best_iteration`), marked ``1`` in the ``best`` column.
    meta
        Values of :data:`META_KEYS` (missing keys are written empty).
    """
    lines = ["\t".join([*META_KEYS, *CURVE_COLUMNS]) + "\n"]
    for i, r in enumerate(results):
        values = [meta.get(k, "") for k in META_KEYS]
        values += [str(i), f"{r['score']:.4f}", "1" if i == best else "0", r.get("signature", "")]
        lines.append("\t".join(values) + "\n")
    return "".join(lines)


def read_curve(path: str | os.PathLike) -> list[dict]:
    """The rows of a learning-curve TSV written by :func:`format_curve`, checked."""
    lines = read_lines(path, what="learning curve")
    header = lines[0].split("\t")
    need = {"iteration", "dev_bleu", "best", *META_KEYS}
    if not need <= set(header):
        raise InputError(f"not a learning curve: missing columns {sorted(need - set(header))}", path, 1)
    rows = []
    for n, line in enumerate(lines[1:], 2):
        values = line.split("\t")
        if len(values) != len(header):
            raise InputError(f"{len(values)} fields, expected {len(header)}", path, n)
        row = dict(zip(header, values))
        try:
            row["iteration"] = int(row["iteration"])
            row["dev_bleu"] = float(row["dev_bleu"])
            row["best"] = row["best"] == "1"
        except ValueError:
            raise InputError("malformed number", path, n) from None
        rows.append(row)
    if sum(r["best"] for r in rows) != 1:
        raise InputError("a learning curve marks exactly one best iteration", path)
    return rows


def run_summary(curve: list[dict], tests: dict[str, dict], metric_tests: dict[str, dict[str, dict]] | None = None) -> dict:
    """One run's Tune (dev BLEU of the kept weights) and Test scores, as the tables average them.

    Parameters
    ----------
    curve
        The run's learning curve (:func:`read_curve`).
    tests
        Test-set name -> ``smtlib bleu`` result of decoding it with the kept weights.
    metric_tests
        Other metrics' results of the same outputs: metric name -> test-set name -> ``smtlib score``
        result, for every test set of ``tests``.

    Returns
    -------
    dict
        :data:`META_KEYS`, ``tune``, ``best_iteration``, ``iterations``, ``tests`` (name -> BLEU),
        ``test`` (their mean, Cherry & Foster §5) and the BLEU ``signatures`` met; with
        ``metric_tests``, also ``metrics``: metric name -> its ``tests``, ``test`` and ``signatures``
        (absent without them, so a BLEU-only summary is what it always was).
    """
    if not tests:
        raise InputError("a run summary needs at least one --test NAME=FILE")
    metrics = {}
    for metric, results in (metric_tests or {}).items():
        if set(results) != set(tests):
            raise InputError(f"{metric} scores of test sets {sorted(results)}, BLEU scores of {sorted(tests)}: "
                             "give every metric for every test set")
        scores = {name: result["score"] for name, result in results.items()}
        metrics[metric] = {
            "tests": scores,
            "test": statistics.fmean(scores.values()),
            "signatures": sorted({r.get("signature", "") for r in results.values()} - {""}),
        }
    best = next(r for r in curve if r["best"])
    signatures = {best["signature"]} | {result.get("signature", "") for result in tests.values()}
    scores = {name: result["score"] for name, result in tests.items()}
    summary = {k: best[k] for k in META_KEYS}
    summary.update(
        tune=best["dev_bleu"],
        best_iteration=best["iteration"],
        iterations=len(curve) - 1,
        tests=scores,
        test=statistics.fmean(scores.values()),
        signatures=sorted(s for s in signatures if s),
    )
    if metrics:
        summary["metrics"] = metrics
    return summary


def read_summaries(paths: list[str]) -> list[dict]:
    """Run summaries (:func:`run_summary`'s JSON), checked; each remembers its file as ``_path``."""
    runs = []
    for path in paths:
        s = read_json(path, "run summary")
        for key in (*META_KEYS, "tune", "test", "tests"):
            if key not in s:
                raise InputError(f"run summary without {key!r}", path)
        s["_path"] = path
        runs.append(s)
    return runs
