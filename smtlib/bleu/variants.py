"""Named sentence-level BLEU variants, all computed from statistics rows (vectorized).

Every variant is a class registered in :data:`VARIANTS` under an explicit name; its name and every
parameter appear in the signature printed next to its scores (:mod:`smtlib.bleu.signature`).
Scores are 0-1.

=====================  ==================================================================
name                   source
=====================  ==================================================================
``bleu+1``             Lin & Och (2004): add one to n-gram matches and totals for n > 1
``moses-smoothed``     Moses ``smoothedSentenceBleu``: add one to all orders; optional
                       brevity-penalty smoothing of Nakov et al. (2012)
``liang-interpolated`` Liang et al. (2006): sum_i BLEU_i / 2^(4-i+1), used by Cherry &
                       Foster (2012)'s latent SVM
``pseudo-doc``         Chiang et al. (2008): BLEU of a decayed background pseudo-document
                       plus the sentence; Cherry & Foster (2012) Algorithm 1; Moses kbmira
``none`` ``floor``     sacrebleu ``sentence_bleu`` with that smoothing method (Chen &
``add-k`` ``exp``      Cherry 2014), effective order on, as sacrebleu does by default
=====================  ==================================================================

Expected BLEU over a k-best distribution (minimum risk, xBLEU) lives in
:mod:`smtlib.bleu.expected`.
"""

from __future__ import annotations

import abc

import numpy as np

from smtlib.bleu.signature import format_parameter
from smtlib.bleu.stats import HYP_LEN, MATCHES, NGRAM_ORDER, REF_LEN, STATS_WIDTH, TOTALS
from smtlib.errors import InputError
from smtlib.values import convert


def _as_rows(stats: np.ndarray, any_order: bool = False) -> np.ndarray:
    """``stats`` as an ``(N, STATS_WIDTH)`` float64 matrix (``any_order``: ``(N, 2 + 2n)``, n >= 1)."""
    stats = np.asarray(stats, dtype=np.float64)
    if any_order:
        if stats.ndim != 2 or stats.shape[1] < 4 or stats.shape[1] % 2:
            raise ValueError(f"statistics must have shape (N, 2 + 2n), got {stats.shape}")
    elif stats.ndim != 2 or stats.shape[1] != STATS_WIDTH:
        raise ValueError(f"statistics must have shape (N, {STATS_WIDTH}), got {stats.shape}")
    return stats


def _log_brevity(hyp_len: np.ndarray, ref_len: np.ndarray) -> np.ndarray:
    """min(0, 1 - r/c), with -inf for an empty hypothesis against a non-empty reference."""
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(hyp_len < ref_len, 1.0 - ref_len / np.where(hyp_len > 0, hyp_len, 1.0), 0.0)
    return np.where((hyp_len <= 0) & (ref_len > 0), -np.inf, value)


class SentenceBleu(abc.ABC):
    """Base class of the sentence-level variants: ``score(stats) -> (N,)`` in 0-1."""

    name: str = ""
    #: parameter name -> default value; every parameter can be set from the CLI
    defaults: dict[str, float | bool | str] = {}

    def __init__(self, **params) -> None:
        unknown = set(params) - set(self.defaults)
        if unknown:
            raise InputError(f"variant {self.name!r} has no parameter(s) {sorted(unknown)}; it has {sorted(self.defaults)}")
        self.params = {k: convert(k, v, self.defaults[k], self.name) for k, v in {**self.defaults, **params}.items()}

    @abc.abstractmethod
    def score(self, stats: np.ndarray) -> np.ndarray:
        """(N,) scores in 0-1 of an (N, STATS_WIDTH) statistics matrix."""

    def smooth_field(self) -> str:
        """``name[param=value,...]`` with every parameter but the effective order (see :mod:`smtlib.bleu.signature`)."""
        params = ",".join(f"{k}={format_parameter(v)}" for k, v in self.params.items() if k != "effective_order")
        return self.name + (f"[{params}]" if params else "")


