"""Hope and fear: the linear-BLEU oracle that batch lattice MIRA and online MIRA decode lattices with.

**Hope and fear inside a lattice** (Cherry & Foster 2012, §3.1: "the same oracle lattice decoding
algorithms as online MIRA"): the hope is ``argmax_e w . h(e) + B(e)`` and the fear
``argmax_e w . h(e) - B(e)`` over all paths of the lattice, with ``B`` the pseudo-document BLEU of
Algorithm 1 (Chiang et al. 2008 §3.1; :func:`smtlib.bleu.background.background_bleu`: BLEU of the
background BG plus the path's statistics, times the reference length of the sum). ``B`` does not
decompose over edges (the n-gram precisions are ratios, matches are clipped, the brevity penalty is
a function of the total length), so we replace it on lattice paths by its **linear** approximation,
Tromble et al.'s (2008, §5) linear corpus BLEU: the first-order Taylor expansion of (log) corpus
BLEU around the pseudo-document BG, which is exactly the point Algorithm 1 evaluates the sentence
at::

    B_lin(e) = B(BG) + sum_n theta_n * matches_n(e) + sum_n theta'_n * total_n(e) + theta_r * r

    theta_n  = B(BG) / (4 M_n)                  (M_n, T_n, C, R: BG's matches, totals, length, ref length)
    theta'_n = -B(BG) / (4 T_n)  (+ B(BG) R / C^2 for n = 1 when C < R: the brevity penalty's slope)

with ``matches_n`` the *unclipped* count of the path's n-grams that occur in a reference (Tromble's
``sum_u #_u(e) delta_u(r)``). Tromble et al. fix the expansion point with global constants (a
unigram precision p and a precision ratio r); here the expansion point is the pseudo-document itself,
so the approximation tracks Algorithm 1's BG as it decays. The difference from ``B`` is the clipping
and the second-order terms, which are small because one sentence is a small part of BG.

``B_lin`` is linear in n-gram counts, so its maximum over all paths is found *exactly* by dynamic
programming on the lattice expanded with n-gram context: the state after a word is the longest
suffix (at most 3 words) of the path that is itself a reference n-gram (an n-gram that is not a
reference n-gram cannot be part of one, so nothing else can match later), plus the path length
capped at 3 (for the n-gram totals of the first words). This is why we use the linear BLEU and not
Chiang et al.'s (2008) oracle decoding, which keeps one best partial derivation per node under the
true (non-decomposable) BLEU: that search is greedy, so its result depends on the order in which
partial derivations meet and is not the maximum of any fixed objective; the linear one is exact
for its objective, and the tests check it against brute-force enumeration of small lattices. How far
its hope is from the hope under the true ``B`` is measured on enumerated random lattices
(tests/unit/tuners/test_lattice_tuners.py, pseudo-document of ~1,000 words): without clipping the two
hopes agree on 99-100 % of lattices (the remaining difference is second order and vanishes as BG grows); with
clipping, which ``B_lin`` cannot see, they agree on 68 % of lattices of a 9-word toy vocabulary (many
repeated words) and the linear hope's true objective falls short of the optimum by 3.2 % of its range
on average. Real sentences repeat n-grams less, so clipping matters less there.

Whole-path edges (hypotheses from a k-best pool or aggregated from earlier iterations, see
:mod:`smtlib.lattice.lattice_set`) carry their exact statistics and get the exact ``B``; lattice
paths get ``B_lin`` (whose constant ``B(BG) + theta_r r`` puts both on the same scale).

``r`` in ``B_lin`` is the average reference length (``LatticeReferences.r_linear``; exact with one
reference, as on Multi30k). The n-gram tables and the context automaton this oracle walks are built
with the path statistics' reference tables (:func:`smtlib.lattice.stats.prepare_references`).

Here: :func:`linear_coefficients` (``B_lin`` at a pseudo-document), :func:`oracle_path` (the exact
dynamic programme; a numba kernel called from :func:`smtlib.tuners.lbmira.mira_pass` without
leaving compiled code, which is why it takes the lattice and the references as arrays) and
:func:`linear_gain_of_tokens` (``B_lin`` of one token sequence, for tests and checks).
"""

