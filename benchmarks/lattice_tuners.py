"""One step of lb-mert and lb-mira (and kb-mert for comparison) on real Multi30k dev lattices (issue 10).

A Medium fr-en system (``--models DIR``/fr-en-medium; default ``resources/benchmarks/models``, built
there with ``smtlib train build`` when missing, see ``benchmarks/_inputs.py``) decodes the first
``--sentences`` Multi30k dev sentences with the initial weights (Cherry & Foster §4.2) to its unpruned lattices
(``--lattice-beam 0``) and a 100-best list; then, each in its own subprocess timed by its CPU time
(``os.wait4``: user + system of the child, so other jobs on the machine do not count):

* ``smtlib tune lbmert`` on the lattices (one tuning step: 20 random restarts),
* ``smtlib tune lbmira`` on the lattices (J = 30, C = 0.01, 50 edges per reference word),
* ``smtlib tune mert`` on the 100-best list (kb-mert, the same restarts),

and every step's weights re-decode the same sentences; the dev BLEU of each is printed next to the
initial weights'. ``lbmert``'s pool optimum (the corpus BLEU of its Viterbi paths in the lattices) is
printed next to kb-mert's optimum on the 100-best list (lattices contain every 100-best path, so
lb-mert's is expected to be at least kb-mert's). No peer: Moses has no lattice MERT for phrase-based
lattices here, so the headline is lb-mert's own step time.

    python benchmarks/lattice_tuners.py [--sentences 200|1014] [--models DIR] [--work DIR] \
        [--methods lbmert lbmira mert] [--restarts 20] [--reuse] [--no-redecode] [--baseline DIR] [--jobs N]

``--restarts`` sets lbmert's and mert's random restarts (a partial step with fewer), ``--reuse`` keeps
the initial decode already in ``--work``, ``--no-redecode`` skips the dev BLEU of the tuned weights,
``--jobs`` runs this tree's lbmert climbs on N threads (``smtlib tune --jobs``; not the baseline's:
the CPU seconds are those of all threads, the wall seconds are printed too, and a child process
checks that the line search releases the GIL: the longest pause of a Python thread ticking every
millisecond next to the line searches along every axis).
Each step's row shows its CPU seconds, the tuner process's peak RSS and its number of line searches.

``--baseline DIR`` (another checkout, e.g. ``git archive main | tar -x -C DIR`` before a change) measures
before and after in one run: the baseline's lbmert step runs at the same time as this tree's (so both
see the same machine load), their weights and aggregated paths (``--paths-out``) are compared byte
for byte, the loading of the lattices is timed apart (both at once again) to give CPU seconds per
line search, and a child process runs 36 line searches (every axis from the initial weights and from
one random start) with the two envelope kernels alternately, checking identical envelopes and
results: the steadiest per-line-search comparison on a loaded machine.

Last line: ``lbmert_step_cpu_seconds: S``.

Measured 2026-11-23 (loaded 2-core machine, CPU seconds of the tuner process, 200 sentences, 1.59M
lattice edges): lbmert 229.4 s (1,166 line searches, 307k envelope paths), lbmira 6.0 s, mert 1.7 s;
dev BLEU init 46.73 -> lbmert 53.40, lbmira 52.04, mert 51.15; pool optimum lbmert 53.51 >= mert 52.51.

Measured 2026-11-23, 16:30-16:55 UTC (load average 11-14 on 2 cores; CPU seconds, ``os.wait4``):

* all 1,014 dev sentences (8.07M lattice edges, 1.04M nodes), ``--restarts 1`` (the current weights
  plus one random start, i.e. 2 of a full step's 21 climbs): lbmert 190.8 s CPU, 162 line searches,
  peak RSS 2,447 MB; loading the lattices alone 23 s CPU (peak 2,235 MB before and 1,903 MB after
  trimming freed buffers in :mod:`smtlib.lattice.lattice_set`). That is (190.8 - 23) / 162 = 1.0 s
  per line search; a full step (about 1,200 line searches at 200 sentences) is therefore about
  21 min CPU on 1,014 sentences. The full step was not run here: at this machine's load it would
  have taken more than two hours of wall time.
* the same on 200 sentences (after the trimming): 31.5 s CPU, 122 line searches (0.22 s each), peak RSS
  633 MB (loading alone: 764 MB before the trimming, 608 MB after).

Profile of one line search (2026-11-23, CPU seconds by ``time.process_time`` around each part, 200
sentences, every axis from the initial weights, before this change): envelope propagation
(``corpus_envelopes``) 0.18 s = 95 %, path BLEU statistics 0.006 s, the corpus merge of breakpoints
(``interval_scores``, one sort, incremental statistics) 0.0005 s, collecting envelope paths 0.002 s,
the slopes (a contiguous feature column; intercepts are updated by ``x * slopes``, no dot products)
nothing. Inside the propagation, only reading every edge's tail envelope costs 0.028 s (14 %); the
rest is the hull scan's data-dependent comparisons. The lattices (200 sentences: 1.59M edges,
204k nodes) have every node on a start-goal path (nothing to drop), 10 % chain nodes (one edge in,
one out: collapsing them would change floating-point sums and save under 5 %), in-degree median 2,
90th percentile 13, the goal nodes 2,400 on average (30 % of all edges), envelopes of 7.5 lines on
average (at most 35). Of the merges of an incoming envelope into a node's, 72-86 % change nothing:
:func:`smtlib.lattice.envelope._first_change` decides that with the merge's own
floating-point operations and skips them (or starts a merge at its first possible change).
Measured with ``--baseline`` (main before the change), interleaved line searches in one process
with bit-identical envelopes and results, 36 searches each: 200 sentences 0.211 s -> 0.143 s CPU per line
search (1.47x); all 1,014 sentences (8.07M edges) 1.159 s -> 0.771 s (1.50x), so a full step (about 1,200
line searches) goes from about 23 to about 16 CPU minutes (extrapolated, loading 23 s apart).
A whole step, 200 sentences, 20 restarts, both steps at the same time (load average about 10):
370.7 s -> 266.8 s CPU (0.312 -> 0.223 s per line search, 1.40x), weights and aggregated paths
byte-identical (objective 53.51, 1,166 line searches, 307,159 envelope paths in both).

Measured 2026-11-23, 21:30-21:55 UTC (load average 2-6 on 2 cores; CPU seconds), after the envelope
pass stopped rebinding arrays in its node loop (numba's reference counting, 13 % of the pass's
CPU time by ``perf``) and lbmert's climbs became independent (``--jobs``):

* ``--baseline`` (main before the change), 200 sentences, ``--jobs 1``: interleaved, 36 line searches,
  bit-identical envelopes and results: 0.139 -> 0.117 s CPU per line search (1.19x); all 1,014
  sentences (same 36 searches, scratch script): 0.644 -> 0.535 s (1.20x). The whole step, both at the
  same time: 263.0 -> 205.0 s CPU (1.28x), weights and aggregated paths byte-identical (objective
  53.51, 1,166 line searches).
* ``--jobs 2`` against ``--jobs 1``, same tree, 200 sentences (``smtlib tune lbmert`` under
  ``/usr/bin/time``): 1 thread 180.3 s CPU, 180.7 s wall (load average 1); 2 threads 176.8 s CPU,
  115.5 s wall (1.56x; CPU 153 %: loading, the final scores and writing the paths are sequential,
  and the 21 climbs of unequal length leave one thread idle at the end). Weights, ``info`` and the
  aggregated paths are byte-identical for 1 and 2 threads (and equal to main's). Earlier, at load
  average 4-6, 2 threads ran at 106 % CPU (178.5 s wall): the machine then gave two single-threaded
  processes started together 1.1-1.3 cores in all. The line search holds the GIL for almost none of
  its time: a Python thread ticking every millisecond next to 14 line searches paused at most 7 ms
  (with the kernel compiled without ``nogil``: 130-190 ms, the length of a search); on a quiet
  machine the envelope pass alone on 2 threads takes 0.83 s for what 1 thread does in 1.56 s.
  This script with ``--jobs 2`` (22:05 UTC, load average 1): 187.9 s CPU, 122.2 s wall, weights and
  paths equal to main's; its GIL check: pauses of at most 2.5 ms next to 18 line searches.
* Full dev (1,014 sentences): about 1,100-1,200 line searches x 0.535 s + 23 s loading = 10-11 CPU
  minutes per step, about 5-6 minutes of wall time on two free cores with ``--jobs 2``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from _inputs import dev_set, find_model, init_weights  # benchmarks/_inputs.py, beside this script

REPO = pathlib.Path(__file__).resolve().parents[1]
#: wall seconds of every command run by :func:`run_together`, by log file
WALL: dict[pathlib.Path, float] = {}
#: what a tuning step spends before its first line search: lattices and references loaded as ``smtlib tune`` does
LOAD_ONLY = """
import sys
from smtlib.bleu.references import read_references
from smtlib.bleu.stats import BleuSettings
try:
    from smtlib.lattice.problem import load_lattice_problem
