"""Corpus-level MIRA of Tan, Xia, Wang & Zhou (2013, Algorithm 1).

One MIRA step per epoch on the whole tuning set treated as a single example:

* hope and fear corpus hypotheses are built sentence by sentence (Algorithm 1, lines 3-8):
  ``e*_i = argmax_e w·h(e) + b'(e)`` and ``e'_i = argmax_e w·h(e) - b'(e)``, where b' is "a BLEU
  with add one smoothing (Lin and Och, 2004)" (§3.1): ``bleu+1`` of the sentence by default.
  With ``hope_bleu=incremental`` b' is instead the add-one BLEU of the hope (fear) document built
  so far plus the candidate, scaled by the number of sentences in that document so that its
  differences keep the magnitude of a sentence score (an incremental, corpus-aware reading of the
  same lines; it costs a BLEU evaluation per hypothesis and epoch, so it is not the default);
* the loss uses the exact corpus BLEU of the two documents, ΔB = B(E*) - B(E') (line 9; plain
  BLEU, no smoothing, as MERT optimises), and the mean feature vectors
  ``H(E) = 1/M sum_i h(e_{E,i})`` (§3.1), ΔH = H(E') - H(E*) (line 10);
* ``η = min(C, (ΔB + w·ΔH) / ||ΔH||²)`` and ``w <- w - η ΔH`` (lines 11-12), with η clipped at 0
  from below (the hinge: no step when the margin is already met, as in every MIRA);
* the averaged weights ``w̄_t = 1/(t+1) sum_{τ=0..t} w_τ`` (line 13) are scored each epoch and the
  average with the best 1-best corpus BLEU on the pool is returned (line 15).

Defaults from the paper's experiments (§4): C = 0.001 (their Table 1 with all features; 0.0001 was
best with 8 dense features), T = 400 epochs ("the one for c-MIRA is 400"). BLEU (b' and ΔB) is in
percent (``bleu_scale`` = 100), the scale the paper reports: their Table 4 counts 400 parameter
updates for c-MIRA, one per epoch, so the hinge loss was positive at every epoch; with BLEU in 0-1
the margin ΔB is small against real feature differences and the updates stop early (we measured 36
updates in 400 epochs on Moses's test_scorer_data pool from an LM-only start), so the 0-1 scale
cannot be what they used.
"""

from __future__ import annotations

import numba
import numpy as np

from smtlib.bleu.corpus import bleu_from_stats, corpus_bleu_from_stats
from smtlib.bleu.stats import NGRAM_ORDER
from smtlib.errors import InputError
from smtlib.kbest.pool import KBestPool
from smtlib.tuners._losses import Features, row_dot, sentence_bleu
from smtlib.tuners.base import Tuner, TuneResult


@numba.njit(cache=True, nogil=True)
def _add_one_log_bleu(stats, extra):
    """log of add-one BLEU of ``stats + extra`` (Lin & Och 2004: +1 on matches and totals for n > 1)."""
    total = 0.0
    for n in range(NGRAM_ORDER):
        m = stats[2 + n] + extra[2 + n]
        t = stats[2 + NGRAM_ORDER + n] + extra[2 + NGRAM_ORDER + n]
        if n > 0:
            m += 1.0
            t += 1.0
        if m <= 0.0 or t <= 0.0:
            return -1e10
        total += np.log(m / t)
    total /= NGRAM_ORDER
    c = stats[0] + extra[0]
    r = stats[1] + extra[1]
    if c < r:
        total += 1.0 - r / c if c > 0.0 else -1e10
    return total


@numba.njit(cache=True, nogil=True)
def _incremental_choice(scores, stats, offsets, sign):
    """Build a document sentence by sentence maximising score + sign * k * BLEU+1(doc + e)."""
    n_sent = offsets.shape[0] - 1
    out = np.full(n_sent, -1, dtype=np.int64)
    doc = np.zeros(stats.shape[1])
    k = 0
    for s in range(n_sent):
        lo, hi = offsets[s], offsets[s + 1]
        if hi == lo:
            continue
        k += 1
        best = -np.inf
        for r in range(lo, hi):
            value = scores[r] + sign * k * np.exp(_add_one_log_bleu(doc, stats[r]))
            if value > best or out[s] < 0:
                best = value
                out[s] = r
        for j in range(stats.shape[1]):
            doc[j] += stats[out[s], j]
    return out


