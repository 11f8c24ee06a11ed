"""loop.py's estimate of a table's cost against the table's own run, per rule, while it runs and after.

Reads a workflow directory (the one ``snakemake`` runs the table in): the benchmark file of every
finished job (``results/benchmarks``, the source of ``costs.tsv``) and the jobs still to run
(``snakemake -n`` on the same target, in that directory). For each (rule, method, feature set) the mean
CPU time of the finished jobs times the number of planned jobs (finished + still to run) projects the
rule's cost; one with no finished job yet takes the mean of the same method on the other feature sets,
else, with ``--like PAIR ...``, another pair's of the same method in the same directory, scaled
between the pairs (``projected_rows``), else the rule's other methods', and is marked ``~``. One that
nothing measured (e.g. lb-mert's steps for Table 6 with ``--like fr-en``, whose lb-mert ran in a lost
directory) is named below the table and marked ``+ ?``, in its rule and the total: left out, never
silently (``--like en-fr fr-en`` costs it from Table 5's). A job's CPU time is Snakemake's with the tail
after its sampler's last reading extrapolated (``smtlib.report.publish.unsampled_cpu``): loop.py
measures CPU exactly (``os.wait4``), Snakemake's record misses 7-11 % per rule on the Table 4 run
(``--as-recorded`` projects from the record as it is). Only the table's own runs count: runs of other settings than ``default`` in the
same directory (e.g. issue 22's loop checks) are left out.

The estimate is ``loop.py``'s per-rule figure (``--estimate``, a TSV ``rule<TAB>core_hours``;
``benchmarks/results/loop/estimate_cube200.tsv`` holds the workflow default's, from ``loop.md``);
``tune_first`` counts under ``tune``, building the systems apart (loop.py does not cost it) and every
other rule not named there under ``other``, as loop.md adds them; rules that write no benchmark file
(mixing, selecting, summaries, tables) have no measured cost and are left out. A projected rule more than 20 % off the estimate is flagged ``!`` (the issue's bound: say why).

A table whose runs were split between run directories (a machine lost mid-run: its ``costs.tsv``
published, its benchmark files gone) adds the earlier directories' per-rule costs with
``--earlier-costs``: each rule's jobs and CPU there count as finished jobs of the rule, and each rule
is projected at its mean CPU per job over every directory times the jobs the table plans (not per
method: a lost directory's per-job records are gone). Jobs beyond the table's (check runs,
the work of runs in flight at the loss, done again after it) are then scaled out, not added.

    python benchmarks/estimate_vs_run.py --workdir results/table-run --snakemake PATH/TO/snakemake \\
        [--pair fr-en] [--target results/table4.tsv] [--estimate benchmarks/results/loop/estimate_cube200.tsv] \\
        [--by-method] [--as-recorded] [--earlier-costs docs/results/table4/part1/costs.tsv] [--like fr-en ...]

Last line: ``metric: value``, the projected total core-hours over the estimate's.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import statistics
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from smtlib.report.publish import benchmark_rule, read_benchmark  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
GROUP = {"tune_first": "tune"}


def rule_group(rule: str, estimated: set[str]) -> str:
    """The estimate's row a rule counts in; building the systems (``train_*``) is not in loop.py's."""
    if rule.startswith("train_"):
        return "systems (not estimated)"
    rule = GROUP.get(rule, rule)
    return rule if rule in estimated else "other"


def finished_jobs(workdir: pathlib.Path, pair: str) -> list[tuple[str, str, float, float]]:
    """(rule, "method/feature set", CPU seconds as recorded, CPU seconds with the unsampled tail) of every
    finished job of the table's default-setting runs."""
    root = workdir / "results" / "benchmarks"
    jobs = []
    for sub in ("systems", "tune"):
        base = root / sub / pair
        for path in sorted(base.rglob("*.tsv")) if base.is_dir() else []:
            relative = path.relative_to(root).as_posix()
            rule = benchmark_rule(relative)
            parts = relative.split("/")
            if rule is None or (sub == "tune" and parts[3] != "first" and parts[4] != "default"):
                continue
            method = f"{parts[3]}/{parts[2]}" if sub == "tune" and parts[3] != "first" else ""
            bench = read_benchmark(path)
            jobs.append((rule, method, bench["cpu_time"], bench["cpu_extrapolated"]))
    return jobs


