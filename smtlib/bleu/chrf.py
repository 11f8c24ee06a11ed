"""chrF and chrF++: per-hypothesis sufficient statistics, corpus and sentence scores equal to sacrebleu's.

chrF (Popović 2015) is the F-beta score of character n-gram precision and recall; chrF++ (Popović
2017) adds word n-grams. The defaults are sacrebleu's ``CHRF()``: character n-grams of orders 1-6
with whitespace removed, beta = 2, no word n-grams (chrF++: ``word_order=2``), case-sensitive, and
sacrebleu's (>= 2.0) effective-order averaging rather than chrF++.py's epsilon smoothing. Both of
the last two are options, as in sacrebleu: ``whitespace`` keeps whitespace in the character
n-grams (sacrebleu's ``whitespace=True``, signature ``space:yes``), ``eps_smoothing`` averages the
F-scores of every order with chrF++.py's epsilon for an empty one (sacrebleu's
``eps_smoothing=True``, signature ``eff:no``).

Layout of one statistics row (float64, sacrebleu's ``CHRF._compute_segment_statistics``): for each
order, character orders 1..6 then word orders 1..2, the triple

=========  ===================================================================================
column     meaning
=========  ===================================================================================
3k         hypothesis n-grams of order k (0 when the reference has none of that order, as sacrebleu)
3k + 1     reference n-grams of order k
3k + 2     matches: sum over n-grams of min(hypothesis count, reference count)
=========  ===================================================================================

Several references: sacrebleu keeps the statistics of the reference with the highest sentence
chrF (the first on ties), and so does :func:`compute_chrf_stats`. Corpus chrF scores the sum of the
rows (:func:`chrf_from_stats`), sentence chrF one row. The score (sacrebleu's ``_compute_f_score``
with ``eps_smoothing=False``): precision and recall are averaged over the orders where both the
hypothesis and the reference have n-grams, then F = (1 + beta²) P R / (beta² P + R); with
``eps_smoothing``, the mean over all orders of each order's F, where a precision or recall without
n-grams is 1e-16 and an F with a zero denominator is 1e-16. Scores are 0-1 here, 0-100 where
printed.

Word n-grams (chrF++) split the text on whitespace and then split one punctuation character off the
end (or else the start) of each word longer than one character, as chrF++.py and sacrebleu's
``_remove_punctuation`` do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from smtlib.bleu.references import check_sentence_ids, interleaved
from smtlib.errors import InputError

#: the punctuation chrF++ splits off words (Python's ``string.punctuation``, as chrF++.py)
PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


@dataclasses.dataclass(frozen=True)
class ChrfSettings:
    """The options that change chrF's value, with sacrebleu's defaults.

    Attributes
    ----------
    char_order
        Largest character n-gram order (6).
    word_order
        Largest word n-gram order: 0 for chrF, 2 for chrF++.
    beta
        Weight of recall against precision (2).
    lowercase
        Lowercase hypotheses and references first (sacrebleu's ``lowercase``; off).
    whitespace
        Keep whitespace in the character n-grams (sacrebleu's ``whitespace``; off: it is removed).
    eps_smoothing
        chrF++.py's epsilon smoothing instead of effective-order averaging (sacrebleu's
        ``eps_smoothing``; off).
    """

    char_order: int = 6
    word_order: int = 0
    beta: int = 2
    lowercase: bool = False
    whitespace: bool = False
    eps_smoothing: bool = False

    def __post_init__(self) -> None:
        if self.char_order < 1 or self.word_order < 0 or self.beta < 0:
            raise InputError(f"chrF needs char_order >= 1, word_order >= 0 and beta >= 0, got {self}")

    @property
    def order(self) -> int:
        """Number of orders (character plus word), i.e. triples per statistics row."""
        return self.char_order + self.word_order

    @property
    def width(self) -> int:
        return 3 * self.order

    @property
    def name(self) -> str:
        """sacrebleu's score name: ``chrF2``, ``chrF2++``."""
        return f"chrF{self.beta}" + "+" * self.word_order

    def to_dict(self) -> dict:
        """The settings as a JSON object (a pool header's metric settings); ``whitespace`` and
        ``eps_smoothing`` only when on, so an entry without them means sacrebleu's defaults."""
        fields = dataclasses.asdict(self)
        for name in ("whitespace", "eps_smoothing"):
            if not fields[name]:
                del fields[name]
        return fields


def split_punctuation(text: str) -> list[str]:
    """Words of ``text`` with one punctuation character split off each end, as chrF++.py.

    A word longer than one character that ends in punctuation loses its last character (``hi.`` ->
    ``hi`` ``.``); else one that starts with punctuation loses its first (``(hi`` -> ``(`` ``hi``);
    ``(hi)`` becomes ``(hi`` ``)`` (mjpost/sacrebleu#124: one side only).
    """
    words: list[str] = []
    for w in text.split():
        if len(w) > 1 and w[-1] in PUNCTUATION:
            words += [w[:-1], w[-1]]
        elif len(w) > 1 and w[0] in PUNCTUATION:
            words += [w[0], w[1:]]
        else:
            words.append(w)
    return words


def _char_ids(texts: list[str], whitespace: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Code points of each text with its whitespace removed (kept with ``whitespace``), as dense
    ids from 1, and offsets."""
    stripped = list(texts) if whitespace else ["".join(t.split()) for t in texts]
    offsets = np.zeros(len(stripped) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in stripped], out=offsets[1:])
    points = np.frombuffer("".join(stripped).encode("utf-32-le"), dtype=np.uint32)
    if not len(points):
        return np.zeros(0, dtype=np.int64), offsets
    table = np.zeros(int(points.max()) + 1, dtype=np.int64)
    table[points] = 1
    table = np.cumsum(table)  # a code point's rank among those present: its id
    return table[points].astype(np.int64), offsets


def _word_ids(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Ids (from 1) of the chrF++ words (:func:`split_punctuation`) of each text, and offsets."""
    split = [split_punctuation(t) for t in texts]
    offsets = np.zeros(len(split) + 1, dtype=np.int64)
    np.cumsum([len(w) for w in split], out=offsets[1:])
    vocab: dict[str, int] = {}
    ids = np.fromiter((vocab.setdefault(w, len(vocab) + 1) for words in split for w in words), dtype=np.int64,
                      count=int(offsets[-1]))
    return ids, offsets


def _per_reference_counts(seqs, hyp_count, sentence_ids, n_sent, n_refs, max_order) -> np.ndarray:
    """(N, n_refs, max_order, 3) counts of the hypotheses (the first ``hyp_count`` sequences of
    ``seqs``) against each of their sentence's references (the rest, interleaved by sentence)."""
    from smtlib.bleu._chrf_kernels import ngram_match_kernel

    ids, offsets = seqs
    hyp_offsets = offsets[: hyp_count + 1]
    ref_offsets = offsets[hyp_count:] - offsets[hyp_count]
    order = np.argsort(sentence_ids, kind="stable")
    sent_offsets = np.zeros(n_sent + 1, dtype=np.int64)
    np.cumsum(np.bincount(sentence_ids, minlength=n_sent), out=sent_offsets[1:])
    counts = ngram_match_kernel(ids[: offsets[hyp_count]], hyp_offsets, order, sent_offsets, ids[offsets[hyp_count]:],
                                ref_offsets, n_refs, max_order)
    result = np.empty_like(counts)
    result[order] = counts
    return result


def compute_chrf_stats(
    hypotheses: Sequence[str],
    sentence_ids: np.ndarray | Sequence[int],
    references: Sequence[Sequence[str]],
    settings: ChrfSettings = ChrfSettings(),
) -> np.ndarray:
    """chrF statistics rows of N hypotheses, ``(N, settings.width)`` float64 in the layout of this
    module's docstring; the arguments are :func:`smtlib.bleu.stats.compute_stats`'s, with chrF's
    orders, beta and case as ``settings``. With several references, a hypothesis gets the row of the
    reference with the highest sentence chrF (the first on ties), as sacrebleu chooses."""
    sentence_ids, n_sent = check_sentence_ids(sentence_ids, hypotheses, references)
    n_refs = len(references)
    texts = list(hypotheses) + interleaved(references, n_sent)
    if settings.lowercase:
        texts = [t.lower() for t in texts]
    n_hyp = len(hypotheses)
    parts = [_per_reference_counts(_char_ids(texts, settings.whitespace), n_hyp, sentence_ids, n_sent, n_refs,
                                   settings.char_order)]
    if settings.word_order:
        parts.append(_per_reference_counts(_word_ids(texts), n_hyp, sentence_ids, n_sent, n_refs, settings.word_order))
    per_ref = np.concatenate(parts, axis=2).reshape(n_hyp, n_refs, settings.width).astype(np.float64)
    if n_refs == 1:
        return per_ref[:, 0, :]
    scores = _percent(per_ref.reshape(-1, settings.width), settings.beta, settings.eps_smoothing).reshape(n_hyp, n_refs)
    best = np.argmax(scores, axis=1)  # the first of the highest, as sacrebleu's strict '>'
    return per_ref[np.arange(n_hyp), best]


def chrf_from_rows(stats: np.ndarray, beta: int = 2, eps_smoothing: bool = False) -> np.ndarray:
    """chrF (0-1) of each statistics row, with sacrebleu's arithmetic (``CHRF._compute_f_score``).

    The operations are sacrebleu's, in its order, so that the scores are equal to the last bit
    (which matters when sacrebleu picks the best of several references by this score).
    """
    stats = np.atleast_2d(np.asarray(stats, dtype=np.float64))
    if eps_smoothing:
        return _eps_percent(stats, beta) / 100
    return _effective_order(stats, beta)


def _percent(stats: np.ndarray, beta: int, eps_smoothing: bool) -> np.ndarray:
    """chrF (0-100) of each statistics row, bit for bit sacrebleu's ``CHRF._compute_f_score``."""
    stats = np.atleast_2d(np.asarray(stats, dtype=np.float64))
    if eps_smoothing:
        return _eps_percent(stats, beta)
    return 100 * _effective_order(stats, beta)


def _eps_percent(stats: np.ndarray, beta: int) -> np.ndarray:
    """sacrebleu's ``eps_smoothing=True`` branch: 100 * the mean over every order of its F-beta,
    with 1e-16 for a precision (recall) without hypothesis (reference) n-grams and for an F whose
    denominator is 0 (chrF++.py, NLTK and Moses)."""
    eps = 1e-16
    factor = beta**2
    n_orders = stats.shape[1] // 3
    score = np.zeros(stats.shape[0])
    for i in range(n_orders):
        n_hyp, n_ref, n_match = stats[:, 3 * i], stats[:, 3 * i + 1], stats[:, 3 * i + 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            prec = np.where(n_hyp > 0, n_match / n_hyp, eps)
            rec = np.where(n_ref > 0, n_match / n_ref, eps)
            denom = factor * prec + rec
            score = score + np.where(denom > 0, (1 + factor) * prec * rec / denom, eps)
    return 100 * score / n_orders


def _effective_order(stats: np.ndarray, beta: int) -> np.ndarray:
    """sacrebleu's default branch (0-1): precision and recall averaged over the effective orders."""
    factor = beta**2
    n_rows = stats.shape[0]
    avg_prec = np.zeros(n_rows)
    avg_rec = np.zeros(n_rows)
    effective = np.zeros(n_rows)
    for i in range(stats.shape[1] // 3):
        n_hyp, n_ref, n_match = stats[:, 3 * i], stats[:, 3 * i + 1], stats[:, 3 * i + 2]
        both = (n_hyp > 0) & (n_ref > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            avg_prec = np.where(both, avg_prec + n_match / n_hyp, avg_prec)
            avg_rec = np.where(both, avg_rec + n_match / n_ref, avg_rec)
        effective += both
    with np.errstate(divide="ignore", invalid="ignore"):
        avg_prec = np.where(effective > 0, avg_prec / effective, 0.0)
        avg_rec = np.where(effective > 0, avg_rec / effective, 0.0)
        score = (1 + factor) * avg_prec * avg_rec
        score = score / (factor * avg_prec + avg_rec)
    return np.where(avg_prec + avg_rec != 0, score, 0.0)


def chrf_from_stats(stats: np.ndarray, beta: int = 2, eps_smoothing: bool = False) -> float:
    """Corpus chrF (0-1) of an ``(N, width)`` statistics matrix (or one row): sum, then score."""
    stats = np.asarray(stats, dtype=np.float64)
    return float(chrf_from_rows(stats.reshape(-1, stats.shape[-1]).sum(axis=0), beta, eps_smoothing)[0])


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[Sequence[str]],
                settings: ChrfSettings = ChrfSettings()) -> float:
    """Corpus chrF (0-1) of aligned hypotheses and reference sets, equal to sacrebleu's ``corpus_score`` / 100."""
    stats = compute_chrf_stats(hypotheses, np.arange(len(hypotheses)), references, settings)
    return chrf_from_stats(stats, settings.beta, settings.eps_smoothing)


def chrf_and_gradient(stats_sum: np.ndarray, beta: float = 2.0) -> tuple[float, np.ndarray]:
    """chrF (0-1) of a (possibly fractional, expected) statistics sum and its gradient, for
    expected-metric training (:mod:`smtlib.tuners.xbleu`).

    With E the orders whose hypothesis and reference counts are positive (the others do not count,
    as in :func:`chrf_from_rows`; they are constant where they are 0), P = 1/|E| sum_k m_k / h_k and
    R = 1/|E| sum_k m_k / r_k, F = (1 + β²) P R / (β² P + R) has ∂F/∂P = (1 + β²) R² / D² and
    ∂F/∂R = (1 + β²) β² P² / D² with D = β² P + R; then ∂P/∂m_k = 1 / (|E| h_k),
    ∂P/∂h_k = -m_k / (|E| h_k²), and alike for R with r_k.
    """
    stats_sum = np.asarray(stats_sum, dtype=np.float64)
    hyp, ref, match = stats_sum[0::3], stats_sum[1::3], stats_sum[2::3]
    used = (hyp > 0) & (ref > 0)
    grad = np.zeros_like(stats_sum)
    n = int(used.sum())
    if n == 0:
        return 0.0, grad
    precision = float(np.sum(match[used] / hyp[used])) / n
    recall = float(np.sum(match[used] / ref[used])) / n
    factor = beta * beta
    denominator = factor * precision + recall
    if denominator <= 0:
        return 0.0, grad
    value = (1 + factor) * precision * recall / denominator
    d_precision = (1 + factor) * recall * recall / (denominator * denominator)
    d_recall = (1 + factor) * factor * precision * precision / (denominator * denominator)
    k = np.flatnonzero(used)
    grad[3 * k] = -d_precision * match[k] / (n * hyp[k] ** 2)
    grad[3 * k + 1] = -d_recall * match[k] / (n * ref[k] ** 2)
    grad[3 * k + 2] = d_precision / (n * hyp[k]) + d_recall / (n * ref[k])
    return value, grad
