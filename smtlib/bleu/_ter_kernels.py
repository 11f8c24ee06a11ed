"""Compiled TER (numba): tercom's greedy shift search over a beam edit distance, as sacrebleu runs it.

The algorithm is Snover et al. (2006) as implemented by tercom and re-implemented by sacrebleu
(``sacrebleu/metrics/lib_ter.py``); this is our code, written to give the same numbers:

* **Edit distance** (insertion, deletion, substitution cost 1) is computed only in a band around the
  pseudo-diagonal ``j = floor(i * m / n)`` of half-width 25 (wider, ``ceil(m / (2n) + 25)``, for very
  unequal lengths), except in the last row, which runs to the end; cells outside the band are
  infinite. Ties prefer match/substitution, then deletion (of a hypothesis word), then insertion.
* **Alignment** from the back-trace: each reference position is aligned to the hypothesis position
  before it (or on it, for a match/substitution), and hypothesis and reference positions are marked
  wrong where the trace does not match them.
* **Shift candidates**: every hypothesis span ``h[i:i+L]`` equal to a reference span ``r[j:j+L]``
  with L <= 10 and |i - j| <= 50, skipped when the span is right in the hypothesis or in the
  reference, or when ``r[j]`` is aligned inside the span; it is moved before the hypothesis
  position just after ``align[j + o]`` for o = -1 .. L-1 (``0`` for ``j + o = -1``), each target
  once in a row.
* **Choice**: the largest reduction of the edit distance, then the longest span, then the earliest
  span, then the earliest target. Shifts are applied one at a time while one reduces the
  distance; after 1,000 evaluated candidates in all (sacrebleu's cap) the search stops and the
  round's best shift is not applied. TER edits = shifts + the final edit distance.

Speed: a candidate shares its first ``min(i, target)`` words with the current hypothesis, so its
edit distance resumes from the current hypothesis's rows there (the rows depend only on the prefix:
every candidate has the hypothesis's length and hence its band), as sacrebleu's prefix cache does.
"""

from __future__ import annotations

import numba
import numpy as np

INF = 10**16  #: sacrebleu's infinite distance (an int: costs are exact integers)
BEAM_WIDTH = 25
MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
MAX_SHIFT_CANDIDATES = 1000

_NOP = 0  # match
_SUB = 1
_DEL = 2  # a hypothesis word is dropped (i - 1)
_INS = 3  # a reference word is inserted (j - 1)


@numba.njit(cache=True, inline="always")
def _band(i, n, m, ratio, beam):
    """Columns ``[lo, hi)`` computed in row ``i`` (sacrebleu's beam)."""
    diag = np.int64(np.floor(i * ratio))
    lo = max(0, diag - beam)
    hi = min(m + 1, diag + beam)
    if i == n:
        hi = m + 1
    return lo, hi


@numba.njit(cache=True)
def _fill_rows(words, n, ref, m, cost, ops, start, ratio, beam, with_ops, bound):
    """Rows ``start+1 .. n`` of the banded edit-distance matrix (rows ``0 .. start`` are valid).

    Returns False as soon as a row's smallest cost exceeds ``bound`` (the final distance is at
    least the smallest cost of every row: a path crosses each row, and costs never decrease along
    it), True when the last row is done.
    """
    for i in range(start + 1, n + 1):
        lo, hi = _band(i, n, m, ratio, beam)
        if lo > 0 or hi < m + 1:  # cells outside the band stay infinite
            for j in range(m + 1):
                cost[i, j] = INF
        w = words[i - 1]
        smallest = INF
        for j in range(lo, hi):
            if j == 0:
                cost[i, 0] = cost[i - 1, 0] + 1
                if with_ops:
                    ops[i, 0] = _DEL
                smallest = min(smallest, cost[i, 0])
                continue
            best = INF
            op = -1
            if ref[j - 1] == w:
                c = cost[i - 1, j - 1]
                o = _NOP
            else:
                c = cost[i - 1, j - 1] + 1
                o = _SUB
            if best > c:
                best, op = c, o
            c = cost[i - 1, j] + 1
            if best > c:
                best, op = c, _DEL
            c = cost[i, j - 1] + 1
            if best > c:
                best, op = c, _INS
            cost[i, j] = best
            if with_ops and op >= 0:
                ops[i, j] = op
            smallest = min(smallest, best)
        if smallest > bound:
            return False
    return True