def remaining_jobs(workdir: pathlib.Path, snakemake: str, target: str, config: list[str]) -> list[tuple[str, str]]:
    """(rule, "method/feature set") of every job ``snakemake -n`` plans for ``target`` in ``workdir``."""
    if "/" in snakemake:  # a path: from where this script runs, not from the workflow directory
        snakemake = str(pathlib.Path(snakemake).resolve())
    run = subprocess.run([snakemake, "-n", "--config", *config, "--", target], cwd=workdir, capture_output=True,
                         text=True)
    if run.returncode != 0:
        sys.exit(f"snakemake -n failed in {workdir} (exit {run.returncode}):\n{run.stderr[-2000:]}")
    out = run.stdout
    jobs, rule = [], None
    for line in out.splitlines():
        m = re.match(r"^(?:local)?rule (\w+):$", line.strip())
        if m:
            rule = m.group(1)
            jobs.append([rule, ""])
        elif rule and line.strip().startswith("wildcards:"):
            method, fs = re.search(r"\bmethod=([^,\s]+)", line), re.search(r"\bfs=([^,\s]+)", line)
            jobs[-1][1] = f"{method.group(1)}/{fs.group(1)}" if method and fs else ""
    return [(r, m) for r, m in jobs]


def read_costs(costs_files: list[pathlib.Path], as_recorded: bool) -> dict[str, list[float]]:
    """Rule -> [jobs, CPU hours] summed over published ``costs.tsv`` files (``smtlib report publish``)."""
    column = "cpu_hours" if as_recorded else "cpu_hours_extrapolated"
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for path in costs_files:
        lines = path.read_text(encoding="utf-8").splitlines()
        header = lines[0].split("\t")
        for line in lines[1:]:
            row = dict(zip(header, line.split("\t")))
            if row["rule"] != "total":
                totals[row["rule"]][0] += int(row["jobs"])
                totals[row["rule"]][1] += float(row[column])
    return totals


def rows_with_earlier(done: list[tuple[str, str, float]], planned: dict[tuple[str, str], int],
                      earlier: dict[str, list[float]], estimated: set[str]) -> dict[str, dict]:
    """Rule groups projected over this directory's and earlier directories' jobs: each rule at its mean
    CPU per job over all of them times the jobs the table plans (``planned`` counts the earlier
    directories' jobs as still to run: this directory holds none of their outputs). A rule no directory
    measured (no ``benchmark:``) is left out."""
    jobs: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for rule, _, seconds in done:
        jobs[rule][0] += 1
        jobs[rule][1] += seconds / 3600
    for rule, (n, hours) in earlier.items():
        jobs[rule][0] += n
        jobs[rule][1] += hours
    needed: dict[str, int] = defaultdict(int)
    for (rule, _), n in planned.items():
        needed[rule] += n
    rows: dict[str, dict] = defaultdict(lambda: {"done": 0, "planned": 0, "measured": 0.0, "projected": 0.0,
                                                 "guessed": False})
    for rule, (n, hours) in jobs.items():
        group = rows[rule_group(rule, estimated)]
        group["done"] += n
        group["planned"] += needed[rule]
        group["measured"] += hours
        group["projected"] += hours / n * needed[rule]
    return rows


def method_mean(cpu: dict[tuple[str, str], list[float]], rule: str, method: str) -> float | None:
    """The mean CPU seconds of a (rule, "method/feature set")'s finished jobs, else of the same method's
    on the other feature sets; None if neither has any."""
    same = method.split("/")[0]
    values = cpu.get((rule, method)) or [v for (r, m), vs in cpu.items() if r == rule and m.split("/")[0] == same
                                         for v in vs]
    return sum(values) / len(values) if values else None


