"""Publish a run of Simianer, Riezler & Dyer (2012)'s Table 2 (``rules/simianer.smk``) for the repository.

The run takes several working sessions; what it finished is committed as it completes (as the tables
of Cherry & Foster are, :mod:`smtlib.report.publish`). From a workflow directory this writes, into a
directory meant to be tracked (``docs/results/simianer_table2/``):

- ``runs/<group>/<algo>-<data>/split<seed>/`` for every finished run (its ``test.bleu.json`` exists),
  a directory ``smtlib sgd table`` and ``smtlib sgd findings`` read as they read the run's own:
  ``chosen.json`` (devtest BLEU, active features and features seen per epoch, the chosen epoch),
  ``test.bleu.json``, ``test.out.gz`` (the test output, so that every score and test can be computed
  again from the repository) and ``chosen.weights.gz`` (the chosen epoch's weights, only the non-zero
  ones, as the run wrote them; a vector larger than ``max_weights_bytes`` compressed is left out and
  counted in ``PROVENANCE.md``);
- ``runs/baseline/<method>/s<sample>/``: the batch tuner's runs, as ``smtlib sgd table --baseline``
  reads them (``summary.json``, ``best.weights``, ``curve.tsv``, ``test.<set>.1best.gz``);
- ``costs.tsv``: per rule, the jobs that ran and their CPU and wall hours and peak memory: the
  sharded loop's rules, the jackknifed fold systems, and the pair's system and batch runs;
- ``simianer_table2.tsv``, ``simianer_findings.md`` and ``figures/simianer_epochs.png`` where they exist;
- ``PROVENANCE.md``: the commit and whether its tree was clean, the command, the date, the runs
  finished and those started and not finished.

Nothing is recomputed: every number is read from the run's own outputs.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil

from smtlib.errors import InputError
from smtlib.io import atomic_output
from smtlib.report.publish import (
    _copy,
    checkout_state,
    format_costs,
    provenance_head,
    publish_outputs,
    rule_costs,
    run_dirs,
    sum_costs,
)
from smtlib.weights import read_weights

#: benchmark file (relative to ``results/benchmarks/simianer/<pair>``) -> rule
_SIM_RULES = [
    (re.compile(r"^split\d+/folds/f\d+/phrases\.[01]\.tsv$"), "simianer_fold_phrases"),
    (re.compile(r"^split\d+/folds/f\d+/lm\.\d+\.tsv$"), "simianer_fold_lm"),
    (re.compile(r"^split\d+/folds/f\d+/assemble\.tsv$"), "simianer_fold_assemble"),
    (re.compile(r"^models/(full|split\d+/f\d+)/[^/]+\.tsv$"), "simianer_templates"),
    (re.compile(r"^[^/]+/[a-z]+-(dev|train)/split\d+/ep\d+/pass\.shard\d+\.tsv$"), "simianer_shard_pass"),
    (re.compile(r"^[^/]+/[a-z]+-(dev|train)/split\d+/ep\d+/mix\.tsv$"), "simianer_mix"),
    (re.compile(r"^[^/]+/[a-z]+-(dev|train)/split\d+/ep\d+/devtest\.tsv$"), "simianer_devtest"),
    (re.compile(r"^[^/]+/[a-z]+-(dev|train)/split\d+/test\.tsv$"), "simianer_test"),
]
#: the files of the table step copied when they exist (relative to ``results/``)
TABLE_FILES = ("simianer_table2.tsv", "simianer_findings.md", "figures/simianer_epochs.png")
#: the largest compressed weights file published (an all-templates vector of a training-set run can
#: hold millions of features; its test output and chosen epoch are published in any case)
MAX_WEIGHTS_BYTES = 2_000_000


def simianer_rule(relative: str) -> str | None:
    """The rule of a benchmark file under ``results/benchmarks/simianer/<pair>`` (None: not the loop's)."""
    return next((rule for pattern, rule in _SIM_RULES if pattern.match(relative)), None)


def simianer_costs(workdir: str | os.PathLike, pair: str) -> list[dict]:
    """Per rule, the costs of the Simianer run in ``workdir``: its own rules' jobs, and the pair's system
    and batch tuning runs (the tables' rules, :func:`smtlib.report.publish.rule_costs`)."""
    root = pathlib.Path(workdir) / "results" / "benchmarks" / "simianer" / pair
    jobs = []
    for path in sorted(root.rglob("*.tsv")) if root.is_dir() else []:
        rule = simianer_rule(path.relative_to(root).as_posix())
        if rule is not None:
            jobs.append((rule, path))
    own = sum_costs(jobs)
    return sorted(own + rule_costs(workdir, pair), key=lambda c: c["rule"])


def sgd_run_dirs(workdir: str | os.PathLike, pair: str) -> list[pathlib.Path]:
    """Every run directory of the sharded loop (``results/simianer/<pair>/<group>/<algo>-<data>/split<s>``)."""
    base = pathlib.Path(workdir) / "results" / "simianer" / pair
    if not base.is_dir():
        return []
    return sorted(p for p in base.glob("*/*-*/split*") if p.is_dir() and re.fullmatch(r"split\d+", p.name))


def publish_sgd_run(run: pathlib.Path, out: pathlib.Path, max_weights_bytes: int = MAX_WEIGHTS_BYTES) -> bool:
    """Write one finished run's record directory (see the module docstring); returns whether its weights
    were published (False: larger than ``max_weights_bytes`` compressed)."""
    for name in ("chosen.json", "test.bleu.json"):
        _copy(run / name, out / name)
    with open(run / "test.out", "rb") as src, atomic_output(out / "test.out.gz", binary=True) as fh:
        shutil.copyfileobj(src, fh)  # compressed by atomic_output, the same bytes for the same text
    weights = read_weights(run / "chosen.weights")
    target = out / "chosen.weights.gz"
    with atomic_output(target) as fh:
        fh.writelines(f"{name} {value!r}\n" for name, value in weights.items() if value != 0)
    if target.stat().st_size > max_weights_bytes:
        target.unlink()
        return False
    return True


def publish_simianer(workdir: str | os.PathLike, pair: str, out_dir: str | os.PathLike, command: str = "",
                     batch_method: str | None = "kbmira", max_weights_bytes: int = MAX_WEIGHTS_BYTES) -> dict:
    """Write the published results of the Simianer run in ``workdir`` into ``out_dir`` (module docstring).

    Returns ``finished`` and ``unfinished`` sharded runs, ``baseline`` batch runs finished, the table
    files copied, the runs whose weights were too large to publish, and the ``commit``.
    """
    workdir, out = pathlib.Path(workdir), pathlib.Path(out_dir)
    if not (workdir / "results").is_dir():
        raise InputError("no results/ directory: not a workflow directory", workdir)
    commit, clean = checkout_state(workdir)
    base = workdir / "results" / "simianer" / pair
    finished, unfinished, heavy = [], [], []
    for run in sgd_run_dirs(workdir, pair):
        name = run.relative_to(base).as_posix()
        if not (run / "test.bleu.json").exists():
            unfinished.append(name)
            continue
        finished.append(name)
        if not publish_sgd_run(run, out / "runs" / name, max_weights_bytes):
            heavy.append(name)
    baseline = []
    if batch_method:
        for run in run_dirs(workdir, pair, ["medium"]):
            if run.parts[-3] != batch_method or run.parts[-2] != "default":
                continue
            if not (run / "summary.json").exists():
                unfinished.append(f"baseline/{batch_method}/{run.name}")
                continue
            target = out / "runs" / "baseline" / batch_method / run.name
            for name in ("summary.json", "best.weights", "curve.tsv"):
                _copy(run / name, target / name)
            publish_outputs(run, target, "")
            baseline.append(run.name)
    with atomic_output(out / "costs.tsv") as fh:
        fh.write(format_costs(simianer_costs(workdir, pair)))
    copied = []
    for name in TABLE_FILES:
        src = workdir / "results" / name
        if src.exists():
            _copy(src, out / name)
            copied.append(name)
    with atomic_output(out / "PROVENANCE.md") as fh:
        fh.write(provenance_head(f"(Simianer, Riezler & Dyer 2012, Table 2; {pair})", commit, clean, command,
                                 "smtlib report publish-simianer"))
        fh.write(f"- Sharded runs finished ({len(finished)}): {', '.join(finished) or 'none yet'}.\n")
        if batch_method:
            fh.write(f"- Batch tuner's runs ({batch_method}, medium, the tables' protocol) finished: "
                     f"{len(baseline)} ({', '.join(baseline) or 'none yet'}).\n")
        fh.write(f"- Runs started and not finished (in flight, or left between phases): {len(unfinished)}.\n")
        if heavy:
            fh.write(f"- Weights not published ({len(heavy)} runs, more than {max_weights_bytes:,} bytes "
                     f"compressed): {', '.join(heavy)}; their test outputs and chosen epochs are.\n")
        fh.write(f"- Table files present: {', '.join(copied) if copied else 'none yet'}.\n")
        fh.write("- `costs.tsv`: per rule, the CPU and wall hours and the largest peak memory of the jobs that "
                 "ran (Snakemake's benchmark files; `cpu_hours_extrapolated` adds each job's CPU time after "
                 "Snakemake's last sample at its own rate). The rules without a benchmark file (shards, "
                 "fold corpora, zero vectors, the epoch choice, the table) take seconds.\n")
    return {"finished": len(finished), "unfinished": len(unfinished), "baseline": len(baseline),
            "tables": copied, "heavy": heavy, "commit": commit}

