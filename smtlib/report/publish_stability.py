"""Publish the seed-only replicas of Hopkins & May (2011), Figures 5 and 6 (``rules/stability.smk``), for
the repository.

The replicas are tuning runs of the tables' loop at the setting ``seed=N``: the same system, the full
dev set and the same hyper-parameters, differing only in the optimizer's seed, with the test sets
decoded at every iteration. From a workflow directory this writes, for one pair, into a directory
meant to be tracked (e.g. ``docs/results/stability/fr-en/``):

- ``runs/<fs>/<method>/seed=<N>/s0.json``: each finished replica's record (as
  :func:`smtlib.report.publish.run_record`: dev BLEU per iteration, kept iteration, test BLEU, kept
  weights), with ``s0.test_curve.tsv``, its dev and test BLEU at every iteration (the input of
  ``smtlib report stability``), and ``s0.test.<testset>.1best.gz``, its kept weights' test outputs.
  A replica is finished once it has both its summary and its test curve.
- ``<pair>.md``, ``<pair>.tsv`` and ``<pair>.png``, the findings, the table of replicas and the
  figure, where the workflow has made them.
- ``costs.tsv``: the replicas' own jobs per rule (dev decodes, tuning steps, the test decodes of every
  iteration, summaries) and the findings' job. The system, its first decode and the initial weights'
  test decodes are the tables' and are not counted here.
- ``PROVENANCE.md``: the commit, the command, and the replicas finished and not finished.

The findings rebuild from the published curves alone:
``smtlib report stability --curves runs/medium/*/seed=*/s0.test_curve.tsv --methods ...``.
Nothing is recomputed: every number is read from the run's own outputs.
"""

from __future__ import annotations

import os
import pathlib
import re

from smtlib.errors import InputError
from smtlib.io import atomic_output
from smtlib.report.publish import (
    _copy,
    benchmark_files,
    benchmark_rule,
    benchmark_setting,
    checkout_state,
    driver_commit_chain,
    format_costs,
    provenance_head,
    run_benchmarks,
    run_dirs,
    run_record,
    sum_costs,
    write_run_record,
)

#: a seed-only replica's setting (smtlib.workflow.runs.replica_setting, which smtlib does not import:
#: the workflow's layer sits above the library's)
_REPLICA_SETTING = re.compile(r"seed=\d+")
#: the findings, table and figure of a pair, under ``results/stability/``
REPORT_SUFFIXES = (".md", ".tsv", ".png")


def replica_dirs(workdir: str | os.PathLike, pair: str) -> list[pathlib.Path]:
    """The run directories of ``pair``'s seed-only replicas (setting ``seed=N``)."""
    return [run for run in run_dirs(workdir, pair) if _REPLICA_SETTING.fullmatch(run.parts[-2])]


def stability_costs(workdir: str | os.PathLike, pair: str) -> list[dict]:
    """Per rule, the costs of the replicas' own jobs and of the pair's findings job."""
    jobs = []
    for relative, path in benchmark_files(workdir, pair).items():
        setting, rule = benchmark_setting(relative), benchmark_rule(relative)
        if setting is not None and _REPLICA_SETTING.fullmatch(setting) and rule is not None:
            jobs.append((rule, path))
    findings = pathlib.Path(workdir) / "results" / "benchmarks" / "stability" / f"{pair}.tsv"
    if findings.is_file():
        jobs.append(("stability_findings", findings))
    return sum_costs(jobs)


def publish_stability(workdir: str | os.PathLike, pair: str, out_dir: str | os.PathLike, command: str = "") -> dict:
    """Write the published replicas of ``pair`` from ``workdir`` into ``out_dir`` (module docstring).

    Returns the ``finished`` and ``unfinished`` replicas (names ``<fs>/<method>/seed=<N>/s0``), the
    report files copied and the ``commit``.
    """
    workdir, out = pathlib.Path(workdir), pathlib.Path(out_dir)
    if not (workdir / "results").is_dir():
        raise InputError("no results/ directory: not a workflow directory", workdir)
    commit, clean = checkout_state(workdir)
    commits = driver_commit_chain(workdir, commit)  # a run resumed at a later commit names each
    base = workdir / "results" / "tune" / pair
    finished, unfinished = [], []
    for run in replica_dirs(workdir, pair):
        name = run.relative_to(base).as_posix()
        record = run_record(run, run_benchmarks(workdir, run))
        if record is None or not (run / "test_curve.tsv").exists():
            unfinished.append(name)
            continue
        finished.append(name)
        target = out / "runs" / name
        write_run_record(run, record, target)
        _copy(run / "test_curve.tsv", target.parent / f"{run.name}.test_curve.tsv")
    copied = []
    for suffix in REPORT_SUFFIXES:
        src = workdir / "results" / "stability" / f"{pair}{suffix}"
        if src.exists():
            _copy(src, out / src.name)
            copied.append(src.name)
    with atomic_output(out / "costs.tsv") as fh:
        fh.write(format_costs(stability_costs(workdir, pair)))
    with atomic_output(out / "PROVENANCE.md") as fh:
        fh.write(provenance_head(f"(Hopkins & May 2011, Figures 5 and 6: seed-only replicas; {pair})", commit,
                                 clean, command, "smtlib report publish-stability", earlier=commits[:-1]))
        fh.write(f"- Replicas finished ({len(finished)}): {', '.join(finished) or 'none yet'}.\n")
        fh.write(f"- Replicas started and not finished: {len(unfinished)}"
                 + (f" ({', '.join(unfinished)})" if unfinished else "") + ".\n")
        fh.write(f"- Report files present: {', '.join(copied) if copied else 'none yet'}.\n")
        fh.write("- `costs.tsv`: per rule, the replicas' own jobs and the findings' job (Snakemake's benchmark "
                 "files; `cpu_hours_extrapolated` adds each job's CPU time after Snakemake's last sample at its "
                 "own rate). The system, its first decode and the initial weights' test decodes are the "
                 "tables' and are not counted.\n")
    return {"finished": finished, "unfinished": unfinished, "reports": copied, "commit": commit}
