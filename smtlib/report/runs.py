"""One tuning run's results: its BLEU scores, the iteration it keeps, its learning curve and summary.

Cherry & Foster (2012), §4: each tuning loop "return[s] the weights that achieve the best development
BLEU score" over its iterations; :func:`best_iteration` picks them (ties go to the earliest
iteration, i.e. fewer tuning steps: the paper does not say how ties are broken). A run tuned toward
another metric (``smtlib tune --metric``) keeps the weights with the best dev score in
that metric (:func:`tuning_scores`; the lowest for TER), its curve carrying those scores too. The learning curve
(dev BLEU of the weights 0..N, one TSV per run) records every iteration with the kept one marked;
:func:`run_summary` reduces a run to what the tables average: the kept weights' dev BLEU (Tune) and
their BLEU on each test set (Test = the mean over the test sets, §5).

BLEU results are the JSON output of ``smtlib bleu`` (``score`` on the 0-100 scale and the BLEU
``signature``). A run's test sets may also be scored with other metrics (``smtlib score --metric``,
the workflow's ``evaluation.metrics``): :func:`read_score` tells the metric from the result's ``name``
and :func:`run_summary` keeps those scores under ``metrics``, BLEU staying the run's ``test``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import statistics
from collections.abc import Iterable

from smtlib.errors import InputError
from smtlib.io import read_json, read_lines

#: the columns that name a run, in every learning curve and run summary
META_KEYS = ("pair", "fs", "method", "setting", "sample")
#: the learning curve's columns after :data:`META_KEYS`
CURVE_COLUMNS = ("iteration", "dev_bleu", "best", "signature")
#: the columns a run tuned toward another metric adds: the metric, its dev score (0-100; a mixture's
#: weighted sum) and whether ``higher`` or ``lower`` is better, by which ``best`` was chosen
TUNING_COLUMNS = ("tuning_metric", "dev_tuning", "better")


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


def best_iteration(scores: list[float], higher_is_better: bool = True) -> int:
    """Index of the best dev score (the highest, or the lowest for an error rate such as TER); ties go
    to the earliest iteration (fewer tuning steps)."""
    if not scores:
        raise InputError("no dev scores")
    best = 0
    for i, s in enumerate(scores):
        if (s > scores[best]) if higher_is_better else (s < scores[best]):
            best = i
    return best


@dataclasses.dataclass(frozen=True)
class TuningScores:
    """The dev scores of a run tuned toward a metric other than BLEU, by which its weights are kept.

    Attributes
    ----------
    metric
        The tuning metric as ``smtlib tune --metric`` took it (``chrf``, ``ter``, ``bleu:0.5,ter:-0.5``).
    values
        Its dev score (0-100) of the weights 0..N: the metric's score for one metric, the weighted sum
        of the parts' scores for a mixture.
    higher_is_better
        False for TER alone (an error rate); a mixture's signed weights make it higher-is-better.
    signatures
        The signatures of the scores (one per metric of the mixture).
    """

    metric: str
    values: tuple[float, ...]
    higher_is_better: bool
    signatures: tuple[str, ...]

    @property
    def better(self) -> str:
        return "higher" if self.higher_is_better else "lower"


def tuning_scores(spec: str, bleu: list[dict], others: list[tuple[str, dict]]) -> TuningScores:
    """The dev scores of the tuning metric ``spec`` for the weights 0..N.

    Parameters
    ----------
    spec
        A metric or mixture (:func:`smtlib.bleu.metrics.parse_mixture`).
    bleu
        ``smtlib bleu`` results of the weights 0..N (the BLEU part of a mixture).
    others
        ``(metric name, smtlib score result)`` of the metrics besides BLEU (:func:`read_score`): for
        each, its results of the weights 0..N in order; the metrics may come in any order.

    Raises
    ------
    InputError
        If a metric of ``spec`` lacks results (or has not one per weights), or a result is of a
        metric ``spec`` does not name.
    """
    from smtlib.bleu.metrics import parse_mixture

    mixture = parse_mixture(spec)
    by_metric: dict[str, list[dict]] = {"bleu": bleu} if "bleu" in mixture.names else {}
    for name, result in others:
        if name not in mixture.names or name == "bleu":
            raise InputError(f"a dev {name} score, but the tuning metric is {spec}")
        by_metric.setdefault(name, []).append(result)
    for name in mixture.names:
        got = len(by_metric.get(name, []))
        if got != len(bleu):
            raise InputError(f"{got} dev {name} scores for {len(bleu)} weights (the tuning metric is {spec}: give "
                             "its every metric's score of decoding with weights 0..N, in order)")
    if len(mixture.parts) == 1:
        metric = mixture.parts[0][0]
        values = tuple(r["score"] for r in by_metric[metric.name])
        higher = metric.higher_is_better
    else:
        values = tuple(sum(w * by_metric[m.name][i]["score"] for m, w in mixture.parts) for i in range(len(bleu)))
        higher = True
    signatures = [r.get("signature", "") for name in mixture.names for r in by_metric[name]]
    return TuningScores(spec, values, higher, tuple(dict.fromkeys(s for s in signatures if s)))


def best_weights_header(results: list[dict], best: int, tuning: TuningScores | None = None) -> str:
    """The comment line put above the kept weights: their dev BLEU, iteration and BLEU signature
    (first their dev score of the tuning metric, by which they were kept, when it is not BLEU)."""
    scores = [r["score"] for r in results]
    bleu = f"dev BLEU {scores[best]:.2f} at iteration {best} of {len(scores) - 1} ({results[best].get('signature', '')})"
    if tuning is None:
        return f"# best {bleu}\n"
    return (f"# best dev {tuning.metric} {tuning.values[best]:.2f} ({tuning.better} is better; "
            f"{'; '.join(tuning.signatures)}), {bleu}\n")


def format_curve(results: list[dict], best: int, meta: dict[str, str], tuning: TuningScores | None = None) -> str:
    """The learning-curve TSV of one run: its :data:`META_KEYS`, then one row per iteration 0..N.

    Parameters
    ----------
    results
        ``smtlib bleu`` results of decoding the dev set with the weights of iterations 0..N.
    best
        The kept iteration (:func:`best_iteration`), marked ``1`` in the ``best`` column.
    meta
        Values of :data:`META_KEYS` (missing keys are written empty).
    tuning
        For a run tuned toward another metric: its dev scores, in the columns
        :data:`TUNING_COLUMNS` after the others (a BLEU run's curve has none of them).
    """
    columns = [*META_KEYS, *CURVE_COLUMNS] + ([] if tuning is None else list(TUNING_COLUMNS))
    lines = ["\t".join(columns) + "\n"]
    for i, r in enumerate(results):
        values = [meta.get(k, "") for k in META_KEYS]
        values += [str(i), f"{r['score']:.4f}", "1" if i == best else "0", r.get("signature", "")]
        if tuning is not None:
            values += [tuning.metric, f"{tuning.values[i]:.4f}", tuning.better]
        lines.append("\t".join(values) + "\n")
    return "".join(lines)


def read_rows(path: str | os.PathLike, what: str, need: Iterable[str]) -> tuple[list[str], list[tuple[int, dict]]]:
    """A TSV's header and its rows as {column: text}, each with its line number, checked: the columns
    ``need`` are there (else "not a ``what``") and every row has one field per column."""
    lines = read_lines(path, what=what)
    header = lines[0].split("\t")
    missing = set(need) - set(header)
    if missing:
        raise InputError(f"not a {what}: missing columns {sorted(missing)}", path, 1)
    rows = []
    for n, line in enumerate(lines[1:], 2):
        values = line.split("\t")
        if len(values) != len(header):
            raise InputError(f"{len(values)} fields, expected {len(header)}", path, n)
        rows.append((n, dict(zip(header, values))))
    return header, rows


def read_curve(path: str | os.PathLike) -> list[dict]:
    """The rows of a learning-curve TSV written by :func:`format_curve`, checked."""
    header, table = read_rows(path, "learning curve", {"iteration", "dev_bleu", "best", *META_KEYS})
    rows = []
    for n, row in table:
        try:
            row["iteration"] = int(row["iteration"])
            row["dev_bleu"] = float(row["dev_bleu"])
            row["best"] = row["best"] == "1"
            if "dev_tuning" in row:
                row["dev_tuning"] = float(row["dev_tuning"])
        except ValueError:
            raise InputError("malformed number", path, n) from None
        rows.append(row)
    if sum(r["best"] for r in rows) != 1:
        raise InputError("a learning curve marks exactly one best iteration", path)
    if "dev_tuning" in header and not set(TUNING_COLUMNS) <= set(header):
        raise InputError(f"a learning curve with dev_tuning needs the columns {', '.join(TUNING_COLUMNS)}", path, 1)
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
        (absent without them, so a BLEU-only summary is what it always was); for a run tuned toward
        another metric (its curve's :data:`TUNING_COLUMNS`), also ``tuning``: that ``metric``, the
        kept weights' dev score in it (``tune``) and which way is ``better``.
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
    if "dev_tuning" in best:
        summary["tuning"] = {"metric": best["tuning_metric"], "tune": best["dev_tuning"], "better": best["better"]}
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
