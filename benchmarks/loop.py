"""One whole tuning run per method through the real commands, per stage, and the full Table 4 estimate.

Runs the tuning loop of each ``--methods`` on the Medium fr->en system, the Multi30k dev set (or its
first ``--dev N`` sentences) and the workflow's settings (``config/config.yaml``, ``--configfile``
merged over it: k, iterations, lattice beam, seed, decoder and BLEU options, method settings). The
commands are the workflow's own: ``snakemake -n -p`` plans the method's default run (Medium,
sub-sample 0 = the whole dev set; :func:`planned_loop`) and each planned job's shell command is run,
command by command, in a work tree laid out as the workflow's ``results/`` (:func:`lay_out`: the
Medium system, its initial weights, the dev set), with the decodes on one process
(``--set-threads``). The loop's shape is the rules' (one loop kind per tuner kind,
:func:`smtlib.tuners.registry.input_kind`):

- **k-best** (``rules/tune.smk``; kbmira, mert, pro, ...): the dev set is decoded once with the
  initial weights (``decode_first``: k-best and 1-best, shared by every method) and cut to the run's
  sub-sample (``first_sample``: slice, score, the binary pool of iteration 1); iteration 1 tunes on
  that pool (``tune_first``); iteration ``it >= 2`` decodes with the weights of ``it-1`` and scores
  the 1-best (``decode_dev``), adds the k-best list to the pool of ``it-1`` and tunes (``tune``);
  iteration N+1 only decodes and scores.
- **lattice** (``rules/tune_lattice.smk``; lbmert, lbmira): every iteration, 1 included, decodes its
  own search graph with the weights of ``it-1`` (``decode_dev_lattice``: ``--lattice-beam`` from
  ``tuning.lattice_beam``, 0 = unpruned) and scores the 1-best; the tuner reads that lattice plus the
  paths aggregated by iterations 1..it-1 (``--kbest``) and writes the aggregation for ``it+1``
  (``--paths-out``; ``tune_lattice``). The lattice is deleted once tuned (a temp() in the rule).
- **online** (``rules/tune_online.smk``; mira): epoch ``it`` runs one ``mira_shard`` job per shard
  (``shards`` from ``method_settings`` or the tuner's default, 8) from the mixture of ``it-1``, with
  the mixing state of ``it-1``, then ``mira_mix``; the weights of ``it-1`` are decoded and scored at
  ``it >= 2`` by ``decode_dev`` (iteration 1's BLEU is the shared first decode's).

Every command runs as its own child process and is measured with ``os.wait4`` (CPU = user + system,
peak RSS). ``smtlib decode`` runs with one process and reports its own phases (model loading,
options, search, k-best/lattice extraction), so the stages are

    load, options, search, kbest (inside decode; for a lattice decode ``kbest`` is the 1-best and the
    lattice's extraction), write (the rest of the decode's CPU after its loading and loop: formatting
    and compressing the k-best or lattice file, and the Python start-up before the decoder's loading
    clock starts), score (smtlib bleu), merge (slice + pool add, with the
    new hypotheses' BLEU statistics; online MIRA: the mixing job), tune (online MIRA: the shard jobs,
    which decode their sentences inside the tuner).

The shared first decode is reported on its own line (``first``), not in the methods' sums. Expensive
methods can be measured on fewer iterations (``--iterations-of lbmert=4``) and sentences (``--dev``).
In a fresh clone numba compiles its on-disk cache on a kernel's first use and that CPU lands in the
first command that uses it (e.g. the first ``smtlib kbest add`` or lb-mert step): measure in a tree
whose caches are warm (run a tiny ``--dev 30 --iterations 2`` of the same methods first).

**The Table 4 estimate** costs every job ``snakemake -n results/table4.tsv`` plans under the default
configuration (so it follows the workflow as it is; ``--configfile FILE`` merges a YAML file over it, for
the runs and the plan alike, as ``snakemake --configfile`` does) from the measured rows, per rule
(:func:`estimate`):

- decodes (``decode_first``, ``decode_dev``, ``decode_dev_lattice``, ``decode_test``): a fixed part
  plus a per-sentence part. The fixed part is the CPU of decoding one sentence with the feature set's
  system (start-up, model loading, one sentence; k-best and lattice apart), counted on the rule's
  ``threads`` cores since loading is single-threaded. The per-sentence CPU of a k-best and of a
  lattice decode is measured on Medium here (every decode of the loops: its whole CPU less the fixed
  part, per sentence) and carried to Small and Big by short decodes of the first
  ``--factor-sentences`` dev sentences with each system (initial weights; the one-sentence decode's
  CPU subtracted): cost(fs) = measured(medium) * short(fs) / short(medium). Test sets are decoded
  1-best at the k-best decode's options+search rate (the decoder's own clocks);
- ``first_sample``, ``tune_first``, ``tune`` (pool add + step), ``tune_lattice``: a small job's CPU
  (one ``smtlib bleu``, i.e. a Python start) per command plus a per-sentence cost measured per method
  and iteration; iterations beyond those measured are extrapolated from the measured ones (the notes
  say how for each method); k-best and lb-mira tune costs are Medium's on every feature set; lb-mert's
  on Small is Medium's times Small's share of dense features (its line searches per round are one per
  direction, the coordinate axes); both MERTs are not planned on Big (config ``not_applicable``);
- ``mira_shard``: a fixed part (a one-sentence shard job's CPU on Medium, measured with the short
  decodes; other feature sets: plus the difference of their one-sentence decodes) plus the shard's
  sentences at the measured per-sentence CPU of the shard jobs (their CPU less that fixed part),
  scaled to Small and Big like a k-best decode; ``mira_mix``: its measured CPU;
- the known small jobs (data, init weights, best selection, summaries, the table) cost one small
  job each (listed in the notes); system building is taken from the Big model's ``build.json``;
  any other rule is costed as a small job **and reported loudly** (``UNKNOWN rule``), and the estimate
  line says it is incomplete;
- a method whose tuning is planned but which has no measured rows (neither in this run nor in a
  ``--rows`` file) costs nothing for its tuning jobs, is named in the notes and the estimate line
  says ``(incomplete: ... not measured)``: there is no fallback to another method's cost.

Hours on C cores = core-hours / C (the runs are independent and pack well), but never less than the
longest run's chain of jobs. Not measured: the rules run decodes with ``--jobs {threads}`` (2
processes; here 1, to have the decoder's phases: the estimate takes the same CPU, without the process
pool's overhead), and ``decoder.backend: moses`` (this measures smtlib's decoder).

    python benchmarks/loop.py [--models DIR] [--methods kbmira mert] [--iterations N]
                              [--iterations-of lbmert=4 ...] [--dev N] [--parallel 2]
                              [--rows EARLIER.tsv ... [--legacy-sentences 1014]]
                              [--out benchmarks/results/loop.tsv] [--label before]
                              [--configfile cube.yaml]

``--methods`` with no names measures nothing but the short decodes and estimates from ``--rows``.
``--out`` writes this run's rows (one per method, rule, iteration and stage, with the sentences
measured); ``--rows`` adds rows written earlier by ``--out`` to the estimate (a method measured in
this run replaces its rows from the files), so the k-best methods measured in one run and the lattice
and online ones in another combine into one estimate (rows measured under the same ``--configfile``:
nothing checks that). ``--models`` holds ``fr-en-small``,
``fr-en-medium`` and ``fr-en-big`` model directories (default: ``resources/benchmarks/models``,
built there from ``../shared/data`` with ``smtlib train`` when missing). Last line:
``table4_hours_2_cores: X`` (followed by ``(incomplete: ...)`` when something is not measured).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import dataclasses
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

from smtlib.workflow import options
from smtlib.workflow.config import merge as merge_config
from smtlib.workflow.paths import FIRST, data_path, first_dir, model_dir, run_dir
from smtlib.workflow.runs import DEFAULT

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # also when imported by the tests
from _inputs import measure  # noqa: E402  (benchmarks/_inputs.py, beside this script)

ROOT = pathlib.Path(__file__).resolve().parents[1]
# ../shared/data beside the clone (SMTLIB_SHARED_DATA overrides, e.g. for a git worktree elsewhere)
SHARED = pathlib.Path(os.environ.get("SMTLIB_SHARED_DATA", ROOT.parent / "shared" / "data"))
TOK = SHARED / "multi30k" / "tok"
STAGES = ("load", "options", "search", "kbest", "write", "score", "merge", "tune")
DECODE_PHASES = ("options", "search", "kbest", "write")  # a decode's per-sentence CPU
ROW_FIELDS = ["label", "method", "rule", "it", "stage", "cpu", "wall", "peak_mib", "sentences"]
PAIR = "fr-en"  # Table 4's pair


# ---------------------------------------------------------------- measuring one command
_PHASES = re.compile(r"model loaded in ([\d.]+) s(?:, options ([\d.]+) s, search ([\d.]+) s, kbest ([\d.]+) s)?")


def decode_phases(stderr: str, cpu: float) -> dict[str, float]:
    """Split a decode command's CPU seconds into load / options / search / kbest / write.

    The decoder's summary line (k-best and lattice decodes alike) gives its loading time (wall
    seconds; loading is single-threaded, so taken as CPU, capped at what is left of ``cpu``) and the
    CPU seconds of each phase of its loop (one process); the rest of the command's CPU time is
    ``write``: formatting and compressing the k-best or lattice file, outside the decoder's clocks.
    """
    m = None
    for m in _PHASES.finditer(stderr):
        pass
    if m is None:
        raise SystemExit(f"no 'model loaded in' line in decode's stderr:\n{stderr[-2000:]}")
    load, opts, search, kbest = (float(g) if g is not None else None for g in m.groups())
    if opts is None:  # a decoder without phases: everything after loading counts as search
        loop = max(cpu - load, 0.0)
        return {"load": cpu - loop, "options": 0.0, "search": loop, "kbest": 0.0, "write": 0.0}
    loop = opts + search + kbest
    load = min(load, max(cpu - loop, 0.0))
    return {"load": load, "options": opts, "search": search, "kbest": kbest, "write": max(cpu - loop - load, 0.0)}


# ---------------------------------------------------------------- the workflow's settings (smtlib.workflow)
def workflow_config(overlay: pathlib.Path | None = None) -> dict:
    """``config/config.yaml``, with ``overlay`` merged over it as ``snakemake --configfile`` merges it
    (nested mappings key by key, anything else replaced)."""
    with open(ROOT / "config" / "config.yaml", encoding="utf-8") as fh:
        cfg = yaml.safe_load(fh)
    if overlay is not None:
        with open(overlay, encoding="utf-8") as fh:
            merge_config(cfg, yaml.safe_load(fh) or {})
    return cfg


def decoder_options(cfg: dict) -> list[str]:
    """The workflow's search options (smtlib.workflow.options.decoder_options, backend smtlib)."""
    return shlex.split(options.decoder_options(cfg["decoder"]))


