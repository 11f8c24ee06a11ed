"""Publish a workflow run's results for the repository: tables, per-run summaries, costs, provenance.

A full table takes many hours and outlives a working session; what it produced is
committed as it completes, so that a lost machine costs only the runs in flight. This module reads a
workflow directory (the one ``snakemake`` ran in: ``results/``, ``results/benchmarks/``, and its git
checkout) and writes, for one language pair, into a directory meant to be tracked (``docs/results/``):

- ``runs/<fs>/<method>/<setting>/s<sample>.json`` for every *finished* run (its ``summary.json``
  exists): best iteration, dev BLEU per iteration (the learning curve), test BLEU per test set, the
  kept weights; beside it ``s<sample>.test.<testset>.1best.gz``, the run's output on each test set
  (gzipped, byte-identical for identical text), so that every test score, mark and finding can be
  computed again from the repository alone (config ``restore_runs``: rules/restore.smk scores these
  instead of decoding); the record also keeps each tuning step's ``--info`` and measured cost
  (:func:`run_steps`), which Tan et al.'s findings read;
- ``initial/<fs>/test.<testset>.1best.gz``: the initial weights' outputs on the test sets (the
  tables' starting-point column);
- ``costs.tsv``: per rule, the jobs that ran, their CPU and wall hours, the largest peak memory, and
  the largest wall and CPU seconds of one job (the rules' ``benchmark:`` files, Snakemake's
  ``cpu_time``, ``s`` and ``max_rss``). A job's wall time stretches with the machine's load; its CPU
  time does not, so ``max_cpu_s`` is what a cluster's time limit is sized from (profiles/slurm).
  Snakemake samples a job's CPU time (0.5 s apart for its first 30 readings, about 15 s, then 30 s
  apart) and counts none after the last sample, so ``cpu_hours`` is low, by up to 60 % for a job of
  15-45 s; ``cpu_hours_extrapolated`` adds each job's unsampled tail at the rate it ran before (see
  ``unsampled_cpu``), the figure to set beside CPU times measured exactly;
- the table files that exist (``results/<table>.tsv``, ``.md``, ``_tests.json``, ``_vs_paper.tsv``,
  ``_findings.md``, the extended table, Tan et al.'s c-MIRA findings ``_cmira.md`` and ``.tsv``) and
  the figures of the pair;
- ``PROVENANCE.md``: the commit of the workflow's checkout (and, for a run resumed at a later commit, each
  commit its driver started at, oldest first: ``results/run_commits.tsv``), whether its tree was clean, the date,
  and the counts of finished runs (the tables' runs, at the default settings, apart from the others:
  checks at other settings, a sweep's points) and of runs started and not finished.

The tables may come from a second workflow directory (``tables_workdir``): a checkout at a later
commit holding the same runs (hard links), where only the table step runs. The Table 4 run started
before the tables' significance marks, findings and starting-point column existed;
its runs take sessions, its table step seconds. Every run summary there must be byte-identical to the
runs directory's, or, for a run the runs directory lacks, be restored from its record published
earlier (``smtlib report restore``, config ``restore_runs``) and reproduce it (else the tables are not
of these runs: an error), and ``PROVENANCE.md`` names both commits. The records may also be in other
published ``runs/`` directories (``restored_from``: a table step whose ``restore_runs`` named a list, e.g.
an extended Table 6 taking the paper's methods from ``table6/runs``). A side experiment run there too, at
settings no table reads (``side_settings``, e.g. online MIRA with ``shards=2``), is named and left out;
so is one in the runs directory itself (Hopkins & May's seed-only replicas, ``seed=N``, which are
published apart by ``smtlib.report.publish_stability``).

Records already in ``runs/`` that this run directory did not write (an earlier publish from another
one, e.g. a machine since lost: its ``costs.tsv`` and ``PROVENANCE.md`` are then kept apart) stay, and
``PROVENANCE.md`` counts them apart from this directory's runs.

Nothing is recomputed: every number is read from the run's own outputs (never hand-edited).
"""

from __future__ import annotations

import csv
import datetime
import functools
import json
import os
import pathlib
import re
import shutil
import subprocess
from collections import defaultdict
from collections.abc import Mapping, Sequence

from smtlib.errors import InputError
from smtlib.io import atomic_output, read_json
from smtlib.report.runs import read_curve
from smtlib.weights import read_weights

