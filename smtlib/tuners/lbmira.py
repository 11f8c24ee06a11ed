"""Batch lattice MIRA (``smtlib tune lbmira``): Cherry & Foster (2012), §3.1, Algorithm 1 on lattices.

Algorithm 1 (the same as ``kbmira``) with the approximate search space of each sentence a lattice
instead of a k-best list:

* for ``J`` passes over the sentences in a fresh random order, the hope
  ``e* = argmax w . h(e) + B(e)`` and the fear ``e' = argmax w . h(e) - B(e)`` are decoded *inside the
  lattice* (:func:`smtlib.tuners.hope_fear.oracle_path`: exact dynamic programming for the
  linear, edge-decomposable BLEU of Tromble et al. 2008 expanded at Algorithm 1's pseudo-document;
  that module says why this BLEU and not Chiang et al.'s greedy oracle decoding);
* the step is Algorithm 1's, with the *true* pseudo-document BLEU ``B`` of the hope and the fear
  (their clipped statistics are counted from their words): loss = ``B(e*) - B(e') - w . (h(e*) - h(e'))``,
  ``eta = min(C, loss / ||h(e*) - h(e')||^2)`` (no step when the loss is not positive), and
  ``BG <- gamma BG + stats(e*)``;
* after every pass the average of all weights so far is scored by the corpus BLEU of its Viterbi
  paths in the lattices, and the best average is returned (the earliest on ties).

Defaults are the paper's (§3.1, §4, footnote 3): J = 30, C = 0.01, gamma = 0.999; lattices are
pruned to 50 edges per reference word (§3.1 "we prune to a density of 50 edges per reference word",
:func:`smtlib.lattice.paths.density_prune_edges`, under the initial weights, when they are
read; ``smtlib tune lbmira --set density=...``); only hope and fear paths are aggregated across
iterations (§3.1): :attr:`LbMira.hope_fear_paths` holds every distinct hope and fear path of the run,
which ``smtlib tune lbmira --paths-out`` writes for the next iteration's ``--kbest`` (there they are
whole-path edges with their exact ``B``).

``B`` is the one of ``kbmira`` (Moses's ``sentenceLevelBackgroundBleu``, times the reference length
by default, ``bleu_scale``); BG starts at ``bg_initial`` for every statistic. Sparse features are
supported (the update touches only the two paths' non-zeros).

On a k-best pool (:meth:`fit`) every hypothesis is a whole-path edge with its exact ``B``, so the run
is batch k-best MIRA's Algorithm 1.
"""

from __future__ import annotations

import numba
import numpy as np

from smtlib.bleu.background import background_bleu
from smtlib.errors import InputError
from smtlib.lattice.lattice_set import LatticeSet
from smtlib.lattice.paths import viterbi_paths
from smtlib.lattice.stats import LatticeReferences, path_stats, path_stats_into
from smtlib.tuners.base import LatticeTuner, TuneResult
from smtlib.tuners.hope_fear import linear_coefficients, oracle_path, oracle_workspace
from smtlib.tuners.corpus_metric import bleu_none_from_sums


@numba.njit(cache=True)
def _score_edges(lo, hi, dense, indptr, indices, data, w, scores):
    """Model scores ``w . h(e)`` of the edges ``lo:hi`` (dense columns, then sparse non-zeros) into ``scores``."""
    n_dense = dense.shape[1]
    for e in range(lo, hi):
        sc = 0.0
        for f in range(n_dense):
            sc += dense[e, f] * w[f]
        for q in range(indptr[e], indptr[e + 1]):
            sc += data[q] * w[n_dense + indices[q]]
        scores[e] = sc


@numba.njit(cache=True)
def _copy_path(buf, path, n):
    """``path[:n]`` in ``buf`` (grown when too small); returns ``buf``."""
    if buf.shape[0] < n:
        buf = np.empty(2 * n, dtype=np.int64)
    buf[:n] = path[:n]
    return buf


@numba.njit(cache=True)
def _record_path(rec_off, rec_edges, n_rec, path, n):
    """Append ``path[:n]`` as record ``n_rec`` (``rec_edges`` grown when full); returns ``rec_edges``."""
    need = rec_off[n_rec] + n
    if need > rec_edges.shape[0]:
        bigger = np.empty(2 * need, dtype=np.int64)
        bigger[: rec_off[n_rec]] = rec_edges[: rec_off[n_rec]]
        rec_edges = bigger
    for k in range(n):
        rec_edges[rec_off[n_rec] + k] = path[k]
    rec_off[n_rec + 1] = need
    return rec_edges


