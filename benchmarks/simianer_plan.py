"""The distributed path of Simianer, Riezler & Dyer (2012)'s Table 2 (rules/simianer.smk), planned: the
DAG of the full configuration's `simianer` target under the cluster profile, read from Snakemake's own
dry run, and what it costs on one machine, on unlimited nodes and on 29 nodes.

    python benchmarks/simianer_plan.py [--data-dir DIR] [--listing FILE] [--nodes 29] [--cores 2]
        [--latency S ...] [--out benchmarks/results/simianer_slurm.md]

It runs, in an empty temporary directory (removed afterwards),

    snakemake -s Snakefile -d TMP --profile profiles/slurm --config data_dir=DIR -n simianer

(`--listing FILE` reads a saved output of that command instead, `--save-listing FILE` keeps it) and parses
the dry run's job listing: every job's rule, inputs, outputs, wildcards, threads and the resources the
profile gives it (grouped jobs are listed under "Group job NAME"). A job depends on the jobs whose
outputs are among its inputs, which is the DAG Snakemake builds (checked: the job count per rule equals
the dry run's "Job stats"). From it:

* jobs per rule and per epoch (a training-set epoch: the shard passes, one mix, one devtest decode);
* levels: a job's depth is its longest dependency chain from a source (a job with no job before it);
  the widest level is the most jobs that could run at once;
* the largest `runtime` (minutes) and `mem_mb` any job asks under the profile, and what each cluster job
  of a group asks (Snakemake's layered sum: runtimes added over the group's sequential layers);
* with CPU_S below as every job's duration: the total CPU hours (and a 2-core machine's wall time,
  list-scheduled), the critical path with unlimited nodes (every job as soon as its inputs exist) and
  the time on NODES nodes of CORES cores.

The schedule: a list scheduler (HLFET: highest level first, no insertion), non-preemptive; whenever a
core is free, the ready job with the longest remaining path to the end (its own CPU_S included) starts
on it. Every job takes one core for CPU_S seconds (a job's `threads: 2`, the alignment and the batch
baseline's decodes, counts as the same core-seconds on one core); memory never binds (the profile asks
at most 3,000 MB per job, 2 jobs on an 8 GB node). The headline schedules have no latency; `--latency S ...`
adds rows with S seconds more per cluster job (submission, polling, the job's own Snakemake start; not CPU;
a group's later steps run in its first step's job), as a SLURM run adds.

The headline is printed last, as `metric: value`.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import heapq
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: ``../shared`` beside the repository, or ``$SMTLIB_SHARED``
SHARED = pathlib.Path(os.environ.get("SMTLIB_SHARED", pathlib.Path(__file__).resolve().parents[2] / "shared"))

import yaml

REPO = Path(__file__).resolve().parent.parent

# ------------------------------------------------------------------------------------------------------
# CPU seconds per job, by rule (a rule[variant] where one rule's jobs differ). Sources:
#   E  benchmarks/results/simianer_estimate.md, "Measured at full size" (2026-11-29, commit 6aef89d):
#      de-en, fold 0's system (28,000 pairs) and the first shard pass of itermixsgd (default features,
#      from zero), CPU seconds from the jobs' Snakemake benchmark files;
#   Q  the quick run /tmp/simq (config/simianer_quick.yaml, 2026-11-29 17:22, --cores 1, load ~3): the mean
#      cpu_time of its Snakemake benchmark files (results/benchmarks/), times the factor stated;
#   QL the quick run's Snakemake log (.snakemake/log/): mean wall seconds of a rule without benchmark
#      files (one job at a time, so wall >= CPU), times the factor stated;
#   T4 docs/results/table4/costs.tsv: Table 4's run (fr-en Multi30k, the same size of corpus and the same
#      cube-pruning search; 5 runs x 15 iterations per method), cpu_hours x 3600 / jobs of the rule;
#   G  a guess (the job reads or writes a few small files), stated as such.
# The factors:
#   g = 0.784 per sentence decoded: E's shard pass (10.0 s, 1,000 sentences, 28,000-pair fold model) over
#       the quick run's passes of the same kind (itermixsgd, default, epoch 1: 12.65, 12.73, 12.87 s;
#       mean 12.75 s; 1,000 sentences, 2,000-pair fold models, stack 20);
#   sentences: devtest (test2016) and test (test2017) 1,000 against the quick run's 200 (x 5); the dev set
#       (val) 1,014 against 200 (x 5.07);
#   a = 3.14 for model building: E's fold assemble (10.6 s) over the quick run's (3.17, 3.65, 3.31 s; mean
#       3.377 s), for the templated models (which rewrite TranslationModel0's table and compile the model);
#   E's two fold tables (22.2 s) are split as the quick run's phrases.0 : phrases.1 means (2.250 : 1.783 s).
CPU_S: dict[str, tuple[float, str]] = {
    # the shared data and the full-corpus medium system (rules/data.smk, rules/system.smk)
    "data_train": (1.0, "G: QL wall < 1 s at 3,000 pairs; reads 29,000"),
    "data_dev": (1.0, "G: QL wall < 1 s"),
    "data_test": (1.0, "G: QL wall < 1 s"),
    "train_prepare": (1.0, "T4: max_cpu_s 1 (fr-en, 29,000 pairs)"),
    "train_align": (9.9, "E: full-corpus alignment"),
    "train_phrases0": (12.4, "E: fold 0's phrases (22.2 s, two tables) x 2.250/4.033, for 29,000 pairs"),
    "train_phrases1": (9.8, "E: fold 0's phrases (22.2 s, two tables) x 1.783/4.033"),
    "train_lm": (1.4, "E: fold 0's two LMs, 2.8 s / 2"),
    "train_assemble": (10.6, "E: fold 0's assemble"),
    # 1. shards and 2. jackknifed folds
    "simianer_shards": (2.0, "QL: 1 s wall for 3 shards of 3,000 pairs, x 2 (G) for 29 of 29,000"),
    "simianer_fold_work": (2.0, "QL: 0.7 s wall at 2,000 pairs, x 3 (G) for 28,000"),
    "simianer_fold_phrases0": (12.4, "E: 22.2 s x 2.250/4.033"),
    "simianer_fold_phrases1": (9.8, "E: 22.2 s x 1.783/4.033"),
    "simianer_fold_lm": (1.4, "E: 2.8 s for LM0 and LM1, / 2"),
    "simianer_fold_assemble": (10.6, "E"),
    # 3. feature groups
    "simianer_templates[full]": (33.5, "Q: 10.66 s (full model, 3,000 pairs) x a 3.14"),
    "simianer_templates[fold]": (23.3, "Q: 7.42 s (3 fold models, 2,000 pairs) x a 3.14"),
    # 4. the sharded loop
    "simianer_zero": (1.0, "QL: 0.8 s wall"),
    "simianer_shard_pass[train]": (10.0, "E: itermixsgd default epoch 1 (Q's later epochs: x 1.13)"),
    "simianer_shard_pass[dev]": (15.3, "Q: 3.853 s (200 dev sentences) x 5.07 x g 0.784"),
    "simianer_mix[train]": (6.1, "Q: 0.627 s (3 shards) x 29/3 (upper bound: start-up included)"),
    "simianer_mix[dev]": (0.35, "Q: 0.350 s (one shard) x 1"),
    "simianer_devtest": (13.7, "Q: 3.499 s (200 sentences) x 5 x g 0.784"),
    "simianer_choose": (2.0, "QL: 1.4 s wall for 2 epochs; 10 here (G: x 1.4)"),
    "simianer_test": (11.8, "Q: 3.014 s (200 sentences) x 5 x g 0.784"),
    # 5. table, findings, figure
    "simianer_table": (42.0, "T4: Table 4's table, 42 CPU-s (approximate randomization, 10,000 trials)"),
    "simianer_findings": (42.0, "T4: as the table (the same tests)"),
    "simianer_plot": (8.0, "QL: 4 s wall for 5 rows, x 2 (G) for 18"),
    "simianer": (0.0, "the target: no command"),
    # the batch kb-mira row (the tables' protocol, rules/tune.smk): Table 4's measured means
    "data_subsample": (1.0, "G"),
    "init_weights": (1.0, "G"),
    "decode_first": (36.0, "T4: 0.020 h / 2 jobs"),
    "first_sample": (5.4, "T4: 0.015 h / 10 jobs"),
    "tune_first": (2.2, "T4: 0.022 h / 36 jobs"),
    "decode_dev": (10.6, "T4: 1.589 h / 540 jobs"),
    "tune": (3.95, "T4: 0.553 h / 504 jobs (all methods)"),
    "select_best": (1.0, "G: no benchmark file in T4"),
    "decode_test": (8.8, "T4: 0.766 h / 312 jobs"),
    "run_summary": (0.03, "T4: 0.001 h / 110 jobs"),
}

TARGET = "simianer"
SECTION_KEPT = "## The quick configuration through SLURM"  # written by hand after a run; kept on rewrite


# ------------------------------------------------------------------------------------------------------
# the dry run and its listing
def dry_run(data_dir: str, save: Path | None) -> tuple[str, list[str], float]:
    work = Path(tempfile.mkdtemp(prefix="simianer_plan."))
    cmd = [shutil.which("snakemake") or os.path.join(os.path.dirname(sys.executable), "snakemake"),
           "-s", str(REPO / "Snakefile"), "-d", str(work), "--profile", str(REPO / "profiles/slurm"),
           "--config", f"data_dir={data_dir}", "-n", TARGET]
    env = {**os.environ, "SMTLIB_WARMUP": "0"}  # a dry run runs no onstart, but in case
    started = datetime.datetime.now()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env, timeout=1800)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    seconds = (datetime.datetime.now() - started).total_seconds()
    out = r.stdout + r.stderr
    if r.returncode != 0:
        sys.exit(f"the dry run failed ({r.returncode}):\n{out[-3000:]}")
    if save:
        save.write_text(out, encoding="utf-8")
    shown = [c if i else "snakemake" for i, c in enumerate(cmd)]
    shown[shown.index(str(work))] = "EMPTY_TMP_DIR"
    return out, shown, seconds


RULE = re.compile(r"^(\s*)(?:local)?rule (\w+):\s*$")
FIELD = re.compile(r"^\s+(\w+): (.*)$")
GROUP = re.compile(r"^\s*\[[^\]]*\] Group job (\w+) ")


class Job:
    def __init__(self, rule: str, group: tuple[int, str] | None):
        self.rule, self.group = rule, group
        self.jobid = -1
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        self.wildcards: dict[str, str] = {}
        self.resources: dict[str, str] = {}
        self.threads = 1
        self.preds: set[int] = set()
        self.succs: set[int] = set()

    def key(self) -> str:
        """The CPU_S key of the job: its rule, with a variant where the rule's jobs differ."""
        if self.rule in ("simianer_shard_pass", "simianer_mix"):
            return f"{self.rule}[{self.wildcards['tdata']}]"
        if self.rule == "simianer_templates":
            return f"{self.rule}[{'full' if self.wildcards['model'] == 'full' else 'fold'}]"
        return self.rule

    def ask(self, name: str) -> int | None:
        value = self.resources.get(name)
        return int(value) if value is not None and value.isdigit() else None


