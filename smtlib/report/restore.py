"""A finished run restored from its published record instead of tuned again.

``smtlib report publish`` commits each finished run as a record (``runs/<fs>/<method>/<setting>/s<N>.json``:
the dev BLEU of every iteration, the kept iteration, its weights and its test BLEU per test set), so
that a lost machine costs only the runs in flight. The records are enough to compute the
tables again without the tuning loop, which is nearly all of a table's cost: the kept weights and the
learning curve come from the record (:func:`restored_weights`, :func:`restored_curve`), the test sets
are decoded again with those weights, and the run's summary must then equal the record's
(:func:`check_restored`): the same test BLEU on every test set, to the last digit. A system or
decoder that differs from the one that tuned the run fails that check, so a restored run is never a
number taken on trust. The dev scores (Tune, the curve) are the record's: only tuning again would
re-check them (the workflow's ``--forcerun`` of one run's chain, as the published results do).

Only runs tuned toward BLEU are restored: a run tuned toward another metric keeps its weights by
that metric's dev scores, which a record does not carry. A record that keeps its tuning steps names the
hyper-parameters each step ran with (the ``params`` of its ``--info``); a run is restored from it only
if its own settings, with the tuner's current defaults, give the same ones (:func:`check_settings`):
a changed default or ``method_settings`` makes it another run, to be tuned.
"""

from __future__ import annotations

import json
import math
import os

from smtlib.errors import InputError
from smtlib.io import read_json
from smtlib.report.runs import META_KEYS, best_iteration, best_weights_header, format_curve

#: what a run record must hold (smtlib.report.publish.run_record writes them)
RECORD_KEYS = (*META_KEYS, "best_iteration", "tune", "dev_bleu", "tests", "test", "signatures", "best_weights")


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def read_record(path: str | os.PathLike, meta: dict[str, str] | None = None) -> dict:
    """A published run record, checked: every key of :data:`RECORD_KEYS`, finite numbers, a kept
    iteration whose dev BLEU is the best (any of the iterations tied at the record's 4 decimals: the
    run chose among them at full precision) with ``tune`` its score, and
    one BLEU signature; with ``meta``, the run it names must be that one (a record in the wrong
    place restores the wrong run)."""
    record = read_json(path, "run record")
    if not isinstance(record, dict):
        raise InputError("a run record is a JSON object", path)
    missing = [k for k in RECORD_KEYS if k not in record]
    if missing:
        raise InputError(f"not a run record: missing {', '.join(missing)}", path)
    if meta is not None:
        wrong = [f"{k} {record[k]!r} (expected {meta[k]!r})" for k in META_KEYS if k in meta and str(record[k]) != meta[k]]
        if wrong:
            raise InputError(f"the record is of another run: {'; '.join(wrong)}", path)
    dev = record["dev_bleu"]
    if not isinstance(dev, list) or not dev or not all(_finite(b) and 0 <= b <= 100 for b in dev):
        raise InputError("dev_bleu must be a non-empty list of BLEU scores (0-100), one per iteration", path)
    best = record["best_iteration"]
    if not isinstance(best, int) or isinstance(best, bool) or not 0 <= best < len(dev):
        raise InputError(f"best_iteration {best!r} is not an iteration of its {len(dev)} dev scores", path)
    # the record's dev BLEU is the curve's, rounded to 4 decimals, and the run kept its best at full
    # precision: a later iteration tied with an earlier one here can be the kept one
    if dev[best] != max(dev):
        raise InputError(f"best_iteration {best} is not the best dev BLEU's ({best_iteration(dev)}): a run tuned "
                         "toward another metric, which a record cannot restore", path)
    if not _finite(record["tune"]) or round(record["tune"], 4) != dev[best]:
        raise InputError(f"tune {record['tune']!r} is not the dev BLEU of iteration {best} ({dev[best]})", path)
    tests = record["tests"]
    if not isinstance(tests, dict) or not tests or not all(_finite(v) for v in tests.values()):
        raise InputError("tests must map each test set to its BLEU", path)
    weights = record["best_weights"]
    if not isinstance(weights, dict) or not weights or not all(_finite(v) for v in weights.values()):
        raise InputError("best_weights must map each feature to a finite weight", path)
    signatures = record["signatures"]
    if not isinstance(signatures, list) or len(signatures) != 1 or not isinstance(signatures[0], str):
        raise InputError(f"a record with one BLEU signature can be restored; this one has {signatures!r}", path)
    _check_steps(record.get("steps", []), len(dev) - 1, path)
    return record


