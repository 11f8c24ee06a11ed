"""Where one lb-mert step's time and memory go (issue 43's first request): a profile on real inputs.

A finished lb-mert run of the workflow (``--run-dir``, e.g. ``results/table6-run``; by default its
ja-en Small run ``results/tune/ja-en/small/lbmert/default/s0``) keeps every iteration's weights,
aggregated paths (``paths.kbest.gz``) and ``tune.json``, but not its lattices (temporary). For each
``--iterations`` N this script

1. rebuilds iteration N's inputs in a scratch directory: the dev lattice, decoded with the weights
   of iteration N-1 (``init.weights`` for N = 1) by the command of ``rules/tune_lattice.smk``'s
   ``decode_dev_lattice`` (search options, lattice beam and BLEU options from the run's
   ``config/config.yaml``; ``--jobs 1``), which is checked against the command Snakemake recorded
   for it (``.snakemake/metadata``) and whose 1-best must equal the recorded ``dev.1best``;
2. runs the step (``tune_lattice``'s command: ``--kbest`` the paths of N-1, ``--init`` the weights of
   N-1, ``--seed 1000 * seed + N``, ``--set`` the run's settings, ``--jobs 1``) as the workflow does,
   under ``/usr/bin/time -v`` (wall, CPU, peak RSS), and checks that its weights (not the header,
   where the current code names the coverage and the run's commit did not) and aggregated paths
   equal the recorded ones of iteration N;
3. runs the same step again in child processes of this script (one at a time):

   * ``phases``: a timer (wall and CPU) around each library function the step calls, patched in
     from here (no library file is edited; numba kernels are opaque to cProfile, so each kernel's
     Python call is timed), numba's cache loading (``Cache.load_overload``) included, with a thread
     sampling the RSS every 10 ms (the phase at the peak) and ``ru_maxrss`` at each phase's end,
     and a count of the envelope paths whose BLEU statistics an earlier search had already computed
     (timed apart, as the profiler's overhead);
   * ``cprofile``: the Python side by cProfile (top functions by own time);
   * ``memory``: ``tracemalloc`` snapshots at the step's fullest points (the lattice builder before
     ``build``, after loading, after the climbs, ``write_paths`` before it writes) with their top
     allocation sites, and the sizes of the structures that grow with the iterations; numba's own
     allocations (arrays made inside kernels) are not traced, the RSS samples cover them;
   * ``ablation``: the envelope pass of every coordinate axis from the initial weights on the
     lattices alone and on the lattices plus the aggregated paths (the cost of the aggregation),
     and what holds the RSS right after loading (live structures, pymalloc's arenas, what
     ``gc.collect`` and ``malloc_trim`` give back).

Then, with ``--startup``, the start-up of short jobs (``python -c pass``; ``smtlib tune kbmira
--help`` through the ``smtlib`` found in PATH, its console script and ``python -m smtlib``;
``-X importtime``; a real ``smtlib kbest add`` + ``smtlib tune kbmira`` step on a 5-sentence pool cut
from the first decode's k-best list, with numba's cache loading timed in-process) and, with
``--decode``, the workflow's first decode of the full dev set (``decode_first``: 1-best and
100-best, ``--jobs 1``), with the decoder's own phase line.

    python benchmarks/profile_lbmert.py --run-dir results/table6-run [--pair ja-en --fs small \\
        --method lbmert --setting default --sample 0] [--iterations 2 14] [--scratch DIR] \\
        [--modes plain phases cprofile memory ablation] [--startup] [--decode] [--json OUT]

Nothing is written under ``--run-dir`` (commands run there, as the workflow's, with every output
in ``--scratch``, by default a new ``/tmp/profile_lbmert.*``). CPU is user + system of each child
(``/usr/bin/time``), so other jobs on the machine count only through caches and frequency; the
load average is printed before and after. Results: ``benchmarks/results/profile_lbmert.md``.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import functools
import gzip
import hashlib
import json
import os
import pathlib
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
TIME = "/usr/bin/time"
PAGE = os.sysconf("SC_PAGE_SIZE")


# ============================================================================== the run's commands
@dataclasses.dataclass
class Run:
    """One tuning run of a workflow directory and the commands of its iterations."""

    root: pathlib.Path
    pair: str
    fs: str
    method: str
    setting: str
    sample: str

    def __post_init__(self) -> None:
        import yaml

        sys.path.insert(0, str(ROOT))
        from smtlib.workflow import options, paths

        self.options, self.paths = options, paths
        self.config = yaml.safe_load((self.root / "config" / "config.yaml").read_text())
        self.dir = paths.run_dir(self.pair, self.fs, self.method, self.setting, self.sample)

    def file(self, it: int, name: str) -> str:
        return f"{self.dir}/it{it}/{name}"

    def prev_weights(self, it: int) -> str:
        return self.paths.initial_weights(self.pair, self.fs) if it == 1 else self.file(it - 1, "weights")

    @property
    def dev_src(self) -> str:
        return self.paths.data_path(self.pair, f"dev/s{self.sample}.src")

    @property
    def dev_ref(self) -> str:
        return self.paths.data_path(self.pair, f"dev/s{self.sample}.ref")

    @property
    def model(self) -> str:
        return self.paths.model_dir(self.pair, self.fs, "model.yaml")

    def decode_command(self, it: int, lattice: str, best: str) -> list[str]:
        """``decode_dev_lattice``'s ``smtlib decode`` (threads 1)."""
        o = self.options
        return ["smtlib", "decode", "--model", self.model, "--weights", self.prev_weights(it), "--input", self.dev_src,
                "--lattice", lattice, "--lattice-beam", str(self.config["tuning"]["lattice_beam"]), "--output", best,
                "--jobs", "1", *shlex.split(o.decoder_options(self.config["decoder"]))]

    def tune_command(self, it: int, lattice: str, weights: str, paths_out: str, info: str) -> list[str]:
        """``tune_lattice``'s ``smtlib tune`` (threads 1)."""
        o = self.options
        kbest = [] if it == 1 else ["--kbest", self.file(it - 1, "paths.kbest.gz")]
        return ["smtlib", "tune", self.method, "--lattice", lattice, *kbest, "--refs", self.dev_ref,
                "--init", self.prev_weights(it), "--out", weights, "--paths-out", paths_out, "--info", info,
                "--seed", str(o.tune_seed(self.config["tuning"]["seed"], it)), "--jobs", "1",
                *shlex.split(o.tune_settings(self.config, self.pair, self.method, self.setting)),
                *shlex.split(o.bleu_options(self.config["bleu"]))]

    def recorded(self, output: str) -> str | None:
        """The shell command Snakemake recorded for ``output`` (None without metadata)."""
        name = base64.urlsafe_b64encode(output.encode()).decode()
        meta = self.root / ".snakemake" / "metadata" / name
        if not meta.exists():
            return None
        return json.loads(meta.read_text()).get("shellcmd")


