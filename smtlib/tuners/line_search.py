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
(:mod:`smtlib.tuners.corpus_metric`: corpus BLEU, a decomposable additive score, or any metric or
mixture of :mod:`smtlib.bleu.metrics`), a small array (the metric's spec) rather than a
function, so that the compiled kernels are cached on disk.
"""

from __future__ import annotations

import numba
import numpy as np

from smtlib.lattice.envelope import grow
from smtlib.tuners.corpus_metric import ADDITIVE, BLEU, is_plain_bleu, metric_from_sums

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
def _extremes(a, b, lo, hi):
    """Rows (absolute) of least slope, greatest slope and greatest intercept among lo..hi-1."""
    left = lo
    right = lo
    top = lo
    for j in range(lo + 1, hi):
        if a[j] < a[left]:
            left = j
        if a[j] > a[right]:
            right = j
        if b[j] > b[top]:
            top = j
    return left, right, top


@numba.njit(cache=True)
def _hull_candidates(a, b, lo, hi, left, right, top, rows):
    """Quickhull-style filter: writes to ``rows`` the lines of lo..hi-1 that can be on the envelope.

    In the dual plane a line is the point (slope, intercept), and the upper envelope of the lines
    is the upper convex hull of the points. ``left``/``right`` are rows of least/greatest slope and
    ``top`` a row of (nearly) greatest intercept, all hull points or at least points of the set:
    a point strictly below the chain L-T-R lies strictly below the hull, because the chain joins
    points of the set and the hull is concave. Level 1 is one branch-free pass: with g = b_T - b_j
    and d = a_j - a_T, the point is kept when g <= max(-s_L d, s_R d), s_L and s_R the chain's
    slopes away from T (taking the larger of the two sides only keeps more, which is safe when T is
    not exactly the highest). Level 2 takes the kept points M1 / M2 farthest above L-T / T-R and
    filters the kept points again against the finer chain L-M1-T-M2-R. Relative tolerances keep
    points within rounding of a chain, so the envelope stays exact. Returns the number kept.
    """
    al, bl = a[left], b[left]
    at, bt = a[top], b[top]
    ar, br = a[right], b[right]
    sl = (bt - bl) / (at - al) if at > al else 0.0
    sr = (bt - br) / (ar - at) if ar > at else 0.0
    count = 0
    for j in range(lo, hi):
        d = a[j] - at
        g = bt - b[j]
        bound = max(-sl * d, sr * d)
        rows[count] = j
        count += g <= bound + 1e-10 * (abs(bt) + abs(b[j]) + abs(bound))
    # level 2: the farthest points above each side of the chain, then the finer chain
    m1 = top
    m2 = top
    best1 = 0.0
    best2 = 0.0
    for i in range(count):
        j = rows[i]
        d = a[j] - at
        excess = max(-sl * d, sr * d) - (bt - b[j])
        if d <= 0.0 and excess > best1:
            best1 = excess
            m1 = j
        if d > 0.0 and excess > best2:
            best2 = excess
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
        rows[kept] = j
        kept += (u - v) >= -1e-12 * (abs(u) + abs(v))
    return kept


@numba.njit(cache=True)
def _envelopes(slopes, intercepts, offsets, low, high, top):
    """Breakpoints of every sentence's upper envelope (see :func:`envelopes`).

    ``low``, ``high`` and ``top`` give per sentence the rows of least slope, greatest slope and
    (nearly) greatest intercept; empty arrays make the kernel find them with one more pass. Also
    returns ``bstart`` (S+1,), the range of each sentence's breakpoints.
    """
    n_sent = len(offsets) - 1
    first = np.full(n_sent, -1, dtype=np.int64)
    bstart = np.zeros(n_sent + 1, dtype=np.int64)
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
    given = len(top) > 0
    nb = 0
    for s in range(n_sent):
        lo = offsets[s]
        hi = offsets[s + 1]
        bstart[s] = nb
        if hi == lo:
            continue
        if given:
            left, right, best = low[s], high[s], top[s]
        else:
            left, right, best = _extremes(slopes, intercepts, lo, hi)
        m = _hull_candidates(slopes, intercepts, lo, hi, left, right, best, rows)
        ranked = _sort_by_slope(rows, m, slopes, keys)
        if nb + m > capacity:  # grow the breakpoint buffers
            capacity = 2 * (nb + m)
            bx = grow(bx, nb, capacity)
            bnew = grow(bnew, nb, capacity)
            bprev = grow(bprev, nb, capacity)
        first[s], nb = _scan_sentence(ranked, slopes, intercepts, stack, start, bx, bnew, bprev, nb)
    bstart[n_sent] = nb
    return first, bx[:nb], bnew[:nb], bprev[:nb], bstart


@numba.njit(cache=True)
def _sort_by_slope(rows, m, slopes, keys):
    """``rows[:m]`` in increasing slope, stable (ties keep row order): insertion sort when short."""
    if m > 32:
        for j in range(m):
            keys[j] = slopes[rows[j]]
        return rows[:m][np.argsort(keys[:m], kind="mergesort")]
    for i in range(1, m):
        r = rows[i]
        key = slopes[r]
        j = i - 1
        while j >= 0 and slopes[rows[j]] > key:
            rows[j + 1] = rows[j]
            j -= 1
        rows[j + 1] = r
    return rows[:m]


_NONE = np.zeros(0, dtype=np.int64)


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
    first, bx, bnew, bprev, _ = _envelopes(slopes, intercepts, offsets, _NONE, _NONE, _NONE)
    return first, bx, bnew, bprev


@numba.njit(cache=True)
def rows_at(first, bx, bnew, bstart, x):
    """(S,) every sentence's 1-best row at step ``x`` of the line (from its envelope)."""
    n_sent = len(first)
    out = first.copy()
    for s in range(n_sent):
        for k in range(bstart[s], bstart[s + 1]):
            if bx[k] > x:
                break
            out[s] = bnew[k]
    return out


@numba.njit(cache=True)
def column_extremes(columns, offsets):
    """(D, S) rows of least and greatest value of every feature column in every sentence.

    For a coordinate direction the slopes are a feature column, so these are the rows of least and
    greatest slope of :func:`_hull_candidates`, fixed for the whole search. Empty sentences get -1.
    """
    n_dims = columns.shape[0]
    n_sent = len(offsets) - 1
    low = np.full((n_dims, n_sent), -1, dtype=np.int64)
    high = np.full((n_dims, n_sent), -1, dtype=np.int64)
    for d in range(n_dims):
        col = columns[d]
        for s in range(n_sent):
            lo = offsets[s]
            hi = offsets[s + 1]
            if hi == lo:
                continue
            left = lo
            right = lo
            for j in range(lo + 1, hi):
                if col[j] < col[left]:
                    left = j
                if col[j] > col[right]:
                    right = j
            low[d, s] = left
            high[d, s] = right
    return low, high


@numba.njit(cache=True)
def _score(sums, kind):
    """The corpus score of a summed row for a metric spec (see :class:`CorpusMetric`)."""
    return metric_from_sums(sums, kind)


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


#: how :func:`best_point` steps into an unbounded best interval
UNBOUNDED_MOSES = 0  #: cmert's / Moses's constants: x_1 - 1000 on the left, x_n + 0.1 on the right
UNBOUNDED_NEIGHBOUR = 1  #: half the width of the neighbouring bounded interval (or ``fallback_width``)
UNBOUNDED_RULES = {"moses": UNBOUNDED_MOSES, "neighbour": UNBOUNDED_NEIGHBOUR}
MOSES_LEFT_STEP = 1000.0
MOSES_RIGHT_STEP = 0.1


@numba.njit(cache=True)
def best_point(xs, scores, fallback_width, unbounded=UNBOUNDED_MOSES):
    """The leftmost interval with the highest score and the x chosen in it.

    A bounded interval gives its midpoint. An unbounded one gives, with ``unbounded`` =
    :data:`UNBOUNDED_MOSES`, ``x_1 - 1000`` (left) or ``x_n + 0.1`` (right), Moses's constants from
    cmert; with :data:`UNBOUNDED_NEIGHBOUR`, the point half the neighbouring interval's width beyond
    the last breakpoint (``fallback_width`` when there is a single breakpoint). Returns
    ``(score, x, index)``; with no breakpoint the line is flat and x = 0.
    """
    best = 0
    for i in range(1, len(scores)):
        if scores[i] > scores[best]:
            best = i
    g = len(xs)
    if g == 0:
        return scores[0], 0.0, 0
    if best == 0:
        if unbounded == UNBOUNDED_MOSES:
            return scores[0], xs[0] - MOSES_LEFT_STEP, 0
        width = xs[1] - xs[0] if g > 1 else fallback_width
        return scores[0], xs[0] - 0.5 * width, 0
    if best == g:
        if unbounded == UNBOUNDED_MOSES:
            return scores[g], xs[g - 1] + MOSES_RIGHT_STEP, g
        width = xs[g - 1] - xs[g - 2] if g > 1 else fallback_width
        return scores[g], xs[g - 1] + 0.5 * width, g
    return scores[best], 0.5 * (xs[best - 1] + xs[best]), best


def line_search(
    slopes: np.ndarray,
    intercepts: np.ndarray,
    offsets: np.ndarray,
    stats: np.ndarray,
    kind: np.ndarray,
    fallback_width: float = 1.0,
    unbounded: str = "moses",
) -> tuple[float, float]:
    """Best corpus score along one line and the step x that reaches it (Och 2003, §5).

    ``unbounded`` (``"moses"`` or ``"neighbour"``) and ``fallback_width`` set the step into an
    unbounded best interval (see :func:`best_point`).
    """
    score, x, _ = search_line(slopes, intercepts, offsets, stats, kind, _NONE, _NONE, _NONE, fallback_width, UNBOUNDED_RULES[unbounded])
    return score, x


def search_line(slopes, intercepts, offsets, stats, kind, low, high, top, fallback_width, unbounded):
    """:func:`line_search` with the hull filter's anchor rows given (empty arrays: found here).

    Returns ``(score, x, rows)``, ``rows`` a function of a step giving every sentence's 1-best
    there (:func:`rows_at`), for keeping the rows of greatest intercept up to date after a step.
    """
    first, bx, bnew, bprev, bstart = _envelopes(slopes, intercepts, offsets, low, high, top)
    score, x = _line_optimum(first, bx, bnew, bprev, stats, kind, fallback_width, unbounded)
    return float(score), float(x), lambda step: rows_at(first, bx, bnew, bstart, step)


@numba.njit(cache=True)
def _line_optimum(first, bx, bnew, bprev, stats, kind, fallback_width, unbounded):
    """:func:`interval_scores` and :func:`best_point` in one pass, without the score array.

    BLEU intervals are compared by log BLEU (one log per interval; the exponential is taken for the
    best only), which orders them as BLEU does.
    """
    width = stats.shape[1]
    sums = np.zeros(width)
    for s in range(len(first)):
        if first[s] >= 0:
            for k in range(width):
                sums[k] += stats[first[s], k]
    order = np.argsort(bx, kind="mergesort")
    nb = len(bx)
    xs = np.empty(nb + 1, dtype=np.float64)
    best_value = _log_score(sums, kind)
    best = 0
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
            value = _log_score(sums, kind)
            if value > best_value:
                best_value = value
                best = g
    score = best_value if not is_plain_bleu(kind) else (np.exp(best_value) if best_value > -np.inf else 0.0)
    if g == 0:
        return score, 0.0
    if best == 0:
        if unbounded == UNBOUNDED_MOSES:
            return score, xs[0] - MOSES_LEFT_STEP
        w = xs[1] - xs[0] if g > 1 else fallback_width
        return score, xs[0] - 0.5 * w
    if best == g:
        if unbounded == UNBOUNDED_MOSES:
            return score, xs[g - 1] + MOSES_RIGHT_STEP
        w = xs[g - 1] - xs[g - 2] if g > 1 else fallback_width
        return score, xs[g - 1] + 0.5 * w
    return score, 0.5 * (xs[best - 1] + xs[best])


@numba.njit(cache=True)
def _log_score(sums, kind):
    """log corpus BLEU of a summed row (-inf for BLEU 0) for plain BLEU, else the spec's score itself."""
    if not is_plain_bleu(kind):
        return metric_from_sums(sums, kind)
    num = 1.0
    den = 1.0
    for n in range(4):
        m = sums[2 + n]
        t = sums[6 + n]
        if m <= 0.0 or t <= 0.0:
            return -np.inf
        num *= m
        den *= t
    value = 0.25 * np.log(num / den)
    c = sums[0]
    r = sums[1]
    if c < r:
        if c <= 0.0:
            return -np.inf
        value += 1.0 - r / c
    return value


@numba.njit(cache=True)
def sentence_argmax(values, offsets):
    """(S,) first row of the maximum of ``values`` in every sentence range (-1 when empty)."""
    n_sent = len(offsets) - 1
    out = np.full(n_sent, -1, dtype=np.int64)
    for s in range(n_sent):
        lo = offsets[s]
        hi = offsets[s + 1]
        if hi == lo:
            continue
        best = lo
        for j in range(lo + 1, hi):
            if values[j] > values[best]:
                best = j
        out[s] = best
    return out


@numba.njit(cache=True)
def columns_of(dense):
    """(D, N) contiguous copy of the (N, D) feature matrix, copied in row blocks (cache-friendly)."""
    n, n_dims = dense.shape
    out = np.empty((n_dims, n), dtype=np.float64)
    block = 512
    for start in range(0, n, block):
        stop = min(n, start + block)
        for d in range(n_dims):
            for j in range(start, stop):
                out[d, j] = dense[j, d]
    return out


@numba.njit(cache=True)
def model_scores(dense, w, offsets):
    """(N,) model scores w·h and (S,) the first row of the highest per sentence (-1 when empty)."""
    n_sent = len(offsets) - 1
    n_dims = dense.shape[1]
    scores = np.empty(dense.shape[0], dtype=np.float64)
    best = np.full(n_sent, -1, dtype=np.int64)
    for s in range(n_sent):
        for j in range(offsets[s], offsets[s + 1]):
            score = 0.0
            for d in range(n_dims):
                score += dense[j, d] * w[d]
            scores[j] = score
            if best[s] < 0 or score > scores[best[s]]:
                best[s] = j
    return scores, best


@numba.njit(cache=True)
def add_scaled(target, x, values):
    """target += x * values, in place (the intercepts after a step of x along a line)."""
    for j in range(len(target)):
        target[j] += x * values[j]