#: benchmark file (relative to ``results/benchmarks``) -> rule, for the rules of the tables' DAG
_RULES = [
    (re.compile(r"^systems/[^/]+/(prepare|align)\.tsv$"), lambda m, kind: f"train_{m.group(1)}"),
    (re.compile(r"^systems/[^/]+/phrases\.[01]\.tsv$"), lambda m, kind: "train_phrases"),
    (re.compile(r"^systems/[^/]+/lm\.[01]\.tsv$"), lambda m, kind: "train_lm"),
    (re.compile(r"^systems/[^/]+/assemble\.[a-z]+\.tsv$"), lambda m, kind: "train_assemble"),
    (re.compile(r"^systems/[^/]+/export_moses\.[a-z]+\.tsv$"), lambda m, kind: "export_moses"),
    (re.compile(r"^tune/[^/]+/[^/]+/first/decode\.tsv$"), lambda m, kind: "decode_first"),
    (re.compile(r"^tune/[^/]+/[^/]+/first/s\d+/first_sample\.tsv$"), lambda m, kind: "first_sample"),
    (re.compile(r"^tune/[^/]+/[^/]+/[^/]+/[^/]+/s\d+/it(\d+)/decode\.tsv$"),
     lambda m, kind: "decode_dev_lattice" if kind == "lattice" else "decode_dev"),
    (re.compile(r"^tune/[^/]+/[^/]+/[^/]+/[^/]+/s\d+/it(\d+)/tune\.tsv$"),
     lambda m, kind: "tune_lattice" if kind == "lattice" else ("tune_first" if m.group(1) == "1" else "tune")),
    (re.compile(r"^tune/[^/]+/[^/]+/[^/]+/[^/]+/s\d+/it\d+/mira\.shard\d+\.tsv$"), lambda m, kind: "mira_shard"),
    (re.compile(r"^tune/[^/]+/[^/]+/[^/]+/[^/]+/s\d+/test\.[^/]+\.decode\.tsv$"), lambda m, kind: "decode_test"),
    (re.compile(r"^tune/[^/]+/[^/]+/[^/]+/[^/]+/s\d+/it\d+/test\.[^/]+\.decode\.tsv$"),
     lambda m, kind: "decode_test_iteration"),
    (re.compile(r"^tune/[^/]+/[^/]+/[^/]+/[^/]+/s\d+/it\d+/mira\.mix\.tsv$"), lambda m, kind: "mira_mix"),
    (re.compile(r"^tune/[^/]+/[^/]+/[^/]+/[^/]+/s\d+/select_best\.tsv$"), lambda m, kind: "select_best"),
    (re.compile(r"^tune/[^/]+/[^/]+/[^/]+/[^/]+/s\d+/restore\.tsv$"), lambda m, kind: "restore_run"),
    (re.compile(r"^tune/[^/]+/[^/]+/[^/]+/[^/]+/s\d+/summary\.tsv$"), lambda m, kind: "run_summary"),
    (re.compile(r"^tables/[^/]+?_cmira\.tsv$"), lambda m, kind: "cmira_findings"),
    (re.compile(r"^tables/[^/]+?(_extended|_vs_paper)?\.tsv$"), lambda m, kind: f"table{m.group(1) or ''}"),
    (re.compile(r"^systems/[^/]+/[^/]+/initial\.test\.[^/]+\.tsv$"), lambda m, kind: "decode_test_initial"),
]


def benchmark_rule(relative: str) -> str | None:
    """The rule a benchmark file under ``results/benchmarks`` belongs to (None: not one of the tables')."""
    from smtlib.tuners.registry import input_kind

    parts = relative.split("/")
    kind = ""
    if parts[0] == "tune" and len(parts) > 3 and parts[3] != "first":
        try:
            kind = input_kind(parts[3])
        except InputError:
            kind = ""
    for pattern, rule in _RULES:
        m = pattern.match(relative)
        if m:
            return rule(m, kind)
    return None


#: Snakemake 9's benchmark sampler (snakemake.benchmark): a reading of the job's process tree at its
#: start, then BENCHMARK_INTERVAL_SHORT (0.5 s) apart for SHORT_READINGS (30) more, then
#: BENCHMARK_INTERVAL (30 s) apart
SHORT_INTERVAL_S = 0.5
SHORT_READINGS = 30
SAMPLING_INTERVAL_S = 30