def recorded_smtlib(shellcmd: str, sub: str) -> list[str] | None:
    """The tokens of the ``smtlib SUB ...`` part of a recorded shell command."""
    for part in shellcmd.split("&&"):
        part = part.strip().lstrip("(")
        if part.startswith(f"smtlib {sub} "):
            tokens = shlex.split(part.split(">", 1)[0])
            return tokens
    return None


def same_command(ours: list[str], shellcmd: str | None, sub: str) -> str:
    if shellcmd is None:
        return "no Snakemake record to compare with"
    theirs = recorded_smtlib(shellcmd, sub)
    if theirs == ours:
        return "identical to the command Snakemake recorded"
    return f"DIFFERS from the recorded command: {shlex.join(theirs or [])}"


# ============================================================================== measuring children
def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def timed(cmd: list[str], cwd: pathlib.Path | str, log: pathlib.Path, env: dict | None = None) -> dict:
    """Run ``cmd`` under ``/usr/bin/time -v``: wall, user, sys, cpu seconds and peak RSS (MB)."""
    tfile = log.with_suffix(".time")
    with open(log, "w") as fh:
        proc = subprocess.run([TIME, "-v", "-o", str(tfile), *cmd], cwd=cwd, stdout=fh, stderr=subprocess.STDOUT, env=env)
    text = tfile.read_text()
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {shlex.join(cmd)}\n{log.read_text()[-3000:]}")

    def field(name: str) -> str:
        return re.search(rf"{re.escape(name)}: (.*)", text).group(1).strip()

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")
    wall_s = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
    user, sys_ = float(field("User time (seconds)")), float(field("System time (seconds)"))
    return {"wall": wall_s, "user": user, "sys": sys_, "cpu": user + sys_,
            "rss_mb": int(field("Maximum resident set size (kbytes)")) / 1024}


def weight_lines(path: pathlib.Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if not line.startswith("#")]


def digest(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with gzip.open(path, "rb") if str(path).endswith(".gz") else open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def child(mode: str, tune_args: list[str], cwd: pathlib.Path, out: pathlib.Path, log: pathlib.Path) -> dict:
    """This script as a child (``--child MODE``) running the step ``tune_args`` (after ``smtlib``)."""
    cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--child", mode, "--child-out", str(out), "--",
           *tune_args]
    res = timed(cmd, cwd, log)
    res.update(json.loads(out.read_text()))
    return res


