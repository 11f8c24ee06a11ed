"""One whole tuning run through the real commands, per stage, and the full Table 4 estimate from it.

Runs the tuning loop of ``rules/tune.smk`` for each ``--methods`` (default kbmira and mert) on the
Medium fr->en system, the full Multi30k dev set and the workflow's settings (``config/config.yaml``:
k, iterations, seed, decoder and BLEU options, method settings): the dev set is decoded once with
the initial weights (k-best and 1-best; shared by all methods, as ``decode_first``), cut
to the run's sub-sample (here the whole dev set, as ``first_sample``: slice, score, start the
binary pool); iteration 1 tunes on that pool; iteration ``it >= 2`` decodes the dev set with the
weights of ``it-1``, scores the 1-best, adds the k-best list to the pool of ``it-1`` (``smtlib kbest
add``: parse the new list, score its new hypotheses) and runs ``smtlib tune --pool``; iteration
N+1 only decodes and scores.
Every command runs as its own child process and is measured with ``os.wait4`` (CPU = user + system,
peak RSS); ``smtlib decode`` runs with one process and reports its own phases (model loading,
options, search, k-best/lattice extraction), so the stages are

    load, options, search, kbest (inside decode), score (smtlib bleu), merge (slice + pool add,
    with the new hypotheses' BLEU statistics), tune.

The shared first decode is reported on its own line (``first``), not in the methods' sums.

The Table 4 estimate multiplies measured per-job costs by the number of jobs of each rule that
``snakemake -n`` plans for ``results/table4.tsv`` under the default configuration (so it follows
the workflow as it is: a shared first decode or incremental pools change the plan or the costs):
decoding costs are per sentence (medium measured here; small and big scaled by a short decode of
the first ``--factor-sentences`` dev sentences with each; a sub-sample's share of the first decode
decodes nothing), a decode job also holds ``threads`` cores while it loads the model (loading is
single-threaded), tuning costs (pool add + tune) are per method and iteration (methods not measured
here take kbmira's, as stated in the output), system building is taken from the model's
``build.json``. Hours on C cores = core-hours / C (the runs are independent
and pack well), but never less than the longest run's chain of jobs.

    python benchmarks/loop.py [--models DIR] [--methods kbmira mert] [--iterations N] [--dev N]
                              [--parallel 2] [--out benchmarks/results/loop.tsv] [--label before]

``--models`` holds ``fr-en-small``, ``fr-en-medium`` and ``fr-en-big`` model directories (default:
``resources/benchmarks/models``, built there from ``../shared/data`` with ``smtlib train`` when
missing). Last line: ``table4_hours_2_cores: X``.

Keep :func:`iteration_commands` in step with ``rules/tune.smk``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
# ../shared/data beside the clone (SMTLIB_SHARED_DATA overrides, e.g. for a git worktree elsewhere)
SHARED = pathlib.Path(os.environ.get("SMTLIB_SHARED_DATA", ROOT.parent / "shared" / "data"))
TOK = SHARED / "multi30k" / "tok"
STAGES = ("load", "options", "search", "kbest", "score", "merge", "tune")


# ---------------------------------------------------------------- measuring one command
@dataclasses.dataclass
class Measured:
    wall: float
    cpu: float
    peak_mib: float
    stderr: str


def measure(cmd: list[str], cwd: pathlib.Path, stdout: pathlib.Path | None = None) -> Measured:
    """Run ``cmd``; its wall time, CPU time (user + system) and peak RSS from ``os.wait4``.

    Standard output goes to ``stdout`` if given (e.g. ``smtlib bleu``'s JSON), else is discarded.
    """
    t0 = time.perf_counter()
    with tempfile.TemporaryFile(mode="w+") as err, open(stdout or os.devnull, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read()
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {shlex.join(cmd)}\n{text}")
    return Measured(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, text)


_PHASES = re.compile(r"model loaded in ([\d.]+) s(?:, options ([\d.]+) s, search ([\d.]+) s, kbest ([\d.]+) s)?")


def decode_phases(stderr: str, cpu: float) -> dict[str, float]:
    """Split a decode command's CPU seconds into load / options / search / kbest (its summary line).

    The decoder prints the CPU seconds of each phase of its loop (one process); everything else of
    the command's CPU time (start-up, loading, writing) counts as ``load``.
    """
    m = None
    for m in _PHASES.finditer(stderr):
        pass
    if m is None:
        raise SystemExit(f"no 'model loaded in' line in decode's stderr:\n{stderr[-2000:]}")
    load, opts, search, kbest = (float(g) if g is not None else None for g in m.groups())
    if opts is None:  # a decoder without phases: everything after loading counts as search
        loop = max(cpu - load, 0.0)
        return {"load": cpu - loop, "options": 0.0, "search": loop, "kbest": 0.0}
    loop = opts + search + kbest
    rest = max(cpu - loop, 0.0)
    return {"load": rest, "options": opts, "search": search, "kbest": kbest}


# ---------------------------------------------------------------- the workflow's settings
def workflow_config() -> dict:
    with open(ROOT / "config" / "config.yaml", encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def decoder_options(cfg: dict) -> list[str]:
    d = cfg["decoder"]
    opts = ["--stack-size", str(d["stack_size"]), "--distortion-limit", str(d["distortion_limit"]),
            "--table-limit", str(d["table_limit"])]
    for key, option in (("search", "--search"), ("pop_limit", "--pop-limit")):
        if key in d:
            opts += [option, str(d[key])]
    return opts


def bleu_options(cfg: dict) -> list[str]:
    return ["--tokenize", cfg["bleu"]["tokenize"]] + (["--lowercase"] if cfg["bleu"]["lowercase"] else [])


def tune_settings(cfg: dict, method: str) -> list[str]:
    out = []
    for key, value in (cfg.get("method_settings") or {}).get(method, {}).items():
        out += ["--set", f"{key}={value}"]
    return out


# ---------------------------------------------------------------- one tuning run
Command = tuple[str, list[str], "pathlib.Path | None"]  # stage, command, where its stdout goes


def first_commands(first: pathlib.Path, model: pathlib.Path, src: pathlib.Path, ref: pathlib.Path,
                   ids: pathlib.Path, init: pathlib.Path, cfg: dict) -> list[Command]:
    """The shared first decode (rule decode_first) and the sub-sample's share of it (rule first_sample)."""
    share = first / "s0"
    return [
        ("decode", ["smtlib", "decode", "--model", str(model), "--weights", str(init), "--input", str(src),
                    "--kbest", str(first / "dev.kbest.gz"), "--k", str(cfg["tuning"]["k"]),
                    "--output", str(first / "dev.1best"), "--jobs", "1", *decoder_options(cfg)], None),
        ("merge", ["smtlib", "kbest", "slice", "--ids", str(ids), "--kbest", str(first / "dev.kbest.gz"),
                   str(share / "dev.kbest.gz"), "--lines", str(first / "dev.1best"), str(share / "dev.1best")], None),
        ("score", ["smtlib", "bleu", "--refs", str(ref), "--hyps", str(share / "dev.1best"), *bleu_options(cfg)],
         share / "dev.bleu.json"),
        ("merge", ["smtlib", "kbest", "add", "--kbest", str(share / "dev.kbest.gz"), "--refs", str(ref),
                   *bleu_options(cfg), "--out", str(share / "dev.pool")], None),
    ]


def iteration_commands(it: int, run: pathlib.Path, first: pathlib.Path, method: str, model: pathlib.Path,
                       src: pathlib.Path, ref: pathlib.Path, init: pathlib.Path, cfg: dict,
                       last: bool) -> list[Command]:
    """The commands of iteration ``it`` of one run as rules/tune.smk runs them, each with its stage name.

    Iteration 1 (rule tune_first) tunes on the shared pool of :func:`first_commands`; iteration
    ``it >= 2`` decodes and scores (rule decode_dev), then adds its k-best list to the pool of
    ``it-1`` and tunes (rule tune); the last iteration only decodes and scores.
    """
    here = run / f"it{it}"
    prev = init if it == 1 else run / f"it{it - 1}" / "weights"
    seed = cfg["tuning"]["seed"] * 1000 + it
    tune = ["smtlib", "tune", method, "--refs", str(ref), "--init", str(prev), "--out", str(here / "weights"),
            "--info", str(here / "tune.json"), "--seed", str(seed), *tune_settings(cfg, method), *bleu_options(cfg)]
    if it == 1:
        return [("tune", [*tune, "--pool", str(first / "s0" / "dev.pool")], None)]
    cmds: list[Command] = [
        ("decode", ["smtlib", "decode", "--model", str(model), "--weights", str(prev), "--input", str(src),
                    "--kbest", str(here / "dev.kbest.gz"), "--k", str(cfg["tuning"]["k"]),
                    "--output", str(here / "dev.1best"), "--jobs", "1", *decoder_options(cfg)], None),
        ("score", ["smtlib", "bleu", "--refs", str(ref), "--hyps", str(here / "dev.1best"), *bleu_options(cfg)],
         here / "dev.bleu.json"),
    ]
    if last:
        return cmds
    previous = first / "s0" / "dev.pool" if it == 2 else run / f"it{it - 1}" / "dev.pool"
    cmds += [
        ("merge", ["smtlib", "kbest", "add", "--pool", str(previous), "--kbest", str(here / "dev.kbest.gz"),
                   "--refs", str(ref), *bleu_options(cfg), "--out", str(here / "dev.pool")], None),
        ("tune", [*tune, "--pool", str(here / "dev.pool")], None),
    ]
    return cmds


def run_commands(cmds: list[Command], label: str, it: int, log: pathlib.Path) -> list[dict]:
    """Run and measure ``cmds``: one row per stage (a decode is split into its phases)."""
    rows = []
    for stage, cmd, stdout in cmds:
        if stdout is not None:
            stdout.parent.mkdir(parents=True, exist_ok=True)
        m = measure(cmd, ROOT, stdout)
        if stage == "decode":
            log.write_text(m.stderr, encoding="utf-8")
            for name, sec in decode_phases(m.stderr, m.cpu).items():
                rows.append({"method": label, "it": it, "stage": name, "cpu": sec,
                             "wall": sec * m.wall / max(m.cpu, 1e-9), "peak_mib": m.peak_mib})
        else:
            rows.append({"method": label, "it": it, "stage": stage, "cpu": m.cpu, "wall": m.wall,
                         "peak_mib": m.peak_mib})
    print(f"loop: {label} it{it}: " + ", ".join(f"{r['stage']} {r['cpu']:.1f}" for r in rows),
          file=sys.stderr, flush=True)
    return rows


def shared_first(model: pathlib.Path, src: pathlib.Path, ref: pathlib.Path, ids: pathlib.Path, init: pathlib.Path,
                 cfg: dict, work: pathlib.Path) -> list[dict]:
    """The shared first decode and the pool of iteration 1, measured (rows labelled ``first``)."""
    first = work / "first"
    (first / "s0").mkdir(parents=True, exist_ok=True)
    return run_commands(first_commands(first, model, src, ref, ids, init, cfg), "first", 1, first / "decode.log")


def tuning_run(method: str, model: pathlib.Path, src: pathlib.Path, ref: pathlib.Path, init: pathlib.Path,
               cfg: dict, iterations: int, work: pathlib.Path) -> list[dict]:
    """Every iteration's stages: one row per (iteration, stage) with CPU, wall and peak memory."""
    run = work / method
    rows = []
    for it in range(1, iterations + 2):
        (run / f"it{it}").mkdir(parents=True, exist_ok=True)
        cmds = iteration_commands(it, run, work / "first", method, model, src, ref, init, cfg,
                                  last=it == iterations + 1)
        rows += run_commands(cmds, method, it, run / f"it{it}" / "decode.log")
    return rows


def dev_bleus(work: pathlib.Path, method: str, iterations: int) -> list[float]:
    paths = [work / "first" / "s0" / "dev.bleu.json"]
    paths += [work / method / f"it{i}" / "dev.bleu.json" for i in range(2, iterations + 2)]
    return [json.loads(p.read_text())["score"] for p in paths]


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


def feature_set_factors(dirs: dict[str, pathlib.Path], src: pathlib.Path, cfg: dict, n: int,
                        work: pathlib.Path) -> dict[str, dict[str, float]]:
    """Per feature set: load CPU and per-sentence CPU (k-best and 1-best) on the first ``n`` sentences."""
    sample = work / "factor.src"
    sample.write_text("".join(src.read_text(encoding="utf-8").splitlines(keepends=True)[:n]), encoding="utf-8")
    out = {}
    for fs, model in dirs.items():
        init = work / f"init.{fs}.weights"
        subprocess.run(["smtlib", "data", "init-weights", "--model", str(model), "--out", str(init), "--ones",
                        *cfg["tuning"]["init_ones"]], check=True, capture_output=True)
        m = measure(["smtlib", "decode", "--model", str(model), "--weights", str(init), "--input", str(sample),
                     "--kbest", str(work / f"factor.{fs}.kbest.gz"), "--k", str(cfg["tuning"]["k"]),
                     "--output", str(work / f"factor.{fs}.1best"), "--jobs", "1", *decoder_options(cfg)], ROOT)
        ph = decode_phases(m.stderr, m.cpu)
        out[fs] = {"load": ph["load"], "kbest_per_sentence": (ph["options"] + ph["search"] + ph["kbest"]) / n,
                   "best_per_sentence": (ph["options"] + ph["search"]) / n, "peak_mib": m.peak_mib}
        print(f"loop: {fs}: load {ph['load']:.1f} s, {out[fs]['kbest_per_sentence'] * 1000:.1f} ms/sentence",
              file=sys.stderr, flush=True)
    return out


# ---------------------------------------------------------------- the Table 4 estimate
def planned_jobs(target: str = "results/table4.tsv") -> dict[str, list[str]]:
    """``snakemake -n`` of the target under the default config: rule -> each job's wildcards."""
    with tempfile.TemporaryDirectory() as tmp:
        res = subprocess.run(["snakemake", "-n", "-s", str(ROOT / "Snakefile"), "-d", tmp, "--cores", "8",
                              "--config", f"data_dir={SHARED}", "--", target], capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"snakemake -n failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    jobs: dict[str, list[str]] = {}
    rule = None
    for line in res.stdout.splitlines():
        line = line.strip()
        m = re.fullmatch(r"(?:local)?rule (\w+):", line)
        if m:
            rule = m.group(1)
            jobs.setdefault(rule, []).append("")
        elif rule and line.startswith("wildcards:"):
            jobs[rule][-1] = line[len("wildcards:"):].strip()
        elif not line:
            rule = None
    return jobs


def wildcards_of(text: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in text.split(", ") if "=" in item)


def estimate(jobs: dict[str, list[str]], rows: list[dict], factors: dict[str, dict[str, float]],
             build_seconds: float, measured_sentences: int, dev_sentences: int, test_sentences: int, cfg: dict,
             threads: int = 2) -> tuple[dict[str, float], float, list[str]]:
    """Core-seconds per rule for the planned jobs, the longest run's chain, and the assumptions made.

    Per-sentence costs come from the ``measured_sentences`` of the measured runs and are applied to
    the ``dev_sentences`` of the real dev set (and its sub-samples). Rules: ``decode_first`` (the
    full dev set, once per system), ``first_sample`` (slice, score and the pool of iteration 1; no
    decoding), ``tune_first`` (iteration 1's step), ``decode_dev`` and ``tune`` (pool add + step) of
    iterations >= 2, ``decode_test``; any other rule costs a small job (about one scoring).
    """
    notes = []
    prob = cfg["subsample"]["prob"]
    methods = sorted({r["method"] for r in rows} - {"first"})

    def mean_cpu(method: str, stage: str, first_iteration: bool) -> float | None:
        its = [r["cpu"] for r in rows if r["method"] == method and r["stage"] == stage
               and (r["it"] == 1) == first_iteration]
        return sum(its) / len(its) / measured_sentences if its else None  # per iteration, per dev sentence

    tune1_cpu = {m: mean_cpu(m, "tune", True) for m in methods}
    tune_cpu = {m: mean_cpu(m, "tune", False) or tune1_cpu[m] for m in methods}
    merge_cpu = {m: mean_cpu(m, "merge", False) or 0.0 for m in methods}
    first_merge = sum(r["cpu"] for r in rows if r["method"] == "first" and r["stage"] == "merge") / measured_sentences
    score_cpu = [r["cpu"] for r in rows if r["stage"] == "score"]
    score = sum(score_cpu) / len(score_cpu)
    small_job = score  # a Python start + a little work: the other small jobs cost about a scoring
    medium_k = factors["medium"]["kbest_per_sentence"]
    measured_k = (sum(r["cpu"] for r in rows if r["stage"] in ("options", "search", "kbest"))
                  / sum(1 for r in rows if r["stage"] == "search") / measured_sentences)
    scale = measured_k / medium_k  # the factor sample is the first sentences; rescale to the whole dev set
    per_rule: dict[str, float] = {}
    run_chain: dict[str, float] = {}
    shared_chain: dict[str, float] = {}  # per system, per (system, sample): the jobs every run waits for
    assumed = set()

    def sentences(w: dict[str, str]) -> float:
        return dev_sentences if w.get("sample", "0") == "0" else prob * dev_sentences

    def per_method(table: dict[str, float], method: str) -> float:
        if method not in table:
            assumed.add(method)
        return table.get(method, table.get("kbmira", next(iter(table.values()))))

    for rule, items in jobs.items():
        total = 0.0
        for text in items:
            w = wildcards_of(text)
            fs = w.get("fs", "medium")
            f = factors.get(fs, factors["medium"])
            if rule == "decode_first":
                cost = threads * f["load"] + dev_sentences * f["kbest_per_sentence"] * scale
            elif rule == "first_sample":
                cost = sentences(w) * first_merge + score
            elif rule == "decode_dev":
                cost = threads * f["load"] + sentences(w) * f["kbest_per_sentence"] * scale + score
            elif rule == "decode_test":
                cost = threads * f["load"] + test_sentences * f["best_per_sentence"] * scale + score
            elif rule == "tune_first":
                cost = sentences(w) * per_method(tune1_cpu, w["method"]) + small_job
            elif rule == "tune":
                cost = sentences(w) * (per_method(tune_cpu, w["method"]) + per_method(merge_cpu, w["method"])) + small_job
            elif rule.startswith("train_"):
                cost = 0.0  # system building is counted once below
            else:
                cost = small_job
            total += cost
            span = cost / (threads if rule.startswith("decode") else 1)
            if "method" in w and "sample" in w:
                key = "/".join(w[k] for k in ("pair", "fs", "method", "sample") if k in w)
                run_chain[key] = run_chain.get(key, 0.0) + span
            elif rule in ("decode_first", "first_sample"):
                key = "/".join(w[k] for k in ("pair", "fs", "sample") if k in w)
                shared_chain[key] = shared_chain.get(key, 0.0) + span
        per_rule[rule] = total
    for key in run_chain:  # a run waits for its system's first decode and its sample's share of it
        pair_fs = key.split("/")[:-2]
        sample = key.split("/")[-1]
        run_chain[key] += shared_chain.get("/".join(pair_fs), 0.0) + shared_chain.get("/".join([*pair_fs, sample]), 0.0)
    per_rule["train (build.json)"] = build_seconds
    if assumed:
        notes.append(f"tune cost of {', '.join(sorted(assumed))} not measured here: kbmira's per iteration assumed")
    notes.append("small/big decoding scaled from a short decode of each; test sets decoded 1-best at the "
                 "measured options+search rate")
    return per_rule, max(run_chain.values(), default=0.0), notes


# ---------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=pathlib.Path, default=ROOT / "resources" / "benchmarks" / "models")
    ap.add_argument("--methods", nargs="+", default=["kbmira", "mert"])
    ap.add_argument("--iterations", type=int, help="tuning iterations (default: the workflow's)")
    ap.add_argument("--dev", type=int, help="first N dev sentences only (default: all 1,014)")
    ap.add_argument("--parallel", type=int, default=1, help="methods run at once (each uses one core)")
    ap.add_argument("--factor-sentences", type=int, default=100)
    ap.add_argument("--work", type=pathlib.Path, help="working directory (default: a temporary one)")
    ap.add_argument("--out", type=pathlib.Path, help="write the per-iteration stage rows here (TSV)")
    ap.add_argument("--label", default="", help="a label written into the output rows (e.g. before/after)")
    args = ap.parse_args()
    cfg = workflow_config()
    iterations = args.iterations or cfg["tuning"]["iterations"]
    dirs = find_models(args.models)
    tmp = None
    if args.work is None:
        tmp = tempfile.TemporaryDirectory(prefix="loop-")
        args.work = pathlib.Path(tmp.name)
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    src, ref, ids = dev_data(work, args.dev)
    n_dev = len(src.read_text(encoding="utf-8").splitlines())
    init = work / "init.weights"
    subprocess.run(["smtlib", "data", "init-weights", "--model", str(dirs["medium"]), "--out", str(init),
                    "--ones", *cfg["tuning"]["init_ones"]], check=True, capture_output=True)
    t0 = time.perf_counter()
    rows = shared_first(dirs["medium"], src, ref, ids, init, cfg, work)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.parallel) as ex:
        futures = [ex.submit(tuning_run, m, dirs["medium"], src, ref, init, cfg, iterations, work)
                   for m in args.methods]
        rows += [r for f in futures for r in f.result()]
    wall = time.perf_counter() - t0
    factors = feature_set_factors(dirs, src, cfg, min(args.factor_sentences, n_dev), work)

    if args.out:
        import csv

        args.out.parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "w", encoding="utf-8", newline="") as fh:
            wr = csv.DictWriter(fh, ["label", "method", "it", "stage", "cpu", "wall", "peak_mib"], delimiter="\t")
            wr.writeheader()
            for r in rows:
                wr.writerow({"label": args.label, **{k: (f"{v:.3f}" if isinstance(v, float) else v)
                                                     for k, v in r.items()}})

    print(f"\none tuning run per method: Medium fr-en, {n_dev} dev sentences, k={cfg['tuning']['k']}, "
          f"{iterations} iterations (+1 decode), {wall:.0f} s wall with {args.parallel} at once")
    print(f"{'method':<8} " + " ".join(f"{s:>8}" for s in STAGES) + f" {'total':>8} {'peak MiB':>9} {'best dev':>9}")
    for method in ["first", *args.methods]:
        mine = [r for r in rows if r["method"] == method]
        per = {s: sum(r["cpu"] for r in mine if r["stage"] == s) for s in STAGES}
        best = f"{max(dev_bleus(work, method, iterations)):9.2f}" if method != "first" else f"{'':9}"
        print(f"{method:<8} " + " ".join(f"{per[s]:8.1f}" for s in STAGES) + f" {sum(per.values()):8.1f}"
              f" {max(r['peak_mib'] for r in mine):9.0f} {best}")
    print("(CPU seconds per stage, summed over iterations; peak = largest child RSS; first = the shared first "
          "decode and the pool of iteration 1, done once for all methods)")
    for method in args.methods:
        mine = [r for r in rows if r["method"] == method]
        last = max(r["it"] for r in mine if r["stage"] == "tune")
        one = {s: sum(r["cpu"] for r in mine if r["stage"] == s and r["it"] == last) for s in STAGES}
        print(f"{method} iteration {last}: " + ", ".join(f"{s} {one[s]:.1f}" for s in STAGES))

    jobs = planned_jobs()
    build = dirs["big"] / "build.json"
    build_seconds = json.loads(build.read_text())["total_seconds"] if build.exists() else 0.0
    per_rule, chain, notes = estimate(jobs, rows, factors, build_seconds, n_dev, 1014, 1000, cfg)
    core_hours = sum(per_rule.values()) / 3600
    print(f"\nTable 4 as planned by snakemake -n results/table4.tsv (default config): "
          f"{sum(len(v) for v in jobs.values())} jobs")
    for rule, sec in sorted(per_rule.items(), key=lambda x: -x[1]):
        count = len(jobs.get(rule, [])) or 1
        print(f"  {rule:<28} {count:6d} jobs {sec / 3600:8.2f} core-hours")
    for note in notes:
        print(f"  note: {note}")
    print(f"  longest run's chain: {chain / 3600:.2f} h")
    print(f"table4_core_hours: {core_hours:.1f}")
    print(f"table4_hours_8_cores: {max(core_hours / 8, chain / 3600):.1f}")
    print(f"table4_hours_2_cores: {max(core_hours / 2, chain / 3600):.1f}")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