def parse_listing(text: str) -> tuple[list[Job], dict[str, int]]:
    body, stats = text.split("Job stats:", 1)[1], {}
    for line in body.splitlines()[3:]:
        m = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if not m:
            break
        stats[m.group(1)] = int(m.group(2))
    jobs: list[Job] = []
    group, groups, job = None, 0, None
    for line in body.split("\nReasons:", 1)[0].splitlines():
        if m := GROUP.match(line):
            groups += 1
            group, job = (groups, m.group(1)), None
            continue
        if m := RULE.match(line):
            if not m.group(1):
                group = None  # a top-level job ends the group's block
            job = Job(m.group(2), group)
            jobs.append(job)
            continue
        if job is None or not (m := FIELD.match(line)):
            continue
        name, value = m.groups()
        if name == "input":
            job.inputs = value.split(", ")
        elif name == "output":
            job.outputs = value.split(", ")
        elif name == "jobid":
            job.jobid = int(value)
        elif name == "threads":
            job.threads = int(value)
        elif name == "wildcards":
            job.wildcards = dict(kv.split("=", 1) for kv in value.split(", "))
        elif name == "resources":
            job.resources = dict(kv.split("=", 1) for kv in value.split(", ") if "=" in kv)
    return jobs, stats


def link(jobs: list[Job]) -> None:
    producer = {}
    for i, job in enumerate(jobs):
        for path in job.outputs:
            assert path not in producer, f"two jobs write {path}"
            producer[path] = i
    for i, job in enumerate(jobs):
        for path in job.inputs:
            if path in producer:
                job.preds.add(producer[path])
                jobs[producer[path]].succs.add(i)