# ============================================================================== child: the step instrumented
class Timers:
    """Wall and CPU time of every wrapped call, by call path, inclusive and exclusive of wrapped callees."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self._child: list[list[float]] = []
        #: path -> [calls, wall, cpu, wall in callees, cpu in callees, first call's wall]
        self.stats: dict[tuple[str, ...], list] = {}
        self.marks: list[dict] = []  # phases with mark=True: RSS and ru_maxrss at their ends

    def wrap(self, owner, attr: str, label: str, mark: bool = False) -> None:
        orig = getattr(owner, attr)
        timers = self

        @functools.wraps(orig)
        def wrapper(*args, **kwargs):
            timers.stack.append(label)
            key = tuple(timers.stack)
            frame = [0.0, 0.0]
            timers._child.append(frame)
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                return orig(*args, **kwargs)
            finally:
                dt, dc = time.perf_counter() - t0, time.process_time() - c0
                timers._child.pop()
                if timers._child:
                    timers._child[-1][0] += dt
                    timers._child[-1][1] += dc
                rec = timers.stats.setdefault(key, [0, 0.0, 0.0, 0.0, 0.0, None])
                rec[0] += 1
                rec[1] += dt
                rec[2] += dc
                rec[3] += frame[0]
                rec[4] += frame[1]
                if rec[5] is None:
                    rec[5] = dt
                if mark:
                    timers.marks.append({"phase": " > ".join(key), "rss_mb": rss_mb(), "maxrss_mb": maxrss_mb()})
                timers.stack.pop()

        setattr(owner, attr, wrapper)


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * PAGE / 2**20


def maxrss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class RssSampler(threading.Thread):
    """The RSS every ``period`` seconds, its maximum and the phase (call path) at the maximum and per phase."""

    def __init__(self, timers: Timers, period: float = 0.01):
        super().__init__(daemon=True)
        self.timers, self.period = timers, period
        self.peak, self.peak_at = 0.0, ""
        self.per_phase: dict[str, float] = {}
        self.timeline: list[tuple[float, float, str]] = []
        self._halt = threading.Event()

    def run(self) -> None:
        t0 = time.perf_counter()
        last = -1.0
        while not self._halt.is_set():
            r = rss_mb()
            where = " > ".join(self.timers.stack[:3]) or "(outside the step)"
            if r > self.peak:
                self.peak, self.peak_at = r, " > ".join(self.timers.stack) or "(outside the step)"
            if r > self.per_phase.get(where, 0.0):
                self.per_phase[where] = r
            t = time.perf_counter() - t0
            if t - last >= 0.5:
                self.timeline.append((round(t, 2), round(r, 1), where))
                last = t
            time.sleep(self.period)

    def stop(self) -> None:
        self._halt.set()
        self.join()


PHASES = [  # (module, owner attribute path, label, mark RSS at its end)
    ("smtlib.cli.tune_lattice", "run", "step", True),
    ("smtlib.cli.tune_lattice", "read_references", "read references", False),
    ("smtlib.cli.tune_lattice", "read_weights", "read weights", False),
    ("smtlib.lattice.problem", "load_lattice_problem", "load", True),
    ("smtlib.lattice.problem", "read_lattice_set", "read lattices", True),
    ("smtlib.lattice.problem", "read_pool", "read paths file", True),
    ("smtlib.lattice.lattice_set", "LatticeSetBuilder.add_pool", "paths into builder", True),
    ("smtlib.lattice.lattice_set", "LatticeSetBuilder.build", "build lattice set", True),
    ("smtlib.lattice.problem", "prepare_references", "reference tables", False),
    ("smtlib.lattice.problem", "fill_whole_path_stats", "BLEU stats of aggregated paths", False),
    ("smtlib.lattice.problem", "covered", "coverage", False),
    ("smtlib.tuners.lbmert", "LbMert.fit_lattices", "fit", True),
    ("smtlib.tuners.lbmert", "LbMert._climb", "climb", False),
    ("smtlib.tuners.lbmert", "LatticeLineSearch.score", "score a point", False),
    ("smtlib.tuners.lbmert", "LatticeLineSearch.search", "line search", False),
    ("smtlib.tuners.lbmert", "corpus_envelopes", "envelopes", False),
    ("smtlib.tuners.lbmert", "viterbi_paths", "viterbi", False),
    ("smtlib.tuners.lbmert", "path_stats", "path BLEU stats", False),
    ("smtlib.tuners.lbmert", "interval_scores", "interval scores", False),
    ("smtlib.tuners.lbmert", "best_point", "best point", False),
    ("smtlib.tuners.lbmert", "LatticeLineSearch._remember", "collect envelope paths", False),
    ("smtlib.tuners.lbmert", "EnvelopePaths.add", "merge climbs' paths", False),
    ("smtlib.tuners.lbmert", "matvec", "matvec", False),
    ("smtlib.tuners.lbmert", "LbMert.check_result", "check result", False),
    ("smtlib.lattice.problem", "viterbi_lines", "1-best lines", False),
    ("smtlib.bleu.corpus", "corpus_bleu", "printed BLEU", False),
    ("smtlib.cli.tune_lattice", "write_weights", "write weights", False),
    ("smtlib.lattice.problem", "path_lines", "format new paths", True),
    ("smtlib.lattice.problem", "write_paths", "write paths file", True),
    ("numba.core.caching", "Cache.load_overload", "numba cache load", False),
]

#: phase of the report of each label (by its own time); labels not here are in their caller's
CATEGORY = {
    "read references": "read references, weights",
    "read weights": "read references, weights",
    "read lattices": "read lattices",
    "read paths file": "read aggregated paths",
    "paths into builder": "read aggregated paths",
    "build lattice set": "build lattice set",
    "reference tables": "references, BLEU stats of aggregated paths",
    "BLEU stats of aggregated paths": "references, BLEU stats of aggregated paths",
    "load": "build lattice set",
    "coverage": "writing (weights, printed BLEU, check)",
    "envelopes": "line search: envelope construction",
    "interval scores": "line search: merge + interval BLEU",
    "best point": "line search: merge + interval BLEU",
    "collect envelope paths": "line search: collect envelope paths",
    "merge climbs' paths": "line search: collect envelope paths",
    "line search": "climbs: restarts, directions (Python)",
    "climb": "climbs: restarts, directions (Python)",
    "matvec": "climbs: restarts, directions (Python)",
    "fit": "climbs: restarts, directions (Python)",
    "viterbi": "score a point (Viterbi + stats)",
    "score a point": "score a point (Viterbi + stats)",
    "check result": "writing (weights, printed BLEU, check)",
    "1-best lines": "writing (weights, printed BLEU, check)",
    "printed BLEU": "writing (weights, printed BLEU, check)",
    "write weights": "writing (weights, printed BLEU, check)",
    "format new paths": "format new paths",
    "write paths file": "write aggregated paths file",
    "numba cache load": "numba cache loading",
    "step": "CLI (parse, imports in the step)",
    "profiler: path reuse count": "(profiler overhead, not the step's)",
}


def category(key: tuple[str, ...]) -> str:
    label = key[-1]
    if label == "path BLEU stats":
        return "line search: path BLEU stats" if "line search" in key else "score a point (Viterbi + stats)"
    return CATEGORY.get(label, label)


def resolve(modname: str, attr: str):
    import importlib

    obj = importlib.import_module(modname)
    *owners, name = attr.split(".")
    for o in owners:
        obj = getattr(obj, o)
    return obj, name


def child_phases(argv: list[str]) -> dict:
    cpu_start = time.process_time()
    from smtlib.cli import main

    for modname, *_ in PHASES:
        __import__(modname)
    cpu_imports = time.process_time() - cpu_start
    timers = Timers()
    for modname, attr, label, mark in PHASES:
        timers.wrap(*resolve(modname, attr), label, mark)
    sizes: dict = {}
    _hook_sizes(sizes, deep=False)
    reuse = _hook_path_reuse(timers)
    sampler = RssSampler(timers)
    sampler.start()
    rss_start = rss_mb()
    w0, c0 = time.perf_counter(), time.process_time()
    status = main(argv)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    sampler.stop()
    stats = {" > ".join(k): v for k, v in timers.stats.items()}
    return {"status": status, "cpu_before_main": cpu_start, "cpu_imports": cpu_imports, "main_wall": wall,
            "rss_after_imports_mb": rss_start, "path_reuse": reuse,
            "main_cpu": cpu, "stats": stats, "marks": timers.marks, "rss_peak_mb": sampler.peak,
            "rss_peak_at": sampler.peak_at, "rss_per_phase": sampler.per_phase, "timeline": sampler.timeline,
            "sizes": sizes, "maxrss_mb": maxrss_mb()}


def _hook_path_reuse(timers: Timers) -> dict:
    """Count, per line search, the envelope paths whose BLEU statistics are computed from their words
    and how many of them an earlier search of the step (or of the same climb) had already met: what a
    cache of statistics by path would save. Timed apart ("profiler: path reuse count"), not in the step's phases."""
    import numpy as np

    import smtlib.tuners.lbmert as lbmert

    counts = {"searches": 0, "paths": 0, "whole_path_edges": 0, "from_words": 0, "from_words_seen_in_step": 0,
              "from_words_seen_in_climb": 0}
    seen_step: set[int] = set()
    hashes_of = lbmert._path_hashes

    def count(search, psent, poff, pedges):
        hashes = hashes_of(psent, poff, pedges).tolist()
        whole = ((np.diff(poff) == 1) & (search.ls.path_row[pedges[poff[:-1]]] >= 0)).tolist()
        counts["searches"] += 1
        counts["paths"] += len(hashes)
        for h, w in zip(hashes, whole, strict=True):
            if w:
                counts["whole_path_edges"] += 1
                continue
            counts["from_words"] += 1
            counts["from_words_seen_in_step"] += h in seen_step
            counts["from_words_seen_in_climb"] += h in search._seen
        seen_step.update(hashes)

    holder = type("Counter", (), {"count": staticmethod(count)})
    timers.wrap(holder, "count", "profiler: path reuse count")
    remember = lbmert.LatticeLineSearch._remember

    def remember_counted(self, psent, poff, pedges):
        holder.count(self, psent, poff, pedges)
        return remember(self, psent, poff, pedges)

    lbmert.LatticeLineSearch._remember = remember_counted
    return counts


