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
  finished and those started and not finished. A run resumed at a later commit (its driver,
  ``docs/results/run/phases.sh``, records each start's commit in ``results/run_commits.tsv``) names
  every commit, and for each finished run the commits whose starts cover its files' modification times.
  The intermediate files the driver deleted (``results/run_freed.tsv``) are named with their size.
  Runs restored from their records (:func:`restore_sgd_run`, ``smtlib sgd restore``) are named apart:
  their record is published again as it was.

Nothing is recomputed: every number is read from the run's own outputs.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import pathlib
import re
import shutil

from smtlib.errors import InputError
from smtlib.io import atomic_output
from smtlib.report.publish import (
    DRIVER_COMMITS,
    _copy,
    checkout_state,
    driver_commit_chain,
    driver_commits,
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
#: the driver's record of the intermediate files its "free" lines deleted: UTC time, kB, paths
DRIVER_FREED = "results/run_freed.tsv"
#: what ``smtlib sgd restore`` leaves in a run directory restored from its published record
RESTORED = "restored.json"


def run_commits(run: pathlib.Path, starts: list[tuple[float, str, bool]]) -> list[str]:
    """The commits, in order, of the driver's starts whose spans (to the next start) hold a modification
    time of a file of ``run``; files older than the first start count for the first."""
    times = [p.stat().st_mtime for p in run.rglob("*") if p.is_file()]
    first, last = min(times), max(times)
    commits = []
    for i, (start, commit, _) in enumerate(starts):
        begin = start if i else -math.inf
        end = starts[i + 1][0] if i + 1 < len(starts) else math.inf
        if begin <= last and first < end and commit not in commits:
            commits.append(commit)
    return commits


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


def restored_record(run: pathlib.Path) -> dict | None:
    """What ``smtlib sgd restore`` wrote of a run restored from its record (``restored.json``), or None
    for a run made here."""
    from smtlib.io import read_json

    path = run / RESTORED
    return read_json(path, "restored run") if path.exists() else None


def publish_sgd_run(run: pathlib.Path, out: pathlib.Path, max_weights_bytes: int = MAX_WEIGHTS_BYTES,
                    workdir: pathlib.Path | None = None) -> bool:
    """Write one finished run's record directory (see the module docstring); returns whether its weights
    were published (False: larger than ``max_weights_bytes`` compressed, or a restored run whose record
    had none). A run restored from a record has its record's weights file (a path relative to
    ``workdir``, the workflow directory)."""
    for name in ("chosen.json", "test.bleu.json"):
        _copy(run / name, out / name)
    with open(run / "test.out", "rb") as src, atomic_output(out / "test.out.gz", binary=True) as fh:
        shutil.copyfileobj(src, fh)  # compressed by atomic_output, the same bytes for the same text
    restored = restored_record(run)
    if restored is not None:
        if restored.get("weights") is None:
            return False
        _copy(pathlib.Path(workdir or ".") / restored["weights"], out / "chosen.weights.gz")
        return True
    weights = read_weights(run / "chosen.weights")
    target = out / "chosen.weights.gz"
    with atomic_output(target) as fh:
        fh.writelines(f"{name} {value!r}\n" for name, value in weights.items() if value != 0)
    if target.stat().st_size > max_weights_bytes:
        target.unlink()
        return False
    return True


#: the fields of a record's ``test.bleu.json`` a restore must reproduce exactly (the signature apart from
#: the sacrebleu and smtlib versions, which do not change a score)
_BLEU_FIELDS = ("score", "sentences", "reference_lines", "sys_len", "ref_len", "counts", "totals")


def _signature_settings(signature: str) -> str:
    return "|".join(part for part in str(signature).split("|") if not part.startswith(("version:", "impl:")))


def _record_chosen(path: pathlib.Path) -> dict:
    """A record's ``chosen.json``, checked: its epochs, their devtest BLEU, and the chosen epoch the best
    of them as ``smtlib sgd choose`` picks it."""
    from smtlib.io import read_json
    from smtlib.tuners.sgd_mixing import choose_epoch

    chosen = read_json(path, "chosen epoch")
    epochs = chosen.get("epochs") if isinstance(chosen, dict) else None
    keys = ("epoch", "devtest_bleu", "nonzero_features", "features_in_shards")
    if not epochs or not isinstance(epochs, list) or not all(
            isinstance(e, dict) and all(k in e for k in keys) for e in epochs):
        raise InputError(f"not a chosen epoch: an 'epochs' list with {', '.join(keys)} in each is needed", path)
    bleu = [e["devtest_bleu"] for e in epochs]
    if not all(isinstance(b, (int, float)) and math.isfinite(b) for b in bleu):
        raise InputError("an epoch's devtest BLEU is not a finite number", path)
    best = choose_epoch([float(b) for b in bleu])
    if chosen.get("chosen_epoch") != best:
        raise InputError(f"the chosen epoch is {chosen.get('chosen_epoch')!r}, but epoch {best} has the best devtest "
                         "BLEU: an edited record", path)
    return chosen


def restore_sgd_run(record: str | os.PathLike, test_refs: str | os.PathLike, settings, *, chosen_out: str | os.PathLike,
                    test_out: str | os.PathLike, bleu_out: str | os.PathLike, info_out: str | os.PathLike) -> dict:
    """Restore a finished run from its published record directory (:func:`publish_sgd_run`'s), so that
    the table, findings and figure read it as the run's own files: ``chosen.json`` as recorded, the test
    output decompressed, and its test BLEU scored again with ``settings``, which must reproduce the
    record's ``test.bleu.json`` exactly (else nothing is written). ``info_out`` names the record and
    its weights file (None where the vector was too large to publish). Returns that info.

    Raises
    ------
    InputError
        For a missing or malformed record file, a test output whose line count is not the references',
        or a test BLEU that differs from the record's (a record scored with other BLEU settings, or
        edited).
    """
    from smtlib.bleu.references import covered_sentences, read_references, read_segments
    from smtlib.bleu.stats import compute_stats
    from smtlib.bleu.report import corpus_report
    from smtlib.io import read_json, write_json

    import numpy as np

    record = pathlib.Path(record)
    chosen = _record_chosen(record / "chosen.json")
    recorded = read_json(record / "test.bleu.json", "test BLEU")
    references = read_references([test_refs])
    hyps = read_segments(record / "test.out.gz", what="the record's test output", allow_empty=True)
    coverage = covered_sentences(range(len(hyps)), references, what="the record's test output",
                                 path=record / "test.out.gz", lines=True)
    stats = compute_stats(hyps, np.arange(len(hyps)), references, settings)
    report = corpus_report(stats, settings, len(references), coverage.info())
    differs = [k for k in _BLEU_FIELDS if report.get(k) != recorded.get(k)]
    if _signature_settings(report["signature"]) != _signature_settings(recorded.get("signature", "")):
        differs.append("signature")
    if differs:
        raise InputError(f"the record's test output scores {report['score']} BLEU ({report['signature']}) here, "
                         f"its test.bleu.json says {recorded.get('score')} ({recorded.get('signature')}); "
                         f"differs in {', '.join(differs)}: give the BLEU settings the run was scored with",
                         record / "test.bleu.json")
    weights = record / "chosen.weights.gz"
    info = {"record": str(record), "weights": str(weights) if weights.is_file() else None,
            "chosen_epoch": chosen["chosen_epoch"], "test_bleu": report["score"]}
    _copy(record / "chosen.json", pathlib.Path(chosen_out))
    with atomic_output(test_out) as fh:
        fh.writelines(f"{line}\n" for line in hyps)
    with atomic_output(bleu_out) as fh:
        fh.write(json.dumps(report, indent=1) + "\n")
    write_json(info_out, info)
    return info


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
    starts = driver_commits(workdir)
    commits = driver_commit_chain(workdir, commit, starts)
    base = workdir / "results" / "simianer" / pair
    finished, unfinished, heavy, restored, by_commit = [], [], [], [], {}
    for run in sgd_run_dirs(workdir, pair):
        name = run.relative_to(base).as_posix()
        if not (run / "test.bleu.json").exists():
            unfinished.append(name)
            continue
        finished.append(name)
        if restored_record(run) is not None:
            restored.append(name)
        else:
            by_commit[name] = run_commits(run, starts) if len(commits) > 1 else [commit]
        if not publish_sgd_run(run, out / "runs" / name, max_weights_bytes, workdir):
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
                                 "smtlib report publish-simianer", earlier=commits[:-1]))
        fh.write(f"- Sharded runs finished ({len(finished)}): {', '.join(finished) or 'none yet'}.\n")
        if restored:
            fh.write(f"- Of these, restored from their published records and not run here ({len(restored)}; "
                     f"`smtlib sgd restore`, config `simianer.restore_runs`; their costs are not in `costs.tsv`): "
                     f"{', '.join(restored)}.\n")
        if len(commits) > 1:
            fh.write(commits_section(starts, by_commit))
        freed = freed_files(workdir)
        if freed:
            fh.write(freed_section(freed))
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
        earlier = sorted(p.name for p in out.glob("part*") if p.is_dir())
        if earlier:
            fh.write(f"- Earlier run directories, lost with their machines: {', '.join(f'`{e}/`' for e in earlier)}, "
                     "each with the records, `costs.tsv` and `PROVENANCE.md` it had published (its costs are "
                     "not in this `costs.tsv`; `docs/results/README.md` says how its runs were restored).\n")
    return {"finished": len(finished), "unfinished": len(unfinished), "baseline": len(baseline),
            "tables": copied, "heavy": heavy, "restored": restored, "commit": commit, "commits": commits}