@numba.njit(cache=True)
def _same_path(hope, n_h, fear, n_f):
    if n_h != n_f:
        return False
    for k in range(n_h):
        if hope[k] != fear[k]:
            return False
    return True


@numba.njit(cache=True)
def _path_score(scores, path, n):
    total = 0.0
    for k in range(n):
        total += scores[path[k]]
    return total


@numba.njit(cache=True)
def _difference_norm2(hope, n_h, fear, n_f, dense, indptr, indices, data, scratch):
    """``||h(e*) - h(e')||^2`` of the hope and the fear path.

    The sparse difference is summed in ``scratch`` (a zeroed buffer over the sparse features), whose
    touched slots are left marked NaN (so a feature on several edges is counted once); call
    :func:`_clear_scratch` after the step.
    """
    sq = 0.0
    for f in range(dense.shape[1]):
        diff = 0.0
        for k in range(n_h):
            diff += dense[hope[k], f]
        for k in range(n_f):
            diff -= dense[fear[k], f]
        sq += diff * diff
    for k in range(n_h):
        e = hope[k]
        for q in range(indptr[e], indptr[e + 1]):
            scratch[indices[q]] += data[q]
    for k in range(n_f):
        e = fear[k]
        for q in range(indptr[e], indptr[e + 1]):
            scratch[indices[q]] -= data[q]
    for k in range(n_h + n_f):
        e = hope[k] if k < n_h else fear[k - n_h]
        for q in range(indptr[e], indptr[e + 1]):
            v = scratch[indices[q]]
            if not np.isnan(v):
                sq += v * v
                scratch[indices[q]] = np.nan  # mark as counted
    return sq


@numba.njit(cache=True)
def _clear_scratch(hope, n_h, fear, n_f, indptr, indices, scratch):
    for k in range(n_h + n_f):
        e = hope[k] if k < n_h else fear[k - n_h]
        for q in range(indptr[e], indptr[e + 1]):
            scratch[indices[q]] = 0.0


@numba.njit(cache=True)
def _step(eta, t, hope, n_h, fear, n_f, dense, indptr, indices, data, w, u):
    """``w += eta (h(e*) - h(e'))`` and the running-average accumulator ``u += t eta (h(e*) - h(e'))``."""
    n_dense = dense.shape[1]
    for f in range(n_dense):
        diff = 0.0
        for k in range(n_h):
            diff += dense[hope[k], f]
        for k in range(n_f):
            diff -= dense[fear[k], f]
        w[f] += eta * diff
        u[f] += t * eta * diff
    for k in range(n_h + n_f):
        e = hope[k] if k < n_h else fear[k - n_h]
        sign = 1.0 if k < n_h else -1.0
        for q in range(indptr[e], indptr[e + 1]):
            w[n_dense + indices[q]] += sign * eta * data[q]
            u[n_dense + indices[q]] += sign * t * eta * data[q]


