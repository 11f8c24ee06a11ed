"""Och's (2003, §5) exact line search: upper envelopes per sentence, merged over the corpus.

Along the line w(x) = p + x·d every hypothesis j of a sentence is a line in x with slope
a_j = d·h_j and intercept b_j = p·h_j; the sentence's 1-best for each x is the upper envelope of
these lines. The envelope is computed exactly: lines sorted by slope (for equal slopes only the
highest intercept can win; equal lines go to the lowest row, as :func:`argmax_per_sentence`
does), then the convex-hull scan keeps a line only while it is the maximum on a non-empty
interval. Before sorting, a quickhull-style filter (:func:`_hull_candidates`) drops the lines
that provably cannot be on the envelope (in the dual plane, points below a chain of hull
vertices), so that only a few percent of a 1,500-best list are sorted; the filter is
conservative, so the envelope stays exact. Each envelope breakpoint changes one sentence's 1-best; merging all breakpoints in x
order and adding the statistics differences gives the corpus statistics on every interval, hence
the exact error surface along the line (the piecewise-constant function of Och's Figure 1).

The best interval is the leftmost with the highest score (strictly greater wins), and the point
returned is its midpoint, as Moses ``mert`` (from cmert) does to stay away from the boundaries.
For an unbounded best interval Moses uses ``x_1 - 1000`` or ``x_n + 0.1``; here the unbounded
interval is treated as being as wide as its bounded neighbour (or, with one breakpoint, as the
current weights' scale along d) and its midpoint is taken, which keeps the step on the scale of the
surrounding breakpoints instead of an absolute constant.

All kernels are numba-compiled; the corpus score is selected by the metric's ``kind``
(:mod:`smtlib.tuners.mert_metric`: corpus BLEU, or a decomposable additive score), a plain integer
so that the compiled kernels are cached on disk.
"""

from __future__ import annotations

import numba
import numpy as np

from smtlib.tuners.mert_metric import ADDITIVE, BLEU, additive_from_sums, bleu_none_from_sums

__all__ = ["ADDITIVE", "BLEU", "envelopes", "interval_scores", "line_search"]

_NEG_INF = -np.inf


@numba.njit(cache=True)
def _scan_sentence(rows, slopes, intercepts, stack, start, bx, bnew, bprev, nb):
    """Upper envelope of the lines ``rows`` (sorted by slope); appends breakpoints at ``nb``.

    Returns the row that is 1-best at x -> -inf and the new breakpoint count.
    """
    n = len(rows)
    top = 0
    i = 0
    while i < n:
        # a run of equal slopes: only the highest intercept (lowest row on ties) can be on top
        best = rows[i]
        j = i + 1
        while j < n and slopes[rows[j]] == slopes[rows[i]]:
            r = rows[j]
            if intercepts[r] > intercepts[best] or (intercepts[r] == intercepts[best] and r < best):
                best = r
            j += 1
        i = j
        a = slopes[best]
        b = intercepts[best]
        x = _NEG_INF
        while top > 0:
            t = stack[top - 1]
            x = (intercepts[t] - b) / (a - slopes[t])  # where the steeper line overtakes t
            if not np.isfinite(x):
                x = 1e300 if x > 0 else -1e300
            if top > 1 and x <= start[top - 1]:
                top -= 1  # t is never strictly on top
                continue
            break
        stack[top] = best
        start[top] = x if top > 0 else _NEG_INF
        top += 1
    for k in range(1, top):
        bx[nb] = start[k]
        bnew[nb] = stack[k]
        bprev[nb] = stack[k - 1]
        nb += 1
    return stack[0], nb