class SacrebleuSentence(SentenceBleu):
    """sacrebleu's ``BLEU.compute_bleu`` vectorized, as ``sentence_bleu`` calls it.

    Reproduces sacrebleu's conventions exactly: a score of 0 when no n-gram of any order matches;
    ``add-k`` adds k to matches and totals of orders n > 1; ``exp`` halves the precision
    credit of each successive order with no match (mteval); ``floor`` uses ``value / total``;
    with ``effective_order`` orders after the first one without n-grams are ignored. The n-gram
    order is the statistics' (sacrebleu's ``max_ngram_order``: rows of ``2 + 2n`` columns).
    """

    method = "none"
    defaults = {"effective_order": True}

    def score(self, stats: np.ndarray) -> np.ndarray:
        stats = _as_rows(stats, any_order=True)
        value = self.params.get("value")
        max_order = (stats.shape[1] - 2) // 2
        m = stats[:, 2 : 2 + max_order].copy()
        t = stats[:, 2 + max_order :].copy()
        n_rows = len(stats)
        log_p = np.zeros((n_rows, max_order))
        included = np.zeros((n_rows, max_order), dtype=bool)
        alive = np.ones(n_rows, dtype=bool)  # no order without n-grams seen yet
        smooth_mteval = np.ones(n_rows)
        for n in range(max_order):
            if self.method == "add-k" and n > 0:
                m[:, n] += value
                t[:, n] += value
            alive &= t[:, n] > 0
            included[:, n] = alive
            zero = m[:, n] == 0
            with np.errstate(divide="ignore", invalid="ignore"):
                p = m[:, n] / t[:, n]
                if self.method == "exp":
                    smooth_mteval = np.where(alive & zero, smooth_mteval * 2, smooth_mteval)
                    p = np.where(zero, 1.0 / (smooth_mteval * t[:, n]), p)
                elif self.method == "floor":
                    p = np.where(zero, value / t[:, n], p)
                log_p[:, n] = np.where(alive & (p > 0), np.log(np.where(p > 0, p, 1.0)), -9999999999.0)
        if self.params["effective_order"]:
            order = included.sum(axis=1)
        else:
            order = np.full(n_rows, max_order)
            # sacrebleu breaks at the first order without n-grams: those precisions stay 0 -> log 0
        log_sum = np.where(included, log_p, 0.0 if self.params["effective_order"] else -9999999999.0).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.where(order > 0, log_sum / np.maximum(order, 1), 0.0)
        bp = np.exp(_log_brevity(stats[:, HYP_LEN], stats[:, REF_LEN]))
        result = bp * np.exp(mean)
        no_match = ~np.any(stats[:, 2 : 2 + max_order] > 0, axis=1)
        return np.where(no_match, 0.0, result)


class SacrebleuNone(SacrebleuSentence):
    """sacrebleu sentence BLEU without smoothing (``smooth_method='none'``)."""

    name = "none"
    method = "none"


class SacrebleuFloor(SacrebleuSentence):
    """sacrebleu sentence BLEU, ``floor`` smoothing (Chen & Cherry 2014, method 1), value 0.1."""

    name = "floor"
    method = "floor"
    defaults = {"effective_order": True, "value": 0.1}


class SacrebleuAddK(SacrebleuSentence):
    """sacrebleu sentence BLEU, ``add-k`` smoothing (Chen & Cherry 2014, method 2), k = 1."""

    name = "add-k"
    method = "add-k"
    defaults = {"effective_order": True, "value": 1.0}


class SacrebleuExp(SacrebleuSentence):
    """sacrebleu's default sentence BLEU, ``exp`` smoothing (Chen & Cherry 2014, method 3; mteval)."""

    name = "exp"
    method = "exp"


class BleuPlusOne(SacrebleuSentence):
    """BLEU+1 of Lin & Och (2004, "ORANGE", §4): add one to matches and totals of orders n > 1.

    Equal to sacrebleu's ``add-k`` with k = 1. Unigram precision is not smoothed, so a hypothesis
    sharing no word with the reference scores 0.
    """

    name = "bleu+1"
    method = "add-k"
    defaults = {"effective_order": True, "value": 1.0}