def topological(jobs: list[Job]) -> list[int]:
    indeg = [len(j.preds) for j in jobs]
    order, stack = [], [i for i, d in enumerate(indeg) if d == 0]
    while stack:
        i = stack.pop()
        order.append(i)
        for s in jobs[i].succs:
            indeg[s] -= 1
            if indeg[s] == 0:
                stack.append(s)
    assert len(order) == len(jobs), "the DAG has a cycle"
    return order


# ------------------------------------------------------------------------------------------------------
# the schedule
def submitted(jobs: list[Job]) -> list[bool]:
    """Whether a job is a cluster job of its own or starts its group's (no member of its group before it):
    a group's later steps run inside the same job, with no submission between them. (A group of several
    runs' components, "evaluate", is one submission with several starting steps: counted once each here.)"""
    return [not (j.group and any(jobs[p].group == j.group for p in j.preds)) for j in jobs]


def schedule(jobs: list[Job], cost: list[float], slots: int, priority: list[float], overhead: float = 0.0,
             spacing: float = 0.0) -> float:
    """The makespan (seconds) of HLFET list scheduling on ``slots`` identical cores; ``overhead`` seconds of
    latency added to every cluster job (holding its core: the job's own Snakemake start runs on its node,
    submission and polling do not, so a little too long), and submissions at least ``spacing`` seconds
    apart (the profile's max-jobs-per-second)."""
    own = submitted(jobs)
    indeg = [len(j.preds) for j in jobs]
    ready = [(-priority[i], i) for i, d in enumerate(indeg) if d == 0]
    heapq.heapify(ready)
    running: list[tuple[float, int]] = []
    now, free, done, next_submission = 0.0, slots, 0, 0.0
    while done < len(jobs):
        while free and ready:
            _, i = heapq.heappop(ready)
            start = now
            if own[i]:
                start = max(now, next_submission)
                next_submission = start + spacing
            heapq.heappush(running, (start + cost[i] + (overhead if own[i] else 0.0), i))
            free -= 1
        now, i = heapq.heappop(running)
        free += 1
        done += 1
        for s in jobs[i].succs:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(ready, (-priority[s], s))
    return now


