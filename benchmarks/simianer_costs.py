"""Simianer, Riezler & Dyer (2012)'s Table 2: the estimate made before the run against what the run cost,
rule by rule.

    python benchmarks/simianer_costs.py --costs docs/results/simianer_table2/costs.tsv \\
        docs/results/simianer_table2/part1/costs.tsv [--listing FILE | --data-dir DIR] [--save-listing FILE] \\
        [--nodes 29] [--cores 2] [--latency 30]

The estimate is ``simianer_plan.py``'s: every job the full configuration's ``simianer`` target plans
(Snakemake's dry run in an empty directory, or a saved output of it with ``--listing``) at the CPU
seconds the script assumed for its rule (``CPU_S``). What the run cost comes from the ``costs.tsv``
that ``smtlib report publish-simianer`` writes, one per run directory (a directory lost with its machine
keeps the one it published): per rule, the jobs that ran and their CPU hours, each job's unsampled tail
extrapolated (``cpu_hours_extrapolated``).

A rule is projected at its mean CPU per job over every directory times the jobs the plan has for it.
The mean is not the sum: runs restored from a lost directory's records ran there, not here, and the
jobs in flight at a loss (and the fold systems rebuilt after it) ran twice; the mean over all of them
times the planned count is the table's cost once. A rule with variants (a shard pass on dev or on the
training set) is compared as a whole, at the plan's mix of variants; a rule that writes no benchmark
file has no measured cost and counts at its estimate on both sides. A projection more than 20 % off the
estimate is flagged ``!``, unless both are under 0.01 core-hours (a rule of a few jobs of a few seconds).

Then the time the plan takes at both costs (the schedules of ``simianer_plan.py``, HLFET list scheduling,
one core per job): on one machine of ``--cores`` cores, on unlimited nodes (the critical path) and on
``--nodes`` nodes, without latency and with ``--latency`` seconds per cluster job. At the measured costs a
job takes its rule's measured mean, split between a rule's variants as the estimate splits it (a dev
shard pass keeps its ratio to a training-set pass); a rule without benchmark files keeps its estimate.

The last line is ``metric: value``, the projected total over the estimated one.
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from estimate_vs_run import read_costs as read_costs_tsv  # noqa: E402
from simianer_plan import (CPU_S, SHARED, bottom_levels, dry_run, link, parse_listing,  # noqa: E402
                           schedule, topological)


def costs_rule(rule: str) -> str:
    """The name a planned job's rule has in ``costs.tsv``: the two phrase tables' rules are one there."""
    return re.sub(r"(phrases)[01]$", r"\1", rule)


def read_costs(paths: list[pathlib.Path]) -> dict[str, tuple[int, float]]:
    """Rule -> (jobs, CPU hours with the unsampled tails) summed over ``costs.tsv`` files."""
    return {rule: (int(n), hours) for rule, (n, hours) in read_costs_tsv(paths, as_recorded=False).items()}


def compare(plan: list[str], measured: dict[str, tuple[int, float]]) -> list[dict]:
    """One row per rule (``costs.tsv``'s names) of the planned jobs' keys (``simianer_plan`` ``Job.key()``).

    ``planned``, the jobs the plan has; ``estimate_h``, their assumed CPU; ``ran``/``mean_s``, the
    jobs measured and their mean CPU seconds (None for a rule without benchmark files);
    ``projected_h``, that mean times ``planned`` (the estimate where nothing was measured)."""
    planned: dict[str, int] = collections.Counter()
    estimate: dict[str, float] = collections.Counter()
    for key in plan:
        rule = costs_rule(key.split("[")[0])
        planned[rule] += 1
        estimate[rule] += CPU_S[key][0] / 3600
    rows = []
    for rule in sorted(planned, key=lambda r: -estimate[r]):
        n, hours = measured.get(rule, (0, 0.0))
        mean = hours * 3600 / n if n else None
        rows.append({"rule": rule, "planned": planned[rule], "estimate_h": estimate[rule], "ran": n,
                     "mean_s": mean, "assumed_s": estimate[rule] * 3600 / planned[rule],
                     "projected_h": mean * planned[rule] / 3600 if n else estimate[rule]})
    return rows


def render(rows: list[dict], unplanned: dict[str, tuple[int, float]]) -> list[str]:
    out = ["| rule | jobs planned | jobs measured | CPU s per job, assumed | measured | core-hours, estimate | "
           "projected | projected / estimate |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r["mean_s"] is None:
            out.append(f"| {r['rule']} | {r['planned']:,} | 0 | {r['assumed_s']:.3g} | - | {r['estimate_h']:.2f} | "
                       f"(no benchmark file) | - |")
            continue
        ratio = r["projected_h"] / r["estimate_h"] if r["estimate_h"] else float("nan")
        small = max(r["estimate_h"], r["projected_h"]) < 0.01
        flag = " !" if r["estimate_h"] and abs(ratio - 1) > 0.2 and not small else ""
        out.append(f"| {r['rule']} | {r['planned']:,} | {r['ran']:,} | {r['assumed_s']:.3g} | {r['mean_s']:.3g} | "
                   f"{r['estimate_h']:.2f} | {r['projected_h']:.2f} | "
                   + (f"{ratio:.2f}{flag} |" if r["estimate_h"] else "- |"))
    est = sum(r["estimate_h"] for r in rows)
    proj = sum(r["projected_h"] for r in rows)
    out.append(f"| **total** | {sum(r['planned'] for r in rows):,} | {sum(r['ran'] for r in rows):,} | | | "
               f"**{est:.2f}** | **{proj:.2f}** | {proj / est:.2f} |")
    if unplanned:
        out.append("")
        out.append("Measured but not in the plan (left out): " + "; ".join(
            f"{rule} ({n:,} jobs, {hours:.2f} h)" for rule, (n, hours) in sorted(unplanned.items())))
    return out


def measured_costs(keys: list[str], rows: list[dict]) -> list[float]:
    """CPU seconds of each planned job (``Job.key()``) at its rule's measured mean (:func:`compare`'s rows),
    the rule's variants in the estimate's proportions; the estimate where the rule has no measurement."""
    scale = {r["rule"]: r["mean_s"] / r["assumed_s"] for r in rows if r["mean_s"] is not None and r["assumed_s"]}
    return [CPU_S[k][0] * scale.get(costs_rule(k.split("[")[0]), 1.0) for k in keys]


def times(jobs, cost: list[float], nodes: int, cores: int, latencies: list[float]) -> list[tuple[str, float]]:
    """(what, hours) of the plan at per-job ``cost`` (seconds): the CPU, one machine, the critical path and
    ``nodes`` nodes, then the last two with each latency (``jobs`` linked, as ``simianer_plan.link`` does)."""
    order = topological(jobs)
    bottom = bottom_levels(jobs, order, cost)
    rows = [("total CPU", sum(cost)),
            (f"one {cores}-core machine (list-scheduled)", schedule(jobs, cost, cores, bottom)),
            ("critical path, unlimited nodes", max(bottom)),
            (f"{nodes} nodes of {cores} cores", schedule(jobs, cost, nodes * cores, bottom))]
    for s in latencies:
        latency = f"{s:g} s of latency per cluster job"
        rows.append((f"unlimited nodes, {latency}", schedule(jobs, cost, len(jobs), bottom, s)))
        rows.append((f"{nodes} nodes, {latency}", schedule(jobs, cost, nodes * cores, bottom, s)))
    return [(what, seconds / 3600) for what, seconds in rows]


def render_times(estimated: list[tuple[str, float]], measured: list[tuple[str, float]]) -> list[str]:
    out = ["| | hours at the estimate | at the measured costs | measured / estimate |", "|---|---:|---:|---:|"]
    for (what, est), (_, got) in zip(estimated, measured):
        out.append(f"| {what} | {est:.2f} | {got:.2f} | {got / est:.2f} |")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--costs", type=pathlib.Path, nargs="+", required=True,
                    help="costs.tsv of every run directory of the table (smtlib report publish-simianer)")
    ap.add_argument("--listing", type=pathlib.Path, help="a saved output of simianer_plan's dry run")
    ap.add_argument("--save-listing", type=pathlib.Path, help="keep the dry run's output here")
    ap.add_argument("--data-dir", default=str(SHARED / "data"))
    ap.add_argument("--nodes", type=int, default=29)
    ap.add_argument("--cores", type=int, default=2, help="cores per node (and of the one machine)")
    ap.add_argument("--latency", type=float, nargs="*", default=[30.0],
                    help="seconds of latency per cluster job for the rows with latency (not CPU)")
    args = ap.parse_args(argv)
    if args.listing:
        text = args.listing.read_text(encoding="utf-8")
    else:
        text = dry_run(args.data_dir, args.save_listing)[0]
    jobs, _ = parse_listing(text)
    measured = read_costs(args.costs)
    rows = compare([j.key() for j in jobs], measured)
    planned_rules = {r["rule"] for r in rows}
    unplanned = {rule: v for rule, v in measured.items() if rule not in planned_rules}
    total_ran = sum(n for n, _ in measured.values())
    print(f"{len(jobs):,} jobs planned; {total_ran:,} measured in {len(args.costs)} costs.tsv "
          f"({', '.join(str(p) for p in args.costs)})")
    print()
    print("\n".join(render(rows, unplanned)))
    link(jobs)
    keys = [j.key() for j in jobs]
    print()
    print("\n".join(render_times(times(jobs, [CPU_S[k][0] for k in keys], args.nodes, args.cores, args.latency),
                                 times(jobs, measured_costs(keys, rows), args.nodes, args.cores, args.latency))))
    est = sum(r["estimate_h"] for r in rows)
    print(f"metric: {sum(r['projected_h'] for r in rows) / est:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