def unsampled_cpu(wall_s: float, cpu_s: float) -> float:
    """A job's CPU seconds with the tail after Snakemake's last reading added at the job's own rate.

    Snakemake 9 reads a job's CPU time every 0.5 s up to 15 s (30 readings), then at 45, 75, ... s, and
    keeps the last reading: whatever the job used after it is not counted (up to 0.5 s of a job under
    15 s, everything after 15 s of a job of 15-45 s, up to 30 s of a longer one). Measured on this
    machine (``benchmarks/results/snakemake_overhead.md``): busy loops of 25 and 40 CPU-s were recorded
    as 14.2 and 14.3 s, and this gives 25.05 and 40.2; shard passes of 21-25 CPU-s (``/proc``) were
    recorded as 12-14 s. The readings also take time, which moves the later ones a little later than
    this schedule, so the figure is an extrapolation, not a measurement.
    """
    if wall_s <= 0 or cpu_s <= 0:
        return cpu_s
    short_end = SHORT_INTERVAL_S * SHORT_READINGS
    if wall_s < short_end:
        last = SHORT_INTERVAL_S * int(wall_s / SHORT_INTERVAL_S)
    else:
        last = short_end + SAMPLING_INTERVAL_S * int((wall_s - short_end) // SAMPLING_INTERVAL_S)
    return cpu_s * wall_s / last if last > 0 else cpu_s


def read_benchmark(path: str | os.PathLike) -> dict[str, float]:
    """Snakemake's benchmark TSV (one row: ``s``, ``max_rss`` MB, ``cpu_time`` s, ...) as numbers, and
    ``cpu_extrapolated``, the CPU time with its unsampled tail (``unsampled_cpu``)."""
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    if len(rows) != 1:
        raise InputError(f"a benchmark file has one row, this one {len(rows)}", path)

    def number(key: str) -> float:
        value = rows[0].get(key, "")
        try:
            return float(value)
        except ValueError:
            return 0.0  # Snakemake writes "NA" where it could not measure (a job too short to sample)

    wall, cpu = number("s"), number("cpu_time")
    return {"s": wall, "max_rss": number("max_rss"), "cpu_time": cpu, "cpu_extrapolated": unsampled_cpu(wall, cpu)}


def benchmark_feature_set(relative: str) -> str | None:
    """The feature set a benchmark file under ``results/benchmarks`` belongs to; None for the jobs every
    feature set of a pair shares (data, alignment, phrase extraction, language models) and the tables."""
    parts = relative.split("/")
    if parts[0] == "tune" and len(parts) > 3:
        return parts[2]
    if parts[0] == "systems" and len(parts) == 4:  # systems/<pair>/<fs>/initial.test.<set>.tsv
        return parts[2]
    m = re.match(r"^systems/[^/]+/(?:assemble|export_moses)\.([^/]+)\.tsv$", relative)
    return m.group(1) if m else None


def benchmark_setting(relative: str) -> str | None:
    """The setting (``default``, ``PARAM=VALUE``, ...) of a run's job's benchmark file under
    ``results/benchmarks``; None for the jobs no one run owns (systems, a feature set's first decode, tables)."""
    parts = relative.split("/")
    if parts[0] == "tune" and len(parts) > 5 and parts[3] != "first":
        return parts[4]
    return None


def _first_job_of(relative: str, feature_sets: set[str]) -> bool:
    """Whether a benchmark file is the first decode or a first dev sample of one of ``feature_sets``."""
    parts = relative.split("/")
    return parts[0] == "tune" and len(parts) > 4 and parts[3] == "first" and parts[2] in feature_sets


def benchmark_files(workdir: str | os.PathLike, pair: str, tables: list[str] = ()) -> dict[str, pathlib.Path]:
    """The benchmark files of one pair's jobs and of the jobs that wrote its ``tables`` (``table4``: the
    table, its extended table, its paper comparison and Tan et al.'s c-MIRA findings), by path relative
    to ``results/benchmarks``."""
    root = pathlib.Path(workdir) / "results" / "benchmarks"
    table_files = [root / "tables" / f"{t}{suffix}.tsv" for t in tables
                   for suffix in ("", "_extended", "_vs_paper", "_cmira")]
    paths = [*sorted((root / "systems" / pair).rglob("*.tsv")), *sorted((root / "tune" / pair).rglob("*.tsv")),
             *(p for p in table_files if p.is_file())]
    return {path.relative_to(root).as_posix(): path for path in paths}


def rule_costs(workdir: str | os.PathLike, pair: str, tables: list[str] = (),
               feature_sets: list[str] | None = None,
               table_step: str | os.PathLike | None = None, side_settings: Sequence[str] = ()) -> list[dict]:
    """Per rule: jobs, CPU hours, wall hours and the largest peak RSS (MB) of one pair's jobs and of the
    jobs that wrote its ``tables`` (see ``benchmark_files``). With ``feature_sets``, only the jobs of
    those feature sets and the ones they share: a table's cost apart from a figure's runs in the same
    directory (Figure 1's sweep on the feature set ``overfit``).

    ``table_step``: a second workflow directory over the same runs (hard links or copies of their
    files), where the table step ran. Its jobs are added, one by one: every benchmark file there that
    is not the runs directory's own (the same path with the same bytes) is a job the table step ran:
    the tables, the initial weights' test decodes, and each restored run's restore and test decodes,
    also where the runs directory had decoded that run's tests itself. Not the jobs of its runs at
    ``side_settings`` (a side experiment there that no table reads, see ``same_runs``), nor the first
    decode and dev samples of the feature sets that experiment tuned: a run restored from its record
    needs neither, so in a table step they ran for the side experiment. The runs directory's own jobs of
    runs at ``side_settings`` are left out too (a side experiment run beside the table's runs, e.g.
    Hopkins & May's seed-only replicas, published apart); its first decode is the table's as well."""
    files = [(relative, path) for relative, path in benchmark_files(workdir, pair, tables).items()
             if benchmark_setting(relative) not in side_settings]
    if table_step is not None:
        own = dict(files)
        side_sets = {r.parts[-4] for r in run_dirs(table_step, pair) if r.parts[-2] in side_settings}
        files += [(relative, path) for relative, path in benchmark_files(table_step, pair, tables).items()
                  if (relative not in own or own[relative].read_bytes() != path.read_bytes())
                  and benchmark_setting(relative) not in side_settings
                  and not _first_job_of(relative, side_sets)]
    jobs = []
    for relative, path in files:
        rule = benchmark_rule(relative)
        if rule is None:
            continue
        fs = benchmark_feature_set(relative)
        if feature_sets is not None and fs is not None and fs not in feature_sets:
            continue
        jobs.append((rule, path))
    return sum_costs(jobs)


def sum_costs(jobs: Sequence[tuple[str, pathlib.Path]]) -> list[dict]:
    """Per rule, the totals of ``format_costs`` over ``(rule, benchmark file)`` jobs, sorted by rule."""
    totals: dict[str, dict] = defaultdict(lambda: {"jobs": 0, "cpu_h": 0.0, "wall_h": 0.0, "max_rss_mb": 0.0,
                                                   "max_wall_s": 0.0, "max_cpu_s": 0.0, "cpu_extrapolated_h": 0.0})
    for rule, path in jobs:
        b = read_benchmark(path)
        t = totals[rule]
        t["jobs"] += 1
        t["cpu_h"] += b["cpu_time"] / 3600
        t["cpu_extrapolated_h"] += b["cpu_extrapolated"] / 3600
        t["wall_h"] += b["s"] / 3600
        t["max_rss_mb"] = max(t["max_rss_mb"], b["max_rss"])
        t["max_wall_s"] = max(t["max_wall_s"], b["s"])
        t["max_cpu_s"] = max(t["max_cpu_s"], b["cpu_time"])
    return [{"rule": rule, **values} for rule, values in sorted(totals.items())]


def format_costs(costs: list[dict]) -> str:
    lines = ["rule\tjobs\tcpu_hours\twall_hours\tmax_rss_mb\tmax_wall_s\tmax_cpu_s\tcpu_hours_extrapolated\n"]
    for c in costs:
        lines.append(f"{c['rule']}\t{c['jobs']}\t{c['cpu_h']:.3f}\t{c['wall_h']:.3f}\t{c['max_rss_mb']:.0f}\t"
                     f"{c['max_wall_s']:.0f}\t{c['max_cpu_s']:.0f}\t{c['cpu_extrapolated_h']:.3f}\n")
    total_cpu = sum(c["cpu_h"] for c in costs)
    total_wall = sum(c["wall_h"] for c in costs)
    lines.append(f"total\t{sum(c['jobs'] for c in costs)}\t{total_cpu:.3f}\t{total_wall:.3f}\t"
                 f"{max((c['max_rss_mb'] for c in costs), default=0):.0f}\t"
                 f"{max((c['max_wall_s'] for c in costs), default=0):.0f}\t"
                 f"{max((c['max_cpu_s'] for c in costs), default=0):.0f}\t"
                 f"{sum(c['cpu_extrapolated_h'] for c in costs):.3f}\n")
    return "".join(lines)


def run_record(run_dir: str | os.PathLike, benchmarks: str | os.PathLike | None = None) -> dict | None:
    """A finished run's published summary (None while its ``summary.json`` is missing).

    With its tuning steps (``steps``, :func:`run_steps`) when the run has them: those it tuned itself
    (``benchmarks``: the run's directory of benchmark files, ``results/benchmarks/tune/...``), or those
    its own record gave back when it was restored (``steps.json``, ``smtlib report restore``), so that a
    run published again from the directory that restored it keeps them."""
    run_dir = pathlib.Path(run_dir)
    if not (run_dir / "summary.json").exists():
        return None
    summary = read_json(run_dir / "summary.json", "run summary")
    curve = read_curve(run_dir / "curve.tsv")
    weights = read_weights(run_dir / "best.weights")
    record = {
        **{k: summary[k] for k in ("pair", "fs", "method", "setting", "sample")},
        "best_iteration": summary["best_iteration"],
        "tune": summary["tune"],
        "dev_bleu": [round(r["dev_bleu"], 4) for r in curve],
        "tests": summary["tests"],
        "test": summary["test"],
        "signatures": summary.get("signatures", []),
        "best_weights": {name: float(value) for name, value in weights.items()},
    }
    steps = run_steps(run_dir, benchmarks)
    if steps:
        record["steps"] = steps
    return record


@functools.lru_cache(maxsize=None)
def this_machine(cpuinfo: str | os.PathLike = "/proc/cpuinfo") -> str:
    """This machine's CPU as a record names it: ``/proc/cpuinfo``'s model name, vendor, family and model
    (``platform`` elsewhere). A run directory's steps were measured on the machine that publishes or
    reports them: its clone lives and dies with that machine."""
    import platform

    fields: dict[str, str] = {}
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if not line.strip():
                    break  # the first processor's block
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    if "vendor_id" in fields:
        return (f"{fields.get('model name', '?')} ({fields['vendor_id']} family {fields.get('cpu family', '?')} "
                f"model {fields.get('model', '?')})")
    return platform.processor() or platform.machine() or "unknown"


def run_steps(run_dir: pathlib.Path, benchmarks: str | os.PathLike | None = None) -> list[dict]:
    """A run's tuning steps as its record keeps them, for the findings that read them (Tan et al.'s
    updates and CPU seconds per step, :mod:`smtlib.report.cmira`) after the run directory is lost:
    per iteration 1..N, the step's ``smtlib tune --info`` JSON and its benchmark file's wall and CPU
    seconds and peak memory with the machine that measured them (:func:`this_machine`; ``None`` where
    the step has none, a lattice or online step). A run restored from a record gives back the record's
    (its ``steps.json``); a run with neither, []."""
    infos = sorted(run_dir.glob("it*/tune.json"), key=lambda p: int(p.parent.name.removeprefix("it")))
    if not infos:
        restored = run_dir / "steps.json"
        return list(read_json(restored, "restored tuning steps").get("steps") or []) if restored.is_file() else []
    steps, machine = [], this_machine()
    for info in infos:
        iteration = int(info.parent.name.removeprefix("it"))
        bench = None if benchmarks is None else pathlib.Path(benchmarks) / info.parent.name / "tune.tsv"
        measured = read_benchmark(bench) if bench is not None and bench.is_file() else None
        steps.append({"iteration": iteration, "info": read_json(info, "tuning step --info"),
                      "benchmark": None if measured is None else
                      {**{k: measured[k] for k in ("s", "cpu_time", "max_rss")}, "machine": machine}})
    return steps


def run_benchmarks(workdir: pathlib.Path, run_dir: pathlib.Path) -> pathlib.Path:
    """The directory of a run's benchmark files (``results/benchmarks/tune/...``, as ``paths.Tree``)."""
    return workdir / "results" / "benchmarks" / run_dir.relative_to(workdir / "results")


def kept_steps(record: dict, target: pathlib.Path) -> dict:
    """``record``, with the tuning steps of the record already at ``target`` (``<target>.json``) when it
    has none and is otherwise that record: a run restored from it by a checkout whose restore did not
    give the steps back, published again, keeps them."""
    earlier = target.parent / f"{target.name}.json"
    if "steps" in record or not earlier.is_file():
        return record
    data = read_json(earlier, "run record")
    if isinstance(data, dict) and "steps" in data and {k: v for k, v in data.items() if k != "steps"} == record:
        return {**record, "steps": data["steps"]}
    return record


def write_run_record(run_dir: pathlib.Path, record: dict, target: pathlib.Path) -> None:
    """A finished run's record as ``<target>.json`` (``target``: ``runs/<fs>/<method>/<setting>/s<N>``)
    and its test outputs beside it (:func:`publish_outputs`, named ``s<N>.test.<testset>.1best.gz``)."""
    with atomic_output(target.parent / f"{target.name}.json") as fh:
        json.dump(record, fh, indent=1, sort_keys=True)
        fh.write("\n")
    publish_outputs(run_dir, target.parent, f"{target.name}.")


def publish_outputs(directory: pathlib.Path, out: pathlib.Path, prefix: str) -> list[pathlib.Path]:
    """Each ``test.<testset>.1best`` of ``directory`` as ``out/<prefix>test.<testset>.1best.gz``."""
    written = []
    for best in sorted(directory.glob("test.*.1best")):
        target = out / f"{prefix}{best.name}.gz"
        with open(best, "rb") as src, atomic_output(target, binary=True) as fh:
            shutil.copyfileobj(src, fh)
        written.append(target)
    return written


def run_dirs(workdir: str | os.PathLike, pair: str, feature_sets: list[str] | None = None) -> list[pathlib.Path]:
    """Every run directory of ``pair`` (``results/tune/<pair>/<fs>/<method>/<setting>/s<N>``), of
    ``feature_sets`` only if given."""
    base = pathlib.Path(workdir) / "results" / "tune" / pair
    if not base.is_dir():
        return []
    return sorted(p for p in base.glob("*/*/*/s*") if p.is_dir() and p.parts[-3] != "first"
                  and (feature_sets is None or p.parts[-4] in feature_sets))


#: the driver's record of its starts (relative to the workflow directory): UTC time, commit, clean|modified
DRIVER_COMMITS = "results/run_commits.tsv"


def driver_commits(workdir: str | os.PathLike) -> list[tuple[float, str, bool]]:
    """Each start of the run's driver as (POSIX time, commit, whether the tree was clean), oldest
    first; empty without a record (:data:`DRIVER_COMMITS`)."""
    path = pathlib.Path(workdir) / DRIVER_COMMITS
    if not path.exists():
        return []
    starts = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        fields = line.split("\t")
        try:
            when = datetime.datetime.strptime(fields[0], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
            if len(fields) != 3 or not re.fullmatch(r"[0-9a-f]{40}", fields[1]) or fields[2] not in ("clean", "modified"):
                raise ValueError
        except ValueError:
            raise InputError(f"line {n}: expected 'YYYY-MM-DDTHH:MM:SSZ<TAB>commit<TAB>clean|modified', got {line!r}",
                             path) from None
        starts.append((when.timestamp(), fields[1], fields[2] == "clean"))
    if not starts:
        raise InputError("empty: the driver writes a line at each start", path)
    if any(b[0] < a[0] for a, b in zip(starts, starts[1:])):
        raise InputError("the starts are not in time order", path)
    return starts


def driver_commit_chain(workdir: str | os.PathLike, commit: str,
                        starts: list[tuple[float, str, bool]] | None = None) -> list[str]:
    """The commits that wrote a run directory's files, oldest first and ``commit`` (the checkout's) last:
    those of the driver's starts (:func:`driver_commits`), or ``[commit]`` without a record of them.

    Raises
    ------
    InputError
        When the checkout is not at the commit its driver last started at (files written by one
        commit would be published under another's name)."""
    starts = driver_commits(workdir) if starts is None else starts
    if starts and starts[-1][1] != commit:
        raise InputError(f"the checkout is at {commit[:12]} but its driver last started at {starts[-1][1][:12]} "
                         f"({DRIVER_COMMITS}): start the driver again at this commit before publishing", workdir)
    return list(dict.fromkeys(c for _, c, _ in starts)) or [commit]


def checkout_state(workdir: str | os.PathLike) -> tuple[str, bool]:
    """The commit of the git checkout the workflow ran from and whether its tracked files were unchanged."""
    def git(*args: str) -> str:
        out = subprocess.run(["git", "-C", os.fspath(workdir), *args], capture_output=True, text=True)
        if out.returncode != 0:
            raise InputError(f"not a git checkout ({out.stderr.strip()})", workdir)
        return out.stdout.strip()

    return git("rev-parse", "HEAD"), git("status", "--porcelain", "--untracked-files=no") == ""


def _table_setting(setting: str) -> bool:
    """Whether the tables read runs at this setting: ``default``, or ``default@METRIC`` under another tuning
    metric (the workflow's run settings, smtlib.workflow.runs, which nothing in smtlib imports)."""
    return setting.partition("@")[0] == "default"


def check_side_settings(side_settings: Sequence[str]) -> None:
    """Side settings name runs no table reads: never a table's own (``_table_setting``)."""
    for setting in side_settings:
        if _table_setting(setting):
            raise InputError(f"side setting {setting!r}: the tables read the runs at 'default'; a side setting "
                             "names a side experiment's runs (e.g. shards=2), which no table reads")


def same_runs(workdir: pathlib.Path, tables_workdir: pathlib.Path, pair: str,
              records: Sequence[pathlib.Path] = (), feature_sets: list[str] | None = None,
              side_settings: Sequence[str] = ()) -> tuple[int, dict[pathlib.Path, list[str]]]:
    """The run summaries ``tables_workdir`` has: how many are identical to ``workdir``'s, and the
    restored ones by the record directory they came from. A run there must have a summary byte-identical
    to ``workdir``'s, or, where ``workdir`` lacks the run, be restored from its record in the first of
    ``records`` (published ``runs/`` directories, searched in order, as config ``restore_runs`` searches
    a list) that has it and reproduce that record (:func:`smtlib.report.restore.check_restored`);
    anything else is an error (the tables are not computed from the published runs). Runs at
    ``side_settings`` (a side experiment in the same directory, at settings no table reads:
    ``check_side_settings``) are left out."""
    from smtlib.report.restore import check_restored, read_record

    identical, restored = 0, {directory: [] for directory in records}
    for run_dir in run_dirs(tables_workdir, pair, feature_sets):
        summary = run_dir / "summary.json"
        if not summary.is_file() or run_dir.parts[-2] in side_settings:
            continue
        name = run_dir.relative_to(tables_workdir / "results" / "tune" / pair)
        theirs = workdir / "results" / "tune" / pair / name / "summary.json"
        if not theirs.is_file():
            directory = next((d for d in records if (d / f"{name.as_posix()}.json").is_file()), None)
            if directory is None:
                hint = "" if _table_setting(name.parts[-2]) else \
                    f" (a side experiment that no table reads? --side-settings {name.parts[-2]} leaves it out)"
                records_too = f", nor is it recorded in {', '.join(map(str, records))}" if records else ""
                raise InputError(f"run {name.as_posix()}: the runs directory does not have it{records_too}: the "
                                 f"tables are not computed from the published runs{hint}", tables_workdir)
            try:
                check_restored(read_json(summary, "run summary"), read_record(directory / f"{name.as_posix()}.json"))
            except InputError as e:
                raise InputError(f"run {name.as_posix()}: {e.message}", tables_workdir) from None
            restored[directory].append(name.as_posix())
            continue
        if theirs.read_bytes() != summary.read_bytes():
            raise InputError(f"run {name.as_posix()}: its summary differs from the runs directory's "
                             f"({theirs}): the tables are not computed from these runs", tables_workdir)
        identical += 1
    return identical, restored


def record_names(records: pathlib.Path) -> list[str]:
    """The runs (``<fs>/<method>/<setting>/s<N>``) with a record in a published ``runs/`` directory."""
    if not records.is_dir():
        return []
    return sorted(p.relative_to(records).with_suffix("").as_posix() for p in records.glob("*/*/*/s*.json"))


def publish(workdir: str | os.PathLike, pair: str, out_dir: str | os.PathLike, tables: list[str],
            command: str = "", tables_workdir: str | os.PathLike | None = None, tables_command: str = "",
            feature_sets: list[str] | None = None, figures: list[str] = (), side_settings: Sequence[str] = (),
            restored_from: Sequence[str | os.PathLike] = ()) -> dict:
    """Write the published results of ``pair`` from ``workdir`` into ``out_dir`` (see the module docstring);
    the tables, figures and their jobs' costs from ``tables_workdir`` if given (default ``workdir``).
    ``feature_sets``: only the runs and costs of these feature sets (default: all of the pair's), so
    that a table's directory holds neither the runs nor the costs of a figure run beside it.
    ``figures``: the figures to copy (``results/figures/<name>.*``, e.g. ``figure1``, whose name has no
    pair); default: the pair's (``*<pair>*``, its learning curves).
    ``side_settings``: settings of a side experiment that no table reads, in ``tables_workdir`` (e.g.
    ``shards=2``) or in ``workdir`` itself (e.g. the seed-only replicas ``seed=1`` ..., which
    ``smtlib report publish-stability`` publishes): its runs are neither checked against the published
    ones, nor published here, nor counted in the costs.
    ``restored_from``: published ``runs/`` directories besides ``out_dir``'s own, searched after it, that
    hold the records of runs ``tables_workdir`` restored and ``workdir`` lacks (its config
    ``restore_runs`` named a list, e.g. Table 6's other methods beside this pair's new runs); they are
    named in ``PROVENANCE.md``, and their records are not copied.

    Returns counts: ``finished`` and ``unfinished`` runs; the ``tables`` and ``figures`` copied.
    """
    workdir = pathlib.Path(workdir)
    out = pathlib.Path(out_dir)
    for directory in (workdir, tables_workdir):
        if directory is not None and not (pathlib.Path(directory) / "results").is_dir():
            raise InputError("no results/ directory: not a workflow directory", directory)
    commit, clean = checkout_state(workdir)
    commits = driver_commit_chain(workdir, commit)  # a run resumed at a later commit names each
    source = pathlib.Path(tables_workdir) if tables_workdir is not None else workdir
    check_side_settings(side_settings)
    if restored_from and tables_workdir is None:
        raise InputError("--restored-from names where a table step's restored runs have their records: it needs "
                         "--tables-workdir, the table step's directory")
    for directory in restored_from:
        if not pathlib.Path(directory).is_dir():
            raise InputError("--restored-from: no such directory of published run records", directory)
    if tables_workdir is not None:
        tables_commit, tables_clean = checkout_state(source)
        tabled_runs, restored_runs = same_runs(workdir, source, pair, [out / "runs", *map(pathlib.Path, restored_from)],
                                               feature_sets, side_settings)
        side_runs = [r.relative_to(source / "results" / "tune" / pair).as_posix()
                     for r in run_dirs(source, pair, feature_sets) if r.parts[-2] in side_settings]
    finished, unfinished, own_side_runs = [], [], []
    for run_dir in run_dirs(workdir, pair, feature_sets):
        name = run_dir.relative_to(workdir / "results" / "tune" / pair)
        if name.parts[-2] in side_settings:
            own_side_runs.append(name.as_posix())
            continue
        record = run_record(run_dir, run_benchmarks(workdir, run_dir))
        if record is None:
            unfinished.append(name.as_posix())
            continue
        finished.append(name.as_posix())
        write_run_record(run_dir, kept_steps(record, out / "runs" / name), out / "runs" / name)
    for initial in sorted((workdir / "results" / "systems" / pair).glob("*/initial")):
        if feature_sets is None or initial.parent.name in feature_sets:
            publish_outputs(initial, out / "initial" / initial.parent.name, "")
    earlier = sorted(set(record_names(out / "runs")) - set(finished))
    costs = rule_costs(workdir, pair, tables, feature_sets, table_step=tables_workdir, side_settings=side_settings)
    with atomic_output(out / "costs.tsv") as fh:
        fh.write(format_costs(costs))
    copied = []
    for table in tables:
        for suffix in (".tsv", ".md", "_tests.json", "_vs_paper.tsv", "_findings.md", "_extended.tsv",
                       "_extended.md", "_extended_tests.json", "_cmira.md", "_cmira.tsv"):
            src = source / "results" / f"{table}{suffix}"
            if src.exists():
                _copy(src, out / src.name)
                copied.append(src.name)
    figure_dir, drawn = source / "results" / "figures", []
    if figure_dir.is_dir():
        named = [src for name in figures for src in figure_dir.glob(f"{name}.*")]
        for src in sorted(named if figures else figure_dir.glob(f"*{pair}*")):
            if src.is_file():
                _copy(src, out / "figures" / src.name)
                drawn.append(src.name)
    with atomic_output(out / "PROVENANCE.md") as fh:
        fh.write(provenance_head(f"({pair})", commit, clean, command, "smtlib report publish",
                                 earlier=commits[:-1]))
        if feature_sets is not None:
            fh.write(f"- Feature sets: {', '.join(feature_sets)} only (the runs and costs here; the run directory's "
                     "runs of other feature sets are published apart, and the jobs every feature set shares, the "
                     "data, word alignment, phrase extraction and language models, are counted in each).\n")
        if figures and not tables:  # a figure's own runs (Figure 1's sweep points), not a table's
            fh.write(f"- Runs finished: {len(finished)}, the runs of {', '.join(figures)} "
                     f"({', '.join(finished) or 'none yet'}).\n")
        else:
            fh.write(f"- Runs finished: {finished_line(finished)}.\n")
        fh.write(f"- Runs started and not finished (in flight, or left between phases): {len(unfinished)}.\n")
        if own_side_runs:
            fh.write(f"- The run directory also holds {len(own_side_runs)} runs of a side experiment at settings "
                     f"no table reads ({', '.join(side_settings)}; published apart): not published here, and "
                     "their jobs are not in `costs.tsv`.\n")
        if earlier:
            fh.write(f"- Run records in `runs/` published earlier from another run directory (not this one's "
                     f"runs; e.g. a lost machine's, whose costs and provenance are kept apart): "
                     f"{finished_line(earlier)}.\n")
        if tables:
            fh.write(f"- Tables present: {', '.join(copied) if copied else 'none yet'}.\n")
        if drawn:
            fh.write(f"- Figures (`figures/`): {', '.join(drawn)}.\n")
        if tables_workdir is not None:
            fh.write(f"- The tables, figures and their jobs (the table step) by commit `{tables_commit}`"
                     + ("" if tables_clean else " **with uncommitted changes**")
                     + f", in a checkout of their own over these runs' outputs ({tables_runs_line(tabled_runs, restored_runs, out, source, pair)}); "
                     "the runs themselves by the commit above.\n")
            if tables_command:
                fh.write(f"- Table step command: `{tables_command}`\n")
            if side_runs:
                fh.write(f"- The table step's directory also holds {len(side_runs)} runs of a side experiment at "
                         f"settings no table reads ({', '.join(side_settings)}): not checked against these runs, "
                         "not published here, and their jobs are not in `costs.tsv`.\n")
        fh.write("- `costs.tsv`: per rule, the CPU and wall hours and the largest peak memory of the jobs that "
                 "ran (Snakemake's benchmark files). Snakemake samples CPU time (every 0.5 s for 30 readings, "
                 "about 15 s, then every 30 s) and misses what a job used after its last sample, so "
                 "`cpu_hours` is low (by up to 60 % for a job of 15-45 s); "
                 "`cpu_hours_extrapolated` adds each job's unsampled tail at its own rate.\n")
        fh.write(records_matrix(record_names(out / "runs")))
    return {"finished": len(finished), "finished_default": len(default_runs(finished)), "unfinished": len(unfinished),
            "earlier": len(earlier), "tables": copied, "figures": drawn, "commit": commit}


def provenance_head(what: str, commit: str, clean: bool, command: str, tool: str,
                    earlier: Sequence[str] = ()) -> str:
    """The first lines of a ``PROVENANCE.md``: title, commit (and whether its tree was clean; a run
    resumed at a later commit names the ``earlier`` ones first), the command, the date, the tool that
    published and the machine it ran on (:func:`this_machine`)."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    produced = (f"- Produced by commits {', then '.join(f'`{c}`' for c in [*earlier, commit])} (the checkout is "
                f"now at the last)" if earlier else f"- Produced by commit `{commit}`")
    return (f"# Provenance of these results {what}\n\n"
            + produced + ("" if clean else " **with uncommitted changes**") + ".\n"
            + (f"- Command: `{command}`\n" if command else "")
            + f"- Published {stamp} with `{tool}`, on {this_machine()} (the run directory's machine, where its "
              "costs and the steps of the runs tuned in it were measured).\n")


def records_matrix(names: list[str]) -> str:
    """The runs with a record at the default settings (the tables' runs), counted per method and feature
    set, as a Markdown table: what a table still lacks, whatever directory each record came from."""
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for name in default_runs(names):
        fs, method = name.split("/")[:2]
        counts[(method, fs)] += 1
    if not counts:
        return ""
    methods = sorted({m for m, _ in counts})
    present = {f for _, f in counts}
    sets = [fs for fs in ("small", "medium", "big") if fs in present] + sorted(present - {"small", "medium", "big"})
    lines = ["", f"Run records in `runs/` at the default settings: {sum(counts.values())}, by method and feature set:", "",
             "| method | " + " | ".join(sets) + " |", "|---|" + "---|" * len(sets)]
    for method in methods:
        lines.append(f"| {method} | " + " | ".join(str(counts.get((method, fs), 0)) for fs in sets) + " |")
    return "\n".join(lines) + "\n"


def tables_runs_line(identical: int, restored: Mapping[pathlib.Path, list[str]], out: pathlib.Path,
                     tables_workdir: pathlib.Path, pair: str) -> str:
    """How the table step's runs were checked against the published ones: identical summaries, and the
    restored runs per record directory (``runs/`` for ``out``'s own), with whether their test outputs
    were decoded again there or the published ones scored."""
    restored = {d: names for d, names in restored.items() if names}
    if not restored:
        return f"{identical} runs there, every summary byte-identical to the runs'"
    parts = []
    for directory, names in restored.items():
        where = "`runs/`" if directory == out / "runs" else f"`{directory.as_posix()}`"
        decoded = sum(any((tables_workdir / "results" / "benchmarks" / "tune" / pair / name).glob("test.*.decode.tsv"))
                      for name in names)
        how = ("test outputs decoded again" if decoded == len(names) else
               "their published test outputs scored" if decoded == 0 else
               f"test outputs decoded again for {decoded}, the published ones scored for {len(names) - decoded}")
        parts.append(f"{len(names)} restored from their records in {where} ({how})")
    total = identical + sum(len(n) for n in restored.values())
    return (f"{total} runs there: {identical} with a summary byte-identical to the runs', {', '.join(parts)}; "
            "each restored run has its record's kept weights and learning curve, and every test BLEU equal to the "
            "record's")


def default_runs(names: list[str]) -> list[str]:
    """The runs (``<fs>/<method>/<setting>/s<N>``) at the default settings: the paper tables' runs."""
    return [n for n in names if n.split("/")[2] == "default"]


def finished_line(finished: list[str]) -> str:
    """The finished runs counted apart: the tables' (default settings) and the others by name (a check
    at another setting, a sweep's point, another tuning metric), which no paper table reads."""
    others = sorted(set(finished) - set(default_runs(finished)))
    line = f"{len(finished) - len(others)} at the default settings (the tables' runs)"
    if others:
        line += f" and {len(others)} at other settings, in no paper table ({', '.join(others)})"
    return line


def _copy(src: pathlib.Path, dst: pathlib.Path) -> None:
    """``src``'s bytes to ``dst``, atomically (never compressed again: a ``.gz`` is copied as it is)."""
    with open(src, "rb") as fin, atomic_output(dst, binary=True, compress=False) as fout:
        shutil.copyfileobj(fin, fout)
