"""The fixed cost of the workflow's short jobs, against Python's own start-up in the same run.

A table run is thousands of short jobs (a k-best tuning step is 4.5 CPU-s on average, a MIRA shard
epoch 3.9); each pays the interpreter, the imports and numba's cache before it does any work. This
script runs each short command on tiny inputs (a toy model, 5 sentences), so that what it measures is
that fixed cost, and ``python -c pass`` beside them in the same rounds:

* ``smtlib tune kbmira``, ``smtlib tune mert`` and ``smtlib tune pro``: one k-best tuning step on a
  5-sentence pool;
* ``smtlib kbest add``: a 5-sentence k-best list made into a pool;
* ``smtlib tune mira --shard 0``: a MIRA shard epoch (decoder in the loop) on 5 sentences;
* ``smtlib decode``: one sentence, 20-best;
* ``smtlib bleu``: 5 hypotheses.

Each command runs ``--repeats`` times, the commands interleaved round by round, as
``python -m smtlib ...`` with ``PYTHONPATH`` set to the source tree; CPU is user + system of the
child (``os.wait4``). Python's bytecode is written on the warm-up run and read afterwards (under the
working directory, ``PYTHONPYCACHEPREFIX``), as an installed package's is. With ``--old DIR`` (another checkout, e.g. ``git worktree add /tmp/old REV``)
every command also runs from that tree in the same rounds, right before or after the new tree's
(in turns), its outputs are compared with ``cmp``, and the table gives new / old per command and the
median of the paired differences with the number of rounds the new tree was faster in: on a loaded
machine a command's CPU varies by tens of percent from minute to minute, and pairs run seconds apart
share most of that. Each tree runs every command once before the rounds, so
numba's cache is warm (it is keyed on the source file).

    python benchmarks/startup.py [--old DIR] [--repeats 7] [--json OUT]

The headline is the k-best tuning step's median CPU above ``python -c pass``.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from tests.support.decoder_toy import random_source, start_weights, write_toy_model  # noqa: E402

SENTENCES = 5
BLEU = ["--tokenize", "none"]  # as the workflow scores (config `bleu`)


def _write_inputs(work: pathlib.Path, tree: pathlib.Path) -> None:
    """The toy model, 5 source and reference lines, the initial weights, a 20-best list and its pool."""
    from smtlib.weights import write_weights

    rng = np.random.default_rng(7)
    spec = write_toy_model(work / "model", "medium", seed=7)
    (work / "src").write_text("\n".join(random_source(rng, SENTENCES, (3, 9))) + "\n")
    refs = [" ".join(f"e{int(x)}" for x in rng.integers(0, 12, size=int(rng.integers(3, 9)))) for _ in range(SENTENCES)]
    (work / "ref").write_text("\n".join(refs) + "\n")
    write_weights(work / "init.weights", start_weights(spec))
    run(tree, ["decode", "--model", "model/model.yaml", "--weights", "init.weights", "--input", "src",
               "--kbest", "kbest.gz", "--k", "20", "--output", "hyp"], work, check=True)
    run(tree, ["kbest", "add", "--kbest", "kbest.gz", "--refs", "ref", *BLEU, "--out", "pool"], work, check=True)


def commands(tag: str) -> dict[str, tuple[list[str], list[str]]]:
    """The short jobs: name -> (arguments, the files it writes, suffixed ``tag``; stdout is compared too)."""
    step = ["--pool", "pool", "--refs", "ref", "--init", "init.weights", "--seed", "3", *BLEU]
    tuned = {m: ["tune", m, *step, "--out", f"{m}.{tag}", "--info", f"{m}.{tag}.json"] for m in ("kbmira", "mert", "pro")}
    return {
        "tune kbmira (k-best step)": (tuned["kbmira"], [f"kbmira.{tag}", f"kbmira.{tag}.json"]),
        "tune mert (k-best step)": (tuned["mert"], [f"mert.{tag}", f"mert.{tag}.json"]),
        "tune pro (k-best step)": (tuned["pro"], [f"pro.{tag}", f"pro.{tag}.json"]),
        "kbest add": (["kbest", "add", "--kbest", "kbest.gz", "--refs", "ref", *BLEU, "--out", f"pool.{tag}"], [f"pool.{tag}"]),
        "tune mira (shard epoch)": (["tune", "mira", "--model", "model/model.yaml", "--source", "src", "--refs", "ref",
                                     "--init", "init.weights", "--shard", "0", "--set", "shards=1", "--seed", "3", *BLEU,
                                     "--out", f"mira.{tag}.json"], [f"mira.{tag}.json"]),
        "decode (1 sentence)": (["decode", "--model", "model/model.yaml", "--weights", "init.weights", "--input", "one",
                                 "--k", "20", "--output", f"one.{tag}"], [f"one.{tag}"]),
        "bleu": (["bleu", "--refs", "ref", "--hyps", "hyp", *BLEU], []),
    }


def run(tree: pathlib.Path | None, args: list[str], cwd: pathlib.Path, check: bool = False) -> dict:
    """Run ``python -m smtlib ARGS`` from ``tree`` (``None``: ``python -c pass``); CPU and wall seconds."""
    env = dict(os.environ)
    # An installed smtlib has its bytecode compiled (pip does it); a source tree run with
    # PYTHONDONTWRITEBYTECODE set would compile every module at every start (~0.1 s here). The
    # warm-up run writes the bytecode under the working directory, and the rounds read it.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(cwd / "pycache")
    if tree is None:
        cmd = [sys.executable, "-c", "pass"]
    else:
        cmd = [sys.executable, "-m", "smtlib", *args]
        env["PYTHONPATH"] = str(tree)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if check and proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{stderr[-2000:]}")
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": wall, "rss_mb": usage.ru_maxrss / 1024,
            "status": proc.returncode, "stdout": stdout}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", type=pathlib.Path, help="another source tree to measure beside this one")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json", type=pathlib.Path, help="write the measurements here")
    ap.add_argument("--work", type=pathlib.Path, help="working directory (default: a temporary one)")
    opts = ap.parse_args()
    trees = {"new": ROOT}
    if opts.old:
        trees["old"] = opts.old.resolve()
    work = opts.work or pathlib.Path(tempfile.mkdtemp(prefix="smtlib_startup_"))
    work.mkdir(parents=True, exist_ok=True)
    _write_inputs(work, ROOT)
    (work / "one").write_text((work / "src").read_text().splitlines()[0] + "\n")
    for tag, tree in trees.items():  # warm numba's cache of each tree, and check every command runs
        for name, (args, _) in commands(tag).items():
            r = run(tree, args, work)
            if r["status"]:
                raise SystemExit(f"{tag}: {name} failed with status {r['status']}")
    samples: dict[str, dict[str, list[dict]]] = {"python -c pass": {"-": []}}
    by_tree = {tag: commands(tag) for tag in trees}
    for round_ in range(opts.repeats):
        samples["python -c pass"]["-"].append(run(None, [], work))
        for name in by_tree["new"]:
            # the trees back to back, in turns first: a pair shares the machine's load of the moment
            order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
            for tag in order:
                samples.setdefault(name, {}).setdefault(tag, []).append(run(trees[tag], by_tree[tag][name][0], work))
    same = {}
    if "old" in trees:
        for name in commands("new"):
            outs_new, outs_old = commands("new")[name][1], commands("old")[name][1]
            same[name] = all(filecmp.cmp(work / a, work / b, shallow=False) for a, b in zip(outs_new, outs_old)) and \
                samples[name]["new"][-1]["stdout"] == samples[name]["old"][-1]["stdout"]
    base = statistics.median(s["cpu"] for s in samples["python -c pass"]["-"])
    rows = []
    for name, by_tag in samples.items():
        row = {"command": name}
        for tag, runs in by_tag.items():
            row[f"{tag}_cpu"] = statistics.median(r["cpu"] for r in runs)
            row[f"{tag}_above_python"] = row[f"{tag}_cpu"] - base
            row[f"{tag}_rss_mb"] = max(r["rss_mb"] for r in runs)
        if "old_cpu" in row:
            row["new_over_old"] = row["new_cpu"] / row["old_cpu"]
            row["same_output"] = same[name]
            diffs = [n["cpu"] - o["cpu"] for n, o in zip(by_tag["new"], by_tag["old"])]
            row["paired_diff"] = statistics.median(diffs)
            row["new_faster_in"] = sum(d < 0 for d in diffs)
        rows.append(row)
    _print(rows, "old" in trees, opts.repeats, os.getloadavg())
    if opts.json:
        opts.json.write_text(json.dumps({"rows": rows, "samples": samples, "trees": {k: str(v) for k, v in trees.items()},
                                         "load": os.getloadavg()}, indent=1, default=str) + "\n")
    step = next(r for r in rows if r["command"].startswith("tune kbmira"))
    print(f"k-best tuning step above python -c pass (CPU s, median): {step['new_above_python']:.2f}")


def _print(rows: list[dict], with_old: bool, repeats: int, load: tuple[float, float, float]) -> None:
    print(f"median of {repeats} runs, CPU seconds (user + system); load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    head = "| command | CPU s | above python | peak RSS MB |"
    if with_old:
        head = ("| command | old CPU s | new CPU s | new / old | old above python | new above python | "
                "new - old, paired | new faster in | same output |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in rows:
        if r["command"] == "python -c pass":
            print(f"| python -c pass | {r['-_cpu']:.3f} | | |" + (" | | | | |" if with_old else ""))
        elif with_old:
            print(f"| {r['command']} | {r['old_cpu']:.2f} | {r['new_cpu']:.2f} | {r['new_over_old']:.2f} | "
                  f"{r['old_above_python']:.2f} | {r['new_above_python']:.2f} | {r['paired_diff']:+.2f} | "
                  f"{r['new_faster_in']} of {repeats} | {'yes' if r['same_output'] else 'NO'} |")
        else:
            print(f"| {r['command']} | {r['new_cpu']:.2f} | {r['new_above_python']:.2f} | {r['new_rss_mb']:.0f} |")


if __name__ == "__main__":
    main()