except ImportError:  # a baseline from before smtlib.lattice (issue 26)
    from smtlib.tuners.lattice_data import load_lattice_problem
load_lattice_problem([sys.argv[1]], None, read_references([sys.argv[2]]), BleuSettings(tokenize="none", lowercase=True))
"""


def run_together(jobs: list[tuple[list[str], pathlib.Path, pathlib.Path]]) -> list[tuple[float, float]]:
    """Run the commands ``(cmd, log, repo)`` at the same time, each with ``repo``'s code (stdout/stderr to ``log``).

    Returns each one's CPU seconds (user + system, ``os.wait4``) and peak RSS in MB. Started together,
    the runs share the machine's load, so their CPU times can be compared. Each one's wall seconds
    are kept in :data:`WALL` (by log file).
    """
    procs = {}
    started = time.monotonic()
    for k, (cmd, log, repo) in enumerate(jobs):
        env = {**os.environ, "PYTHONPATH": str(repo), "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
        with open(log, "w") as fh:
            # cwd: ``python -m`` and ``-c`` put the working directory first on sys.path, before PYTHONPATH
            procs[subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=repo).pid] = k
    out: list = [None] * len(jobs)
    while procs:
        pid, status, usage = os.wait4(-1, 0)
        if pid not in procs:
            continue
        k = procs.pop(pid)
        cmd, log, _ = jobs[k]
        WALL[log] = time.monotonic() - started
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"failed ({log}): {' '.join(cmd)}\n" + log.read_text()[-2000:])
        out[k] = (usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)
    return out


def run(cmd: list[str], log: pathlib.Path, repo: pathlib.Path = REPO) -> tuple[float, float]:
    """Run ``cmd`` with ``repo``'s code (stdout/stderr to ``log``); its CPU seconds (user + system) and peak RSS in MB."""
    return run_together([(cmd, log, repo)])[0]