from __future__ import annotations

import numba
import numpy as np

from smtlib.bleu.background import background_bleu
from smtlib.lattice.paths import reverse_prefix


@numba.njit(cache=True)
def linear_coefficients(bg, scale_ref, r_sent):
    """Coefficients of B_lin at the pseudo-document ``bg`` (see the module docstring).

    Returns ``(theta_len, theta_match, constant)``: ``theta_len[l]`` is the gain of a word appended
    after ``l`` words (capped at 3: it adds one n-gram of each order ``n <= l + 1``),
    ``theta_match[n-1]`` the gain of one matched n-gram of order n, and ``constant`` is
    ``B(BG) + theta_r * r_sent``.
    """
    zero = np.zeros(10)
    bleu0 = background_bleu(zero, bg, False)
    C = bg[6]
    R = bg[1]
    f0 = bleu0 * R if scale_ref else bleu0
    theta_m = np.empty(4)
    theta_t = np.empty(4)
    for n in range(4):
        theta_m[n] = f0 / (4.0 * bg[2 + n])
        theta_t[n] = -f0 / (4.0 * bg[6 + n])
    d_r = 0.0
    if C < R and C > 0:
        theta_t[0] += f0 * R / (C * C)
        d_r = -f0 / C
    if scale_ref:
        d_r += bleu0
    theta_len = np.zeros(4)
    for ell in range(4):
        acc = 0.0
        for n in range(min(ell + 1, 4)):
            acc += theta_t[n]
        theta_len[ell] = acc
    return theta_len, theta_m, f0 + d_r * r_sent


@numba.njit(cache=True)
def linear_gain_of_tokens(toks, s, refs, theta_len, theta_m):
    """B_lin(path) - constant for a path's local-id tokens, following the context automaton."""
    tr_off, tr_next, tr_mask, n_local = refs[8], refs[10], refs[11], refs[1]
    width = n_local[s] + 1
    base = tr_off[s]
    q = 0
    ell = 0
    g = 0.0
    for i in range(toks.shape[0]):
        w = toks[i]
        idx = base + q * width + w
        g += theta_len[ell]
        m = tr_mask[idx]
        for n in range(4):
            if (m >> n) & 1:
                g += theta_m[n]
        q = tr_next[idx]
        ell = min(ell + 1, 3)
    return g


