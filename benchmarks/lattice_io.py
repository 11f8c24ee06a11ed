"""Writing and reading unpruned lattices: a lattice decode's CPU time and ``read_lattice_set``'s (issue 9).

The lattice tuners decode the dev set to unpruned lattices every iteration (``smtlib decode --lattice F
--lattice-beam 0``, with the 100-best list and the 1-best) and read them back
(:func:`smtlib.lattice.reader.read_lattice_set`). This runs that decode on the first
``--sentences`` Multi30k dev sentences with the initial weights (Medium by default; models and inputs
as ``benchmarks/_inputs.py`` finds them), each decode in its own child process timed by its CPU time
(``os.wait4``: user + system, so other jobs on the machine do not count), then reads the lattice
file in a child process (CPU seconds of reading and of ``build()``).

``--baseline DIR`` (another checkout, e.g. ``git archive main | tar -x -C DIR``) runs the same decode
with that code, alternating with this tree's ``--pairs`` times (both then see the same machine load),
checks that the lattice, k-best and 1-best files are byte-identical (the gzip bytes too), and reads
the lattice with both readers.

    python benchmarks/lattice_io.py [--sentences 200] [--feature-set medium] [--models DIR]
        [--work DIR] [--baseline DIR] [--pairs 2]

Last line: ``lattice_decode_cpu_seconds: S`` (this tree's mean).

Measured 2026-11-23, 21:10-21:40 UTC (2 cores shared with other jobs, load average 4-6; the
lead's 200-sentence baseline on an idle machine: 14.8 s), Medium, 200 sentences (1.59M edges,
298 MB of text, 41.7 MB gzip), this script with ``--baseline`` = main at f38fef1: the decode
15.32 / 16.87 s -> 6.98 / 7.45 s CPU with the compiled writer (:mod:`smtlib.lattice.format`),
lattice, k-best and 1-best files byte-identical; all 1,014 sentences (8.07M edges) 76.1 -> 32.6 s
CPU, identical. ``read_lattice_set`` of the 200-sentence file: 3.2 s reading + 0.75 s ``build()``
(unchanged: decompression ~0.45 s, chunk assembly ~0.35 s, the line scan ~0.5 s, number parsing
~1.1 s, building the set ~0.7 s).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _inputs import ROOT, dev_set, find_model, init_weights  # noqa: E402

READ = """
import json, sys, time
from smtlib.lattice.reader import read_lattice_set
t0 = time.process_time()
builder = read_lattice_set(sys.argv[1], int(sys.argv[2]))
t1 = time.process_time()
ls = builder.build()
t2 = time.process_time()
print(json.dumps({"read": t1 - t0, "build": t2 - t1, "edges": int(ls.edge_off[-1])}))
"""


def run(cmd: list[str], repo: pathlib.Path, log: pathlib.Path) -> float:
    """Run ``cmd`` with ``repo``'s code; its CPU seconds (user + system of the child)."""
    env = {**os.environ, "PYTHONPATH": str(repo), "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    with open(log, "w") as fh:
        # cwd: ``python -m`` puts the working directory first on sys.path, before PYTHONPATH
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=repo)
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed ({log}): {' '.join(cmd)}\n" + log.read_text()[-2000:])
    return usage.ru_utime + usage.ru_stime


def decode(repo: pathlib.Path, model: pathlib.Path, weights: pathlib.Path, src: pathlib.Path, out: pathlib.Path) -> float:
    cmd = [sys.executable, "-m", "smtlib", "decode", "--model", str(model), "--weights", str(weights), "--input",
           str(src), "--kbest", f"{out}.kbest.gz", "--k", "100", "--output", f"{out}.1best", "--lattice",
           f"{out}.lattice.gz", "--lattice-beam", "0", "--jobs", "1", "--quiet"]
    return run(cmd, repo, pathlib.Path(f"{out}.log"))


def read(repo: pathlib.Path, lattice: pathlib.Path, n: int, log: pathlib.Path) -> dict:
    run([sys.executable, "-c", READ, str(lattice), str(n)], repo, log)
    return json.loads(log.read_text().strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sentences", type=int, default=200)
    ap.add_argument("--feature-set", default="medium")
    ap.add_argument("--models")
    ap.add_argument("--work", default=str(ROOT / "resources" / "benchmarks" / "lattice_io"))
    ap.add_argument("--baseline", help="another checkout to compare with (outputs must be byte-identical)")
    ap.add_argument("--pairs", type=int, default=2)
    args = ap.parse_args(argv)
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    model = find_model(args.feature_set, args.models)
    src, _ = dev_set(work, args.sentences)
    weights = init_weights(model, work)
    trees = {"this": ROOT} | ({"baseline": pathlib.Path(args.baseline).resolve()} if args.baseline else {})
    for name, repo in trees.items():  # compile (or load numba's cache) before timing
        decode(repo, model, weights, src, work / f"warm-{name}")
    times: dict[str, list[float]] = {name: [] for name in trees}
    for _ in range(max(1, args.pairs)):
        for name, repo in trees.items():
            times[name].append(decode(repo, model, weights, src, work / name))
    for name, ts in times.items():
        print(f"{name}: lattice decode of {args.sentences} sentences, CPU s: {' '.join(f'{t:.2f}' for t in ts)}")
    if args.baseline:
        for suffix in ("lattice.gz", "kbest.gz", "1best"):
            same = (work / f"this.{suffix}").read_bytes() == (work / f"baseline.{suffix}").read_bytes()
            print(f"{suffix}: {'identical' if same else 'DIFFERENT'}")
            if not same:
                sys.exit(f"{suffix} differs from the baseline's")
    for name, repo in trees.items():
        r = read(repo, work / f"{name}.lattice.gz", args.sentences, work / f"read-{name}.log")
        print(f"{name}: read_lattice_set {r['read']:.2f} s + build {r['build']:.2f} s CPU ({r['edges']} edges)")
    mean = sum(times["this"]) / len(times["this"])
    print(f"lattice_decode_cpu_seconds: {mean:.2f}")


if __name__ == "__main__":
    main()