def interleaved_line_searches(lattice: str, refs: str, weights: str, baseline: str, seed: int) -> None:
    """Child: line searches with the baseline's and this tree's envelope kernel alternately, in one process.

    The lattices are loaded once (this tree's code); the baseline checkout's
    envelope module (``smtlib/lattice/envelope.py``, or ``smtlib/decoder/lattice_envelope.py`` in a
    checkout from before issue 26) is loaded from its file as a module of its own, and lb-mert's
    line search (:class:`smtlib.tuners.lbmert.LatticeLineSearch`: envelopes, path statistics, interval
    scores) runs with one kernel, then the other (the order alternating), along every coordinate axis
    from the initial weights and from one random start. Alternating in one process makes both see the
    same machine load. Every search's envelopes (breakpoints and paths) and result must be identical.
    Prints JSON: CPU seconds per line search with each kernel, and the number of searches.
    """
    import importlib
    import shutil
    import time

    import numpy as np

    import smtlib.tuners.lbmert as lbmert
    from smtlib.bleu.references import read_references
    from smtlib.bleu.stats import BleuSettings
    from smtlib.lattice.problem import load_lattice_problem
    from smtlib.weights import read_weights

    # an importable copy under a name of its own (numba's on-disk cache needs a module it can import)
    copy_dir = pathlib.Path(tempfile.mkdtemp(prefix="baseline-kernel-"))
    source = pathlib.Path(baseline) / "smtlib" / "lattice" / "envelope.py"
    if not source.exists():
        source = pathlib.Path(baseline) / "smtlib" / "decoder" / "lattice_envelope.py"
    shutil.copy(source, copy_dir / "baseline_lattice_envelope.py")
    sys.path.insert(0, str(copy_dir))
    base = importlib.import_module("baseline_lattice_envelope")
    kernels = {"base": base.corpus_envelopes, "tree": lbmert.corpus_envelopes}
    ls, lrefs, _ = load_lattice_problem([lattice], None, read_references([refs]), BleuSettings(tokenize="none", lowercase=True))
    dense = ls.dense
    init = ls.weight_vector(read_weights(weights))[: dense.shape[1]]
    rng = np.random.default_rng(seed)
    starts = [dense @ init, dense @ rng.uniform(0.0, 1.0, dense.shape[1])]
    search = lbmert.LatticeLineSearch(ls, lrefs, collect=False)
    cpu = {"base": 0.0, "tree": 0.0}
    n = 0
    for a in starts:
        for d in range(dense.shape[1]):
            b = np.ascontiguousarray(dense[:, d])
            order = ("base", "tree") if n % 2 == 0 else ("tree", "base")
            results = {}
            for tag in order:
                lbmert.corpus_envelopes = kernels[tag]
                if n == 0:
                    search.search(a, b, 1.0, None)  # compile / load the cached kernels outside the timing
                start = time.process_time()
                results[tag] = search.search(a, b, 1.0, None)
                cpu[tag] += time.process_time() - start
            envelopes = [kernels[tag](ls.n_nodes, ls.edge_off, ls.tails, ls.heads, a, b) for tag in order]
            same = results["base"] == results["tree"] and all(np.array_equal(x, y) for x, y in zip(*envelopes, strict=True))
            if not same:
                sys.exit(f"line search {n} (axis {d}): the kernels' envelopes or results differ")
            n += 1
    lbmert.corpus_envelopes = kernels["tree"]
    shutil.rmtree(copy_dir, ignore_errors=True)
    print(json.dumps({"base": cpu["base"] / n, "tree": cpu["tree"] / n, "searches": n}))