def bleu_options(cfg: dict) -> list[str]:
    return shlex.split(options.bleu_options(cfg["bleu"]))


def tune_settings(cfg: dict, method: str) -> list[str]:
    """`--set` options of the method's default run on Table 4's pair (smtlib.workflow.options)."""
    return shlex.split(options.tune_settings(cfg, PAIR, method, DEFAULT))


def loop_kind(method: str) -> str:
    from smtlib.tuners.registry import input_kind

    return input_kind(method)


# ---------------------------------------------------------------- one tuning run, as the workflow plans it
# The rules of one run's loop, and of the first decode its k-best and online runs share
LOOP_RULES = ("decode_first", "first_sample", "decode_dev", "tune_first", "tune", "decode_dev_lattice",
              "tune_lattice", "mira_shard", "mira_mix")
# threads of the decodes: one process, for the decoder's phases (the estimate counts the same CPU)
ONE_PROCESS = [f"{rule}=1" for rule in ("decode_first", "decode_dev", "decode_dev_lattice")]
_LOGGED = re.compile(r"^(.*) > (\S+) 2>&1$")


@dataclasses.dataclass
class Job:
    """One job of ``snakemake -n -p``'s listing: its rule, wildcards and shell command."""

    rule: str
    wildcards: dict[str, str]
    shell: str


@dataclasses.dataclass
class Command:
    """One command of a rule's job: its stage name, argv, where its stdout goes (relative to the work
    tree), sentences it handles. Stage ``rename`` is the job's ``mv X.tmp X`` (done, not measured)."""

    rule: str
    stage: str
    argv: list[str]
    stdout: str | None
    sentences: int


@dataclasses.dataclass
class Inputs:
    """What every run of one measurement shares: a work tree laid out as the workflow's (the Medium
    model, the dev data as sub-sample 0, the initial weights), the settings and the dev sentences."""

    work: pathlib.Path
    cfg: dict
    sentences: int


def parse_listing(text: str) -> list[Job]:
    """The jobs of ``snakemake -n -p``'s output, with their wildcards and shell command (if any)."""
    jobs: list[Job] = []
    current = None
    for line in text.splitlines():
        m = re.fullmatch(r"(?:local)?rule (\w+):", line.strip())
        if m:
            current = Job(m.group(1), {}, "")
            jobs.append(current)
        elif current is not None and line.strip().startswith("wildcards:"):
            current.wildcards = wildcards_of(line.strip()[len("wildcards:"):].strip())
        elif current is not None and line.startswith("Shell command: "):
            current.shell = line[len("Shell command: "):]
            current = None
        elif not line.strip():
            current = None
    return jobs