def bottom_levels(jobs: list[Job], order: list[int], cost: list[float]) -> list[float]:
    """Each job's longest remaining path to the end (seconds, its own cost included): HLFET's priority, and
    its maximum is the critical path with unlimited nodes."""
    bottom = [0.0] * len(jobs)
    for i in reversed(order):
        bottom[i] = cost[i] + max((bottom[s] for s in jobs[i].succs), default=0.0)
    return bottom


def group_asks(jobs: list[Job], members: list[int], cores: int, mem_mb: int) -> tuple[int, int, int]:
    """(runtime, mem_mb, cores) a group job asks: Snakemake's GroupResources.basic_layered in short: the
    group's toposort levels, each packed into layers that fit ``cores`` and ``mem_mb``; a layer is as long as
    its longest job and as wide as the sum of its jobs; runtimes add up over the layers."""
    inside = set(members)
    depth: dict[int, int] = {}
    order = topological_subset(jobs, inside)
    for i in order:
        depth[i] = max((depth[p] + 1 for p in jobs[i].preds if p in inside), default=0)
    levels = collections.defaultdict(list)
    for i in order:
        levels[depth[i]].append(i)
    runtime = width_mem = width_cores = 0
    for level in sorted(levels):
        layers: list[list[int]] = []
        for i in sorted(levels[level], key=lambda i: (-(jobs[i].ask("mem_mb") or 0), -(jobs[i].ask("runtime") or 0))):
            for layer in layers:
                if (sum(jobs[j].threads for j in layer) + jobs[i].threads <= cores
                        and sum(jobs[j].ask("mem_mb") or 0 for j in layer) + (jobs[i].ask("mem_mb") or 0) <= mem_mb):
                    layer.append(i)
                    break
            else:
                layers.append([i])
        for layer in layers:
            runtime += max(jobs[j].ask("runtime") or 0 for j in layer)
            width_mem = max(width_mem, sum(jobs[j].ask("mem_mb") or 0 for j in layer))
            width_cores = max(width_cores, sum(jobs[j].threads for j in layer))
    return runtime, width_mem, width_cores


def topological_subset(jobs: list[Job], inside: set[int]) -> list[int]:
    indeg = {i: len(jobs[i].preds & inside) for i in inside}
    order, stack = [], sorted(i for i, d in indeg.items() if d == 0)
    while stack:
        i = stack.pop()
        order.append(i)
        for s in jobs[i].succs & inside:
            indeg[s] -= 1
            if indeg[s] == 0:
                stack.append(s)
    return order


