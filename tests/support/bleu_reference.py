"""A slow, obviously correct BLEU statistics extractor, for testing the fast one, and random corpora.

:func:`slow_stats` follows Papineni et al. (2002) literally with Python Counters, one hypothesis at
a time; :func:`random_corpus` makes hypotheses and references with many and with few matches.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from smtlib.bleu.stats import BleuSettings, preprocess


def _ngrams(tokens: list[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def slow_stats(hypothesis: str, references: Sequence[str], settings: BleuSettings = BleuSettings()) -> np.ndarray:
    """The statistics row of one hypothesis against its references (see :mod:`smtlib.bleu.stats`)."""
    hyp = preprocess([hypothesis], settings)[0].split()
    refs = [r.split() for r in preprocess(list(references), settings)]
    lengths = [len(r) for r in refs]
    if settings.ref_length == "closest":
        ref_len = min(lengths, key=lambda length: (abs(length - len(hyp)), length))
    elif settings.ref_length == "shortest":
        ref_len = min(lengths)
    else:
        ref_len = sum(lengths) / len(lengths)
    row = [len(hyp), ref_len]
    matches, totals = [], []
    for n in range(1, 5):
        hyp_counts = _ngrams(hyp, n)
        max_ref: Counter = Counter()
        for ref in refs:
            for gram, count in _ngrams(ref, n).items():
                max_ref[gram] = max(max_ref[gram], count)
        matches.append(sum(min(c, max_ref[g]) for g, c in hyp_counts.items()))
        totals.append(sum(hyp_counts.values()))
    return np.array(row + matches + totals, dtype=np.float64)


def random_corpus(rng: np.random.Generator, n_sent: int, n_refs: int, vocab: int, max_len: int = 12):
    """``n_sent`` hypotheses (half of them perturbed first references) and ``n_refs`` reference sets."""
    words = [f"w{i}" for i in range(vocab)]

    def sentence() -> str:
        return " ".join(rng.choice(words, size=rng.integers(0, max_len)))

    refs = [[sentence() or "x" for _ in range(n_sent)] for _ in range(n_refs)]
    hyps = []
    for s in range(n_sent):
        if rng.random() < 0.5:  # a perturbed reference: many matches
            tokens = refs[0][s].split()
            keep = [t for t in tokens if rng.random() < 0.8] + list(rng.choice(words, size=rng.integers(0, 3)))
            hyps.append(" ".join(keep))
        else:
            hyps.append(sentence())
    return hyps, refs


def random_stats_rows(rng: np.random.Generator, n_rep: int, n: int) -> np.ndarray:
    """BLEU statistics rows ``(n_rep, n, 10)`` of a random system: ``n_rep`` replicas of ``n`` sentences
    (hypothesis lengths 5-11, matches at most the n-gram counts, one reference length per sentence)."""
    hyp = rng.integers(5, 12, size=(n_rep, n))
    matches = np.stack([np.minimum(hyp - k, rng.integers(0, 10, size=hyp.shape)).clip(0) for k in range(4)], axis=-1)
    totals = np.stack([(hyp - k).clip(0) for k in range(4)], axis=-1)
    ref = np.broadcast_to(rng.integers(5, 12, size=n), hyp.shape)
    return np.concatenate([hyp[..., None], ref[..., None], matches, totals], axis=-1).astype(float)