# ---------------------------------------------------------------------------- sizes of structures
def nbytes(obj, deep: bool = True, _depth: int = 0) -> int:
    """Approximate bytes held by ``obj``: numpy/scipy arrays exactly, Python containers by ``sys.getsizeof``."""
    import numpy as np
    import scipy.sparse as sp

    if isinstance(obj, np.ndarray):
        return obj.nbytes + 112
    if sp.issparse(obj):
        return obj.data.nbytes + obj.indices.nbytes + obj.indptr.nbytes
    if isinstance(obj, str | bytes | int | float):
        return sys.getsizeof(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return sum(nbytes(getattr(obj, f.name), deep, _depth + 1) for f in dataclasses.fields(obj))
    if isinstance(obj, dict):
        return sys.getsizeof(obj) + sum(nbytes(k, deep, _depth + 1) + nbytes(v, deep, _depth + 1) for k, v in obj.items())
    if isinstance(obj, list | tuple | set):
        if not deep and len(obj) > 1000:
            return sys.getsizeof(obj)
        return sys.getsizeof(obj) + sum(nbytes(x, deep, _depth + 1) for x in obj)
    if hasattr(obj, "__dict__") and _depth < 3:
        return sum(nbytes(v, deep, _depth + 1) for v in vars(obj).values())
    return sys.getsizeof(obj)


def _mb(n: int) -> float:
    return round(n / 2**20, 1)


def _hook_sizes(sizes: dict, deep: bool) -> None:
    """Record the sizes of the step's structures as they pass (patched in after the timers)."""
    import smtlib.lattice.lattice_set as lset
    import smtlib.lattice.problem as problem
    import smtlib.tuners.lbmert as lbmert

    load = problem.load_lattice_problem

    def load_sizes(*args, **kwargs):
        ls, refs, n = load(*args, **kwargs)
        sizes["lattice_edges"] = int((ls.path_row < 0).sum())
        sizes["whole_path_edges"] = int((ls.path_row >= 0).sum())
        sizes["nodes"] = int(ls.n_nodes.sum())
        goal_in = [int((ls.heads[ls.edge_off[s]: ls.edge_off[s + 1]] == ls.n_nodes[s] - 1).sum())
                   for s in range(ls.n_sentences) if ls.n_nodes[s]]
        sizes["goal_in_degree_mean"] = round(sum(goal_in) / max(len(goal_in), 1), 1)
        sizes["lattice_set_mb"] = {f.name: _mb(nbytes(getattr(ls, f.name))) for f in dataclasses.fields(ls)}
        sizes["lattice_set_mb_total"] = _mb(nbytes(ls))
        sizes["references_mb"] = _mb(nbytes(refs))
        return ls, refs, n

    problem.load_lattice_problem = load_sizes
    build = lset.LatticeSetBuilder.build

    def build_sizes(self):
        if deep:
            sizes["builder_paths_mb"] = _mb(nbytes(self._paths))
            sizes["builder_lattices_mb"] = _mb(nbytes(self._lattice))
        return build(self)

    lset.LatticeSetBuilder.build = build_sizes
    read_pool = problem.read_pool

    def pool_sizes(*args, **kwargs):
        pool = read_pool(*args, **kwargs)
        sizes["paths_in"] = int(pool.offsets[-1])
        if deep:
            sizes["pool_mb"] = _mb(nbytes(pool))
            sizes["pool_texts_mb"] = _mb(nbytes(pool.texts))
        return pool

    problem.read_pool = pool_sizes
    fit = lbmert.LbMert.fit_lattices

    def fit_sizes(self, *args, **kwargs):
        result = fit(self, *args, **kwargs)
        sizes["envelope_paths"] = len(self.envelope_paths)
        sizes["envelope_path_edges"] = sum(len(e) for _, e in self.envelope_paths)
        if deep:
            sizes["envelope_paths_mb"] = _mb(nbytes(self.envelope_paths))
        sizes["line_searches"] = result.info.get("line_searches")
        return result

    lbmert.LbMert.fit_lattices = fit_sizes
    path_lines = problem.path_lines

    def lines_sizes(*args, **kwargs):
        out = path_lines(*args, **kwargs)
        sizes["new_path_lines"] = len(out)
        if deep:
            sizes["new_path_lines_mb"] = _mb(nbytes(out))
        return out

    problem.path_lines = lines_sizes


# ---------------------------------------------------------------------------- other child modes
def child_cprofile(argv: list[str], out: pathlib.Path) -> dict:
    import cProfile
    import io
    import pstats

    from smtlib.cli import main

    prof = cProfile.Profile()
    prof.enable()
    status = main(argv)
    prof.disable()
    prof.dump_stats(str(out.with_suffix(".pstats")))
    rows = []
    st = pstats.Stats(prof, stream=io.StringIO())
    total = st.total_tt
    for (filename, line, func), (cc, nc, tt, ct, _) in st.stats.items():
        rows.append({"function": f"{_short(filename)}:{line}({func})", "calls": nc, "tottime": tt, "cumtime": ct})
    by_tt = sorted(rows, key=lambda r: -r["tottime"])[:30]
    by_ct = sorted(rows, key=lambda r: -r["cumtime"])[:40]
    return {"status": status, "total_tt": total, "top_tottime": by_tt, "top_cumtime": by_ct}


def _short(filename: str) -> str:
    for marker in ("/smtlib/", "/site-packages/", "/lib/python3"):
        if marker in filename:
            return filename[filename.index(marker) + 1:]
    return filename


def child_memory(argv: list[str]) -> dict:
    import tracemalloc

    from smtlib.cli import main
    import smtlib.lattice.lattice_set as lset
    import smtlib.lattice.problem as problem
    import smtlib.tuners.lbmert as lbmert

    snaps: dict = {}
    sizes: dict = {}

    def snap(name: str) -> None:
        s = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
        current, peak = tracemalloc.get_traced_memory()
        top = s.statistics("lineno")[:10]
        snaps[name] = {"traced_mb": _mb(current), "peak_so_far_mb": _mb(peak), "rss_mb": round(rss_mb(), 1),
                       "top": [{"where": f"{_short(t.traceback[0].filename)}:{t.traceback[0].lineno}",
                                "mb": _mb(t.size), "blocks": t.count} for t in top]}

    build = lset.LatticeSetBuilder.build

    def build_snap(self):
        snap("builder full (before build)")
        return build(self)

    lset.LatticeSetBuilder.build = build_snap
    load = problem.load_lattice_problem

    def load_snap(*args, **kwargs):
        out = load(*args, **kwargs)
        snap("after loading")
        return out

    problem.load_lattice_problem = load_snap
    fit = lbmert.LbMert.fit_lattices

    def fit_snap(self, *args, **kwargs):
        out = fit(self, *args, **kwargs)
        snap("after the climbs")
        return out

    lbmert.LbMert.fit_lattices = fit_snap
    atomic = problem.atomic_output

    def atomic_snap(*args, **kwargs):
        snap("write_paths: all lines in memory, before writing")
        return atomic(*args, **kwargs)

    problem.atomic_output = atomic_snap
    _hook_sizes(sizes, deep=True)
    tracemalloc.start(1)
    status = main(argv)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"status": status, "snapshots": snaps, "traced_peak_mb": _mb(peak), "sizes": sizes, "maxrss_mb": maxrss_mb()}


