"""Our tuners, with given settings, side by side on one k-best pool: pool BLEU and held-out BLEU.

The question it answers (issue 22): when a method's loop ends below kb-MERT's dev BLEU, is that a
defect or the method's nature, e.g. its regularization? Same protocol as ``moses_tuners.py`` (whose
pool handling it reuses): the pool (a workflow run directory's every k-best list, or files) is
merged, split into even sentence ids (tuned on) and odd ids (held out); each method/setting tunes on
the even part from the pool's initial weights; both parts' 1-best under the tuned weights are scored
with our BLEU (``--tokenize none``, lowercased references).

    python benchmarks/pool_settings.py --pool NAME=KBEST[,KBEST...]:REFS:INIT \\
        --runs mert kbmira "svm l2=10" svm "svm l2=100000" mr pro [--seeds 1 2]

A run is ``METHOD [KEY=VALUE ...]`` (each pair passed as ``--set``).
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from moses_tuners import SMTLIB, rerank_bleu, run, write_split  # noqa: E402


def tune(spec: str, seed: int, pool: dict, out: pathlib.Path) -> float:
    method, *settings = spec.split()
    tune_part = pool["parts"]["tune"]
    sets = [arg for kv in settings for arg in ("--set", kv)]
    cpu, _ = run(SMTLIB + ["tune", method, "--kbest", tune_part["kbest"], "--refs", *tune_part["refs"], "--init",
                           pool["init"], "--out", out, "--seed", seed, "--tokenize", "none", "--quiet", *sets])
    if not out.exists():
        sys.exit(f"smtlib tune {spec} wrote no weights")
    return cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pool", required=True, help="NAME=KBEST[,KBEST...]:REFS[,REFS...]:INIT")
    ap.add_argument("--runs", nargs="+", required=True, help='"METHOD [KEY=VALUE ...]" each')
    ap.add_argument("--seeds", nargs="+", type=int, default=[1])
    args = ap.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="pool-settings-"))
    try:
        pool = write_split("pool", args.pool, work / "pool")
        if pool is None:
            sys.exit("the pool has no k-best lists")
        tune_part, held = pool["parts"]["tune"], pool["parts"]["heldout"]
        print(f"pool {args.pool.split('=', 1)[0]}: {len(pool['files'])} k-best file(s), {pool['sentences']} sentences;"
              f" tune {tune_part['sentences']} ({tune_part['hypotheses']} hypotheses), held-out {held['sentences']}")
        print("| run | pool BLEU | held-out BLEU | CPU s |")
        print("|---|---|---|---|")
        for spec in args.runs:
            rows = []
            for seed in args.seeds:
                out = work / f"{spec.replace(' ', '_').replace('=', '-')}.s{seed}.weights"
                cpu = tune(spec, seed, pool, out)
                rows.append((rerank_bleu(tune_part, out), rerank_bleu(held, out), cpu))
            p, h, c = (statistics.fmean(col) for col in zip(*rows))
            print(f"| {spec} | {p:.2f} | {h:.2f} | {c:.1f} |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