@numba.njit(cache=True)
def _alignment(ops, n, m, trace, align, hyp_err, ref_err):
    """Back-trace from (n, m); fill ``align`` (ref position -> hyp position) and the error marks."""
    i, j, k = n, m, 0
    while i > 0 or j > 0:
        op = ops[i, j]
        trace[k] = op
        k += 1
        if op == _NOP or op == _SUB:
            i -= 1
            j -= 1
        elif op == _INS:
            j -= 1
        else:
            i -= 1
    pos_h, pos_r = -1, -1
    for q in range(k - 1, -1, -1):  # forwards
        op = trace[q]
        if op == _NOP or op == _SUB:
            pos_h += 1
            pos_r += 1
            align[pos_r] = pos_h
            hyp_err[pos_h] = 0 if op == _NOP else 1
            ref_err[pos_r] = 0 if op == _NOP else 1
        elif op == _DEL:  # a hypothesis word with no reference word
            pos_h += 1
            hyp_err[pos_h] = 1
        else:  # a reference word with no hypothesis word
            pos_r += 1
            align[pos_r] = pos_h
            ref_err[pos_r] = 1


@numba.njit(cache=True)
def _shifted(words, n, start, length, target, out):
    """``words`` with ``words[start:start+length]`` moved to before ``target`` (sacrebleu's cases)."""
    k = 0
    if target < start:
        for q in range(target):
            out[k] = words[q]; k += 1  # noqa: E702
        for q in range(start, start + length):
            out[k] = words[q]; k += 1  # noqa: E702
        for q in range(target, start):
            out[k] = words[q]; k += 1  # noqa: E702
        for q in range(start + length, n):
            out[k] = words[q]; k += 1  # noqa: E702
    elif target > start + length:
        for q in range(start):
            out[k] = words[q]; k += 1  # noqa: E702
        for q in range(start + length, target):
            out[k] = words[q]; k += 1  # noqa: E702
        for q in range(start, start + length):
            out[k] = words[q]; k += 1  # noqa: E702
        for q in range(target, n):
            out[k] = words[q]; k += 1  # noqa: E702
    else:  # a target inside the span: sacrebleu moves the span by target - start words
        for q in range(start):
            out[k] = words[q]; k += 1  # noqa: E702
        for q in range(start + length, min(n, length + target)):
            out[k] = words[q]; k += 1  # noqa: E702
        for q in range(start, start + length):
            out[k] = words[q]; k += 1  # noqa: E702
        for q in range(length + target, n):
            out[k] = words[q]; k += 1  # noqa: E702