class MosesSmoothed(SentenceBleu):
    """Moses's ``smoothedSentenceBleu`` (mert/BleuScorer.cpp), the sentence BLEU of Moses PRO.

    log BLEU = 1/4 sum_n [log(m_n + s) - log(t_n + s)] + min(0, 1 - (r + s') / c) with smoothing
    s = 1 for all four orders (unigrams too, unlike BLEU+1), c = t_1 and s' = s when ``bp_smooth``
    is on (Nakov, Guzmán & Vogel 2012, "Optimizing for sentence-level BLEU+1 yields short
    translations": brevity-penalty smoothing), else 0.
    """

    name = "moses-smoothed"
    defaults = {"smoothing": 1.0, "bp_smooth": False}

    def score(self, stats: np.ndarray) -> np.ndarray:
        stats = _as_rows(stats)
        s = float(self.params["smoothing"])
        with np.errstate(divide="ignore"):
            log_bleu = (np.log(stats[:, MATCHES] + s) - np.log(stats[:, TOTALS] + s)).mean(axis=1)
        ref = stats[:, REF_LEN] + (s if self.params["bp_smooth"] else 0.0)
        hyp = stats[:, TOTALS][:, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            brevity = 1.0 - ref / hyp
        brevity = np.where(hyp > 0, brevity, np.where(ref > 0, -np.inf, 0.0))
        return np.exp(log_bleu + np.minimum(brevity, 0.0))


class LiangInterpolated(SentenceBleu):
    """Interpolated sentence BLEU of Liang, Bouchard-Côté, Klein & Taskar (2006, §3.1).

    sum_{i=1}^{4} BLEU_i / 2^(4-i+1), where BLEU_i is the brevity-penalised geometric mean of the
    1..i-gram precisions (0 if any of them is 0). Cherry & Foster (2012, §3.2) use it to pick the
    latent SVM's oracle set.
    """

    name = "liang-interpolated"

    def score(self, stats: np.ndarray) -> np.ndarray:
        stats = _as_rows(stats)
        m, t = stats[:, MATCHES], stats[:, TOTALS]
        with np.errstate(divide="ignore", invalid="ignore"):
            log_p = np.where((m > 0) & (t > 0), np.log(np.where(m > 0, m, 1.0) / np.where(t > 0, t, 1.0)), -np.inf)
        log_bp = _log_brevity(stats[:, HYP_LEN], stats[:, REF_LEN])
        total = np.zeros(len(stats))
        cumulative = np.zeros(len(stats))
        for i in range(1, NGRAM_ORDER + 1):
            cumulative = cumulative + log_p[:, i - 1]
            total += np.exp(log_bp + cumulative / i) / 2 ** (NGRAM_ORDER - i + 1)
        return total


class PseudoDocument(SentenceBleu):
    """Sentence BLEU against a background pseudo-document (Chiang, Marton & Resnik 2008, §3.1).

    The score of a hypothesis with statistics x is BLEU(B + x), scaled by the reference length of
    B + x when ``scale='ref-length'`` (Moses kbmira's ``sentenceLevelBackgroundBleu``, standing in
    for Chiang et al.'s (O_f + |f|) factor), unscaled (0-1) when ``scale='none'``. B starts with
    every statistic equal to ``initial`` (1, as Moses kbmira does, so that no log is of 0) and is
    updated after each sentence as ``B <- decay * (B + x_chosen)`` (Chiang et al.: decay 0.9;
    Cherry & Foster 2012 Algorithm 1: 0.999, with the hope hypothesis as ``x_chosen``; the
    "model background" alternative uses the 1-best).

    ``score`` uses :attr:`background`; :meth:`update` moves it. Called on a whole file through the
    CLI, each line is scored and then added to the background (model background).
    """

    name = "pseudo-doc"
    defaults = {"decay": 0.999, "scale": "none", "initial": 1.0}

    def __init__(self, **params) -> None:
        super().__init__(**params)
        if self.params["scale"] not in ("none", "ref-length"):
            raise InputError("pseudo-doc scale must be 'none' or 'ref-length'")
        self.background = np.full(STATS_WIDTH, float(self.params["initial"]))

    def update(self, chosen: np.ndarray) -> None:
        """B <- decay * (B + chosen) for the statistics row of the chosen hypothesis."""
        self.background = float(self.params["decay"]) * (self.background + np.asarray(chosen, dtype=np.float64))

    def score(self, stats: np.ndarray, background: np.ndarray | None = None) -> np.ndarray:
        stats = _as_rows(stats)
        bg = self.background if background is None else np.asarray(background, dtype=np.float64)
        total = stats + bg
        with np.errstate(divide="ignore"):
            log_bleu = (np.log(total[:, MATCHES]) - np.log(total[:, TOTALS])).mean(axis=1)
        log_bleu = log_bleu + _log_brevity(total[:, TOTALS][:, 0], total[:, REF_LEN])
        value = np.exp(log_bleu)
        if self.params["scale"] == "ref-length":
            value = value * total[:, REF_LEN]
        return value

    def score_sequence(self, stats: np.ndarray) -> np.ndarray:
        """Score rows in order, adding each to the background after scoring it."""
        stats = _as_rows(stats)
        out = np.empty(len(stats))
        for i, row in enumerate(stats):
            out[i] = self.score(row[None, :])[0]
            self.update(row)
        return out


VARIANTS: dict[str, type[SentenceBleu]] = {
    cls.name: cls
    for cls in (
        BleuPlusOne,
        MosesSmoothed,
        LiangInterpolated,
        PseudoDocument,
        SacrebleuNone,
        SacrebleuFloor,
        SacrebleuAddK,
        SacrebleuExp,
    )
}


def get_variant(name: str, **params) -> SentenceBleu:
    """Instantiate a variant by name; string parameter values (``--param``) are converted by
    :func:`smtlib.values.convert` to the default's type."""
    if name not in VARIANTS:
        raise InputError(f"unknown BLEU variant {name!r}; choose from {', '.join(VARIANTS)}")
    return VARIANTS[name](**params)
