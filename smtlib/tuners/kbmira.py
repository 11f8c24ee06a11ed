"""Batch k-best MIRA (``smtlib tune kbmira``): Cherry & Foster (2012), §3.1 and Algorithm 1.

Online MIRA (Crammer et al. 2006; Chiang et al. 2008) run to completion over the k-best pool:
for J passes, visit the sentences in a fresh random order; in each, pick

* the hope   e*  = argmax_e  w·h(e) + BLEU_bg(e),
* the fear   e'  = argmax_e  w·h(e) - BLEU_bg(e),

and take the clipped passive-aggressive step of Algorithm 1 / eq. (3)

    loss = [BLEU_bg(e*) - BLEU_bg(e')] - w·(h(e*) - h(e')),
    eta  = min(C, loss / ||h(e*) - h(e')||^2)   (no step when loss <= 0),
    w   <- w + eta (h(e*) - h(e')),

then add the hope's statistics to the pseudo-corpus, BG <- gamma BG + stats(e*). BLEU_bg(e) is the
sentence BLEU of e against the background pseudo-document (Chiang et al. 2008, §3.1): BLEU of
BG + stats(e), multiplied by the reference length of BG + stats(e) as Moses ``kbmira``
(``sentenceLevelBackgroundBleu``) does by default (``bleu_scale="ref-length"``; ``"none"`` gives
0-1 BLEU, the variant ``pseudo-doc`` of :mod:`smtlib.bleu.variants` with the same parameters). BG
starts with every statistic at ``bg_initial`` ("small positive counts"; Moses uses 1). After pass
j the average of all weights so far, w_avg = (1/nj) sum_{t=1..nj} w_t, is scored by corpus BLEU
(no smoothing) of its 1-best on the pool, and the average with the best training BLEU is returned
(the earliest on ties). Defaults are the paper's: J = 30, C = 0.01, gamma = 0.999.

Following Algorithm 1 the background is updated after every sentence (Moses updates it only when
hope and fear differ, a negligible difference); Chiang et al.'s ``pseudo-doc`` variant in
:mod:`smtlib.bleu.variants` decays as BG <- gamma (BG + x), Algorithm 1 and Moses as
BG <- gamma BG + x, which is what is done here.

Other metrics (``smtlib tune kbmira --metric``): BLEU_bg(e) becomes the metric's score of
BG + stats(e) over its own statistics (:func:`background_gain`), part by part for a mixture, each
part scaled by its reference length in BG + e when ``bleu_scale="ref-length"``; for TER the gain is
then minus the edits of BG + e.

Sparse features: the pass runs in a numba kernel over the pool's dense matrix and its CSR sparse
matrix directly (never densified), so memory is proportional to the non-zeros; the update touches
only the two hypotheses' non-zeros and the average is kept lazily (w_avg = w - u / t with
u = sum_t t eta_t d_t).
"""

from __future__ import annotations

import numba
import numpy as np

from smtlib.bleu.background import background_bleu
from smtlib.errors import InputError
from smtlib.kbest.pool import KBestPool
from smtlib.tuners.base import KBestTuner, TuneResult
from smtlib.tuners.corpus_metric import CorpusMetric, bleu_metric, is_additive, is_plain_bleu, metric_from_sums


@numba.njit(cache=True)
def background_gain(stats_row, bg, spec, scale_ref, total):
    """The pseudo-document gain of a hypothesis under a metric ``spec``.

    Plain BLEU is :func:`background_bleu`, unchanged. Any other metric or mixture (Moses's
    interpolated scorer) scores BG + stats(e) part by part, sum_p w_p score_p(BG + e), each part
    multiplied by its own reference length in BG + e when ``scale_ref`` (as Moses scales BLEU by
    the reference length): words for TER, whose gain is then minus the edits of BG + e, and
    non-blank characters (the character unigrams) for chrF. ``total`` is scratch of the row's width.
    """
    if is_plain_bleu(spec):
        return background_bleu(stats_row, bg, scale_ref)
    for k in range(len(total)):
        total[k] = stats_row[k] + bg[k]
    value = 0.0
    for p in range(spec.shape[0]):
        part = metric_from_sums(total, spec[p:p + 1])
        if scale_ref:
            part *= total[int(spec[p, 5])]
        value += part
    return value