@numba.njit(cache=True)
def mira_pass(order, lat, refs, w, u, bg, t, c_cap, decay, scale_ref, scores, scratch, ws):
    """One pass of Algorithm 1 over the sentences ``order`` of a lattice set (updates w, u, bg in place).

    ``lat`` is ``(n_nodes, edge_off, tails, heads, dense (C order), sp_indptr, sp_indices, sp_data,
    word_off, path_row, path_stats)``, ``refs`` is :meth:`LatticeReferences.as_tuple`. ``u``
    accumulates ``t * eta * d`` for the running average (``w_avg = w - u / (t - 1)``, as ``kbmira``),
    ``scores`` is an (E,) buffer, ``scratch`` a zeroed buffer over the sparse features.

    Returns ``(t, updates, total loss, rec_off, rec_edges, ws)``: the hope and the fear path of every
    visited sentence, in visiting order (hope, fear, hope, fear, ...).
    """
    n_nodes, edge_off, tails, heads, dense, indptr, indices, data, word_off, path_row, path_stats = lat
    r_linear = refs[7]
    updates = 0
    total_loss = 0.0
    rec_off = np.zeros(2 * order.shape[0] + 1, dtype=np.int64)
    rec_edges = np.empty(64, dtype=np.int64)
    n_rec = 0
    hope = np.empty(64, dtype=np.int64)
    fear = np.empty(64, dtype=np.int64)
    stats_h = np.zeros(10)
    stats_f = np.zeros(10)
    tok_buf = np.empty(256, dtype=np.int64)
    for s in order:
        nn = n_nodes[s]
        lo = edge_off[s]
        hi = edge_off[s + 1]
        if nn == 0 or hi == lo:
            continue
        _score_edges(lo, hi, dense, indptr, indices, data, w, scores)
        theta_len, theta_m, constant = linear_coefficients(bg, scale_ref, r_linear[s])
        _, n_h, ws = oracle_path(s, lo, hi, nn, tails, heads, scores, word_off, path_row, path_stats, refs,
                                 theta_len, theta_m, constant, 1.0, bg, scale_ref, ws)
        if n_h < 0:
            continue
        hope = _copy_path(hope, ws[0], n_h)
        _, n_f, ws = oracle_path(s, lo, hi, nn, tails, heads, scores, word_off, path_row, path_stats, refs,
                                 theta_len, theta_m, constant, -1.0, bg, scale_ref, ws)
        fear = _copy_path(fear, ws[0], n_f)
        rec_edges = _record_path(rec_off, rec_edges, n_rec, hope, n_h)
        rec_edges = _record_path(rec_off, rec_edges, n_rec + 1, fear, n_f)
        n_rec += 2
        # the true pseudo-document BLEU of both, and their model scores
        tok_buf = path_stats_into(s, hope, n_h, word_off, path_row, path_stats, refs, tok_buf, stats_h)
        tok_buf = path_stats_into(s, fear, n_f, word_off, path_row, path_stats, refs, tok_buf, stats_f)
        if not _same_path(hope, n_h, fear, n_f):
            loss = ((background_bleu(stats_h, bg, scale_ref) - background_bleu(stats_f, bg, scale_ref))
                    - (_path_score(scores, hope, n_h) - _path_score(scores, fear, n_f)))
            if loss > 0.0:
                sq = _difference_norm2(hope, n_h, fear, n_f, dense, indptr, indices, data, scratch)
                if sq > 0.0:
                    _step(min(c_cap, loss / sq), t, hope, n_h, fear, n_f, dense, indptr, indices, data, w, u)
                    updates += 1
                    total_loss += loss
                _clear_scratch(hope, n_h, fear, n_f, indptr, indices, scratch)
        for k in range(bg.shape[0]):
            bg[k] = decay * bg[k] + stats_h[k]
        t += 1
    return t, updates, total_loss, rec_off[: n_rec + 1], rec_edges[: rec_off[n_rec]], ws


def lattice_tuple(ls: LatticeSet) -> tuple:
    """The arrays :func:`mira_pass` takes (dense in C order)."""
    csr = ls.sparse
    return (ls.n_nodes, ls.edge_off, ls.tails, ls.heads, np.ascontiguousarray(ls.dense),
            np.asarray(csr.indptr, np.int64), np.asarray(csr.indices, np.int64), np.asarray(csr.data, np.float64),
            ls.word_off, ls.path_row, ls.path_stats)


def viterbi_bleu(ls: LatticeSet, refs: LatticeReferences, weights: np.ndarray) -> float:
    """Corpus BLEU (0-1, no smoothing) of the Viterbi paths of the lattices under ``weights``."""
    scores = ls.edge_scores(weights)
    sent, off, edges = viterbi_paths(ls.n_nodes, ls.edge_off, ls.tails, ls.heads, scores)
    stats = path_stats(ls, refs, sent, off, edges)
    return float(bleu_none_from_sums(stats.sum(axis=0) if len(stats) else np.zeros(10)))


class MiraState:
    """Weights, the running-average accumulator, the pseudo-document and the step counter of a MIRA run."""

    def __init__(self, w: np.ndarray, bg: np.ndarray):
        self.w = np.asarray(w, dtype=np.float64).copy()
        self.u = np.zeros_like(self.w)
        self.bg = np.asarray(bg, dtype=np.float64).copy()
        self.t = 1
        self.updates = 0
        self.loss = 0.0

    def average(self) -> np.ndarray:
        steps = self.t - 1
        return self.w - self.u / steps if steps > 0 else self.w.copy()