def _check_steps(steps, iterations: int, path) -> None:
    """A record's tuning steps (:func:`smtlib.report.publish.run_steps`), if any: one per iteration
    1..N, each with its ``--info`` object and its benchmark's finite, non-negative numbers (or none)."""
    if not isinstance(steps, list):
        raise InputError("steps must be a list of the run's tuning steps", path)
    if steps and [s.get("iteration") if isinstance(s, dict) else None for s in steps] != list(range(1, iterations + 1)):
        raise InputError(f"steps must be the run's iterations 1..{iterations}, in order, one each", path)
    for s in steps:
        bench = s.get("benchmark")
        if not isinstance(s.get("info"), dict) or not (bench is None or isinstance(bench, dict) and all(
                _finite(bench.get(k)) and bench[k] >= 0 for k in ("s", "cpu_time", "max_rss"))):
            raise InputError(f"step {s['iteration']}: an info object and a benchmark of finite seconds and "
                             "memory (s, cpu_time, max_rss) or none", path)


#: a parameter one side does not have
_NONE = object()


def check_settings(record: dict, params: dict | None, path: str | os.PathLike = "") -> int:
    """Raise :class:`InputError` unless every tuning step the record keeps ran with ``params``, the
    hyper-parameters the run would be tuned with now (its settings over the tuner's defaults, as
    ``Tuner(**settings).params``); returns how many steps were checked (none for a record published
    without its steps, for steps whose ``--info`` names no parameters, or when ``params`` is None:
    a method whose settings are not known)."""
    if params is None:
        return 0
    expected = json.loads(json.dumps(params))
    checked = 0
    for step in record.get("steps", []):
        recorded = step["info"].get("params")
        if not isinstance(recorded, dict):
            continue
        differ = sorted(k for k in set(recorded) | set(expected) if recorded.get(k, _NONE) != expected.get(k, _NONE))
        if differ:
            was = ", ".join(f"{k}={recorded.get(k, '(none)')}" for k in differ)
            now = ", ".join(f"{k}={expected.get(k, '(none)')}" for k in differ)
            raise InputError(f"the record's iteration {step['iteration']} was tuned with {was}; this run's settings "
                             f"give {now}: it is another run (tune it, or restore with the record's settings)", path)
        checked += 1
    return checked


def restored_steps(record: dict) -> dict:
    """The run's tuning steps as its record keeps them (empty for a record published without them),
    with the run's identity, for the findings that read them (``smtlib report cmira --restored-steps``)."""
    return {**{k: record[k] for k in META_KEYS}, "steps": record.get("steps", [])}


def _dev_results(record: dict) -> list[dict]:
    """The record's dev BLEU of iterations 0..N as ``smtlib bleu`` results (score and signature)."""
    return [{"score": b, "signature": record["signatures"][0]} for b in record["dev_bleu"]]


def restored_weights(record: dict) -> tuple[dict[str, float], str]:
    """The kept weights of a record and the comment to put above them (as ``smtlib report best`` does),
    saying they were restored."""
    header = best_weights_header(_dev_results(record), record["best_iteration"]).removeprefix("# ").rstrip("\n")
    return dict(record["best_weights"]), f"{header}\nrestored from the run's published record"


def restored_curve(record: dict) -> str:
    """The run's learning-curve TSV as ``smtlib report best`` wrote it (its dev BLEU is kept to 4
    decimals there, as in the record)."""
    return format_curve(_dev_results(record), record["best_iteration"], {k: str(record[k]) for k in META_KEYS})


def check_restored(summary: dict, record: dict) -> None:
    """Raise :class:`InputError` unless the summary of a restored run (its test sets decoded again)
    is the record's: the same kept iteration, Tune, BLEU signature, test sets and BLEU of each, exactly."""
    problems = []
    for key in (*META_KEYS, "best_iteration", "tune", "signatures"):
        if summary[key] != record[key]:
            problems.append(f"{key} {summary[key]!r}, the record's {record[key]!r}")
    if summary["iterations"] != len(record["dev_bleu"]) - 1:
        problems.append(f"{summary['iterations']} iterations, the record's {len(record['dev_bleu']) - 1}")
    ours, theirs = summary["tests"], record["tests"]
    if set(ours) != set(theirs):
        problems.append(f"test sets {sorted(ours)}, the record's {sorted(theirs)}")
    for name in sorted(set(ours) & set(theirs)):
        if ours[name] != theirs[name]:
            problems.append(f"{name} BLEU {ours[name]!r} decoded here, {theirs[name]!r} in the record")
    if problems:
        raise InputError("the restored run does not reproduce its record (is this the system and decoder "
                         "that tuned it?): " + "; ".join(problems))