# ------------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=str(SHARED / "data"),
                        help="the shared data (default ../shared/data beside the repository, or $SMTLIB_SHARED/data)")
    parser.add_argument("--listing", type=Path, help="a saved output of the dry run, read instead of running it")
    parser.add_argument("--save-listing", type=Path, help="keep the dry run's output here")
    parser.add_argument("--nodes", type=int, default=29)
    parser.add_argument("--cores", type=int, default=2, help="cores per node (and of the one machine)")
    parser.add_argument("--latency", type=float, nargs="+", default=[30.0, 60.0],
                        help="seconds of latency per cluster job for the sensitivity rows (not CPU)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/simianer_slurm.md")
    args = parser.parse_args(argv)

    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    if args.listing:
        text, cmd, dry_seconds = args.listing.read_text(encoding="utf-8"), None, None
    else:
        text, cmd, dry_seconds = dry_run(args.data_dir, args.save_listing)
    jobs, stats = parse_listing(text)
    link(jobs)
    profile = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text(encoding="utf-8"))

    # the parse against Snakemake's own count
    by_rule = collections.Counter(j.rule for j in jobs)
    assert stats.pop("total") == len(jobs), (len(jobs), "jobs parsed")
    assert dict(by_rule) == stats, set(by_rule.items()) ^ set(stats.items())
    missing = sorted({j.key() for j in jobs} - set(CPU_S))
    assert not missing, f"no CPU seconds for {missing}"
    order = topological(jobs)
    edges = sum(len(j.succs) for j in jobs)

    # per epoch
    epoch_rules = ("simianer_shard_pass", "simianer_mix", "simianer_devtest")
    per_epoch: dict[tuple, collections.Counter] = collections.defaultdict(collections.Counter)
    for j in jobs:
        if j.rule in epoch_rules:
            w = j.wildcards
            per_epoch[(w["fgroup"], w["algo"], w["tdata"], w["split"], int(w["epoch"]))][j.rule] += 1
    shapes = collections.Counter()
    by_epoch = collections.defaultdict(collections.Counter)
    runs = collections.defaultdict(set)
    for (fgroup, algo, tdata, split, epoch), c in per_epoch.items():
        shape = tuple(c[r] for r in epoch_rules)
        shapes[(tdata, shape)] += 1
        by_epoch[epoch].update(c)
        runs[tdata].add((fgroup, algo, split))

    first = min(by_epoch)

    # levels
    depth = [0] * len(jobs)
    for i in order:
        depth[i] = max((depth[p] + 1 for p in jobs[i].preds), default=0)
    levels = collections.Counter(depth)
    widest = max(levels, key=lambda d: (levels[d], -d))
    widest_rules = collections.Counter(jobs[i].rule for i in range(len(jobs)) if depth[i] == widest)
    widest_epochs = sorted({int(j.wildcards["epoch"]) for i, j in enumerate(jobs)
                            if depth[i] == widest and j.rule == "simianer_shard_pass"})
    first_depths = sorted({depth[i] for i, j in enumerate(jobs)
                           if j.rule == "simianer_shard_pass" and j.wildcards["epoch"] == "1"})

    # resources asked
    rule_asks = {}
    for j in jobs:
        rule_asks.setdefault(j.rule, set()).add((j.ask("runtime"), j.ask("mem_mb"), j.threads))
    max_runtime = max(j.ask("runtime") or 0 for j in jobs)
    max_mem = max(j.ask("mem_mb") or 0 for j in jobs)
    rules_max_runtime = sorted({j.rule for j in jobs if j.ask("runtime") == max_runtime})
    rules_max_mem = sorted({j.rule for j in jobs if j.ask("mem_mb") == max_mem})
    groups = collections.defaultdict(list)
    for i, j in enumerate(jobs):
        if j.group:
            groups[j.group].append(i)
    group_rows = []
    for (gid, name), members in sorted(groups.items()):
        runtime, mem, cores = group_asks(jobs, members, cores=int(profile["cores"]),
                                         mem_mb=int(profile["resources"]["mem_mb"]))
        rules = collections.Counter(jobs[i].rule for i in members)
        group_rows.append((name, len(members), runtime, mem, cores, rules))

    # costs
    cost = [CPU_S[j.key()][0] for j in jobs]
    total = sum(cost)
    finish = [0.0] * len(jobs)
    came_from = [-1] * len(jobs)
    for i in order:
        best = max(jobs[i].preds, key=lambda p: finish[p], default=-1)
        finish[i] = (finish[best] if best >= 0 else 0.0) + cost[i]
        came_from[i] = best
    end = max(range(len(jobs)), key=lambda i: finish[i])
    critical = finish[end]
    chain, i = [], end
    while i >= 0:
        chain.append(i)
        i = came_from[i]
    chain.reverse()
    chain_rules = collections.Counter(jobs[i].key() for i in chain)
    # the longest chain that ends in a training-set row's test decode (the sharded loop's own)
    loop_end = max((i for i, j in enumerate(jobs) if j.rule == "simianer_test" and j.wildcards["tdata"] == "train"),
                   key=lambda i: finish[i])
    loop_chain, i = [], loop_end
    while i >= 0:
        loop_chain.append(i)
        i = came_from[i]
    loop_seconds = collections.Counter()
    for i in loop_chain:
        loop_seconds[jobs[i].key()] += cost[i]
    chain_seconds = collections.Counter()
    for i in chain:
        chain_seconds[jobs[i].key()] += cost[i]
    bottom = bottom_levels(jobs, order, cost)
    one_machine = schedule(jobs, cost, args.cores, bottom)
    cluster = schedule(jobs, cost, args.nodes * args.cores, bottom)
    unlimited_check = schedule(jobs, cost, len(jobs), bottom)
    assert abs(unlimited_check - critical) < 1e-6, (unlimited_check, critical)
    cost_by_key = collections.Counter()
    for j, c in zip(jobs, cost):
        cost_by_key[j.key()] += c
    # the shard passes twice as dear (simianer_estimate.md's upper end, f = 1: later epochs' searches)
    dear = [c * 2 if j.rule == "simianer_shard_pass" else c for j, c in zip(jobs, cost)]
    dear_bottom = bottom_levels(jobs, order, dear)
    dear_rows = (sum(dear), max(dear_bottom), schedule(jobs, dear, args.cores, dear_bottom),
                 schedule(jobs, dear, args.nodes * args.cores, dear_bottom))
    # the profile's own limits: jobs in flight (`jobs`) and submissions per second (`max-jobs-per-second`)
    in_flight, per_second = int(profile["jobs"]), float(profile["max-jobs-per-second"])
    limited = (schedule(jobs, cost, in_flight, bottom, spacing=1 / per_second),
               schedule(jobs, cost, min(in_flight, args.nodes * args.cores), bottom,
                        spacing=1 / per_second))
    n_submitted = sum(1 for j in jobs if not j.group) + len(groups)
    overhead_rows = []
    for s in args.latency:
        if s:
            overhead_rows.append((s, schedule(jobs, cost, len(jobs), bottom, s),
                                  schedule(jobs, cost, args.nodes * args.cores, bottom, s)))

    # ---------------------------------------------------------------------------------------- the report
    today = datetime.date.today().isoformat()
    slots = args.nodes * args.cores
    lines = [
        "# Simianer, Riezler & Dyer (2012) Table 2: the distributed path, planned",
        "",
        f"{today}, commit {commit}, `python benchmarks/simianer_plan.py"
        + (f" --latency {' '.join(f'{s:g}' for s in args.latency)}" if args.latency != [30.0, 60.0] else "")
        + "`.",
        f"Machine load (`uptime` at the start): `{load}`.",
        "",
        "The full configuration's `simianer` target (`config/config.yaml`, `simianer:`: de-en, 29 shards,",
        "10 epochs, 18 rows, the replicas of two rows on splits 2 and 3, the batch kb-mira row) under the",
        "cluster profile, from Snakemake's dry run in an empty directory:",
        "",
        "```",
        " ".join(cmd) if cmd else f"(read from {args.listing})",
        "```",
        "",
        (f"The dry run took {dry_seconds:.0f} s wall. " if dry_seconds else "")
        + f"{len(jobs):,} jobs, {edges:,} dependencies (a job depends on the jobs whose outputs are its inputs);",
        "the job count per rule equals the dry run's `Job stats`.",
        "",
        "## Jobs per rule",
        "",
        "| rule | jobs | runtime asked (min) | mem_mb asked | threads | CPU s per job (assumed) | CPU h in all |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    keys_of_rule = collections.defaultdict(set)
    for j in jobs:
        keys_of_rule[j.rule].add(j.key())
    for rule, n in sorted(by_rule.items(), key=lambda kv: -sum(cost_by_key[k] for k in keys_of_rule[kv[0]])):
        asks = sorted(rule_asks[rule], key=str)
        runtime = "/".join(sorted({str(a[0]) for a in asks}))
        mem = "/".join(sorted({str(a[1]) for a in asks}))
        threads = "/".join(sorted({str(a[2]) for a in asks}))
        per_job = ", ".join(f"{k.partition('[')[2].rstrip(']') + ' ' if '[' in k else ''}{CPU_S[k][0]:g}"
                            for k in sorted(keys_of_rule[rule]))
        cpu_h = sum(cost_by_key[k] for k in keys_of_rule[rule]) / 3600
        lines.append(f"| {rule} | {n:,} | {runtime} | {mem} | {threads} | {per_job} | {cpu_h:.2f} |")
    lines += [
        f"| total | {len(jobs):,} | | | | | {total / 3600:.2f} |",
        "",
        "## Jobs per epoch",
        "",
    ]
    for (tdata, shape), n in sorted(shapes.items()):
        lines.append(f"- {tdata} epoch: {shape[0]} shard pass{'es' if shape[0] > 1 else ''} + {shape[1]} mix + "
                     f"{shape[2]} devtest decode = {sum(shape)} jobs; {n} such epochs "
                     f"({len(runs[tdata])} runs x {n // len(runs[tdata])} epochs)")
    lines += [
        f"- every epoch number ({first}-{max(by_epoch)}) over all {sum(len(r) for r in runs.values())} runs: "
        f"{by_epoch[first]['simianer_shard_pass']} shard passes, {by_epoch[first]['simianer_mix']} mixes and "
        f"{by_epoch[first]['simianer_devtest']} devtest decodes "
        f"({'the same for every epoch' if all(by_epoch[e] == by_epoch[first] for e in by_epoch) else 'NOT the same for every epoch'})",
        f"- besides the epochs: {len(jobs) - sum(sum(c.values()) for c in per_epoch.values()):,} jobs (data, systems, "
        "folds, templated models, zero vectors, choose, test, table, findings, figure, the batch row)",
        "",
        "## Levels (depth = the longest dependency chain from a source, in jobs)",
        "",
        f"{len(levels)} levels (depth 0-{max(levels)}). The widest is depth {widest}: {levels[widest]:,} jobs "
        f"({', '.join(f'{r} {n}' for r, n in widest_rules.most_common())}; its shard passes are of epochs "
        f"{', '.join(str(e) for e in widest_epochs)}).",
        "",
        "Depth mixes epochs: Algorithms 1 and 2 (sgd, mixsgd) go on from each shard's own weights, one level per "
        "epoch, Algorithms 3 and 4 (itermixsgd, iterselsgd) from the mixed vector, two levels per epoch, and the "
        "dense rows start a level before the templated ones (no templates job). So the "
        f"{by_epoch[first]['simianer_shard_pass']} passes of epoch {first} lie at depths "
        f"{', '.join(str(d) for d in first_depths)}, and no depth holds a whole epoch number.",
        "",
        "Jobs per depth: " + ", ".join(f"{d}: {levels[d]}" for d in sorted(levels)) + ".",
        "",
        "## The largest ask under the profile",
        "",
        f"- runtime: {max_runtime} min, by {', '.join(rules_max_runtime)} ("
        + ("the profile's default-resources: it sets no runtime for these rules; "
           if max_runtime == profile["default-resources"]["runtime"] else "")
        + "the epoch's rules ask "
        + ", ".join(f"{r} {'/'.join(sorted({str(a[0]) for a in rule_asks[r]}))}" for r in epoch_rules) + ")",
        f"- mem_mb: {max_mem}, by {', '.join(rules_max_mem)} (from the profile's set-resources: "
        + (", ".join(r for r in rules_max_mem if r in profile["set-resources"]) or "none")
        + "; the others' from their rules' `resources:`)",
        "- a cluster job of a group (Snakemake's layered sum: the runtimes of a group's sequential layers add "
        "up; computed here the same way from the members' asks):",
    ]
    for name, n, runtime, mem, cores, rules in group_rows:
        lines.append(f"  - group {name}: {n} jobs ({', '.join(f'{r} {k}' for r, k in rules.most_common())}): "
                     f"runtime {runtime} min, mem_mb {mem}, {cores} cores")
    lines += [
        "",
        "## Time",
        "",
        "Every job takes its CPU seconds below on one core (the table at the top of the script, with the source",
        "of every number). The list scheduler: HLFET (the ready job with the longest remaining path to the end",
        "first, non-preemptive, one core per job; memory never binds).",
        "",
        "| | hours |",
        "|---|---:|",
        f"| total CPU | {total / 3600:.2f} |",
        f"| one {args.cores}-core machine (list-scheduled) | {one_machine / 3600:.2f} |",
        f"| critical path, unlimited nodes (every job as soon as its inputs exist) | {critical / 3600:.2f} |",
        f"| {args.nodes} nodes of {args.cores} cores ({slots} cores, list-scheduled"
        + f") | {cluster / 3600:.2f} |",
        "",
        f"One machine against unlimited nodes: {one_machine / critical:.0f} x; against {args.nodes} nodes: "
        f"{one_machine / cluster:.0f} x.",
        "",
        f"The critical path: {len(chain)} jobs, "
        + ", ".join(f"{k} {chain_rules[k]} ({chain_seconds[k]:.0f} s)" for k, _ in chain_seconds.most_common())
        + f", ending in {jobs[chain[-1]].rule}.",
        "",
        f"The longest chain through a training-set row (to its test decode, {jobs[loop_end].wildcards['algo']} "
        f"{jobs[loop_end].wildcards['fgroup']} split {jobs[loop_end].wildcards['split']}): {len(loop_chain)} jobs, "
        f"{finish[loop_end] / 60:.1f} min: "
        + ", ".join(f"{k} {v:.0f} s" for k, v in loop_seconds.most_common()) + ".",
        "",
        "Sensitivity:",
        "",
        f"- every shard pass twice as dear (train 20 s, simianer_estimate.md's upper end for later epochs): CPU "
        f"{dear_rows[0] / 3600:.2f} h, one machine {dear_rows[2] / 3600:.2f} h, critical path "
        f"{dear_rows[1] / 3600:.2f} h, {args.nodes} nodes {dear_rows[3] / 3600:.2f} h;",
    ]
    lines.append(f"- the profile's limits, {in_flight} jobs in flight (`jobs`) and {per_second:g} submissions a second "
                 f"(`max-jobs-per-second`; {n_submitted:,} cluster jobs, a group one): unlimited nodes "
                 f"{limited[0] / 3600:.2f} h, {args.nodes} nodes {limited[1] / 3600:.2f} h;")
    for s, unlimited, nodes in overhead_rows:
        lines.append(f"- {s:g} s of SLURM latency per job (submission, polling, the job's own Snakemake start): "
                     f"unlimited nodes {unlimited / 3600:.2f} h, {args.nodes} nodes {nodes / 3600:.2f} h;")
    lines += [
        "",
        "## CPU seconds per job (the script's CPU_S)",
        "",
        "| rule | CPU s | source |",
        "|---|---:|---|",
    ]
    lines += [f"| {k} | {v[0]:g} | {v[1]} |" for k, v in CPU_S.items()]
    lines += [
        "",
        "E: benchmarks/results/simianer_estimate.md (full size); Q: the quick run's benchmark files (mean "
        "cpu_time); QL: the quick run's Snakemake log (wall); T4: docs/results/table4/costs.tsv; G: a guess; "
        "g = 0.784 per decoded sentence (E's 10.0 s pass / the quick run's 12.75 s); a = 3.14 (E's fold "
        "assemble / the quick run's).",
        "",
    ]
    kept = ""
    if args.out.exists():
        old = args.out.read_text(encoding="utf-8")
        if SECTION_KEPT in old:
            kept = old[old.index(SECTION_KEPT):]
    args.out.write_text("\n".join(lines) + ("\n" + kept if kept else ""), encoding="utf-8")
    print("\n".join(lines))
    print(f"written: {args.out}")
    print(f"jobs: {len(jobs)}; widest level: {levels[widest]} (depth {widest} of {len(levels)} levels); "
          f"largest ask: runtime {max_runtime} min, mem_mb {max_mem}")
    print(f"critical path: {critical / 3600:.2f} h (one {args.cores}-core machine {one_machine / 3600:.2f} h, "
          f"CPU {total / 3600:.2f} h; {args.nodes} nodes x {args.cores} cores {cluster / 3600:.2f} h)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