def gil_pauses(lattice: str, refs: str, weights: str) -> None:
    """Child: how long the line search keeps other Python threads waiting (does it release the GIL?).

    A Python thread that sleeps 1 ms in a loop records its pauses while this thread runs a line
    search along every axis from the initial weights; a search holding the GIL would pause it for
    the whole search. Prints JSON: the longest pause and the share of the time in pauses over 20 ms.
    """
    import threading
    import time

    import numpy as np

    from smtlib.bleu.references import read_references
    from smtlib.bleu.stats import BleuSettings
    from smtlib.lattice.problem import load_lattice_problem
    from smtlib.tuners.lbmert import LatticeLineSearch
    from smtlib.weights import read_weights

    ls, lrefs, _ = load_lattice_problem([lattice], None, read_references([refs]), BleuSettings(tokenize="none", lowercase=True))
    dense = ls.dense
    a = dense @ ls.weight_vector(read_weights(weights))[: dense.shape[1]]
    search = LatticeLineSearch(ls, lrefs, collect=False)
    search.search(a, np.ascontiguousarray(dense[:, 0]), 1.0, None)  # compile / load the cached kernels first
    done = threading.Event()
    pauses: list[float] = []

    def tick() -> None:
        last = time.perf_counter()
        while not done.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            pauses.append(now - last)
            last = now

    ticker = threading.Thread(target=tick)
    ticker.start()
    for d in range(dense.shape[1]):
        search.search(a, np.ascontiguousarray(dense[:, d]), 1.0, None)
    done.set()
    ticker.join()
    g = np.array(pauses)
    print(json.dumps({"max_ms": 1000 * float(g.max()), "long_share": float(g[g > 0.02].sum() / g.sum()), "searches": dense.shape[1]}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sentences", type=int, default=200)
    ap.add_argument("--models", help="directory with fr-en-medium (default: built once into "
                    "resources/benchmarks/models)")
    ap.add_argument("--work", help="work directory (default: a temporary one)")
    ap.add_argument("--methods", nargs="+", default=["lbmert", "lbmira", "mert"], choices=["lbmert", "lbmira", "mert"],
                    help="tuning steps to run (default: all three; lbmert first, its time is the last line)")
    ap.add_argument("--restarts", type=int, default=20,
                    help="random restarts of lbmert and mert (default 20, Cherry & Foster §4); fewer for a partial step")
    ap.add_argument("--no-redecode", action="store_true", help="skip re-decoding with the tuned weights (no dev BLEU)")
    ap.add_argument("--baseline", metavar="DIR",
                    help="another checkout of smtlib (e.g. the main branch before a change): its lbmert step is run "
                         "in the same run, and the weights and aggregated paths of both are compared byte for byte")
    ap.add_argument("--reuse", action="store_true",
                    help="reuse the initial decode (it0.*) already in --work for the same --sentences")
    ap.add_argument("--jobs", type=int, default=1, help="threads of this tree's lbmert step (smtlib tune --jobs; default 1)")
    ap.add_argument("--child-interleaved", nargs=4, help=argparse.SUPPRESS)
    ap.add_argument("--child-gil", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_interleaved:
        interleaved_line_searches(*args.child_interleaved, seed=1)
        return
    if args.child_gil:
        gil_pauses(*args.child_gil)
        return
    model = find_model("medium", args.models).resolve()
    work = pathlib.Path(args.work or tempfile.mkdtemp(prefix="lattice-bench-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    n = args.sentences
    dev_set(work, n)  # work/dev.fr, work/dev.en
    smtlib = [sys.executable, "-m", "smtlib"]
    bleu = ["--tokenize", "none", "--lowercase"]

    def decode(weights: pathlib.Path, tag: str, lattice: bool) -> tuple[float, float]:
        cmd = smtlib + ["decode", "--model", str(model), "--weights", str(weights), "--input", str(work / "dev.fr"),
                        "--output", str(work / f"{tag}.1best"), "--quiet", "--jobs", "1"]
        if lattice:
            cmd += ["--lattice", str(work / f"{tag}.lat.gz"), "--lattice-beam", "0",
                    "--kbest", str(work / f"{tag}.kbest.gz"), "--k", "100"]
        return run(cmd, work / f"{tag}.decode.log")

    def dev_bleu(tag: str) -> float:
        out = subprocess.run(smtlib + ["bleu", "--refs", str(work / "dev.en"), "--hyps", str(work / f"{tag}.1best"),
                                       *bleu], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                             check=True).stdout
        return float(json.loads(out)["score"])

    init = init_weights(model, work)
    done = all((work / f"it0.{x}").exists() for x in ("1best", "lat.gz", *(["kbest.gz"] if "mert" in args.methods else [])))
    if not (args.reuse and done):
        decode(init, "it0", True)
    rows = [("init", None, None, dev_bleu("it0"), None, None)]
    steps = {
        "lbmert": ["--lattice", str(work / "it0.lat.gz")],
        "lbmira": ["--lattice", str(work / "it0.lat.gz")],
        "mert": ["--kbest", str(work / "it0.kbest.gz")],
    }
    restarts = {m: ["--set", f"random_restarts={args.restarts}"] for m in ("lbmert", "mert")}
    runs = [(m, m, REPO) for m in sorted(args.methods, key=list(steps).index)]
    if args.baseline and "lbmert" in args.methods:
        runs.insert(1, ("lbmert", "lbmert@base", pathlib.Path(args.baseline).resolve()))
    per_search = {}

    def tune_cmd(method: str, tag: str) -> list[str]:
        extra = ["--paths-out", str(work / f"{tag}.paths.gz")] if method == "lbmert" else []
        if tag == "lbmert" and args.jobs != 1:
            extra += ["--jobs", str(args.jobs)]
        return smtlib + ["tune", method, *steps[method], "--refs", str(work / "dev.en"), "--init", str(init),
                         "--out", str(work / f"{tag}.w"), "--info", str(work / f"{tag}.json"),
                         "--seed", "1", "--quiet", *bleu, *restarts.get(method, []), *extra]

    # lbmert and its baseline: the two steps at the same time, then the two loadings at the same time
    lb = [r for r in runs if r[0] == "lbmert"]
    measured = dict(zip([tag for _, tag, _ in lb],
                        run_together([(tune_cmd(m, tag), work / f"{tag}.tune.log", repo) for m, tag, repo in lb]), strict=True))
    loads = run_together([([sys.executable, "-c", LOAD_ONLY, str(work / "it0.lat.gz"), str(work / "dev.en")],
                           work / f"{tag}.load.log", repo) for _, tag, repo in lb])
    for method, tag, repo in runs:
        if tag in measured:
            cpu, rss = measured[tag]
        else:
            cpu, rss = run(tune_cmd(method, tag), work / f"{tag}.tune.log", repo)
        info = json.loads((work / f"{tag}.json").read_text())
        if method == "lbmert":
            load = loads[[t for _, t, _ in lb].index(tag)][0]
            per_search[tag] = (load, (cpu - load) / max(info["line_searches"], 1))
        score = None
        if not args.no_redecode and tag == method:
            decode(work / f"{tag}.w", tag, False)
            score = dev_bleu(tag)
        rows.append((tag, cpu, rss, score, info.get("objective"), info.get("line_searches")))
    print(f"{n} Multi30k dev sentences, Medium fr-en, unpruned lattices, {args.restarts} random restarts; work dir {work}")
    print(f"{'weights':8} {'step CPU s':>10} {'peak MB':>8} {'dev BLEU':>9} {'pool optimum':>13} {'line searches':>14}")
    for name, cpu, rss, score, objective, searches in rows:
        cpu_s = f"{cpu:10.1f}" if cpu is not None else f"{'':10}"
        rss_s = f"{rss:8.0f}" if rss is not None else f"{'':8}"
        obj = f"{100 * objective:13.2f}" if objective is not None else f"{'':13}"
        ls_s = f"{searches:14d}" if searches is not None else ""
        score_s = f"{score:9.2f}" if score is not None else f"{'':9}"
        print(f"{name:8} {cpu_s} {rss_s} {score_s} {obj} {ls_s}")
    if args.baseline and "lbmert" in args.methods:
        log = work / "interleaved.log"
        run([sys.executable, __file__, "--child-interleaved", str(work / "it0.lat.gz"), str(work / "dev.en"), str(init),
             str(pathlib.Path(args.baseline).resolve())], log)
        inter = json.loads(log.read_text().strip().splitlines()[-1])
        print(f"interleaved in one process, {inter['searches']} line searches (every axis from the initial weights and "
              f"one random start), identical envelopes and results: CPU s per line search baseline {inter['base']:.3f}, "
              f"this tree {inter['tree']:.3f} ({inter['base'] / inter['tree']:.2f}x)")
    if "lbmert" in args.methods and args.jobs > 1:
        log = work / "gil.log"
        run([sys.executable, __file__, "--child-gil", str(work / "it0.lat.gz"), str(work / "dev.en"), str(init)], log)
        gil = json.loads(log.read_text().strip().splitlines()[-1])
        print(f"GIL: a Python thread ticking every ms next to {gil['searches']} line searches paused at most "
              f"{gil['max_ms']:.1f} ms; pauses over 20 ms {100 * gil['long_share']:.0f} % of the time")
    for tag, (load, each) in per_search.items():
        jobs = f", {args.jobs} threads" if tag == "lbmert" and args.jobs != 1 else ""
        print(f"{tag}: loading the lattices {load:.1f} s CPU, then {each:.3f} s CPU per line search; "
              f"step wall {WALL[work / f'{tag}.tune.log']:.1f} s{jobs}")
    if "lbmert@base" in per_search:
        same = {what: (work / f"lbmert.{what}").read_bytes() == (work / f"lbmert@base.{what}").read_bytes()
                for what in ("w", "paths.gz")}
        print(f"baseline {args.baseline}: line search {per_search['lbmert@base'][1] / per_search['lbmert'][1]:.2f}x faster "
              f"here; weights identical: {same['w']}; aggregated paths identical: {same['paths.gz']}")
    if "lbmert" in args.methods:
        print(f"lbmert_step_cpu_seconds: {rows[1][1]:.1f}")


if __name__ == "__main__":
    main()