def stage_of(argv: list[str]) -> str:
    """The stage a command's CPU counts in (see the module docstring)."""
    if argv[:1] == ["mv"]:
        return "rename"
    sub = argv[1] if len(argv) > 1 and argv[0] == "smtlib" else None
    if sub == "decode":
        return "decode"
    if sub == "bleu":
        return "score"
    if sub == "kbest" or (sub == "tune" and "--mix" in argv):
        return "merge"
    if sub == "tune":
        return "tune"
    raise SystemExit(f"loop: a planned command of unknown stage: {shlex.join(argv)}")


def job_commands(job: Job, sentences: int) -> list[Command]:
    """A planned job's shell command as the commands it chains: ``(A && B > X.tmp && mv X.tmp X) > LOG
    2>&1`` gives A, B (its stdout to X.tmp) and the rename; the log redirection is dropped (the
    measurement reads each command's stderr)."""
    m = _LOGGED.match(job.shell)
    if m is None:
        raise SystemExit(f"loop: rule {job.rule}'s command does not end in '> LOG 2>&1': {job.shell}")
    body = m.group(1).strip()
    if body.startswith("(") and body.endswith(")"):
        body = body[1:-1]
    commands = []
    for part in body.split(" && "):
        argv = shlex.split(part)
        stdout = None
        if ">" in argv:
            at = argv.index(">")
            argv, stdout = argv[:at], argv[at + 1]
        commands.append(Command(job.rule, stage_of(argv), argv, stdout, sentences))
    return commands


def planned_loop(cfg: dict, iterations: dict[str, int]) -> list[Job]:
    """The jobs of each method's default run on Medium, sub-sample 0 (the whole dev set), as
    ``snakemake -n -p`` plans them (its best weights and learning curve as the target) with ``cfg``'s
    settings and the method's iterations: one dry run per iteration count, in an empty directory.
    The measured methods are added to the extended methods (a method's wildcard must be a configured one)."""
    jobs: list[Job] = []
    for n in sorted(set(iterations.values())):
        methods = [m for m, its in iterations.items() if its == n]
        plan_cfg = merge_config(json.loads(json.dumps(cfg)), {"tuning": {"iterations": n}})
        plan_cfg["extended_methods"] = list(dict.fromkeys(plan_cfg["extended_methods"] + methods))
        targets = [f"{run_dir(PAIR, 'medium', m, DEFAULT, 0)}/curve.tsv" for m in methods]
        with tempfile.TemporaryDirectory() as tmp:
            overlay = pathlib.Path(tmp) / "loop.yaml"
            overlay.write_text(yaml.safe_dump(plan_cfg), encoding="utf-8")
            text = _dry_run(pathlib.Path(tmp) / "plan", ["-p", "--configfile", str(overlay), "--set-threads",
                                                         *ONE_PROCESS], targets)
        jobs += [j for j in parse_listing(text) if j.rule in LOOP_RULES]
    return jobs