@numba.njit(cache=True)
def ter_edits(hyp, ref, work):
    """TER edits (shifts + edit distance) of one hypothesis against one reference (token ids).

    ``work`` is a tuple of scratch arrays from :func:`workspace`, large enough for both.
    """
    n = len(hyp)
    m = len(ref)
    if m == 0:
        return n
    cost, ops, cand_cost, words, cand, trace, align, hyp_err, ref_err = work
    ratio = m / n if n > 0 else 1.0
    beam = BEAM_WIDTH
    if BEAM_WIDTH < ratio / 2:
        beam = np.int64(np.ceil(ratio / 2 + BEAM_WIDTH))
    for q in range(n):
        words[q] = hyp[q]
    for j in range(m + 1):
        cost[0, j] = j
        ops[0, j] = _INS
        cand_cost[0, j] = j
    valid = 0  # rows of `cost` valid for the current words
    shifts = 0
    checked = 0
    while True:
        _fill_rows(words, n, ref, m, cost, ops, valid, ratio, beam, True, INF)
        valid = n
        distance = cost[n, m]
        _alignment(ops, n, m, trace, align, hyp_err, ref_err)
        best_gain, best_len, best_start, best_target = 0, 0, 0, 0
        found = False
        stop = False
        for sh in range(n):
            if stop:
                break
            for sr in range(max(0, sh - MAX_SHIFT_DIST), min(m, sh + MAX_SHIFT_DIST + 1)):
                if stop:
                    break
                length = 0
                while length < MAX_SHIFT_SIZE and words[sh + length] == ref[sr + length]:
                    length += 1
                    # the span words[sh:sh+length] = ref[sr:sr+length]
                    bad_h = 0
                    for q in range(sh, sh + length):
                        bad_h += hyp_err[q]
                    bad_r = 0
                    for q in range(sr, sr + length):
                        bad_r += ref_err[q]
                    if bad_h > 0 and bad_r > 0 and not (sh <= align[sr] < sh + length):
                        prev = -1
                        for off in range(-1, length):
                            target = 0 if sr + off == -1 else align[sr + off] + 1
                            if target == prev:
                                continue
                            prev = target
                            _shifted(words, n, sh, length, target, cand)
                            keep = min(sh, target)
                            for j in range(m + 1):  # the shared prefix's last row; the rows after it are new
                                cand_cost[keep, j] = cost[keep, j]
                            # a candidate matters only if its gain can reach the best so far (ties are
                            # broken by position) and is positive (else no shift is made this round)
                            bound = distance - (max(best_gain, 1) if found else 1)
                            done = _fill_rows(cand, n, ref, m, cand_cost, ops, keep, ratio, beam, False, bound)
                            gain = distance - cand_cost[n, m] if done else -INF
                            checked += 1
                            better = not found
                            if not better:
                                if gain != best_gain:
                                    better = gain > best_gain
                                elif length != best_len:
                                    better = length > best_len
                                elif sh != best_start:
                                    better = sh < best_start
                                else:
                                    better = target < best_target
                            if better:
                                found = True
                                best_gain, best_len, best_start, best_target = gain, length, sh, target
                        if checked >= MAX_SHIFT_CANDIDATES:
                            stop = True
                            break
                    if sh + length == n or sr + length == m:
                        break
        if checked >= MAX_SHIFT_CANDIDATES or not found or best_gain <= 0:
            break
        _shifted(words, n, best_start, best_len, best_target, cand)
        valid = min(best_start, best_target)
        for q in range(n):
            words[q] = cand[q]
        shifts += 1
    return shifts + distance


def workspace(max_hyp: int, max_ref: int):
    """Scratch arrays for :func:`ter_edits` with hypotheses up to ``max_hyp`` and references up to ``max_ref`` words."""
    n1, m1 = max_hyp + 1, max_ref + 1
    return (np.empty((n1, m1), dtype=np.int64), np.zeros((n1, m1), dtype=np.int8), np.empty((n1, m1), dtype=np.int64),
            np.empty(n1, dtype=np.int64), np.empty(n1, dtype=np.int64), np.empty(n1 + m1, dtype=np.int8),
            np.empty(m1, dtype=np.int64), np.empty(n1, dtype=np.int64), np.empty(m1, dtype=np.int64))


@numba.njit(cache=True)
def ter_kernel(hyp_ids, hyp_offsets, sentence_ids, ref_ids, ref_offsets, n_refs, work):
    """``(N, 2)`` rows ``[edits, average reference length]``: the fewest edits over the references."""
    n_hyp = len(hyp_offsets) - 1
    out = np.zeros((n_hyp, 2), dtype=np.float64)
    for h in range(n_hyp):
        hyp = hyp_ids[hyp_offsets[h]:hyp_offsets[h + 1]]
        s = sentence_ids[h]
        best = np.int64(INF)
        total = 0
        for r in range(n_refs):
            a, b = ref_offsets[s * n_refs + r], ref_offsets[s * n_refs + r + 1]
            edits = ter_edits(hyp, ref_ids[a:b], work)
            total += b - a
            if edits < best:
                best = edits
        out[h, 0] = best
        out[h, 1] = total / n_refs
    return out