@numba.njit(cache=True)
def _mira_epoch(
    order, offsets, dense, indptr, indices, data, stats, gains, use_gains,
    w, u, bg, t, c_cap, decay, scale_ref, scratch, spec,
):  # fmt: skip
    """One pass of Algorithm 1 over ``order``; updates w, u, bg in place, returns (t, updates, loss)."""
    n_dense = dense.shape[1]
    updates = 0
    total_loss = 0.0
    max_size = 0
    for s in order:
        max_size = max(max_size, offsets[s + 1] - offsets[s])
    model = np.empty(max_size)
    gain = np.empty(max_size)
    total = np.empty(stats.shape[1])
    for s in order:
        lo = offsets[s]
        hi = offsets[s + 1]
        hope = 0
        fear = 0
        for k in range(hi - lo):
            r = lo + k
            score = 0.0
            for f in range(n_dense):
                score += dense[r, f] * w[f]
            for q in range(indptr[r], indptr[r + 1]):
                score += data[q] * w[n_dense + indices[q]]
            model[k] = score
            gain[k] = gains[r] if use_gains else background_gain(stats[r], bg, spec, scale_ref, total)
            if score + gain[k] > model[hope] + gain[hope]:
                hope = k
            if score - gain[k] > model[fear] - gain[fear]:
                fear = k
        if hope != fear:
            loss = (gain[hope] - gain[fear]) - (model[hope] - model[fear])
            if loss > 0.0:
                rh = lo + hope
                rf = lo + fear
                sq = 0.0
                for f in range(n_dense):
                    diff = dense[rh, f] - dense[rf, f]
                    sq += diff * diff
                for q in range(indptr[rh], indptr[rh + 1]):
                    scratch[indices[q]] += data[q]
                for q in range(indptr[rf], indptr[rf + 1]):
                    scratch[indices[q]] -= data[q]
                for q in range(indptr[rh], indptr[rh + 1]):
                    sq += scratch[indices[q]] ** 2
                    scratch[indices[q]] = 0.0
                for q in range(indptr[rf], indptr[rf + 1]):
                    sq += scratch[indices[q]] ** 2
                    scratch[indices[q]] = 0.0
                if sq > 0.0:
                    eta = min(c_cap, loss / sq)
                    for f in range(n_dense):
                        diff = eta * (dense[rh, f] - dense[rf, f])
                        w[f] += diff
                        u[f] += t * diff
                    for q in range(indptr[rh], indptr[rh + 1]):
                        w[n_dense + indices[q]] += eta * data[q]
                        u[n_dense + indices[q]] += t * eta * data[q]
                    for q in range(indptr[rf], indptr[rf + 1]):
                        w[n_dense + indices[q]] -= eta * data[q]
                        u[n_dense + indices[q]] -= t * eta * data[q]
                    updates += 1
                    total_loss += loss
        if not use_gains:
            for k in range(bg.shape[0]):
                bg[k] = decay * bg[k] + stats[lo + hope, k]
        t += 1
    return t, updates, total_loss


@numba.njit(cache=True)
def best_rows(offsets, dense, indptr, indices, data, w):
    """(S,) highest-scoring row per sentence under ``w`` (first on ties, -1 if empty), one pass."""
    n_sent = len(offsets) - 1
    n_dense = dense.shape[1]
    out = np.full(n_sent, -1, dtype=np.int64)
    for s in range(n_sent):
        best = -np.inf
        for r in range(offsets[s], offsets[s + 1]):
            score = 0.0
            for f in range(n_dense):
                score += dense[r, f] * w[f]
            for q in range(indptr[r], indptr[r + 1]):
                score += data[q] * w[n_dense + indices[q]]
            if score > best or out[s] < 0:
                best = score
                out[s] = r
    return out