@numba.njit(cache=True, nogil=True)
def _scan(dense, indptr, indices, data, offsets, w, b, avg_sum, hope, fear, avg_best):
    """One pass over the pool with weights w: hope/fear rows (score ± b), avg_sum += scores, 1-best of avg_sum."""
    for s in range(offsets.shape[0] - 1):
        hope[s] = -1
        fear[s] = -1
        avg_best[s] = -1
        best_h, best_f, best_a = -np.inf, -np.inf, -np.inf
        for r in range(offsets[s], offsets[s + 1]):
            score = row_dot(dense, indptr, indices, data, r, w)
            avg_sum[r] += score
            if hope[s] < 0 or score + b[r] > best_h:
                hope[s], best_h = r, score + b[r]
            if fear[s] < 0 or score - b[r] > best_f:
                fear[s], best_f = r, score - b[r]
            if avg_best[s] < 0 or avg_sum[r] > best_a:
                avg_best[s], best_a = r, avg_sum[r]


class CorpusMira(Tuner):
    """Corpus-level MIRA with exact corpus-BLEU losses; Tan et al. (2013) Algorithm 1."""

    name = "cmira"
    defaults = {
        "C": 0.001,
        "epochs": 400,
        "hope_bleu": "sentence",  # sentence (the paper's b') | incremental
        "bleu_scale": 100.0,  # BLEU in percent, for b' and ΔB
    }

    def fit(self, pool: KBestPool, init: np.ndarray) -> TuneResult:
        p = self.params
        if p["hope_bleu"] not in ("sentence", "incremental"):
            raise InputError(f"{self.name}: hope_bleu must be 'sentence' or 'incremental'")
        c_max = float(p["C"])
        feats = Features(pool)
        dense, indptr, indices, data = feats.arrays()
        offsets = pool.offsets
        stats = pool.stats
        n_sent = len(offsets) - 1
        present = np.flatnonzero(np.diff(offsets) > 0)
        m = max(len(present), 1)
        scale = float(p["bleu_scale"])
        b = scale * sentence_bleu(pool, "bleu+1")
        hope_all = np.empty(n_sent, dtype=np.int64)
        fear_all = np.empty(n_sent, dtype=np.int64)
        avg_best = np.empty(n_sent, dtype=np.int64)
        avg_sum = np.zeros(feats.n_rows)  # scores of w̄_t are the running mean of the scores of w_τ

        def scan(w: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
            _scan(dense, indptr, indices, data, offsets, w, b, avg_sum, hope_all, fear_all, avg_best)
            bleu_avg = corpus_bleu_from_stats(stats[avg_best[present]]) if len(present) else 0.0
            if p["hope_bleu"] == "incremental":
                scores = feats.scores(w)
                return (_incremental_choice(scores, stats, offsets, scale)[present],
                        _incremental_choice(scores, stats, offsets, -scale)[present], bleu_avg)
            return hope_all[present].copy(), fear_all[present].copy(), bleu_avg

        w = init.copy()
        w_sum = w.copy()
        hope, fear, best_bleu = scan(w)
        best_w, best_epoch, updates = w.copy(), 0, 0
        for t in range(1, int(p["epochs"]) + 1):
            delta_b = scale * (bleu_from_stats(stats[hope].sum(axis=0), smooth_method="none")
                               - bleu_from_stats(stats[fear].sum(axis=0), smooth_method="none"))
            delta_h = (feats.row_sum(fear) - feats.row_sum(hope)) / m
            norm = float(delta_h @ delta_h)
            if norm > 0.0:
                eta = min(c_max, max(0.0, (delta_b + float(w @ delta_h)) / norm))
                if eta > 0.0:
                    w = w - eta * delta_h
                    updates += 1
            w_sum += w
            hope, fear, avg_bleu = scan(w)
            if avg_bleu > best_bleu:
                best_bleu, best_w, best_epoch = avg_bleu, w_sum / (t + 1), t
        info = {"train_bleu": 100 * best_bleu, "best_epoch": best_epoch, "updates": updates, "hope_bleu": p["hope_bleu"]}
        return TuneResult(best_w, info)

