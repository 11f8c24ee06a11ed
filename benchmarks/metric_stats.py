"""TER and chrF statistics throughput against sacrebleu's, per hypothesis, in the same run (issue 25).

Builds a pool of 100,000 hypotheses (1,000 sentences x 100 perturbed references from Multi30k's
training set when ../shared/data is present, random text otherwise; words dropped, inserted and
moved, so that TER's shift search has work to do), times :func:`smtlib.bleu.ter.compute_ter_stats`
and :func:`smtlib.bleu.chrf.compute_chrf_stats` on all of it, and times sacrebleu on a random
sample of the same hypotheses (sacrebleu's TER takes milliseconds per hypothesis, so the whole pool
would take minutes): its per-hypothesis statistics with the references pre-processed once per
sentence (``_compute_segment_statistics``, sacrebleu's own reference cache: the least work sacrebleu
can do per hypothesis), and its ``sentence_score``. Ratios are per hypothesis: our pool throughput
over sacrebleu's throughput on the sample, extrapolated. The sample's statistics are checked equal to
ours. The headline is TER against sacrebleu's segment-statistics loop (target >= 50x). Times are
CPU seconds of this process (``time.process_time``; every kernel here is single-threaded), so that
other work on a shared machine changes neither side.

    python benchmarks/metric_stats.py [--sentences 1000] [--per-sentence 100] [--ter-sample 1000] [--chrf-sample 5000]
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from benchmarks.bleu_stats import synthetic_pool  # noqa: E402
from smtlib.bleu.chrf import ChrfSettings, compute_chrf_stats  # noqa: E402
from smtlib.bleu.ter import compute_ter_stats  # noqa: E402


def sacrebleu_rates(metric, hyps, ids, refs, sample) -> tuple[float, float, np.ndarray]:
    """(segment-statistics rate, sentence_score rate, statistics of the sample) of a sacrebleu metric."""
    cache: dict[int, dict] = {}
    stats = []
    start = time.process_time()
    for i in sample:
        s = int(ids[i])
        if s not in cache:
            cache[s] = metric._extract_reference_info([metric._preprocess_segment(refs[s])])
        stats.append(metric._compute_segment_statistics(metric._preprocess_segment(hyps[i]), cache[s]))
    segment_rate = len(sample) / (time.process_time() - start)
    short = sample[: max(1, len(sample) // 4)]
    start = time.process_time()
    for i in short:
        metric.sentence_score(hyps[i], [refs[int(ids[i])]])
    sentence_rate = len(short) / (time.process_time() - start)
    return segment_rate, sentence_rate, np.asarray(stats, dtype=float)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--per-sentence", type=int, default=100)
    parser.add_argument("--ter-sample", type=int, default=1000, help="hypotheses scored with sacrebleu's TER")
    parser.add_argument("--chrf-sample", type=int, default=5000, help="hypotheses scored with sacrebleu's chrF")
    args = parser.parse_args()
    refs, _, hyps, ids_arr, rng = synthetic_pool(args.sentences, args.per_sentence, move=True)
    n = len(hyps)
    print(f"pool: {args.sentences} sentences x {args.per_sentence} = {n:,} hypotheses, "
          f"{np.mean([len(h.split()) for h in hyps]):.1f} words on average")
    from sacrebleu.metrics import CHRF, TER

    results = {}
    for name, ours_fn, theirs, size in [
        ("TER", lambda h, i: compute_ter_stats(h, i, [refs]), TER(), args.ter_sample),
        ("chrF", lambda h, i: compute_chrf_stats(h, i, [refs], ChrfSettings()), CHRF(), args.chrf_sample),
    ]:
        ours_fn(hyps[:200], ids_arr[:200])  # numba compile / cache load
        start = time.process_time()
        stats = ours_fn(hyps, ids_arr)
        ours = time.process_time() - start
        rate = n / ours
        print(f"smtlib {name} statistics: {ours:.2f} s for the pool, {rate:,.0f} hypotheses/s")
        sample = np.sort(rng.choice(n, size=min(size, n), replace=False))
        segment_rate, sentence_rate, sample_stats = sacrebleu_rates(theirs, hyps, ids_arr, refs, sample)
        assert np.array_equal(sample_stats, stats[sample]), f"{name} statistics differ from sacrebleu's"
        print(f"sacrebleu {name} segment statistics (references cached), {len(sample):,} sampled hypotheses: "
              f"{segment_rate:,.0f} hypotheses/s (pool extrapolated: {n / segment_rate:,.0f} s); "
              f"sentence_score: {sentence_rate:,.0f} hypotheses/s")
        print(f"{name}: {rate / segment_rate:.1f}x sacrebleu's segment statistics, "
              f"{rate / sentence_rate:.1f}x its sentence_score, per hypothesis (statistics equal on the sample)")
        results[name] = rate / segment_rate
    print(f"chrF ratio: {results['chrF']:.1f}x")
    print(f"metric: {results['TER']:.1f}x sacrebleu's TER statistics per hypothesis (target >= 50x)")


if __name__ == "__main__":
    main()