def freed_files(workdir: str | os.PathLike) -> list[tuple[str, int, str]]:
    """The driver's deletions of intermediate files (:data:`DRIVER_FREED`) as (UTC time, kB, paths);
    empty without a record."""
    path = pathlib.Path(workdir) / DRIVER_FREED
    if not path.exists():
        return []
    freed = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        fields = line.split("\t")
        if len(fields) != 3 or not fields[1].isdigit() or not fields[2].strip():
            raise InputError(f"line {n}: expected 'YYYY-MM-DDTHH:MM:SSZ<TAB>kB<TAB>paths', got {line!r}", path)
        freed.append((fields[0], int(fields[1]), fields[2]))
    return freed


def freed_section(freed: list[tuple[str, int, str]]) -> str:
    """The ``PROVENANCE.md`` lines of the driver's deletions: what went, when, how much."""
    lines = [f"- Intermediate files deleted by the driver once the last run reading them had finished "
             f"(`{DRIVER_FREED}`; the workflow builds them again for anyone who runs the same targets):"]
    for when, kb, paths in freed:
        lines.append(f"  - {when}, {kb / 1024 ** 2:.1f} GB: `{paths}`;")
    return "\n".join(lines) + "\n"


def commits_section(starts: list[tuple[float, str, bool]], by_commit: dict[str, list[str]]) -> str:
    """The ``PROVENANCE.md`` lines of a run resumed at later commits: each commit's first start and
    whether its tree was clean, then the finished runs by the commits that wrote their files."""
    lines, seen = [f"- The run's driver started at {len(dict.fromkeys(c for _, c, _ in starts))} commits "
                   f"(`{DRIVER_COMMITS}`):"], set()
    for when, commit, clean in starts:
        if commit not in seen:
            seen.add(commit)
            stamp = datetime.datetime.fromtimestamp(when, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            lines.append(f"  - `{commit}` from {stamp}" + ("" if clean else " **with uncommitted changes**") + ";")
    groups: dict[tuple[str, ...], list[str]] = {}
    for name, commits in by_commit.items():
        groups.setdefault(tuple(commits), []).append(name)
    if not groups:  # every finished run was restored (made by an earlier directory's commits)
        return "\n".join(lines) + "\n"
    lines.append("- The finished runs by the commits whose starts cover their files' modification times "
                 "(the fold systems and templated models they read are not counted):")
    for commits, names in groups.items():
        label = " then ".join(f"`{c[:12]}`" for c in commits)
        lines.append(f"  - {label} ({len(names)}): {', '.join(names)};")
    return "\n".join(lines) + "\n"

