"""Benchmark: build the Multi30k fr-en system with ``smtlib train build`` and time every stage.

The peer is Moses's training pipeline on the same data on this machine (the figures of issue 4; no
Moses binary is installed here to rerun it): eflomal alignment 12 s, extraction + scoring +
reordering 47 s, 4-gram LM (lmplz) 1.3 s, about 60 s in all, 1.21M phrase pairs (wall clock). The
machine is shared, so CPU seconds are printed next to wall-clock seconds. That is a system
with one phrase table, so the like-for-like figures are our align, phrases0+reordering and lm0
stages; the medium build adds TM1 and LM1 on top, and is reported too.

Usage::

    python benchmarks/train.py [--feature-set medium] [--data ../shared/data] [--out DIR] [--seed 1]

Prints one line per stage with the ratio to Moses where there is a peer figure, the peak memory and
the sizes; the last line is ``metric: value`` with our like-for-like total over Moses's (< 2 is the
target).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from smtlib.system.build import BuildOptions, build  # noqa: E402

MOSES_SECONDS = {"align": 12.0, "phrases0+reordering": 47.0, "lm0": 1.3}
MOSES_PAIRS = 1_210_000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=os.environ.get("SMTLIB_SHARED_DATA", str(REPO.parent / "shared" / "data")))
    parser.add_argument("--feature-set", default="medium", choices=("small", "medium", "big"))
    parser.add_argument("--out", help="model directory (default: a temporary directory)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    tok = pathlib.Path(args.data) / "multi30k" / "tok"
    src, tgt = tok / "train.lc.norm.tok.fr.gz", tok / "train.lc.norm.tok.en.gz"
    if not src.is_file():
        print(f"no Multi30k data under {args.data}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="smtlib-bench-train-") as tmp:
        out = pathlib.Path(args.out) if args.out else pathlib.Path(tmp) / "model"
        load_before = os.getloadavg()
        report = build(
            src, tgt, out, BuildOptions(src_lang="fr", tgt_lang="en", feature_set=args.feature_set, seed=args.seed,
                                        threads=args.threads),
            work=pathlib.Path(tmp) / "work",
        )
        load_after = os.getloadavg()
    stages = report["stages"]
    print(f"Multi30k fr-en, {args.feature_set}, seed {args.seed}, threads {args.threads}; "
          f"load average before/after: {load_before[0]:.1f}/{load_after[0]:.1f} on {os.cpu_count()} cores")
    for name, stage in stages.items():
        secs = stage["seconds"]
        peer = MOSES_SECONDS.get(name)
        ratio = f"  moses {peer:5.1f} s  ratio {secs / peer:5.2f}" if peer else ""
        parts = stage.get("parts")
        extra = "  (" + ", ".join(f"{k} {v:.1f}" for k, v in parts.items()) + ")" if parts else ""
        print(f"{name:22s} {secs:7.1f} s (cpu {stage['cpu_seconds']:6.1f} s){ratio}{extra}")
    pt0 = stages.get("phrases0+reordering", stages.get("phrases0"))["result"]
    print(f"phrase pairs TM0: {pt0['distinct_pairs']} distinct (Moses {MOSES_PAIRS}), {pt0['pairs_written']} written "
          f"(table limit {pt0['table_limit']}), {pt0['occurrences']} occurrences")
    if "phrases1" in stages:
        pt1 = stages["phrases1"]["result"]
        print(f"phrase pairs TM1: {pt1['distinct_pairs']} distinct, {pt1['pairs_written']} written")
    for name in ("lm0", "lm1"):
        if name in stages:
            r = stages[name]["result"]
            print(f"{name}: order {r['order']}, n-grams {r['ngrams']}")
    print(f"total {report['total_seconds']:.1f} s, peak memory {report['peak_memory_mib']:.0f} MiB")
    like = sum(stages[k]["seconds"] for k in ("align", "phrases0+reordering", "lm0") if k in stages)
    like_cpu = sum(stages[k]["cpu_seconds"] for k in ("align", "phrases0+reordering", "lm0") if k in stages)
    print(json.dumps({"like_for_like_seconds": round(like, 1), "like_for_like_cpu_seconds": round(like_cpu, 1),
                      "moses_seconds": sum(MOSES_SECONDS.values())}))
    print(f"train_time_ratio_vs_moses: {like / sum(MOSES_SECONDS.values()):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