@numba.njit(cache=True)
def oracle_path(s, lo, hi, n_nodes, tails, heads, scores, word_off, path_row, path_stats, refs,
                theta_len, theta_m, constant, lam, bg, scale_ref, ws):
    """``argmax_e scores(e) + lam * B(e)`` over the paths of sentence ``s`` (edges ``lo:hi``).

    ``B`` is B_lin on lattice paths and the exact B on whole-path edges. ``ws`` is a workspace
    tuple (see :func:`oracle_workspace`), returned possibly grown. Returns ``(value, n, ws)`` with the
    path's global edge ids in ``ws[0][:n]`` (start to goal); ``n = -1`` when the goal is unreachable.
    """
    path_buf, st, sc, bpe, bpp, nlo, nhi, mark, stamp_of, counter = ws
    local_words, n_local, tr_off, tr_next, tr_mask = refs[0], refs[1], refs[8], refs[10], refs[11]
    width = n_local[s] + 1
    base = tr_off[s]
    n_states = refs[9][s] * 4
    if mark.shape[0] < n_states:
        mark = np.full(2 * n_states, -1, dtype=np.int64)
        stamp_of = np.full(2 * n_states, -1, dtype=np.int64)
    if nlo.shape[0] < n_nodes:
        nlo = np.empty(2 * n_nodes, dtype=np.int64)
        nhi = np.empty(2 * n_nodes, dtype=np.int64)
    for v in range(n_nodes):
        nlo[v] = 0
        nhi[v] = 0
    st[0] = 0
    sc[0] = 0.0
    bpe[0] = -1
    bpp[0] = -1
    nlo[0] = 0
    nhi[0] = 1
    used = 1
    stamp = counter[0]
    e = lo
    while e < hi:
        v = heads[e]
        first = e
        while e < hi and heads[e] == v:
            e += 1
        stamp += 1
        node_start = used
        for k in range(first, e):
            t = tails[k]
            if path_row[k] >= 0 and t == 0:  # a whole path: exact B, relative to the constant
                need = used + 1
                if need > st.shape[0]:
                    st, sc, bpe, bpp = _grow_entries(st, sc, bpe, bpp, used, 2 * need)
                val = scores[k] + lam * (background_bleu(path_stats[path_row[k]], bg, scale_ref) - constant)
                q = -1 - k  # a state of its own: never merged with lattice paths
                st[used] = q
                sc[used] = val
                bpe[used] = k
                bpp[used] = 0
                used += 1
                continue
            for j in range(nlo[t], nhi[t]):
                q = st[j]
                if q < 0:
                    continue
                g = 0.0
                for wq in range(word_off[k], word_off[k + 1]):
                    w = local_words[wq]
                    ctx = q >> 2
                    ell = q & 3
                    idx = base + ctx * width + w
                    g += theta_len[ell]
                    m = tr_mask[idx]
                    if m:
                        for n in range(4):
                            if (m >> n) & 1:
                                g += theta_m[n]
                    q = (tr_next[idx] << 2) | min(ell + 1, 3)
                val = sc[j] + scores[k] + lam * g
                if stamp_of[q] == stamp:
                    slot = mark[q]
                    if val > sc[slot]:
                        sc[slot] = val
                        bpe[slot] = k
                        bpp[slot] = j
                else:
                    if used + 1 > st.shape[0]:
                        st, sc, bpe, bpp = _grow_entries(st, sc, bpe, bpp, used, 2 * (used + 1))
                    stamp_of[q] = stamp
                    mark[q] = used
                    st[used] = q
                    sc[used] = val
                    bpe[used] = k
                    bpp[used] = j
                    used += 1
        nlo[v] = node_start
        nhi[v] = used
    counter[0] = stamp
    goal = n_nodes - 1
    if nhi[goal] == nlo[goal]:
        return -np.inf, -1, (path_buf, st, sc, bpe, bpp, nlo, nhi, mark, stamp_of, counter)
    best = nlo[goal]
    for j in range(nlo[goal] + 1, nhi[goal]):
        if sc[j] > sc[best]:
            best = j
    if path_buf.shape[0] < n_nodes + 1:
        path_buf = np.empty(2 * (n_nodes + 1), dtype=np.int64)
    n = 0
    j = best
    while bpe[j] >= 0:
        path_buf[n] = bpe[j]
        n += 1
        j = bpp[j]
    reverse_prefix(path_buf, n)
    value = sc[best] + lam * constant
    return value, n, (path_buf, st, sc, bpe, bpp, nlo, nhi, mark, stamp_of, counter)


@numba.njit(cache=True)
def _grow_entries(st, sc, bpe, bpp, used, capacity):
    st2 = np.empty(capacity, dtype=np.int64)
    sc2 = np.empty(capacity)
    bpe2 = np.empty(capacity, dtype=np.int64)
    bpp2 = np.empty(capacity, dtype=np.int64)
    st2[:used] = st[:used]
    sc2[:used] = sc[:used]
    bpe2[:used] = bpe[:used]
    bpp2[:used] = bpp[:used]
    return st2, sc2, bpe2, bpp2


def oracle_workspace():
    """Buffers for :func:`oracle_path` (the last one holds the node stamp counter)."""
    return (np.empty(256, np.int64), np.empty(1024, np.int64), np.empty(1024), np.empty(1024, np.int64),
            np.empty(1024, np.int64), np.empty(256, np.int64), np.empty(256, np.int64), np.full(64, -1, np.int64),
            np.full(64, -1, np.int64), np.zeros(1, np.int64))
