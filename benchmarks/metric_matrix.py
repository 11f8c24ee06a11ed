"""Tune toward BLEU, chrF and TER, evaluate with all three: the tune-on-X / evaluate-on-Y matrix on a fixed pool.

A small stand-in for issue 25's decoder-in-the-loop matrix (Multi30k Medium, which needs the
workflow's ``tuning.metric``, not done yet): Moses's ``test_scorer_data`` k-best pool (100
sentences x 100-best, a real Moses system), sentences 0-49 to tune, 50-99 held out. For each
method (kb-MERT, kb-MIRA) and tuning metric, over several seeds, the tuned weights' 1-best is scored
with every metric (sacrebleu's numbers, as ``smtlib score`` prints them), on the tuning half and on
the held-out half. Prints the two 3 x 3 matrices per method (mean over seeds) and whether the
diagonal holds (each metric best when tuned toward itself); on 50 held-out sentences a reversal is
within noise, so the tuning half is the check of the optimisers and the held-out half an indication.

    python benchmarks/metric_matrix.py [--seeds 3]
"""

from __future__ import annotations

import argparse
import gzip
import pathlib
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from _inputs import SHARED_DATA  # noqa: E402  (benchmarks/_inputs.py, beside this script)

from smtlib.bleu.metrics import MetricOptions, get_metric, parse_mixture  # noqa: E402
from smtlib.bleu.stats import BleuSettings  # noqa: E402
from smtlib.cli.common import one_best_lines  # noqa: E402
from smtlib.kbest.pool import read_pool  # noqa: E402
from smtlib.tuners.registry import get_tuner_class  # noqa: E402

METRICS = ("bleu", "chrf", "ter")
OPTIONS = MetricOptions(bleu=BleuSettings(tokenize="none"))


def halves(tmp: pathlib.Path):
    base = SHARED_DATA / "moses-mert-nbest" / "test_scorer_data"
    with gzip.open(base / "reference.txt.gz", "rt", encoding="utf-8") as fh:
        refs = [line.rstrip("\n").lower() for _, line in zip(range(100), fh, strict=False)]
    with gzip.open(base / "nbest.out.gz", "rt", encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    parts = {"tune": [], "test": []}
    for line in lines:
        sid = int(line.split("|||", 1)[0])
        key = "tune" if sid < 50 else "test"
        parts[key].append(line if sid < 50 else f"{sid - 50} |||" + line.split("|||", 1)[1])
    out = {}
    for key, ref in (("tune", refs[:50]), ("test", refs[50:])):
        path = tmp / f"{key}.nbest"
        path.write_text("\n".join(parts[key]) + "\n", encoding="utf-8")
        pool = read_pool([path], n_sentences=50)
        pool.compute_stats([ref], OPTIONS.bleu)
        out[key] = (pool, [ref])
    return out


def scores(pool, refs, weights) -> dict[str, float]:
    lines = one_best_lines(pool.texts, pool.best_indices(weights))
    ids = np.arange(len(lines))
    return {m: 100 * get_metric(m, OPTIONS).corpus(get_metric(m, OPTIONS).stats(lines, ids, refs)) for m in METRICS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    if not (SHARED_DATA / "moses-mert-nbest" / "test_scorer_data").is_dir():
        sys.exit(f"needs Moses's test_scorer_data in {SHARED_DATA} (set SMTLIB_SHARED_DATA to the shared data directory)")
    with tempfile.TemporaryDirectory() as tmp:
        data = halves(pathlib.Path(tmp))
    tune_pool, tune_refs = data["tune"]
    init = tune_pool.weight_vector({"lm_0": 1.0})
    holds = []
    for method in ("mert", "kbmira"):
        cls = get_tuner_class(method)
        table = {half: np.zeros((3, 3)) for half in data}
        for i, target in enumerate(METRICS):
            mixture = parse_mixture(target, OPTIONS)
            for seed in range(args.seeds):
                tuner = cls(seed=seed)
                metric = None if mixture.is_bleu else tuner.corpus_metric(mixture, tune_pool.metric_stats(mixture, tune_refs))
                weights = tuner(tune_pool, init, metric).weights
                for half, (pool, refs) in data.items():
                    got = scores(pool, refs, weights)
                    table[half][i] += np.array([got[m] for m in METRICS]) / args.seeds
        for half in data:
            print(f"\n{method}, {half} half (mean of {args.seeds} seeds; rows: tuned toward, columns: evaluated with)")
            print("tuned \\ eval  " + "".join(f"{m:>9}" for m in METRICS))
            for i, target in enumerate(METRICS):
                print(f"{target:<13} " + "".join(f"{v:9.2f}" for v in table[half][i]))
            best = [int(np.argmax(table[half][:, j])) if METRICS[j] != "ter" else int(np.argmin(table[half][:, j]))
                    for j in range(3)]
            diagonal = [best[j] == j for j in range(3)]
            holds.append((method, half, all(diagonal)))
            print("diagonal (each metric best when tuned toward itself): "
                  + ", ".join(f"{m} {'yes' if d else 'no'}" for m, d in zip(METRICS, diagonal, strict=True)))
    tune_ok = sum(1 for _, half, ok in holds if half == "tune" and ok)
    print(f"metric: diagonal holds on the tuning half for {tune_ok} of 2 methods, on the held-out half for "
          f"{sum(1 for _, half, ok in holds if half == 'test' and ok)} of 2")


if __name__ == "__main__":
    main()