class KbMira(KBestTuner):
    """Batch k-best MIRA, Cherry & Foster (2012) Algorithm 1: J=30, C=0.01, pseudo-corpus decay 0.999."""

    name = "kbmira"
    defaults = {
        "epochs": 30,  # J, passes over the pool (Cherry & Foster 2012, footnote 3)
        "C": 0.01,  # step cap (§4: all MIRA variants use C = 0.01)
        "decay": 0.999,  # pseudo-corpus decay gamma (§4)
        "bleu_scale": "ref-length",  # "ref-length" (Moses kbmira) or "none" (0-1 BLEU of BG + e)
        "bg_initial": 1.0,  # initial value of every background statistic (Moses: 1)
    }

    def _check(self) -> None:
        p = self.params
        if p["epochs"] < 1:
            raise InputError("kbmira: epochs must be at least 1")
        if not p["C"] > 0:
            raise InputError("kbmira: C must be positive")
        if not 0 < p["decay"] <= 1:
            raise InputError("kbmira: decay must be in (0, 1]")
        if p["bleu_scale"] not in ("ref-length", "none"):
            raise InputError("kbmira: bleu_scale must be 'ref-length' or 'none'")
        if not p["bg_initial"] > 0:
            raise InputError("kbmira: bg_initial must be positive (the background BLEU takes logs of it)")

    def fit(self, pool: KBestPool, init: np.ndarray) -> TuneResult:
        """Run Algorithm 1 on the pool with the pseudo-document BLEU (see the module docstring)."""
        return self.fit_metric(pool, init, bleu_metric(pool.stats))

    def fit_metric(self, pool: KBestPool, init: np.ndarray, metric: CorpusMetric) -> TuneResult:
        """Algorithm 1 with ``metric``: BLEU, and any metric or mixture of :mod:`smtlib.bleu.metrics`,
        uses the background pseudo-document over the metric's statistics
        (:func:`background_gain`); the additive gold score uses its per-hypothesis gains as BLEU_i(e).
        The training score of each average is ``metric``'s corpus score.
        """
        self._check()
        p = self.params
        rng = self.rng()
        offsets = np.asarray(pool.offsets, dtype=np.int64)
        dense = np.ascontiguousarray(pool.dense, dtype=np.float64)
        sparse = pool.sparse
        indptr = np.asarray(sparse.indptr, dtype=np.int64)
        indices = np.asarray(sparse.indices, dtype=np.int64)
        data = np.asarray(sparse.data, dtype=np.float64)
        use_gains = bool(is_additive(metric.kind))
        if use_gains:
            gains = np.ascontiguousarray(metric.sentence_scores, dtype=np.float64)
            stats = np.zeros((len(gains), 10))
        else:
            gains = np.zeros(0)
            stats = np.ascontiguousarray(metric.stats, dtype=np.float64)
        nonempty = np.flatnonzero(np.diff(offsets) > 0)
        w = np.asarray(init, dtype=np.float64).copy()
        u = np.zeros_like(w)
        bg = np.full(stats.shape[1], float(p["bg_initial"]))
        scratch = np.zeros(sparse.shape[1])
        t = 1
        best = (-np.inf, None, 0)
        epochs = []
        for j in range(1, p["epochs"] + 1):
            order = rng.permutation(nonempty).astype(np.int64)
            t, updates, loss = _mira_epoch(
                order, offsets, dense, indptr, indices, data, stats, gains, use_gains,
                w, u, bg, t, float(p["C"]), float(p["decay"]), p["bleu_scale"] == "ref-length", scratch, metric.kind,
            )  # fmt: skip
            steps = t - 1
            average = w - u / steps if steps > 0 else w.copy()
            score = metric.corpus_score(best_rows(offsets, dense, indptr, indices, data, average))
            epochs.append({"epoch": j, "updates": int(updates), "avg_loss": loss / max(len(order), 1), "train_score": score})
            if score > best[0]:
                best = (score, average, j)
            self.report_score("epoch", j, p["epochs"], metric.name, score, best[0], updates=int(updates))
        info = {"metric": metric.name, "best_epoch": best[2], "objective": best[0], "epochs": epochs}
        return TuneResult(best[1], info)