@numba.njit(cache=True)
def _hull_candidates(a, b, lo, rows):
    """Quickhull-style filter: writes to ``rows`` the lines that can be on the upper envelope.

    In the dual plane a line is the point (slope, intercept), and the upper envelope of the lines
    is the upper convex hull of the points. The point L of least slope, R of greatest slope, T of
    greatest intercept, and the points M1 / M2 farthest above the segments L-T / T-R are hull
    vertices; a point strictly below the chain L-M1-T-M2-R lies strictly below the hull and is
    dropped (a relative tolerance keeps points within rounding of the chain). The filter only
    drops lines that cannot win, so the envelope stays exact. Returns the number kept.
    """
    n = len(a)
    left = 0
    right = 0
    top = 0
    for j in range(1, n):
        if a[j] < a[left]:
            left = j
        if a[j] > a[right]:
            right = j
        if b[j] > b[top]:
            top = j
    al, bl = a[left], b[left]
    at, bt = a[top], b[top]
    ar, br = a[right], b[right]
    # second level, over the points not below L-T-R only: the farthest points M1 above L-T and
    # M2 above T-R, then the finer chain L-M1-T-M2-R filters those points again
    la, lb, ra, rb = at - al, bt - bl, ar - at, br - bt
    m1 = top
    m2 = top
    best1 = 0.0
    best2 = 0.0
    count = 0
    for j in range(n):
        aj = a[j]
        bj = b[j]
        on_left = aj <= at
        u = la * (bj - bl) if on_left else ra * (bj - bt)
        v = lb * (aj - al) if on_left else rb * (aj - at)
        c = u - v
        rows[count] = j
        count += c >= -1e-12 * (abs(u) + abs(v))
        if on_left and c > best1:
            best1 = c
            m1 = j
        if not on_left and c > best2:
            best2 = c
            m2 = j
    seg = np.empty((4, 4))
    xs = (al, a[m1], at, a[m2], ar)
    ys = (bl, b[m1], bt, b[m2], br)
    for k in range(4):
        seg[k, 0] = xs[k]
        seg[k, 1] = ys[k]
        seg[k, 2] = xs[k + 1] - xs[k]
        seg[k, 3] = ys[k + 1] - ys[k]
    a1 = xs[1]
    a2 = xs[3]
    kept = 0
    for i in range(count):
        j = rows[i]
        aj = a[j]
        bj = b[j]
        k = (aj > a1) + (aj > at) + (aj > a2)
        u = seg[k, 2] * (bj - seg[k, 1])
        v = seg[k, 3] * (aj - seg[k, 0])
        rows[kept] = lo + j
        kept += (u - v) >= -1e-12 * (abs(u) + abs(v))
    return kept


@numba.njit(cache=True)
def envelopes(slopes, intercepts, offsets):
    """Breakpoints of every sentence's upper envelope.

    Parameters
    ----------
    slopes, intercepts
        (N,) d·h and p·h of every hypothesis.
    offsets
        (S+1,) sentence row ranges.

    Returns
    -------
    first : (S,) int64
        1-best row at x -> -inf (-1 for an empty sentence).
    bx, bnew, bprev : (B,) arrays
        Breakpoint positions, the row that becomes 1-best there and the row it replaces.
    """
    n_sent = len(offsets) - 1
    first = np.full(n_sent, -1, dtype=np.int64)
    max_size = 0
    for s in range(n_sent):
        max_size = max(max_size, offsets[s + 1] - offsets[s])
    stack = np.empty(max_size, dtype=np.int64)
    start = np.empty(max_size, dtype=np.float64)
    rows = np.empty(max_size, dtype=np.int64)
    keys = np.empty(max_size, dtype=np.float64)
    capacity = max(16, n_sent * 8)
    bx = np.empty(capacity, dtype=np.float64)
    bnew = np.empty(capacity, dtype=np.int64)
    bprev = np.empty(capacity, dtype=np.int64)
    nb = 0
    for s in range(n_sent):
        lo = offsets[s]
        hi = offsets[s + 1]
        if hi == lo:
            continue
        m = _hull_candidates(slopes[lo:hi], intercepts[lo:hi], lo, rows)
        for j in range(m):
            keys[j] = slopes[rows[j]]
        ranked = rows[:m][np.argsort(keys[:m], kind="mergesort")]
        if nb + m > capacity:  # grow the breakpoint buffers
            capacity = 2 * (nb + m)
            bx = _grow_f(bx, nb, capacity)
            bnew = _grow_i(bnew, nb, capacity)
            bprev = _grow_i(bprev, nb, capacity)
        first[s], nb = _scan_sentence(ranked, slopes, intercepts, stack, start, bx, bnew, bprev, nb)
    return first, bx[:nb], bnew[:nb], bprev[:nb]


