"""BLEU sufficient statistics, computed for many hypotheses at once.

Layout of one statistics row (float64, the layout of sacrebleu's ``_compute_segment_statistics``),
for n-gram orders 1..N (``BleuSettings.max_ngram_order``, sacrebleu's ``max_ngram_order``; 4 by
default, the width ``2 + 2N`` follows it):

=============  =====================================================================
column         meaning
=============  =====================================================================
0              hypothesis length in tokens (``HYP_LEN``)
1              effective reference length (``REF_LEN``; closest / shortest / average)
2 .. N+1       clipped matches of 1- to N-grams (``MATCHES`` for N = 4)
N+2 .. 2N+1    hypothesis 1- to N-gram counts (``TOTALS`` for N = 4)
=============  =====================================================================

Clipping follows Papineni et al. (2002): a hypothesis n-gram is credited at most as many times as
it occurs in the reference where it occurs most often. The ``closest`` rule picks the reference
length nearest the hypothesis length, the shorter one on ties (sacrebleu, Moses ``--closest``);
``shortest`` is the IBM/NIST rule; ``average`` is Moses's ``--average``.

Speed (see :mod:`smtlib.bleu._kernels`): tokens become integer ids in a compiled interner, and a
compiled kernel counts clipped matches with a hash table of reference n-grams per sentence, each
n-gram keyed exactly by its prefix's entry and its last token (no limit on the vocabulary of a
corpus or of one sentence, nor on the order).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

import numpy as np

from smtlib.bleu.references import check_sentence_ids, interleaved
from smtlib.errors import InputError

# numba (smtlib.bleu._kernels) and pandas are imported where they are used: together they cost about
# a second of start-up that commands which never score (``--help``, ``tune --list``) should not pay.

#: sacrebleu's default n-gram order, the width of the statistics the tuners and pools keep
NGRAM_ORDER = 4
#: the orders ``max_ngram_order`` may take (sacrebleu's ``max_ngram_order``)
NGRAM_ORDERS = range(1, 7)
HYP_LEN = 0
REF_LEN = 1
MATCHES = slice(2, 2 + NGRAM_ORDER)
TOTALS = slice(2 + NGRAM_ORDER, 2 + 2 * NGRAM_ORDER)
STATS_WIDTH = 2 + 2 * NGRAM_ORDER

REF_LENGTH_RULES = ("closest", "shortest", "average")
#: tokenizers in every sacrebleu 2.x's list: checked without importing sacrebleu (0.13 s of a short
#: command's start-up)
_ALWAYS_TOKENIZERS = ("13a", "none")
_RULE_CODE = {"closest": 0, "shortest": 1, "average": 2}


@functools.cache
def tokenizers() -> tuple[str, ...]:
    """sacrebleu's tokenizer names (``BLEU.TOKENIZERS``, its one list), read from sacrebleu itself."""
    from sacrebleu.metrics.bleu import BLEU

    return tuple(BLEU.TOKENIZERS)


def known_tokenizer(name: str) -> bool:
    """Whether ``name`` is one of sacrebleu's tokenizers (:func:`tokenizers`)."""
    return name in _ALWAYS_TOKENIZERS or name in tokenizers()