def run_passes(ls: LatticeSet, refs: LatticeReferences, state: MiraState, orders: list[np.ndarray], params: dict,
               ) -> list[tuple[int, np.ndarray]]:
    """Run Algorithm 1 passes over ``orders`` (one array of sentence ids each), updating ``state``.

    Returns the (sentence, edges) of every hope and fear path met.
    """
    lat = lattice_tuple(ls)
    rt = refs.as_tuple()
    scores = np.zeros(ls.n_edges)
    scratch = np.zeros(ls.sparse.shape[1])
    ws = oracle_workspace()
    found = []
    for order in orders:
        order = np.asarray(order, dtype=np.int64)
        state.t, updates, loss, rec_off, rec_edges, ws = mira_pass(
            order, lat, rt, state.w, state.u, state.bg, state.t, float(params["C"]), float(params["decay"]),
            params["bleu_scale"] == "ref-length", scores, scratch, ws)
        state.updates += updates
        state.loss += loss
        visited = [s for s in order.tolist() if ls.n_nodes[s] > 0 and ls.edge_off[s + 1] > ls.edge_off[s]]
        for k in range(len(rec_off) - 1):
            found.append((visited[k // 2], rec_edges[rec_off[k] : rec_off[k + 1]]))
    return found


def check_mira_params(name: str, p: dict) -> None:
    if p.get("epochs", 1) < 1:
        raise InputError(f"{name}: epochs must be at least 1")
    if not p["C"] > 0:
        raise InputError(f"{name}: C must be positive")
    if not 0 < p["decay"] <= 1:
        raise InputError(f"{name}: decay must be in (0, 1]")
    if p["bleu_scale"] not in ("ref-length", "none"):
        raise InputError(f"{name}: bleu_scale must be 'ref-length' or 'none'")
    if not p["bg_initial"] > 0:
        raise InputError(f"{name}: bg_initial must be positive (the background BLEU takes logs of it)")
    if p.get("density", 1) < 0:
        raise InputError(f"{name}: density must be >= 0 (0 = no pruning)")


def unique_paths(found: list[tuple[int, np.ndarray]], ls: LatticeSet) -> list[tuple[int, np.ndarray]]:
    """Distinct lattice paths of ``found`` (whole-path edges, i.e. inputs, left out), in first-seen order."""
    seen = set()
    out = []
    for s, edges in found:
        if len(edges) == 1 and ls.path_row[edges[0]] >= 0:
            continue
        key = (s, edges.tobytes())
        if key not in seen:
            seen.add(key)
            out.append((s, edges))
    return out


class LbMira(LatticeTuner):
    """Batch lattice MIRA, Cherry & Foster (2012) Algorithm 1 on lattices: J=30, C=0.01, decay 0.999."""

    name = "lbmira"
    defaults = {
        "epochs": 30,  # J, passes (Cherry & Foster 2012, footnote 3)
        "C": 0.01,  # step cap (§4: all MIRA variants use C = 0.01)
        "decay": 0.999,  # pseudo-corpus decay gamma (§4)
        "bleu_scale": "ref-length",  # "ref-length" (Moses) or "none" (0-1 BLEU of BG + e), as kbmira
        "bg_initial": 1.0,  # initial value of every background statistic (Moses: 1), as kbmira
        "density": 50.0,  # lattices pruned to this many edges per reference word (§3.1); 0 = no pruning
    }

    def __init__(self, seed: int = 0, **params):
        super().__init__(seed, **params)
        #: (sentence, edges) of every distinct hope and fear lattice path of the last fit
        self.hope_fear_paths: list[tuple[int, np.ndarray]] = []

    @property
    def new_paths(self) -> list[tuple[int, np.ndarray]]:
        """The hope and fear paths of the last fit (what lb-mira aggregates, C&F §3.1)."""
        return self.hope_fear_paths

    def fit_lattices(self, ls: LatticeSet, refs: LatticeReferences, init: np.ndarray) -> TuneResult:
        """Run Algorithm 1 on the lattices (already pruned; weights aligned with ``ls.all_feature_names``)."""
        p = self.params
        check_mira_params(self.name, p)
        rng = self.rng()
        state = MiraState(init, np.full(10, float(p["bg_initial"])))
        nonempty = np.flatnonzero((ls.n_nodes > 0) & (np.diff(ls.edge_off) > 0))
        best = (-np.inf, state.w.copy(), 0)
        epochs = []
        found_all = []
        for j in range(1, p["epochs"] + 1):
            before = state.updates
            found_all += run_passes(ls, refs, state, [rng.permutation(nonempty)], p)
            average = state.average()
            score = viterbi_bleu(ls, refs, average)
            epochs.append({"epoch": j, "updates": state.updates - before, "train_score": score})
            if score > best[0]:
                best = (score, average, j)
            self.report_score("epoch", j, p["epochs"], "bleu", score, best[0], updates=state.updates - before)
        self.hope_fear_paths = unique_paths(found_all, ls)
        info = {"metric": "bleu", "best_epoch": best[2], "objective": best[0],
                "objective_init": viterbi_bleu(ls, refs, np.asarray(init, np.float64)), "epochs": epochs,
                "hope_fear_paths": len(self.hope_fear_paths), "lattice_edges": int(ls.n_edges)}
        return TuneResult(best[1], info)