def child_ablation(argv: list[str]) -> dict:
    """Envelope passes along every axis from the initial weights, lattices alone vs plus aggregated paths."""
    import numpy as np

    from smtlib._dot import matvec
    from smtlib.bleu.references import read_references
    from smtlib.bleu.stats import BleuSettings
    from smtlib.lattice.envelope import corpus_envelopes
    from smtlib.lattice.problem import load_lattice_problem
    from smtlib.lattice.stats import path_stats
    from smtlib.weights import read_weights

    opts = _parse_tune_argv(argv)
    refs_text = read_references(opts["refs"])
    settings = BleuSettings(tokenize=opts.get("tokenize", "13a"), lowercase=bool(opts.get("lowercase")))
    init = read_weights(opts["init"])
    out: dict = {"allocator": {"rss_before_load_mb": rss_mb()}}
    for name, kbest in (("lattices + aggregated paths", opts.get("kbest")), ("lattices only", None)):
        if name != "lattices only" and not kbest:
            continue
        c0 = time.process_time()
        ls, refs, n_in = load_lattice_problem(opts["lattice"], kbest, refs_text, settings)
        load_cpu = time.process_time() - c0
        if "rss_after_load_mb" not in out["allocator"]:
            out["allocator"].update(_allocator_after_load(ls, refs))
        w = ls.weight_vector(init)
        d = ls.dense.shape[1]
        a = matvec(ls.dense, w[:d])
        corpus_envelopes(ls.n_nodes, ls.edge_off, ls.tails, ls.heads, a, np.ascontiguousarray(ls.dense[:, 0]))  # warm
        env_cpu, stat_cpu, lines = [], [], []
        for k in range(d):
            b = np.ascontiguousarray(ls.dense[:, k])
            c0 = time.process_time()
            first, bx, bnew, bprev, psent, poff, pedges = corpus_envelopes(ls.n_nodes, ls.edge_off, ls.tails, ls.heads, a, b)
            c1 = time.process_time()
            path_stats(ls, refs, psent, poff, pedges)
            c2 = time.process_time()
            env_cpu.append(c1 - c0)
            stat_cpu.append(c2 - c1)
            lines.append(len(psent))
        out[name] = {"edges": int(ls.n_edges), "whole_path_edges": int((ls.path_row >= 0).sum()), "load_cpu": load_cpu,
                     "envelope_cpu_per_search": statistics.mean(env_cpu), "stats_cpu_per_search": statistics.mean(stat_cpu),
                     "envelope_paths_per_search": statistics.mean(lines)}
        del ls, refs
    return out


def _allocator_after_load(ls, refs) -> dict:
    """What holds the RSS right after loading: the live structures, pymalloc's arenas (small Python
    objects, freed or not), and how much a ``gc.collect`` and glibc's ``malloc_trim(0)`` give back."""
    import gc

    from smtlib.lattice.lattice_set import release_free_memory

    out = {"rss_after_load_mb": rss_mb(), "lattice_set_mb": _mb(nbytes(ls)), "references_mb": _mb(nbytes(refs))}
    gc.collect()
    out["rss_after_gc_mb"] = rss_mb()
    out["pymalloc"] = _pymalloc_stats()
    release_free_memory()
    out["rss_after_malloc_trim_mb"] = rss_mb()
    return out


