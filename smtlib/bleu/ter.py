"""TER: per-hypothesis sufficient statistics, corpus and sentence scores equal to sacrebleu's.

Translation edit rate (Snover et al. 2006): the fewest edits (insertions, deletions, substitutions
and shifts of word spans, each costing 1) that turn the hypothesis into the reference, divided by
the reference length. The shift search is tercom's greedy one with sacrebleu's limits and beam
(:mod:`smtlib.bleu._ter_kernels`, compiled), so the numbers are sacrebleu's ``TER()``.

Layout of one statistics row (float64, sacrebleu's ``TER._compute_segment_statistics``):

=========  ==========================================================================
column     meaning
=========  ==========================================================================
0          edits: the fewest over the references (``EDITS``)
1          reference length: the average of the references' lengths in words (``REF_LEN``)
=========  ==========================================================================

Corpus TER is the sum of edits over the sum of reference lengths (1 when the references are empty
and some hypothesis is not, 0 when both are); sentence TER is the same on one row. TER is an error
rate: lower is better. Scores are 0-1 here (they can exceed 1), 0-100 where printed.

Text is normalised by sacrebleu's tercom tokenizer (``TercomTokenizer``) with sacrebleu's defaults:
case-insensitive, no normalisation, punctuation kept, no Asian-script support; each is a setting.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

import numpy as np

from smtlib.bleu.references import check_sentence_ids, interleaved
from smtlib.errors import InputError

EDITS = 0
REF_LEN = 1
STATS_WIDTH = 2


@dataclasses.dataclass(frozen=True)
class TerSettings:
    """The options that change TER's value, with sacrebleu's defaults (its ``TER()`` arguments).

    Attributes
    ----------
    case_sensitive
        Keep case (sacrebleu's default lowercases).
    normalized
        tercom's normalisation (punctuation tokenised, XML entities decoded).
    no_punct
        Remove punctuation.
    asian_support
        CJK handling of ``normalized`` / ``no_punct``.
    """

    case_sensitive: bool = False
    normalized: bool = False
    no_punct: bool = False
    asian_support: bool = False


@functools.cache
def _tokenizer(settings: TerSettings):
    from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer

    return TercomTokenizer(normalized=settings.normalized, no_punct=settings.no_punct,
                           asian_support=settings.asian_support, case_sensitive=settings.case_sensitive)


def preprocess(segments: Sequence[str], settings: TerSettings) -> list[str]:
    """Texts whose whitespace-separated words are those of sacrebleu's ``TER._preprocess_segment``
    (the tercom tokenizer on the right-stripped text).

    With neither ``normalized`` nor ``no_punct`` (sacrebleu's defaults) the tokenizer only lowercases
    (unless ``case_sensitive``) and re-joins the words with single spaces; here only the lowercasing
    is done, since the words are split on any whitespace afterwards (:func:`smtlib.bleu.stats.token_ids`).
    Calling sacrebleu's tokenizer (cached per sentence, with a cache smaller than a pool) would take a
    third of the time of the statistics.
    """
    if not settings.normalized and not settings.no_punct:
        return list(segments) if settings.case_sensitive else [s.lower() for s in segments]
    tok = _tokenizer(settings)
    return [tok(s.rstrip()) for s in segments]


def compute_ter_stats(
    hypotheses: Sequence[str],
    sentence_ids: np.ndarray | Sequence[int],
    references: Sequence[Sequence[str]],
    settings: TerSettings = TerSettings(),
) -> np.ndarray:
    """TER statistics rows ``[edits, reference length]`` of N hypotheses, ``(N, 2)`` float64; the
    arguments are :func:`smtlib.bleu.stats.compute_stats`'s, with the tercom tokenizer's options as
    ``settings``. With several references, a row holds the fewest edits over them and the average of
    their lengths (sacrebleu's rule)."""
    from smtlib.bleu._ter_kernels import ter_kernel, workspace
    from smtlib.bleu.stats import token_ids

    sentence_ids, n_sent = check_sentence_ids(sentence_ids, hypotheses, references)
    n_refs = len(references)
    n_hyp = len(hypotheses)
    texts = preprocess(list(hypotheses), settings)
    texts += preprocess(interleaved(references, n_sent), settings)
    ids, offsets, _ = token_ids(texts)
    lengths = np.diff(offsets)
    if not len(lengths):
        return np.zeros((0, STATS_WIDTH))
    work = workspace(int(lengths[:n_hyp].max(initial=0)), int(lengths[n_hyp:].max(initial=0)))
    hyp_ids = ids[: offsets[n_hyp]]
    ref_ids = ids[offsets[n_hyp]:]
    return ter_kernel(hyp_ids, offsets[: n_hyp + 1], sentence_ids, ref_ids, offsets[n_hyp:] - offsets[n_hyp],
                      n_refs, work)


def ter_from_rows(stats: np.ndarray) -> np.ndarray:
    """TER (0-1, lower is better) of each statistics row, sacrebleu's ``_compute_score_from_stats``."""
    stats = np.atleast_2d(np.asarray(stats, dtype=np.float64))
    edits, ref_len = stats[:, EDITS], stats[:, REF_LEN]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ref_len > 0, edits / ref_len, np.where(edits > 0, 1.0, 0.0))


def ter_from_stats(stats: np.ndarray) -> float:
    """Corpus TER (0-1) of an ``(N, 2)`` statistics matrix (or one row): sum, then score."""
    stats = np.asarray(stats, dtype=np.float64)
    if stats.shape[-1] != STATS_WIDTH:
        raise InputError(f"TER statistics have {STATS_WIDTH} columns, got {stats.shape[-1]}")
    return float(ter_from_rows(stats.reshape(-1, STATS_WIDTH).sum(axis=0))[0])


def corpus_ter(hypotheses: Sequence[str], references: Sequence[Sequence[str]],
               settings: TerSettings = TerSettings()) -> float:
    """Corpus TER (0-1) of aligned hypotheses and reference sets, equal to sacrebleu's ``corpus_score`` / 100."""
    return ter_from_stats(compute_ter_stats(hypotheses, np.arange(len(hypotheses)), references, settings))


def ter_and_gradient(stats_sum: np.ndarray) -> tuple[float, np.ndarray]:
    """TER (0-1) of a (possibly fractional, expected) ``[edits, reference length]`` sum and its
    gradient, for expected-metric training (:mod:`smtlib.tuners.xbleu`): edits / length, whose
    derivatives are 1 / length and -edits / length²; a sum without reference words scores as
    :func:`ter_from_rows` does, with a zero gradient (it does not vary there)."""
    edits, ref_len = float(stats_sum[EDITS]), float(stats_sum[REF_LEN])
    grad = np.zeros(STATS_WIDTH)
    if ref_len <= 0:
        return (1.0 if edits > 0 else 0.0), grad
    grad[EDITS] = 1.0 / ref_len
    grad[REF_LEN] = -edits / (ref_len * ref_len)
    return edits / ref_len, grad