class TokenizerChoices(Sequence):
    """:func:`tokenizers` as an argparse ``choices`` read only when it is needed: ``--tokenize none``
    and ``13a`` are checked without importing sacrebleu, and the help lists sacrebleu's names."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and known_tokenizer(name)

    def __getitem__(self, index):
        return tokenizers()[index]

    def __len__(self) -> int:
        return len(tokenizers())


@dataclasses.dataclass(frozen=True)
class BleuSettings:
    """How text becomes statistics: the options that change BLEU's value, with the project's defaults.

    These defaults are the only ones: every command's ``--tokenize``/``--lowercase``/``--ref-length``
    defaults are read from here (:func:`smtlib.cli.common.add_bleu_options`), so the same
    hypotheses and references give the same BLEU in every command.

    Attributes
    ----------
    tokenize
        sacrebleu tokenizer name (:func:`tokenizers`); ``13a``, sacrebleu's default, is ours, so that
        ``smtlib bleu`` with no options prints sacrebleu's number. ``none`` splits on whitespace only,
        for pre-tokenized MT output as Moses's mert scores it; the workflow and the Moses regression
        tests pass it explicitly (``bleu.tokenize`` in the config).
    lowercase
        Lowercase hypotheses and references before tokenizing (sacrebleu's ``-lc``).
    ref_length
        Effective reference length rule: ``closest`` (sacrebleu and Moses default), ``shortest``
        or ``average``.
    max_ngram_order
        The largest n-gram order (sacrebleu's ``max_ngram_order``, 1-6; 4). A statistics row has
        ``2 + 2 * max_ngram_order`` columns (:attr:`width`). The tuners and binary pools work on
        4-gram statistics.
    """

    tokenize: str = "13a"
    lowercase: bool = False
    ref_length: str = "closest"
    max_ngram_order: int = NGRAM_ORDER

    def __post_init__(self) -> None:
        if isinstance(self.max_ngram_order, bool) or not isinstance(self.max_ngram_order, int) or \
                self.max_ngram_order not in NGRAM_ORDERS:
            raise InputError(f"the BLEU n-gram order must be an integer from {NGRAM_ORDERS[0]} to {NGRAM_ORDERS[-1]}, "
                             f"got {self.max_ngram_order!r}")
        if self.ref_length not in REF_LENGTH_RULES:
            raise InputError(f"unknown reference-length rule {self.ref_length!r} (choose from {', '.join(REF_LENGTH_RULES)})")
        if not known_tokenizer(self.tokenize):
            raise InputError(f"unknown tokenizer {self.tokenize!r} (sacrebleu's are {', '.join(tokenizers())})")

    @property
    def width(self) -> int:
        """Columns of a statistics row: ``2 + 2 * max_ngram_order``."""
        return 2 + 2 * self.max_ngram_order

    def to_dict(self) -> dict:
        """The settings as a JSON object (a pool header's ``bleu``); ``max_ngram_order`` only when it
        is not 4, so a header without it means 4-gram statistics."""
        fields = dataclasses.asdict(self)
        if self.max_ngram_order == NGRAM_ORDER:
            del fields["max_ngram_order"]
        return fields


@functools.cache
def _tokenizer(name: str):
    from sacrebleu.metrics.bleu import BLEU

    try:
        return BLEU(tokenize=name).tokenizer
    except (ImportError, RuntimeError, OSError) as exc:  # e.g. ja-mecab or spm without their packages
        raise InputError(f"sacrebleu's tokenizer {name!r} is not usable here: {exc}") from None


def preprocess(segments: Sequence[str], settings: BleuSettings) -> list[str]:
    """Lowercase and tokenize as sacrebleu's ``BLEU._preprocess_segment`` does."""
    if settings.lowercase:
        segments = [s.lower() for s in segments]
    if settings.tokenize == "none":
        return list(segments)
    tok = _tokenizer(settings.tokenize)
    return [tok(s.rstrip()) for s in segments]


def token_ids(texts: list[str]) -> tuple[np.ndarray, np.ndarray, int]:
    """Integer ids (from 1) of the whitespace-separated tokens of ``texts``, exactly.

    Returns ``(ids, offsets, n_types)``: tokens of text i are ``ids[offsets[i]:offsets[i+1]]``.
    Uses the compiled interner on UTF-8 bytes when only spaces separate tokens (always so for
    k-best hypotheses, which the reader normalises), else ``str.split`` and pandas.factorize.
    """
    from smtlib.bleu._kernels import has_other_whitespace, intern_tokens

    joined = "\n".join(texts)
    if joined.count("\n") == max(len(texts) - 1, 0):
        data = np.frombuffer(joined.encode("utf-8"), dtype=np.uint8)
        if not has_other_whitespace(data):
            return intern_tokens(data, len(texts))
    split = [t.split() for t in texts]
    offsets = np.zeros(len(split) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in split], out=offsets[1:])
    flat = [tok for toks in split for tok in toks]
    if not flat:
        return np.zeros(0, dtype=np.int64), offsets, 0
    import pandas as pd

    codes, uniques = pd.factorize(np.array(flat, dtype=object), sort=False)
    return codes.astype(np.int64) + 1, offsets, len(uniques)


def compute_stats(
    hypotheses: Sequence[str],
    sentence_ids: np.ndarray | Sequence[int],
    references: Sequence[Sequence[str]],
    settings: BleuSettings = BleuSettings(),
) -> np.ndarray:
    """Statistics rows for every hypothesis.

    Parameters
    ----------
    hypotheses
        N hypothesis strings.
    sentence_ids
        For each hypothesis, the 0-based id of its source sentence (indexes the references).
    references
        One sequence per reference set, each with one segment per sentence id.
    settings
        Tokenization, case and reference-length rule.

    Returns
    -------
    numpy.ndarray
        ``(N, settings.width)`` float64 array in the layout of this module's docstring.
    """
    sentence_ids, n_sent = check_sentence_ids(sentence_ids, hypotheses, references)
    n_refs = len(references)
    hyp_text = preprocess(hypotheses, settings)
    ref_text = preprocess(interleaved(references, n_sent), settings)
    ids, offsets, n_types = token_ids(hyp_text + ref_text)
    n_hyp = len(hyp_text)
    hyp_offsets = offsets[: n_hyp + 1]
    ref_offsets = offsets[n_hyp:] - offsets[n_hyp]
    hyp_ids = ids[: offsets[n_hyp]]
    ref_ids = ids[offsets[n_hyp] :]
    # Hypotheses grouped by sentence for the kernel; results put back in input order.
    order = np.argsort(sentence_ids, kind="stable")
    sent_offsets = np.zeros(n_sent + 1, dtype=np.int64)
    np.cumsum(np.bincount(sentence_ids, minlength=n_sent), out=sent_offsets[1:])
    if n_types >= 1 << 32:  # the kernel's n-gram keys hold a token id in 32 bits
        raise InputError(f"{n_types} distinct tokens: BLEU statistics take at most {(1 << 32) - 1}")
    from smtlib.bleu._kernels import stats_kernel

    stats_sorted = stats_kernel(hyp_ids, hyp_offsets, order, sent_offsets, ref_ids, ref_offsets, n_refs,
                                _RULE_CODE[settings.ref_length], settings.max_ngram_order)
    stats = np.empty_like(stats_sorted)
    stats[order] = stats_sorted
    return stats