def _pymalloc_stats() -> dict:
    """Arenas and bytes of pymalloc (``sys._debugmallocstats``, which writes to the C stderr), in MB."""
    with tempfile.TemporaryFile(mode="w+") as tmp:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(tmp.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read()
    out = {}
    for key, pattern in (("arenas_current", r"# arenas allocated current\s+=\s+([\d,]+)"),
                         ("arenas_highwater", r"# arenas highwater mark\s+=\s+([\d,]+)"),
                         ("allocated_blocks_mb", r"# bytes in allocated blocks\s+=\s+([\d,]+)"),
                         ("available_blocks_mb", r"# bytes in available blocks\s+=\s+([\d,]+)"),
                         ("unused_pools_mb", r"unused pools \* \d+ bytes\s+=\s+([\d,]+)")):
        m = re.search(pattern, text)
        if m:
            v = int(m.group(1).replace(",", ""))
            out[key] = v if key.startswith("arenas") else _mb(v)
    return out


def _parse_tune_argv(argv: list[str]) -> dict:
    out: dict = {}
    key = None
    for tok in argv:
        if tok.startswith("--"):
            key = tok[2:].replace("-", "_")
            out[key] = []
        elif key is not None:
            out[key].append(tok)
    return {k: (v if k in ("lattice", "kbest", "refs") else (v[0] if v else True)) for k, v in out.items()}


def child_numba_load(argv: list[str]) -> dict:
    """A short command in-process with numba's cache loading timed (``Cache.load_overload``)."""
    cpu0 = time.process_time()
    import numba.core.caching as caching

    from smtlib.cli import main

    cpu_imports = time.process_time() - cpu0
    calls = []
    orig = caching.Cache.load_overload

    def load_overload(self, sig, target_context):
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            return orig(self, sig, target_context)
        finally:
            name = re.search(r"function (\S+)", str(getattr(self, "_name", "?")))
            calls.append((name.group(1) if name else "?", time.perf_counter() - t0, time.process_time() - c0))

    caching.Cache.load_overload = load_overload
    c0 = time.process_time()
    status = main(argv)
    return {"status": status, "cpu_start": cpu0, "cpu_imports": cpu_imports, "cpu_main": time.process_time() - c0,
            "numba_loads": len(calls), "numba_load_wall": sum(c[1] for c in calls),
            "numba_load_cpu": sum(c[2] for c in calls),
            "numba_first_load": [calls[0][0], round(calls[0][1], 4)] if calls else None,
            "numba_slowest": sorted(([c[0], round(c[1], 4)] for c in calls), key=lambda r: -r[1])[:8]}


def run_child(mode: str, out: str, argv: list[str]) -> None:
    sys.path.insert(0, str(ROOT))
    if mode == "phases":
        res = child_phases(argv)
    elif mode == "cprofile":
        res = child_cprofile(argv, pathlib.Path(out))
    elif mode == "memory":
        res = child_memory(argv)
    elif mode == "ablation":
        res = child_ablation(argv)
    elif mode == "numba-load":
        res = child_numba_load(argv)
    else:
        raise SystemExit(f"unknown child mode {mode}")
    import smtlib

    res["smtlib_from"] = os.path.dirname(smtlib.__file__)
    pathlib.Path(out).write_text(json.dumps(res, default=float))


# ============================================================================== the parent
def rebuild_and_check(run: Run, it: int, work: pathlib.Path, reuse: bool) -> dict:
    """Decode iteration ``it``'s lattice into ``work`` as the workflow would, check the 1-best."""
    lattice, best = work / "dev.lattice.gz", work / "dev.1best"
    cmd = run.decode_command(it, str(lattice), str(best))
    record = run.decode_command(it, run.file(it, "dev.lattice.gz"), run.file(it, "dev.1best"))
    out = {"decode_command": shlex.join(cmd),
           "decode_vs_record": same_command(record, run.recorded(run.file(it, "dev.lattice.gz")), "decode")}
    if not (reuse and lattice.exists()):
        out["decode"] = timed(cmd, run.root, work / "decode.log")
        out["decode_log"] = (work / "decode.log").read_text().strip().splitlines()[-1]
    out["lattice_mb"] = round(lattice.stat().st_size / 2**20, 1)
    recorded = run.root / run.file(it, "dev.1best")
    out["one_best_matches"] = recorded.exists() and best.read_bytes() == recorded.read_bytes()
    return out


def step_args(run: Run, it: int, work: pathlib.Path, tag: str) -> list[str]:
    cmd = run.tune_command(it, str(work / "dev.lattice.gz"), str(work / f"{tag}.weights"),
                           str(work / f"{tag}.paths.kbest.gz"), str(work / f"{tag}.tune.json"))
    return cmd[1:]  # after "smtlib"


def check_step(run: Run, it: int, work: pathlib.Path, tag: str) -> dict:
    rec_w, rec_p = run.root / run.file(it, "weights"), run.root / run.file(it, "paths.kbest.gz")
    ours_w, ours_p = work / f"{tag}.weights", work / f"{tag}.paths.kbest.gz"
    out = {"weights_match": weight_lines(ours_w) == weight_lines(rec_w),
           "paths_match": digest(ours_p) == digest(rec_p)}
    if not out["weights_match"]:
        out["weights_ours"], out["weights_recorded"] = weight_lines(ours_w), weight_lines(rec_w)
    return out


def profile_iteration(run: Run, it: int, scratch: pathlib.Path, modes: list[str], reuse: bool) -> dict:
    work = scratch / f"it{it}"
    work.mkdir(parents=True, exist_ok=True)
    res = {"iteration": it, **rebuild_and_check(run, it, work, reuse)}
    args = step_args(run, it, work, "plain")
    rec_tune = run.tune_command(it, run.file(it, "dev.lattice.gz"), run.file(it, "weights"),
                                run.file(it, "paths.kbest.gz"), run.file(it, "tune.json"))
    res["tune_command"] = shlex.join(["smtlib", *args])
    res["tune_vs_record"] = same_command(rec_tune, run.recorded(run.file(it, "weights")), "tune")
    print(f"it{it}: decode {res.get('decode', {})}, 1-best matches: {res['one_best_matches']}; {res['decode_vs_record']}",
          file=sys.stderr)
    if "plain" in modes:
        res["plain"] = timed(["smtlib", *args], run.root, work / "plain.log")
        res["plain"].update(check_step(run, it, work, "plain"))
        res["plain"]["log"] = (work / "plain.log").read_text().strip().splitlines()[-1]
        print(f"it{it}: plain step {res['plain']}", file=sys.stderr)
    for mode in [m for m in modes if m != "plain"]:
        margs = step_args(run, it, work, mode)
        res[mode] = child(mode, margs, run.root, work / f"{mode}.json", work / f"{mode}.log")
        if mode in ("phases", "memory", "cprofile"):
            res[mode].update(check_step(run, it, work, mode))
        print(f"it{it}: {mode} done: wall {res[mode]['wall']:.1f} s, cpu {res[mode]['cpu']:.1f} s, "
              f"peak RSS {res[mode]['rss_mb']:.0f} MB", file=sys.stderr)
    return res


def measure_startup(run: Run, scratch: pathlib.Path, first_kbest: pathlib.Path, repeats: int) -> dict:
    """Start-up of short jobs against ``python -c pass``, and a real tiny kb-mira step."""
    work = scratch / "startup"
    work.mkdir(parents=True, exist_ok=True)
    script = shutil.which("smtlib")
    real_script = pathlib.Path(sys.executable).parent / "smtlib"
    res: dict = {"smtlib_in_path": script, "python": sys.executable}

    def best_of(name: str, cmd: list[str]) -> dict:
        runs = [timed(cmd, work, work / f"{name}.log") for _ in range(repeats)]
        return {"median_wall": statistics.median(r["wall"] for r in runs),
                "median_cpu": statistics.median(r["cpu"] for r in runs),
                "rss_mb": max(r["rss_mb"] for r in runs), "runs": runs, "command": shlex.join(cmd)}

    res["python -c pass"] = best_of("pass", [sys.executable, "-c", "pass"])
    res["python -c 'import numpy'"] = best_of("numpy", [sys.executable, "-c", "import numpy"])
    res["python -c 'import numba'"] = best_of("numba", [sys.executable, "-c", "import numba"])
    if shutil.which("python"):
        res["python (PATH) -c pass"] = best_of("pass_path", ["python", "-c", "pass"])
    res["smtlib (PATH) tune kbmira --help"] = best_of("help_path", ["smtlib", "tune", "kbmira", "--help"])
    if real_script.exists():
        res["smtlib (console script) tune kbmira --help"] = best_of("help_script", [str(real_script), "tune", "kbmira", "--help"])
    res["python -m smtlib tune kbmira --help"] = best_of("help_m", [sys.executable, "-m", "smtlib", "tune", "kbmira", "--help"])
    res["importtime --help"] = importtime([sys.executable, "-X", "importtime", "-m", "smtlib", "tune", "kbmira", "--help"],
                                          work, work / "importtime_help.log")
    # a real tiny k-best step: sentences 0-4 of the first decode's 100-best list, their references
    refs = (run.root / run.paths.data_path(run.pair, "dev.ref")).read_text().splitlines()[:5]
    (work / "ref5").write_text("\n".join(refs) + "\n")
    with gzip.open(first_kbest, "rt") as fin, open(work / "kbest5", "w") as fout:
        for line in fin:
            if int(line.split(" ||| ", 1)[0]) >= 5:
                break
            fout.write(line)
    bleu = shlex.split(run.options.bleu_options(run.config["bleu"]))
    init = str(run.root / run.paths.initial_weights(run.pair, run.fs))
    add = ["smtlib", "kbest", "add", "--kbest", "kbest5", "--refs", "ref5", *bleu, "--out", "pool5"]
    res["smtlib kbest add (5 sentences)"] = best_of("add5", add)
    tune = ["smtlib", "tune", "kbmira", "--pool", "pool5", "--refs", "ref5", "--init", init, "--out", "w5",
            "--info", "w5.json", "--seed", "1002", *bleu]
    res["smtlib tune kbmira (5 sentences)"] = best_of("kbmira5", tune)
    res["importtime kbmira step"] = importtime([sys.executable, "-X", "importtime", "-m", "smtlib", *tune[1:]], work,
                                               work / "importtime_kbmira.log")
    out = work / "numba_load.json"
    res["kbmira step in-process"] = child("numba-load", tune[1:], work, out, work / "numba_load.log")
    out = work / "numba_load_add.json"
    res["kbest add in-process"] = child("numba-load", add[1:], work, out, work / "numba_load_add.log")
    return res


def importtime(cmd: list[str], cwd: pathlib.Path, log: pathlib.Path) -> dict:
    """``-X importtime``: total, number of modules, the top-level imports and packages by cumulative time."""
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    log.write_text(proc.stderr)
    rows = []
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", line)
        if m:
            rows.append((int(m.group(1)), int(m.group(2)), len(m.group(3)), m.group(4)))
    top = [r for r in rows if r[2] == 0]
    packages: dict[str, int] = {}
    for self_us, _, _, name in rows:
        root = name.split(".")[0]
        packages[root] = packages.get(root, 0) + self_us
    # who imports the heavy packages: the chain of importers of each one's first import
    chains = {}
    for i, (_, cum, depth, name) in enumerate(rows):
        if name in ("numpy", "scipy.sparse", "pandas", "numba", "sacrebleu", "yaml") and name not in chains:
            chain, d = [name], depth
            for _, _, d2, n2 in rows[i + 1:]:
                if d2 < d:
                    chain.append(n2)
                    d = d2
            chains[name] = [round(cum / 1e6, 3), " <- ".join(chain)]
    return {"modules": len(rows), "total_s": sum(r[0] for r in rows) / 1e6,
            "top_level": sorted(([n, c / 1e6] for _, c, _, n in top), key=lambda r: -r[1])[:12],
            "by_package_self_s": sorted(([k, v / 1e6] for k, v in packages.items()), key=lambda r: -r[1])[:15],
            "importers": chains}


def measure_decode(run: Run, scratch: pathlib.Path) -> dict:
    """The workflow's first decode (``decode_first``) of the full dev set, ``--jobs 1``."""
    work = scratch / "decode"
    work.mkdir(parents=True, exist_ok=True)
    o = run.options
    cmd = ["smtlib", "decode", "--model", run.model, "--weights", run.paths.initial_weights(run.pair, run.fs),
           "--input", run.paths.data_path(run.pair, "dev.src"), "--kbest", str(work / "dev.kbest.gz"),
           "--k", str(run.config["tuning"]["k"]), "--output", str(work / "dev.1best"), "--jobs", "1",
           *shlex.split(o.decoder_options(run.config["decoder"]))]
    res = timed(cmd, run.root, work / "decode.log")
    n = len((run.root / run.paths.data_path(run.pair, "dev.src")).read_text().splitlines())
    res.update(command=shlex.join(cmd), sentences=n, cpu_per_sentence_ms=1000 * res["cpu"] / n,
               log=(work / "decode.log").read_text().strip().splitlines()[-1])
    return res


# ============================================================================== summary
def phase_table(ph: dict) -> list[tuple[str, float, float]]:
    """(phase, CPU s, wall s) by report phase (own time of each wrapped call), in order of CPU."""
    cats: dict[str, list[float]] = {}
    for key, (calls, wall, cpu, cwall, ccpu, _) in ph["stats"].items():
        cat = category(tuple(key.split(" > ")))
        c = cats.setdefault(cat, [0.0, 0.0])
        c[0] += cpu - ccpu
        c[1] += wall - cwall
    pre = ph["cpu_before_main"] + ph["cpu_imports"]
    cats["interpreter start-up + imports"] = [pre, float("nan")]
    rest = ph["main_cpu"] - sum(ph["stats"][k][2] for k in ph["stats"] if " > " not in k)
    cats["CLI (parse, imports in the step)"][0] += rest
    return sorted(((k, v[0], v[1]) for k, v in cats.items()), key=lambda r: -r[1])


def summarize(results: dict) -> str:
    out = []
    w = out.append
    w(f"date: {results['date']}; commit {results['commit']}; {results['uptime_before']} -> {results['uptime_after']}")
    for r in results["iterations"]:
        it = r["iteration"]
        w(f"\n## it{it}")
        w(f"decode: {r.get('decode')} lattice {r['lattice_mb']} MB gz; 1-best matches recorded: {r['one_best_matches']}")
        w(f"decode command {r['decode_vs_record']}; tune command {r['tune_vs_record']}")
        if "plain" in r:
            p = r["plain"]
            w(f"plain step: wall {p['wall']:.1f} s, CPU {p['cpu']:.1f} s (user {p['user']:.1f}), peak RSS {p['rss_mb']:.0f} MB;"
              f" weights match: {p['weights_match']}, paths match: {p['paths_match']}")
        if "phases" in r:
            ph = r["phases"]
            overhead = sum(v[2] for k, v in ph["stats"].items() if k.endswith("profiler: path reuse count"))
            total = ph["cpu"] - overhead
            w(f"phases run: wall {ph['wall']:.1f} s, CPU {total:.1f} s, peak RSS {ph['rss_mb']:.0f} MB "
              f"(sampled peak {ph['rss_peak_mb']:.0f} MB in {ph['rss_peak_at']})")
            w("| phase | CPU s | % of CPU | wall s |")
            w("|---|---:|---:|---:|")
            table = phase_table(ph)
            for name, cpu, wall in table:
                w(f"| {name} | {cpu:.2f} | {100 * cpu / total:.1f} | {wall:.2f} |")
            rest = total - sum(cpu for name, cpu, _ in table if not name.startswith("(profiler"))
            w(f"| unattributed (exit, RSS sampler, writing the profile) | {rest:.2f} | {100 * rest / total:.1f} | |")
            w("call path | calls | incl. CPU s | own CPU s | first call wall s")
            for key, (calls, wall, cpu, cwall, ccpu, first) in sorted(ph["stats"].items(), key=lambda kv: -kv[1][2]):
                if cpu >= 0.05:
                    w(f"  {key} | {calls} | {cpu:.2f} | {cpu - ccpu:.2f} | {first:.3f}")
            w("RSS at phase ends (MB, then ru_maxrss):")
            for m in ph["marks"]:
                w(f"  {m['phase']}: {m['rss_mb']:.0f} / {m['maxrss_mb']:.0f}")
            w("max sampled RSS per phase: " + ", ".join(f"{k}: {v:.0f}" for k, v in
                                                       sorted(ph["rss_per_phase"].items(), key=lambda kv: -kv[1])[:8]))
            w(f"sizes: {json.dumps(ph['sizes'])}; RSS after imports {ph['rss_after_imports_mb']:.0f} MB")
            w(f"path reuse: {json.dumps(ph['path_reuse'])} (% of CPU: of the child's CPU less the profiler's "
              f"{overhead:.2f} s)")
        if "memory" in r:
            m = r["memory"]
            w(f"tracemalloc run: peak traced {m['traced_peak_mb']} MB, ru_maxrss {m['maxrss_mb']:.0f} MB; "
              f"sizes {json.dumps(m['sizes'])}")
            for name, s in m["snapshots"].items():
                w(f"  [{name}] traced {s['traced_mb']} MB (peak so far {s['peak_so_far_mb']}), RSS {s['rss_mb']}")
                for t in s["top"][:6]:
                    w(f"      {t['mb']:8.1f} MB {t['blocks']:>9} blocks  {t['where']}")
        if "cprofile" in r:
            c = r["cprofile"]
            w(f"cProfile: total own time {c['total_tt']:.1f} s; top by own time:")
            for row in c["top_tottime"][:18]:
                w(f"  {row['tottime']:7.2f} {row['cumtime']:7.2f} {row['calls']:>9} {row['function']}")
        if "ablation" in r:
            w("ablation (per line search along an axis from the initial weights, CPU s):")
            w(f"  allocator after loading (lattices + aggregated paths): {json.dumps(r['ablation'].get('allocator'))}")
            for name, a in r["ablation"].items():
                if isinstance(a, dict) and "edges" in a:
                    w(f"  {name}: {a['edges']} edges ({a['whole_path_edges']} whole paths), load {a['load_cpu']:.1f} s, "
                      f"envelopes {a['envelope_cpu_per_search']:.4f} s, stats {a['stats_cpu_per_search']:.4f} s, "
                      f"{a['envelope_paths_per_search']:.0f} envelope paths")
    if "startup" in results:
        s = results["startup"]
        w("\n## start-up")
        for name, v in s.items():
            if isinstance(v, dict) and "median_wall" in v:
                w(f"  {name}: wall {v['median_wall']:.3f} s, CPU {v['median_cpu']:.3f} s, RSS {v['rss_mb']:.0f} MB")
        for name in ("importtime --help", "importtime kbmira step"):
            v = s[name]
            w(f"  {name}: {v['modules']} modules, {v['total_s']:.3f} s; top-level: "
              + ", ".join(f"{n} {t:.3f}" for n, t in v["top_level"][:8]))
            w("     by package (own): " + ", ".join(f"{n} {t:.3f}" for n, t in v["by_package_self_s"][:10]))
            for name, (cum, chain) in v["importers"].items():
                w(f"     {name}: {cum:.3f} s cumulative, {chain}")
        for name in ("kbmira step in-process", "kbest add in-process"):
            v = s[name]
            w(f"  {name}: before main {v['cpu_start']:.3f} s CPU, imports {v['cpu_imports']:.3f} s, main {v['cpu_main']:.3f} s;"
              f" numba cache loads {v['numba_loads']} in {v['numba_load_wall']:.3f} s wall / {v['numba_load_cpu']:.3f} s CPU;"
              f" first {v['numba_first_load']}, slowest {v['numba_slowest'][:4]}")
    if "decode" in results:
        d = results["decode"]
        w(f"\n## decode ({d['sentences']} sentences): wall {d['wall']:.1f} s, CPU {d['cpu']:.1f} s "
          f"({d['cpu_per_sentence_ms']:.1f} ms/sentence), peak RSS {d['rss_mb']:.0f} MB; {d['log']}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        mode, _, out, _sep, *rest = argv[1:]
        run_child(mode, out, rest)
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run-dir", required=True, help="the workflow directory of the finished run (e.g. results/table6-run)")
    p.add_argument("--pair", default="ja-en")
    p.add_argument("--fs", default="small")
    p.add_argument("--method", default="lbmert")
    p.add_argument("--setting", default="default")
    p.add_argument("--sample", default="0")
    p.add_argument("--iterations", type=int, nargs="*", default=[2, 14], help="iterations to profile (none: only --decode, --startup)")
    p.add_argument("--scratch", help="scratch directory (default: a new /tmp/profile_lbmert.*)")
    p.add_argument("--modes", nargs="+", default=["plain", "phases", "cprofile", "memory", "ablation"],
                   choices=["plain", "phases", "cprofile", "memory", "ablation"])
    p.add_argument("--reuse", action="store_true", help="keep lattices already decoded in --scratch")
    p.add_argument("--startup", action="store_true", help="also the start-up of short jobs (needs --decode's k-best)")
    p.add_argument("--decode", action="store_true", help="also the first decode of the full dev set")
    p.add_argument("--repeats", type=int, default=5, help="runs of each start-up command (median)")
    p.add_argument("--json", help="write every measurement here (default: SCRATCH/profile.json)")
    args = p.parse_args(argv)
    run = Run(pathlib.Path(args.run_dir).resolve(), args.pair, args.fs, args.method, args.setting, args.sample)
    if not (run.root / run.dir).is_dir():
        raise SystemExit(f"no run directory {run.root / run.dir}")
    scratch = pathlib.Path(args.scratch or tempfile.mkdtemp(prefix="profile_lbmert.", dir="/tmp"))
    scratch.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    results: dict = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "commit": commit, "uptime_before": uptime(),
                     "run": str(run.root / run.dir), "scratch": str(scratch), "iterations": []}
    print(f"scratch {scratch}; {results['uptime_before']}", file=sys.stderr)
    for it in args.iterations:
        results["iterations"].append(profile_iteration(run, it, scratch, args.modes, args.reuse))
    if args.decode or args.startup:
        results["decode"] = measure_decode(run, scratch)
        print(f"decode: {results['decode']}", file=sys.stderr)
    if args.startup:
        results["startup"] = measure_startup(run, scratch, scratch / "decode" / "dev.kbest.gz", args.repeats)
    results["uptime_after"] = uptime()
    out = pathlib.Path(args.json or scratch / "profile.json")
    out.write_text(json.dumps(results, indent=1, default=float))
    print(summarize(results))
    print(f"\nall measurements: {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
