"""A real decode's CPU, this source tree against another checkout, in pairs, with the outputs compared.

``benchmarks/decode.py`` measures the decoder against Moses; this script measures a change to the
decoder against the code before it, as the workflow runs it: the whole ``smtlib decode`` process
(start-up, model loading, options, search, k-best lines and their writing) on a real model and input,
with the workflow's search settings (stack 100, distortion limit 6, table limit 20, cube pruning with
pop limit 200). Each round runs the two trees back to back, in turns first, so that a pair shares
the machine's load of the moment; the table gives the medians, the median of the paired differences
and the number of rounds the new tree was faster in. Each tree decodes once before the rounds, so
numba's cache is warm (it is keyed on the source file). The outputs (1-best, and the k-best list
with ``--k``) must be byte-identical between the trees, or the script says so.

    git worktree add /tmp/old REV
    python benchmarks/decode_trees.py --old /tmp/old --model M/model.yaml --weights W --input SRC \\
        [--k 100] [--repeats 4] [--json OUT]
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import pathlib
import statistics
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from startup import ROOT, run  # noqa: E402  (benchmarks/startup.py, beside this script)

SEARCH = ["--stack-size", "100", "--distortion-limit", "6", "--table-limit", "20", "--search", "cube",
          "--pop-limit", "200"]


def decode_args(opts: argparse.Namespace, tag: str) -> tuple[list[str], list[str]]:
    """The command for one tree and the files it writes (suffixed ``tag``)."""
    args = ["decode", "--model", str(opts.model.resolve()), "--weights", str(opts.weights.resolve()), "--input",
            str(opts.input.resolve()), "--output", f"1best.{tag}", *SEARCH, "--quiet"]
    outs = [f"1best.{tag}"]
    if opts.k:
        args += ["--kbest", f"kbest.{tag}", "--k", str(opts.k)]
        outs.append(f"kbest.{tag}")
    return args, outs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", type=pathlib.Path, required=True, help="the other source tree")
    ap.add_argument("--model", type=pathlib.Path, required=True, help="model.yaml of a trained system")
    ap.add_argument("--weights", type=pathlib.Path, required=True)
    ap.add_argument("--input", type=pathlib.Path, required=True, help="source sentences")
    ap.add_argument("--k", type=int, default=0, help="also write a k-best list of this size (default: 1-best only)")
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--json", type=pathlib.Path, help="write the measurements here")
    opts = ap.parse_args()
    trees = {"new": ROOT, "old": opts.old.resolve()}
    work = pathlib.Path(tempfile.mkdtemp(prefix="smtlib_decode_trees_"))
    for tag, tree in trees.items():
        run(tree, decode_args(opts, tag)[0], work, check=True)
    samples: dict[str, list[dict]] = {tag: [] for tag in trees}
    for round_ in range(opts.repeats):
        for tag in list(trees) if round_ % 2 == 0 else list(reversed(trees)):
            samples[tag].append(run(trees[tag], decode_args(opts, tag)[0], work, check=True))
    same = all(filecmp.cmp(work / a, work / b, shallow=False)
               for a, b in zip(decode_args(opts, "new")[1], decode_args(opts, "old")[1], strict=True))
    cpu = {tag: [s["cpu"] for s in runs] for tag, runs in samples.items()}
    diffs = [n - o for n, o in zip(cpu["new"], cpu["old"], strict=True)]
    load = os.getloadavg()
    row = {"old_cpu": statistics.median(cpu["old"]), "new_cpu": statistics.median(cpu["new"]),
           "paired_diff": statistics.median(diffs), "new_faster_in": sum(d < 0 for d in diffs),
           "rss_mb": {tag: max(s["rss_mb"] for s in runs) for tag, runs in samples.items()}, "same_output": same}
    row["new_over_old"] = row["new_cpu"] / row["old_cpu"]
    print(f"{opts.input} ({sum(1 for _ in opts.input.open())} sentences), {opts.k or 1}-best; median of "
          f"{opts.repeats} runs, CPU seconds of the whole process; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print("| old CPU s | new CPU s | new / old | new - old, paired | new faster in | same output |")
    print("|---|---|---|---|---|---|")
    print(f"| {row['old_cpu']:.2f} | {row['new_cpu']:.2f} | {row['new_over_old']:.3f} | {row['paired_diff']:+.2f} | "
          f"{row['new_faster_in']} of {opts.repeats} | {'yes' if same else 'NO'} |")
    if opts.json:
        opts.json.write_text(json.dumps({"row": row, "cpu": cpu, "trees": {k: str(v) for k, v in trees.items()},
                                         "load": load}, indent=1) + "\n")
    if not same:
        raise SystemExit("the trees' outputs differ")


if __name__ == "__main__":
    main()
