"""BLEU statistics throughput against sacrebleu's sentence-level loop, and k-best merge time.

Builds a pool of >= 1,000,000 hypotheses (1,000 sentences x 1,000 perturbed references from
Multi30k when ../shared/data is present, random text otherwise), times
:func:`smtlib.bleu.compute_stats` on all of it, and times sacrebleu's
``BLEU(tokenize='none').sentence_score`` loop (the per-hypothesis work of sacrebleu's
``sentence_bleu``, with references pre-processed once per sentence as sacrebleu's own
reference cache would) and the plain ``sacrebleu.sentence_bleu`` loop on samples, in the same
run. Prints both throughput ratios; the headline is against ``sentence_bleu`` (target >= 50)
and the time to read and merge 15 x 100-best lists for 1,000 sentences.

    python benchmarks/bleu_stats.py [--sentences 1000] [--per-sentence 1000] [--sample 20000]
"""

from __future__ import annotations

import argparse
import gzip
import pathlib
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from smtlib.bleu import BleuSettings, compute_stats  # noqa: E402
from smtlib.kbest import read_pool  # noqa: E402

SHARED = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"


def references(n: int, rng: np.random.Generator) -> list[str]:
    path = SHARED / "multi30k/tok/train.lc.norm.tok.en.gz"
    if path.exists():
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            lines = [line.strip() for _, line in zip(range(n), fh, strict=False)]
        return lines
    words = [f"w{i}" for i in range(5000)]
    return [" ".join(rng.choice(words, size=rng.integers(5, 25))) for _ in range(n)]


def perturb(ref: list[str], vocab: list[str], rng: np.random.Generator, k: int, move: bool = False) -> list[str]:
    """k hypotheses: words dropped (20 %), up to 3 inserted; with ``move`` (TER's shifts), a span of
    1-3 words also moved half the time."""
    out = []
    for _ in range(k):
        tokens = [t for t in ref if rng.random() > 0.2]
        for _ in range(rng.integers(0, 4)):
            tokens.insert(int(rng.integers(0, len(tokens) + 1)), vocab[int(rng.integers(0, len(vocab)))])
        if move and len(tokens) > 4 and rng.random() < 0.5:
            length = int(rng.integers(1, 4))
            i = int(rng.integers(0, len(tokens) - length))
            span = tokens[i:i + length]
            del tokens[i:i + length]
            j = int(rng.integers(0, len(tokens) + 1))
            tokens[j:j] = span
        out.append(" ".join(tokens))
    return out


def synthetic_pool(sentences: int, per_sentence: int, move: bool = False):
    """References, their vocabulary, ``per_sentence`` hypotheses of each (:func:`perturb`), their
    sentence ids, and the generator (seed 0) for the caller's further draws."""
    rng = np.random.default_rng(0)
    refs = references(sentences, rng)
    vocab = sorted({t for r in refs for t in r.split()})
    hyps: list[str] = []
    ids: list[int] = []
    for s, ref in enumerate(refs):
        hyps += perturb(ref.split(), vocab, rng, per_sentence, move)
        ids += [s] * per_sentence
    return refs, vocab, hyps, np.asarray(ids), rng


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--per-sentence", type=int, default=1000)
    parser.add_argument("--sample", type=int, default=20000, help="hypotheses scored with sacrebleu")
    args = parser.parse_args()
    refs, vocab, hyps, ids_arr, rng = synthetic_pool(args.sentences, args.per_sentence)
    n = len(hyps)
    print(f"pool: {args.sentences} sentences x {args.per_sentence} = {n:,} hypotheses")

    compute_stats(hyps[:1000], ids_arr[:1000], [refs], BleuSettings(tokenize="none"))  # numba compile / cache load
    start = time.perf_counter()
    stats = compute_stats(hyps, ids_arr, [refs], BleuSettings(tokenize="none"))
    ours = time.perf_counter() - start
    print(f"smtlib compute_stats: {ours:.2f} s, {n / ours:,.0f} hypotheses/s")

    import sacrebleu
    from sacrebleu.metrics.bleu import BLEU

    metric = BLEU(tokenize="none", effective_order=True)
    sample = rng.choice(n, size=min(args.sample, n), replace=False)
    sample.sort()
    ref_cache: dict[int, dict] = {}
    start = time.perf_counter()
    sacre_stats = []
    for i in sample:
        s = int(ids_arr[i])
        if s not in ref_cache:
            ref_cache[s] = metric._extract_reference_info([metric._preprocess_segment(refs[s])])
        sacre_stats.append(metric._compute_segment_statistics(metric._preprocess_segment(hyps[i]), ref_cache[s]))
    theirs = time.perf_counter() - start
    rate = len(sample) / theirs
    print(f"sacrebleu segment statistics loop: {len(sample):,} hypotheses in {theirs:.2f} s, {rate:,.0f} hypotheses/s")
    assert np.array_equal(np.asarray(sacre_stats, dtype=float), stats[sample]), "statistics differ from sacrebleu's"
    start = time.perf_counter()
    for i in sample[:5000]:
        sacrebleu.sentence_bleu(hyps[i], [refs[int(ids_arr[i])]], tokenize="none")
    full = (time.perf_counter() - start) / min(5000, len(sample))
    print(f"sacrebleu.sentence_bleu loop (the sentence-level scoring loop): {1 / full:,.0f} hypotheses/s")

    # Read and merge 15 iterations x 100-best for 1,000 sentences (14 dense features).
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for it in range(15):
            path = pathlib.Path(tmp) / f"it{it}.nbest.gz"
            with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
                for s in range(1000):
                    texts = perturb(refs[s % len(refs)].split(), vocab, rng, 100)
                    feats = rng.normal(size=(100, 13)).round(4)
                    for text, f in zip(texts, feats, strict=True):
                        out.write(
                            f"{s} ||| {text} ||| d: {' '.join(map(str, f[:7]))} lm: {f[7]} tm: {' '.join(map(str, f[8:12]))} w: {f[12]} ||| {f.sum():.4f}\n"
                        )
            paths.append(path)
        start = time.perf_counter()
        pool = read_pool(paths)
        merge = time.perf_counter() - start
        print(f"read + merge 15 x 100-best x 1,000 sentences: {merge:.1f} s ({pool.n_hypotheses:,} hypotheses kept)")
    print(f"ratio against sacrebleu's segment-statistics loop alone: {(n / ours) / rate:.1f}x")
    print(f"metric: {(n / ours) * full:.1f}x sacrebleu sentence-level scoring throughput (target >= 50x)")


if __name__ == "__main__":
    main()