def projected_rows(cpu: dict[tuple[str, str], list[float]], planned: dict[tuple[str, str], int],
                   estimated: set[str], likes: list[dict[tuple[str, str], list[float]]] | None = None
                   ) -> dict[str, dict]:
    """Rule groups projected per (rule, "method/feature set"): the mean CPU seconds of its finished jobs
    times its planned jobs. One with none finished (``guessed``) takes the same method's mean on the other
    feature sets; else, with ``likes`` (the finished jobs of other pairs in the same directory, in order of
    preference, e.g. Table 4's for Table 5), the first such pair's mean of the same method (cell, else
    feature sets), scaled by the rule's ratio between the pairs on the cells both measured (a pair that
    shares such a cell is preferred; without one, the median ratio over every tuning cell both
    measured, system builds left out); else the rule's mean over its methods, a poor guess where
    methods differ (an lb-mira step costs a twentieth of an lb-mert step). A rule no job of which
    finished in any of the pairs (no ``benchmark:``) is left out. A group none of these can cost (its
    rule has no finished job in the pair, its method none in any like pair) is counted in ``planned``
    and named in ``uncosted``: left out of the projection, never silently."""
    likes = likes or []

    def ratio(common: list[tuple[str, str]], like: dict) -> float:
        return (sum(sum(cpu[k]) / len(cpu[k]) for k in common)
                / sum(sum(like[k]) / len(like[k]) for k in common))

    scales: list[dict[str, tuple[float, bool]]] = []  # rule -> (this pair over the like pair, shares a cell)
    for like in likes:
        every_common = [key for key in cpu if like.get(key) and not key[0].startswith("train_")]
        # a rule the two pairs share no cell of (e.g. lb-mert's steps before this pair's first lattice
        # run) takes the median of the pairs' ratios over every tuning cell they share (their dev sets'
        # size and sentences; building the systems scales with the training corpus instead; the median,
        # because a cell of one job, such as a directory's first decode compiling numba's cache, can be
        # far off)
        overall = statistics.median(ratio([key], like) for key in every_common) if every_common else 1.0
        scale: dict[str, tuple[float, bool]] = {}
        for rule in {r for r, _ in planned}:
            common = [key for key in every_common if key[0] == rule]
            scale[rule] = (ratio(common, like), True) if common else (overall, False)
        scales.append(scale)
    rows: dict[str, dict] = defaultdict(lambda: {"done": 0, "planned": 0, "measured": 0.0, "projected": 0.0,
                                                 "guessed": False, "uncosted": []})
    measured = {r for r, _ in cpu} | {r for like in likes for r, _ in like}
    for (rule, method), n in planned.items():
        if rule not in measured:  # writes no benchmark file: no cost to project from
            continue
        seen = cpu.get((rule, method), [])
        group = rows[rule_group(rule, estimated)]
        group["done"] += len(seen)
        group["planned"] += n
        group["measured"] += sum(seen) / 3600
        per_job = method_mean(cpu, rule, method)
        # the first like pair with the method, preferring one that shares a cell of this rule
        if per_job is None:
            for like, scale in sorted(zip(likes, scales), key=lambda pair: not pair[1][rule][1]):
                if (like_mean := method_mean(like, rule, method)) is not None:
                    per_job = like_mean * scale[rule][0]
                    break
        if per_job is None:
            every = [v for (r, _), values in cpu.items() if r == rule for v in values]
            if not every:
                group["uncosted"].append(f"{rule} {method} ({n:,} jobs)")
                continue
            per_job = sum(every) / len(every)
        group["guessed"] |= not seen
        group["projected"] += per_job * n / 3600
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=pathlib.Path, required=True)
    ap.add_argument("--snakemake", default="snakemake", help="the snakemake of the run's own environment")
    ap.add_argument("--pair", default="fr-en")
    ap.add_argument("--target", default="results/table4.tsv")
    ap.add_argument("--config", nargs="*", default=["data_dir=../shared/data"], help="the run's --config values")
    ap.add_argument("--by-method", action="store_true", help="also each (rule, method): jobs and mean CPU seconds")
    ap.add_argument("--estimate", type=pathlib.Path, default=HERE / "results" / "loop" / "estimate_cube200.tsv")
    ap.add_argument("--as-recorded", action="store_true",
                    help="CPU times as Snakemake recorded them, without the unsampled tails")
    ap.add_argument("--earlier-costs", type=pathlib.Path, nargs="+", default=[], metavar="COSTS_TSV",
                    help="costs.tsv of earlier run directories of the same table (smtlib report publish), e.g. a "
                         "lost machine's: their jobs count as finished, each rule projected at its mean per job")
    ap.add_argument("--like", metavar="PAIR", nargs="+", default=[],
                    help="other pairs run in the same directory, in order of preference (e.g. fr-en for Table 5, "
                         "en-fr fr-en for Table 6): a method with no job finished in --pair takes the first such "
                         "pair's mean, scaled by the rule's ratio between the pairs")
    args = ap.parse_args()
    estimate = {}
    for line in args.estimate.read_text(encoding="utf-8").splitlines()[1:]:
        rule, hours = line.split("\t")
        estimate[rule] = float(hours)
    names = set(estimate)
    jobs = finished_jobs(args.workdir, args.pair)
    recorded = sum(job[2] for job in jobs) / 3600
    done = [(rule, method, as_is if args.as_recorded else tail) for rule, method, as_is, tail in jobs]
    todo = remaining_jobs(args.workdir, args.snakemake, args.target, args.config)
    cpu: dict[tuple[str, str], list[float]] = defaultdict(list)
    for rule, method, seconds in done:
        cpu[rule, method].append(seconds)
    planned: dict[tuple[str, str], int] = defaultdict(int)
    for rule, method, _ in done:
        planned[rule, method] += 1
    for rule, method in todo:
        planned[rule, method] += 1
    if args.earlier_costs:
        rows = rows_with_earlier(done, planned, read_costs(args.earlier_costs, args.as_recorded), names)
    else:
        likes = []
        for pair in args.like:
            like: dict[tuple[str, str], list[float]] = defaultdict(list)
            for rule, method, as_is, tail in finished_jobs(args.workdir, pair):
                like[rule, method].append(as_is if args.as_recorded else tail)
            likes.append(like)
        rows = projected_rows(cpu, planned, names, likes)
    print(f"{args.target} in {args.workdir}: {len(done)} jobs finished, {len(todo)} planned still; "
          f"{recorded:.2f} core-hours as Snakemake recorded them"
          + ("" if args.as_recorded else f", {sum(s for _, _, s in done) / 3600:.2f} with the unsampled tails")
          + (f"; with the jobs of {len(args.earlier_costs)} earlier run directories (--earlier-costs), each rule "
             "projected at its mean per job over all of them" if args.earlier_costs else ""))
    print("| rule | jobs done / planned | core-hours so far | projected | estimate | projected / estimate |")
    print("|---|---|---|---|---|---|")
    total_p = total_e = 0.0
    for rule in [*estimate, *sorted(set(rows) - names)]:
        r, e = rows.get(rule), estimate.get(rule, 0.0)
        if r is None:
            print(f"| {rule} | 0 / ? | 0 | ? | {e:.2f} | ? |")
            continue
        # a rule loop.py does not cost (building the systems) has no ratio
        ratio = f"{r['projected'] / e:.2f}{' !' if abs(r['projected'] / e - 1) > 0.2 else ''}" if e else "-"
        mark = (" ~" if r["guessed"] else "") + (" + ?" if r.get("uncosted") else "")
        print(f"| {rule} | {r['done']:,} / {r['planned']:,} | {r['measured']:.2f} | {r['projected']:.2f}{mark}"
              f" | {e:.2f} | {ratio} |")
        if e:
            total_p += r["projected"]
            total_e += e
    uncosted = [name for r in rows.values() for name in r.get("uncosted", [])]
    more = " + ?" if uncosted else ""
    print(f"| **total** | | | **{total_p:.2f}**{more} | **{total_e:.2f}** | {total_p / total_e:.2f}{more} |")
    if uncosted:
        print(f"\nNot costed (no finished job of the rule in {args.pair}, nor of the method in "
              f"{' '.join(args.like) or 'a --like pair'}), left out of the projections and the total: "
              + "; ".join(uncosted))
    if args.by_method:
        print("\n| rule | method/feature set | jobs done / planned | mean CPU s of the done |")
        print("|---|---|---|---|")
        for (rule, method), n in sorted(planned.items()):
            seen = cpu.get((rule, method), [])
            mean = f"{sum(seen) / len(seen):.1f}" if seen else "-"
            print(f"| {rule} | {method or '-'} | {len(seen):,} / {n:,} | {mean} |")
    print(f"metric: {total_p / total_e:.3f}")


if __name__ == "__main__":
    main()