def _dry_run(workdir: pathlib.Path, extra: list[str], targets: list[str]) -> str:
    """``snakemake -n`` of ``targets`` in ``workdir`` (the shared data as data_dir): its output."""
    res = subprocess.run(["snakemake", "-n", "-s", str(ROOT / "Snakefile"), "-d", str(workdir), "--cores", "2",
                          *extra, "--config", f"data_dir={SHARED}", "--", *targets], capture_output=True, text=True,
                         env={**os.environ, "SMTLIB_WARMUP": "0"})
    if res.returncode != 0:
        sys.exit(f"snakemake -n failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    return res.stdout


_ORDER = {"decode_first": 0, "first_sample": 1, "decode_dev": 2, "decode_dev_lattice": 2, "tune_first": 3, "tune": 3,
          "tune_lattice": 3, "mira_shard": 3, "mira_mix": 4}


def loop_order(jobs: list[Job]) -> list[Job]:
    """The jobs in an order their inputs allow: by iteration, then decode, tune (shards in order), mix."""
    def key(j: Job) -> tuple:
        return (int(j.wildcards.get("it", 0)), _ORDER[j.rule], int(j.wildcards.get("shard", 0)))

    return sorted(jobs, key=key)


def run_commands(cmds: list[Command], label: str, it: int, work: pathlib.Path, log: pathlib.Path) -> list[dict]:
    """Run and measure ``cmds`` in the work tree: one row per stage (a decode is split into its phases)."""
    rows = []
    for c in cmds:
        if c.stage == "rename":
            os.replace(work / c.argv[1], work / c.argv[2])
            continue
        stdout = work / c.stdout if c.stdout is not None else None
        if stdout is not None:
            stdout.parent.mkdir(parents=True, exist_ok=True)
        m = measure(c.argv, work, stdout)
        base = {"method": label, "rule": c.rule, "it": it, "peak_mib": m.peak_mib, "sentences": c.sentences}
        if c.stage == "decode":
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(m.stderr, encoding="utf-8")
            for name, sec in decode_phases(m.stderr, m.cpu).items():
                rows.append({**base, "stage": name, "cpu": sec, "wall": sec * m.wall / max(m.cpu, 1e-9)})
        else:
            rows.append({**base, "stage": c.stage, "cpu": m.cpu, "wall": m.wall})
    summary: dict[str, float] = {}
    for r in rows:
        summary[r["stage"]] = summary.get(r["stage"], 0.0) + r["cpu"]
    print(f"loop: {label} it{it}: " + ", ".join(f"{s} {v:.1f}" for s, v in summary.items()),
          file=sys.stderr, flush=True)
    return rows


def shared_first(data: Inputs, jobs: list[Job]) -> list[dict]:
    """The shared first decode and the pool of iteration 1, measured (rows labelled ``first``)."""
    mine = loop_order([j for j in jobs if j.rule in ("decode_first", "first_sample")])
    mine = list({j.shell: j for j in mine}.values())  # planned once per iteration count
    cmds = [c for j in mine for c in job_commands(j, data.sentences)]
    _make_dirs(data.work, cmds)
    first = data.work / FIRST.format(pair=PAIR, fs="medium")
    return run_commands(cmds, "first", 1, data.work, first / "decode.log")


def _make_dirs(work: pathlib.Path, cmds: list[Command]) -> None:
    """The directories every command writes into (Snakemake makes its jobs' output directories)."""
    for c in cmds:
        for arg in [*c.argv, c.stdout or ""]:
            if arg.startswith("results/"):
                (work / arg).parent.mkdir(parents=True, exist_ok=True)


def tuning_run(method: str, data: Inputs, jobs: list[Job]) -> list[dict]:
    """Every iteration's jobs of the method's run (its iterations + the last decode): one row per
    (iteration, stage). The lattice of an iteration is deleted once tuned (a temp() in the rule)."""
    mine = [j for j in jobs if j.wildcards.get("method") == method]
    run = data.work / run_dir(PAIR, "medium", method, DEFAULT, 0)
    rows = []
    for it in sorted({int(j.wildcards["it"]) for j in mine}):
        now = loop_order([j for j in mine if int(j.wildcards["it"]) == it])
        shards = sum(j.rule == "mira_shard" for j in now)
        cmds = []
        for j in now:
            n = len(range(int(j.wildcards["shard"]), data.sentences, shards)) if j.rule == "mira_shard" \
                else data.sentences
            cmds += job_commands(j, n)
        _make_dirs(data.work, cmds)
        rows += run_commands(cmds, method, it, data.work, run / f"it{it}" / "decode.log")
        (run / f"it{it}" / "dev.lattice.gz").unlink(missing_ok=True)
    return rows


def dev_bleus(work: pathlib.Path, method: str, iterations: int) -> list[float]:
    """Dev BLEU of the weights of iterations 0..N (``dev_bleus`` of rules/common.smk)."""
    run = work / run_dir(PAIR, "medium", method, DEFAULT, 0)
    lattice = loop_kind(method) == "lattice"
    first = work / first_dir(PAIR, "medium", 0) / "dev.bleu.json"
    paths = [run / "it1" / "dev.bleu.json" if lattice else first]
    paths += [run / f"it{i}" / "dev.bleu.json" for i in range(2, iterations + 2)]
    return [json.loads(p.read_text())["score"] for p in paths]


def lay_out(work: pathlib.Path, model: pathlib.Path, src: pathlib.Path, ref: pathlib.Path,
            ids: pathlib.Path, cfg: dict) -> None:
    """``work`` laid out as the workflow's results tree for the planned commands: the Medium system
    (links to the model directory's files) with its initial weights, the dev set and its sub-sample 0."""
    system = work / model_dir(PAIR, "medium")
    system.mkdir(parents=True, exist_ok=True)
    for entry in model.iterdir():
        link = system / entry.name
        if not link.exists():
            link.symlink_to(entry.resolve())
    subprocess.run(["smtlib", "data", "init-weights", "--model", str(model), "--out", str(system / "init.weights"),
                    "--ones", *cfg["tuning"]["init_ones"]], check=True, capture_output=True)
    data = work / data_path(PAIR)
    (data / "dev").mkdir(parents=True, exist_ok=True)
    for name, path in (("dev.src", src), ("dev.ref", ref), ("dev/s0.src", src), ("dev/s0.ref", ref),
                       ("dev/s0.ids", ids)):
        shutil.copyfile(path, data / name)


# ---------------------------------------------------------------- models and data
def find_models(models: pathlib.Path) -> dict[str, pathlib.Path]:
    """The small/medium/big model directories, built with ``smtlib train`` when missing."""
    dirs = {fs: models / f"fr-en-{fs}" for fs in ("small", "medium", "big")}
    if all((d / "model.yaml").exists() for d in dirs.values()):
        return dirs
    if not TOK.exists():
        sys.exit(f"no models in {models} and no {TOK} to build them from")
    models.mkdir(parents=True, exist_ok=True)
    work = models / "fr-en-work"
    print(f"loop: building the fr-en systems in {models} (a few minutes)", file=sys.stderr, flush=True)
    subprocess.run(["smtlib", "train", "build", "--src", str(TOK / "train.lc.norm.tok.fr.gz"),
                    "--tgt", str(TOK / "train.lc.norm.tok.en.gz"), "--src-lang", "fr", "--tgt-lang", "en",
                    "--feature-set", "big", "--out", str(dirs["big"]), "--work", str(work), "--seed", "1"],
                   check=True)
    for fs in ("small", "medium"):
        subprocess.run(["smtlib", "train", "assemble", "--work", str(work), "--feature-set", fs,
                        "--out", str(dirs[fs])], check=True)
    return dirs


def dev_data(work: pathlib.Path, limit: int | None) -> tuple[pathlib.Path, pathlib.Path, pathlib.Path]:
    """Source, reference and the ids of sub-sample 0 (every line) of the first ``limit`` dev sentences."""
    import gzip

    out = []
    for lang in ("fr", "en"):
        with gzip.open(TOK / f"val.lc.norm.tok.{lang}.gz", "rt", encoding="utf-8") as fh:
            lines = fh.read().splitlines()[:limit]
        path = work / f"dev.{lang}"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        out.append(path)
    ids = work / "dev.s0.ids"
    ids.write_text("".join(f"{i}\n" for i in range(len(lines))), encoding="utf-8")
    return out[0], out[1], ids


def feature_set_factors(dirs: dict[str, pathlib.Path], src: pathlib.Path, ref: pathlib.Path, cfg: dict, n: int,
                        work: pathlib.Path) -> dict[str, dict[str, float]]:
    """Per feature set, with its initial weights: a decode's fixed CPU (``load``, ``lattice_load``: the
    whole CPU of decoding the first dev sentence, i.e. start-up, loading and one sentence) and its
    per-sentence CPU (the first ``n`` sentences' CPU less that, per further sentence), k-best (and its
    1-best part, options + search, from the decoder's clocks) and lattice (the workflow's beam); and the
    number of dense features (the initial weights). With Medium also ``shard_load``: the CPU of an
    online tuner's shard job (the first online method of ``methods``, its settings) on one sentence,
    the fixed part of a shard job (start-up, loading, the tuner's set-up)."""
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    one, sample, one_ref = work / "factor.one.src", work / "factor.src", work / "factor.one.ref"
    one.write_text(lines[0], encoding="utf-8")
    one_ref.write_text(ref.read_text(encoding="utf-8").splitlines(keepends=True)[0], encoding="utf-8")
    sample.write_text("".join(lines[:n]), encoding="utf-8")
    out = {}
    for fs, model in dirs.items():
        init = work / f"init.{fs}.weights"
        subprocess.run(["smtlib", "data", "init-weights", "--model", str(model), "--out", str(init), "--ones",
                        *cfg["tuning"]["init_ones"]], check=True, capture_output=True)
        dense = sum(1 for line in init.read_text(encoding="utf-8").splitlines() if line.strip()
                    and not line.startswith("#"))
        base = ["smtlib", "decode", "--model", str(model), "--weights", str(init), "--jobs", "1", *decoder_options(cfg)]
        kbest = ["--kbest", str(work / f"factor.{fs}.kbest.gz"), "--k", str(cfg["tuning"]["k"])]
        lattice = ["--lattice", str(work / f"factor.{fs}.lattice.gz"), "--lattice-beam", str(cfg["tuning"]["lattice_beam"])]
        cpu = {}
        for kind, opts in (("kbest", kbest), ("lattice", lattice)):
            for size, path in (("one", one), ("n", sample)):
                cpu[kind, size] = measure([*base, "--input", str(path), *opts, "--output",
                                           str(work / f"factor.{fs}.{kind}.1best")], ROOT)
        (work / f"factor.{fs}.lattice.gz").unlink(missing_ok=True)
        ph = decode_phases(cpu["kbest", "n"].stderr, cpu["kbest", "n"].cpu)
        per = max(n - 1, 1)
        out[fs] = {"load": cpu["kbest", "one"].cpu,
                   "kbest_per_sentence": max(cpu["kbest", "n"].cpu - cpu["kbest", "one"].cpu, 0.0) / per,
                   "best_per_sentence": (ph["options"] + ph["search"]) / n, "lattice_load": cpu["lattice", "one"].cpu,
                   "lattice_per_sentence": max(cpu["lattice", "n"].cpu - cpu["lattice", "one"].cpu, 0.0) / per,
                   "dense": dense, "peak_mib": max(m.peak_mib for m in cpu.values())}
        online = [m for m in cfg["methods"] if loop_kind(m) == "online"]
        if fs == "medium" and online:
            out[fs]["shard_load"] = measure(
                ["smtlib", "tune", online[0], "--model", str(model), "--source", str(one), "--refs", str(one_ref),
                 "--init", str(init), "--shard", "0", "--out", str(work / "factor.shard.json"), "--seed", "1",
                 *tune_settings(cfg, online[0]), *decoder_options(cfg), *bleu_options(cfg)], ROOT).cpu
        print(f"loop: {fs}: {dense} dense features; k-best decode {out[fs]['load']:.1f} s + "
              f"{out[fs]['kbest_per_sentence'] * 1000:.1f} ms/sentence, lattice {out[fs]['lattice_load']:.1f} s + "
              f"{out[fs]['lattice_per_sentence'] * 1000:.1f} ms/sentence", file=sys.stderr, flush=True)
    return out


# ---------------------------------------------------------------- rows written and read back
def write_rows(path: pathlib.Path, rows: list[dict], label: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        wr = csv.DictWriter(fh, ROW_FIELDS, delimiter="\t", lineterminator="\n")
        wr.writeheader()
        for r in rows:
            wr.writerow({"label": label, **{k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in r.items()}})


LEGACY_FIELDS = ["label", "method", "it", "stage", "cpu", "wall", "peak_mib"]


def read_rows(path: pathlib.Path, legacy_sentences: int | None = None) -> list[dict]:
    """Rows written by ``--out``, with the rule and sentences of every row.

    Rows of the earlier loop.py (k-best methods only; no rule, no sentences; a decode's writing
    counted in its ``load``, which the estimate does not mind: it costs a decode's whole CPU) are read
    when ``legacy_sentences`` gives their dev sentences: the rule follows from method, iteration and
    stage as in :func:`kbest_iteration_commands`; the rows are marked ``legacy``.
    """
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        fields = set(reader.fieldnames or [])
        raw = list(reader)
    legacy = not {"rule", "sentences"} <= fields
    if legacy and not set(LEGACY_FIELDS) <= fields:
        sys.exit(f"{path}: not a loop.py rows file (columns {', '.join(sorted(fields))})")
    if legacy and legacy_sentences is None:
        sys.exit(f"{path}: rows of an earlier loop.py (no rule or sentences column): give their dev sentences "
                 "with --legacy-sentences N (1014 unless it ran with --dev)")
    rows = []
    for r in raw:
        row = {**r, "it": int(r["it"]), "cpu": float(r["cpu"]), "wall": float(r["wall"]),
               "peak_mib": float(r["peak_mib"])}
        if legacy:
            decode = row["stage"] in ("load", *DECODE_PHASES)
            if row["method"] == "first":
                row["rule"] = "decode_first" if decode else "first_sample"
            elif row["it"] == 1:
                row["rule"] = "tune_first"
            else:
                row["rule"] = "decode_dev" if decode or row["stage"] == "score" else "tune"
            row["sentences"] = legacy_sentences
            row["legacy"] = True
        else:
            row["sentences"] = int(r["sentences"])
        rows.append(row)
    return rows


def combine_rows(measured: list[dict], earlier: list[dict]) -> tuple[list[dict], list[str]]:
    """This run's rows plus the earlier ones of methods not measured here (the shared first decode's
    rows of both are kept: they measure the same job)."""
    mine = {r["method"] for r in measured} - {"first"}
    replaced = sorted({r["method"] for r in earlier if r["method"] in mine})
    kept = [r for r in earlier if r["method"] not in mine]
    notes = [f"--rows: {', '.join(replaced)} measured again here, the earlier rows dropped"] if replaced else []
    earlier_methods = sorted({r["method"] for r in kept} - {"first"})
    if earlier_methods:
        notes.append(f"--rows: {', '.join(earlier_methods)} from earlier measurements")
    return measured + kept, notes


# ---------------------------------------------------------------- the Table 4 estimate
def planned_jobs(target: str = "results/table4.tsv", configfile: pathlib.Path | None = None) -> dict[str, list[str]]:
    """``snakemake -n`` of the target under the default config (plus ``configfile`` over it): rule -> each
    job's wildcards."""
    extra = ["--configfile", str(configfile.resolve())] if configfile is not None else []
    with tempfile.TemporaryDirectory() as tmp:
        return parse_plan(_dry_run(pathlib.Path(tmp), extra, [target]))


def parse_plan(text: str) -> dict[str, list[str]]:
    """Rule -> the wildcards line of each of its jobs, from ``snakemake -n``'s output."""
    jobs: dict[str, list[str]] = {}
    for job in parse_listing(text):
        jobs.setdefault(job.rule, []).append(", ".join(f"{k}={v}" for k, v in job.wildcards.items()))
    return jobs


def wildcards_of(text: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in text.split(", ") if "=" in item)


# rules that cost about one small job (a Python start and a little work) each
KNOWN_SMALL = ("data_dev", "data_test", "data_train", "data_subsample", "init_weights", "select_best",
               "run_summary", "table")
# rules whose tuning cost is per method (and what a method without rows misses)
TUNE_RULES = ("tune_first", "tune", "tune_lattice", "mira_shard", "mira_mix")
# tuners whose step is one line search per direction (the dense features' axes): scaled by them
DIRECTION_SCALED = ("lbmert",)


@dataclasses.dataclass
class Estimate:
    """Core-seconds per rule, the longest run's chain (seconds), notes, and what is not measured."""

    per_rule: dict[str, float]
    chain: float
    notes: list[str]
    incomplete: list[str]


def _curve(rows: list[dict], method: str, rules: tuple[str, ...], fixed: float) -> dict[int, float]:
    """Per iteration: the method's per-sentence CPU in ``rules`` (each command's CPU less ``fixed``),
    summed over the stages of one job (pool add + step), averaged over repeated measurements."""
    per: dict[tuple[int, str], list[float]] = {}
    for r in rows:
        if r["method"] == method and r["rule"] in rules and r["stage"] in ("merge", "tune"):
            per.setdefault((r["it"], r["stage"]), []).append(max(r["cpu"] - fixed, 0.0) / max(r["sentences"], 1))
    curve: dict[int, float] = {}
    for (it, _), values in per.items():
        curve[it] = curve.get(it, 0.0) + sum(values) / len(values)
    return curve


def _shard_curve(rows: list[dict], method: str, fixed: float) -> dict[int, float]:
    """Per epoch: the shard jobs' CPU less ``fixed`` (their loading) each, per sentence decoded."""
    per: dict[int, list[float]] = {}
    sents: dict[int, int] = {}
    for r in rows:
        if r["method"] == method and r["rule"] == "mira_shard":
            per.setdefault(r["it"], []).append(max(r["cpu"] - fixed, 0.0))
            sents[r["it"]] = sents.get(r["it"], 0) + r["sentences"]
    return {it: sum(v) / max(sents[it], 1) for it, v in per.items()}


def extrapolate(curve: dict[int, float], it: int, grows: bool) -> float:
    """The cost of iteration ``it`` from the measured ones: measured as is; between two measured
    iterations, linear; after the last measured one, if the cost ``grows`` (pools, aggregated paths)
    the last one plus the mean growth per iteration seen from iteration 2 on (never negative; none
    with fewer than two measured iterations >= 2), else the mean of the measured ones."""
    if it in curve:
        return curve[it]
    its = sorted(curve)
    if it < its[0]:
        return curve[its[0]]
    if it < its[-1]:
        lo = max(i for i in its if i < it)
        hi = min(i for i in its if i > it)
        return curve[lo] + (curve[hi] - curve[lo]) * (it - lo) / (hi - lo)
    if not grows:
        return sum(curve.values()) / len(curve)
    return curve[its[-1]] + _slope(curve) * (it - its[-1])


def _slope(curve: dict[int, float]) -> float:
    later = sorted(i for i in curve if i >= 2)
    if len(later) < 2:
        return 0.0
    return max((curve[later[-1]] - curve[later[0]]) / (later[-1] - later[0]), 0.0)


def _extrapolation_note(method: str, what: str, curve: dict[int, float], planned: int, grows: bool,
                        sentences: set[int]) -> str | None:
    its = sorted(curve)
    measured = f"{what} measured at iteration{'s' if len(its) > 1 else ''} {_ranges(its)} on " \
               f"{'/'.join(map(str, sorted(sentences)))} dev sentences (per sentence to the dev set's)"
    if its[-1] >= planned:
        return f"{method}: {measured}"
    rest = f"iterations {its[-1] + 1}..{planned}" if its[-1] + 1 < planned else f"iteration {planned}"
    if not grows:
        return f"{method}: {measured}; {rest} take the mean of the measured ones (the same sentences decoded)"
    slope = _slope(curve)
    later = [i for i in its if i >= 2]
    if len(later) < 2:
        return (f"{method}: {measured}; {rest} take iteration {its[-1]}'s cost: NO growth measured (needs two "
                f"iterations >= 2), but the pool / aggregated paths grow, so this is a LOWER BOUND")
    last = curve[its[-1]]
    return (f"{method}: {measured}; {rest} extrapolated linearly from iterations {later[0]}..{later[-1]} "
            f"(+{slope / last if last else 0.0:.1%} of iteration {its[-1]}'s cost per iteration: the pool / "
            f"aggregated paths grow; fewer new ones join each iteration as the weights settle, so an upper "
            f"bound if the cost per hypothesis / path stays the same)")


def _ranges(its: list[int]) -> str:
    return f"{its[0]}..{its[-1]}" if len(its) > 1 and its[-1] - its[0] + 1 == len(its) else ",".join(map(str, its))


def estimate(jobs: dict[str, list[str]], rows: list[dict], factors: dict[str, dict[str, float]],
             build_seconds: float, dev_sentences: int, test_sentences: int, cfg: dict,
             threads: int = 2) -> Estimate:
    """Core-seconds per rule for the planned ``jobs`` (rule -> wildcards lines, :func:`parse_plan`) from
    the measured ``rows`` (each with its rule, iteration, stage, CPU and sentences) and the feature
    sets' short decodes (:func:`feature_set_factors`). How each rule is costed: the module docstring.
    """
    notes: list[str] = []
    incomplete: list[str] = []
    prob = cfg["subsample"]["prob"]
    scores = [r["cpu"] for r in rows if r["stage"] == "score"]
    if not scores:
        raise ValueError("no measured scoring (smtlib bleu) in the rows")
    small_job = sorted(scores)[len(scores) // 2]  # a Python start + a little work (the median: robust to a
    # first call that compiles numba's cache)

    def decode_rate(rules: tuple[str, ...], phases: tuple[str, ...], fixed: float) -> float | None:
        """CPU per sentence of the measured decodes of ``rules``: their ``phases`` less ``fixed`` each."""
        decodes = [r for r in rows if r["rule"] in rules and r["stage"] == "search"]
        if not decodes:
            return None
        cpu = sum(r["cpu"] for r in rows if r["rule"] in rules and r["stage"] in phases)
        return max(cpu - fixed * len(decodes), 0.0) / sum(r["sentences"] for r in decodes)

    medium = factors["medium"]
    whole = ("load", *DECODE_PHASES)  # a decode command's whole CPU
    k_rate = decode_rate(("decode_first", "decode_dev"), whole, medium["load"])
    best_rate = decode_rate(("decode_first", "decode_dev"), ("options", "search"), 0.0)
    l_rate = decode_rate(("decode_dev_lattice",), whole, medium["lattice_load"])
    if k_rate is None:
        raise ValueError("no measured k-best decode in the rows (the shared first decode always runs)")
    scale_k = k_rate / medium["kbest_per_sentence"]
    scale_best = best_rate / medium["best_per_sentence"]
    if l_rate is None:
        scale_l = 1.0
        if "decode_dev_lattice" in jobs:
            notes.append("lattice decodes NOT measured under tuning: the short decode's rate with the initial "
                         "weights is used")
    else:
        scale_l = l_rate / medium["lattice_per_sentence"]
    # a shard job's fixed part: a one-sentence shard job's CPU (else a one-sentence decode's)
    shard_load = medium.get("shard_load", medium["load"])

    planned_its: dict[str, int] = {}
    lattice_methods: set[str] = set()
    online_methods: set[str] = set()
    for rule in TUNE_RULES + ("decode_dev_lattice",):
        for text in jobs.get(rule, []):
            w = wildcards_of(text)
            if rule in TUNE_RULES:
                planned_its[w["method"]] = max(planned_its.get(w["method"], 0), int(w["it"]))
            if rule in ("decode_dev_lattice", "tune_lattice"):
                lattice_methods.add(w["method"])
            if rule in ("mira_shard", "mira_mix"):
                online_methods.add(w["method"])
    curves: dict[str, dict[int, float]] = {}
    shard_curves: dict[str, dict[int, float]] = {}
    mix_cost: dict[str, float] = {}
    for method in sorted(planned_its):
        mine = [r for r in rows if r["method"] == method]
        sentences = {r["sentences"] for r in mine if r["rule"] in TUNE_RULES and r["rule"] != "mira_shard"}
        if method in online_methods and any(r["rule"] == "mira_shard" for r in mine):
            shard_curves[method] = _shard_curve(rows, method, shard_load)
            mixes = [r["cpu"] for r in mine if r["rule"] == "mira_mix"]
            mix_cost[method] = sum(mixes) / len(mixes) if mixes else small_job
            notes.append(_extrapolation_note(method, "shard jobs", shard_curves[method], planned_its[method], False,
                                             sentences)
                         + f"; a shard job's fixed part {shard_load:.1f} s ("
                         + ("a one-sentence shard job)" if "shard_load" in medium else "a one-sentence decode's)"))
            continue
        curve = _curve(rows, method, ("tune_first", "tune", "tune_lattice"), small_job)
        later = {it: c for it, c in curve.items() if it >= 2 or method in lattice_methods}
        if not later or method in online_methods:
            incomplete.append(f"{method} not measured")
            notes.append(f"{method}: NOT MEASURED (no rows here or in --rows): its tuning jobs cost nothing in this "
                         f"estimate, which is therefore too low")
            continue
        curves[method] = curve
        note = _extrapolation_note(method, "tune", later, planned_its[method], True, sentences)
        if method in DIRECTION_SCALED:
            note += (f"; on a feature set with fewer dense features its step is scaled by their share "
                     f"(one line search per direction; Small {factors['small']['dense']}/{medium['dense']})")
        notes.append(note)

    def sentences(w: dict[str, str]) -> float:
        return dev_sentences if w.get("sample", "0") == "0" else prob * dev_sentences

    def tune_step(method: str, it: int, fs: str) -> float:
        curve = curves.get(method)
        if curve is None:
            return 0.0
        if it == 1 and method not in lattice_methods:
            value = curve.get(1)
            if value is None:
                incomplete.append(f"{method} iteration 1 not measured")
                return 0.0
        else:
            value = extrapolate({i: c for i, c in curve.items() if i >= 2 or method in lattice_methods}, it, True)
        if method in DIRECTION_SCALED:
            value *= factors[fs]["dense"] / medium["dense"]
        return value

    # first_sample: its two merge commands (slice, pool of iteration 1) per sentence, per measured job
    first_merge = sum(max(r["cpu"] - small_job, 0.0) / r["sentences"] for r in rows
                      if r["rule"] == "first_sample" and r["stage"] == "merge")
    first_merge /= max(sum(1 for r in rows if r["rule"] == "first_sample" and r["stage"] == "score"), 1)
    per_rule: dict[str, float] = {}
    run_chain: dict[str, float] = {}
    shared_chain: dict[str, float] = {}  # per system, per (system, sample): the jobs every run waits for
    unknown: dict[str, int] = {}
    for rule, items in jobs.items():
        total = 0.0
        for text in items:
            w = wildcards_of(text)
            fs = w.get("fs", "medium")
            f = factors.get(fs, medium)
            span_divisor = 1.0
            if rule == "decode_first":
                cost = threads * f["load"] + dev_sentences * f["kbest_per_sentence"] * scale_k
                span_divisor = threads
            elif rule == "first_sample":
                cost = sentences(w) * first_merge + 3 * small_job
            elif rule == "decode_dev":
                cost = threads * f["load"] + sentences(w) * f["kbest_per_sentence"] * scale_k + small_job
                span_divisor = threads
            elif rule == "decode_dev_lattice":
                cost = threads * f["lattice_load"] + sentences(w) * f["lattice_per_sentence"] * scale_l + small_job
                span_divisor = threads
            elif rule == "decode_test":
                cost = threads * f["load"] + test_sentences * f["best_per_sentence"] * scale_best + small_job
                span_divisor = threads
            elif rule == "tune_first":
                cost = small_job + sentences(w) * tune_step(w["method"], 1, fs)
            elif rule == "tune":
                cost = 2 * small_job + sentences(w) * tune_step(w["method"], int(w["it"]), fs)
            elif rule == "tune_lattice":
                cost = small_job + sentences(w) * tune_step(w["method"], int(w["it"]), fs)
            elif rule == "mira_shard":
                shards = len(jobs["mira_shard"]) / max(len(jobs.get("mira_mix", [])), 1)
                curve = shard_curves.get(w["method"])
                per = 0.0 if curve is None else extrapolate(curve, int(w["it"]), False)
                cost = (f["load"] + shard_load - medium["load"]
                        + sentences(w) / shards * per * f["kbest_per_sentence"] / medium["kbest_per_sentence"])
                span_divisor = shards
            elif rule == "mira_mix":
                cost = mix_cost.get(w["method"], 0.0)
            elif rule.startswith("train_"):
                cost = 0.0  # system building is counted once below
            else:
                cost = small_job
                if rule not in KNOWN_SMALL:
                    unknown[rule] = len(items)
            total += cost
            span = cost / span_divisor
            if "method" in w and "sample" in w:
                key = "/".join(w[k] for k in ("pair", "fs", "method", "sample") if k in w)
                run_chain[key] = run_chain.get(key, 0.0) + span
            elif rule in ("decode_first", "first_sample"):
                key = "/".join(w[k] for k in ("pair", "fs", "sample") if k in w)
                shared_chain[key] = shared_chain.get(key, 0.0) + span
        per_rule[rule] = total
    for key in run_chain:  # a run (not a lattice one) waits for its system's first decode and its share of it
        parts = key.split("/")
        if parts[-2] in lattice_methods:
            continue
        pair_fs, sample = parts[:-2], parts[-1]
        run_chain[key] += shared_chain.get("/".join(pair_fs), 0.0) + shared_chain.get("/".join([*pair_fs, sample]), 0.0)
    per_rule["train (build.json)"] = build_seconds
    for rule, count in sorted(unknown.items()):
        print(f"loop: WARNING: UNKNOWN rule {rule} ({count} jobs) costed as small jobs", file=sys.stderr)
        notes.append(f"UNKNOWN rule {rule} ({count} jobs) costed as small jobs: teach estimate() its cost")
        incomplete.append(f"rule {rule} not costed")
    small = [r for r in KNOWN_SMALL if r in jobs]
    notes.append(f"small jobs ({small_job:.1f} s CPU each, one smtlib bleu): {', '.join(small)}")
    notes.append("decodes: a fixed part (a one-sentence decode's CPU with each system, held on the rule's "
                 "threads) + per sentence: Medium measured under tuning (each decode's CPU less the fixed part: "
                 f"k-best {k_rate * 1000:.1f} ms, lattice "
                 + (f"{l_rate * 1000:.1f} ms" if l_rate is not None else "not measured")
                 + "), Small and Big by their short decodes' ratio to Medium's; test sets at the k-best "
                   "decode's options+search rate; k-best and lb-mira tune steps are Medium's on every feature set")
    return Estimate(per_rule, max(run_chain.values(), default=0.0), notes, list(dict.fromkeys(incomplete)))


# ---------------------------------------------------------------- main
def iterations_of(values: list[str]) -> dict[str, int]:
    out = {}
    for value in values:
        method, sep, n = value.partition("=")
        if not sep or not n.isdigit() or int(n) < 1:
            sys.exit(f"--iterations-of {value!r}: expected METHOD=N with N >= 1")
        out[method] = int(n)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=pathlib.Path, default=ROOT / "resources" / "benchmarks" / "models")
    ap.add_argument("--methods", nargs="*", default=["kbmira", "mert"],
                    help="methods to measure (none: only the estimate from --rows and the short decodes)")
    ap.add_argument("--iterations", type=int, help="tuning iterations (default: the workflow's)")
    ap.add_argument("--iterations-of", nargs="+", default=[], metavar="METHOD=N",
                    help="fewer iterations for an expensive method (e.g. lbmert=2); the estimate extrapolates")
    ap.add_argument("--dev", type=int, help="first N dev sentences only (default: all 1,014)")
    ap.add_argument("--parallel", type=int, default=1, help="methods run at once (each uses one core)")
    ap.add_argument("--factor-sentences", type=int, default=100)
    ap.add_argument("--work", type=pathlib.Path, help="working directory (default: a temporary one)")
    ap.add_argument("--out", type=pathlib.Path, help="write this run's per-iteration stage rows here (TSV)")
    ap.add_argument("--rows", type=pathlib.Path, nargs="+", default=[],
                    help="rows written earlier by --out, for the methods not measured in this run")
    ap.add_argument("--legacy-sentences", type=int,
                    help="dev sentences of --rows files written by an earlier loop.py (no sentences column)")
    ap.add_argument("--label", default="", help="a label written into the output rows (e.g. before/after)")
    ap.add_argument("--configfile", type=pathlib.Path,
                    help="a YAML file merged over config/config.yaml, as snakemake --configfile (e.g. another "
                         "decoder search); used for the measured runs and the planned jobs alike")
    args = ap.parse_args()
    cfg = workflow_config(args.configfile)
    default_iterations = args.iterations or cfg["tuning"]["iterations"]
    fewer = iterations_of(args.iterations_of)
    for method in [*args.methods, *fewer]:
        loop_kind(method)  # an unknown method fails here, before anything runs
    iterations = {m: fewer.get(m, default_iterations) for m in args.methods}
    earlier = [r for path in args.rows for r in read_rows(path, args.legacy_sentences)]
    dirs = find_models(args.models)
    tmp = None
    if args.work is None:
        tmp = tempfile.TemporaryDirectory(prefix="loop-")
        args.work = pathlib.Path(tmp.name)
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    src, ref, ids = dev_data(work, args.dev)
    n_dev = len(src.read_text(encoding="utf-8").splitlines())
    if not args.methods and not earlier:
        sys.exit("nothing to estimate from: give --methods to measure or --rows measured earlier")
    tree = work / "tree"
    lay_out(tree, dirs["medium"], src, ref, ids, cfg)
    data = Inputs(tree, cfg, n_dev)
    t0 = time.perf_counter()
    rows = []
    if args.methods:
        jobs = planned_loop(cfg, iterations)
        rows = shared_first(data, jobs)
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.parallel) as ex:
            futures = [ex.submit(tuning_run, m, data, jobs) for m in args.methods]
            rows += [r for f in futures for r in f.result()]
    wall = time.perf_counter() - t0
    factors = feature_set_factors(dirs, src, ref, cfg, min(args.factor_sentences, n_dev), work)
    if args.out:
        write_rows(args.out, rows, args.label)

    if args.methods:
        its = ", ".join(f"{m} {iterations[m]}" for m in args.methods)
        print(f"\none tuning run per method: Medium fr-en, {n_dev} dev sentences, k={cfg['tuning']['k']}, "
              f"lattice beam {cfg['tuning']['lattice_beam']}, iterations ({its}) +1 decode, {wall:.0f} s wall with "
              f"{args.parallel} at once")
        print(f"{'method':<8} " + " ".join(f"{s:>8}" for s in STAGES) + f" {'total':>8} {'peak MiB':>9} {'best dev':>9}")
        for method in ["first", *args.methods]:
            mine = [r for r in rows if r["method"] == method]
            per = {s: sum(r["cpu"] for r in mine if r["stage"] == s) for s in STAGES}
            best = f"{max(dev_bleus(tree, method, iterations[method])):9.2f}" if method != "first" else f"{'':9}"
            print(f"{method:<8} " + " ".join(f"{per[s]:8.1f}" for s in STAGES) + f" {sum(per.values()):8.1f}"
                  f" {max(r['peak_mib'] for r in mine):9.0f} {best}")
        print("(CPU seconds per stage, summed over iterations; peak = largest child RSS; first = the shared first "
              "decode and the pool of iteration 1, done once for all methods; mira: tune = its shard jobs, "
              "merge = its mixing)")
        for method in args.methods:
            mine = [r for r in rows if r["method"] == method]
            last = max(r["it"] for r in mine if r["stage"] in ("tune", "merge"))
            one = {s: sum(r["cpu"] for r in mine if r["stage"] == s and r["it"] == last) for s in STAGES}
            print(f"{method} iteration {last}: " + ", ".join(f"{s} {one[s]:.1f}" for s in STAGES))

    all_rows, notes = combine_rows(rows, earlier)
    if any(r.get("legacy") for r in earlier):
        notes.append(f"--rows of an earlier loop.py read as {args.legacy_sentences} dev sentences each")
    jobs = planned_jobs(configfile=args.configfile)
    build = dirs["big"] / "build.json"
    build_seconds = json.loads(build.read_text())["total_seconds"] if build.exists() else 0.0
    est = estimate(jobs, all_rows, factors, build_seconds, 1014, 1000, cfg)
    if not build.exists():
        est.notes.append(f"no {build}: system building not counted")
    core_hours = sum(est.per_rule.values()) / 3600
    setting = f"default config + {args.configfile.name}" if args.configfile else "default config"
    print(f"\nTable 4 as planned by snakemake -n results/table4.tsv ({setting}): "
          f"{sum(len(v) for v in jobs.values())} jobs")
    for rule, sec in sorted(est.per_rule.items(), key=lambda x: -x[1]):
        count = len(jobs.get(rule, [])) or 1
        print(f"  {rule:<28} {count:6d} jobs {sec / 3600:8.2f} core-hours")
    for note in notes + est.notes:
        print(f"  note: {note}")
    print(f"  longest run's chain: {est.chain / 3600:.2f} h")
    flag = f" (incomplete: {'; '.join(est.incomplete)})" if est.incomplete else ""
    print(f"table4_core_hours: {core_hours:.1f}{flag}")
    print(f"table4_hours_8_cores: {max(core_hours / 8, est.chain / 3600):.1f}{flag}")
    print(f"table4_hours_2_cores: {max(core_hours / 2, est.chain / 3600):.1f}{flag}")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