@numba.njit(cache=True)
def _grow_f(arr, used, capacity):
    out = np.empty(capacity, dtype=arr.dtype)
    out[:used] = arr[:used]
    return out


@numba.njit(cache=True)
def _grow_i(arr, used, capacity):
    out = np.empty(capacity, dtype=arr.dtype)
    out[:used] = arr[:used]
    return out


@numba.njit(cache=True)
def _score(sums, kind):
    """The corpus score of a summed row for a metric kind (see :class:`CorpusMetric`)."""
    if kind == BLEU:
        return bleu_none_from_sums(sums)
    return additive_from_sums(sums)


@numba.njit(cache=True)
def interval_scores(first, bx, bnew, bprev, stats, kind):
    """Corpus score on every interval of the merged breakpoints.

    Returns
    -------
    xs : (G,) distinct breakpoints in increasing order
    scores : (G+1,) score on (-inf, xs[0]), [xs[0], xs[1]), ..., [xs[G-1], inf)
    """
    width = stats.shape[1]
    sums = np.zeros(width)
    for s in range(len(first)):
        if first[s] >= 0:
            for k in range(width):
                sums[k] += stats[first[s], k]
    order = np.argsort(bx, kind="mergesort")
    nb = len(bx)
    xs = np.empty(nb, dtype=np.float64)
    scores = np.empty(nb + 1, dtype=np.float64)
    scores[0] = _score(sums, kind)
    g = 0
    for i in range(nb):
        e = order[i]
        new = bnew[e]
        old = bprev[e]
        for k in range(width):
            sums[k] += stats[new, k] - stats[old, k]
        if i + 1 == nb or bx[order[i + 1]] != bx[e]:
            xs[g] = bx[e]
            g += 1
            scores[g] = _score(sums, kind)
    return xs[:g], scores[: g + 1]


@numba.njit(cache=True)
def best_point(xs, scores, fallback_width):
    """The leftmost interval with the highest score and the x chosen in it (its midpoint).

    Returns ``(score, x, index)``; with no breakpoint the line is flat and x = 0.
    """
    best = 0
    for i in range(1, len(scores)):
        if scores[i] > scores[best]:
            best = i
    g = len(xs)
    if g == 0:
        return scores[0], 0.0, 0
    if best == 0:
        width = xs[1] - xs[0] if g > 1 else fallback_width
        return scores[0], xs[0] - 0.5 * width, 0
    if best == g:
        width = xs[g - 1] - xs[g - 2] if g > 1 else fallback_width
        return scores[g], xs[g - 1] + 0.5 * width, g
    return scores[best], 0.5 * (xs[best - 1] + xs[best]), best


def line_search(
    slopes: np.ndarray,
    intercepts: np.ndarray,
    offsets: np.ndarray,
    stats: np.ndarray,
    kind: int,
    fallback_width: float = 1.0,
) -> tuple[float, float]:
    """Best corpus score along one line and the step x that reaches it (Och 2003, §5).

    ``fallback_width`` sets the step into an unbounded best interval when there is a single
    breakpoint (see the module docstring).
    """
    first, bx, bnew, bprev = envelopes(slopes, intercepts, offsets)
    xs, scores = interval_scores(first, bx, bnew, bprev, stats, kind)
    score, x, _ = best_point(xs, scores, fallback_width)
    return float(score), float(x)
