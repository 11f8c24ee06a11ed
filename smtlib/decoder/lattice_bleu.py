"""BLEU on lattice paths: exact statistics of any path, and hope / fear decoding with a linear BLEU.

**Statistics of a path** (:func:`path_stats`, :func:`LatticeReferences`): the sentence's references
become a table of their n-grams (orders 1-4, packed 16 bits per token, the maximum count over the
references); a path's words are looked up in it and clipped as in :mod:`smtlib.bleu.stats`, giving
the same ``[hyp_len, ref_len, m1..m4, t1..t4]`` row (the tests check this against
:func:`smtlib.bleu.stats.compute_stats`). Words are numbered per sentence from the references' own
words (a word that occurs in no reference of the sentence is 0 and can never match), so 16 bits
always suffice.

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
(tests/test_lattice_tuning.py, pseudo-document of ~1,000 words): without clipping the two hopes agree on
99-100 % of lattices (the remaining difference is second order and vanishes as BG grows); with
clipping, which ``B_lin`` cannot see, they agree on 68 % of lattices of a 9-word toy vocabulary (many
repeated words) and the linear hope's true objective falls short of the optimum by 3.2 % of its range
on average. Real sentences repeat n-grams less, so clipping matters less there.

Whole-path edges (hypotheses from a k-best pool or aggregated from earlier iterations, see
:mod:`smtlib.decoder.lattice_set`) carry their exact statistics and get the exact ``B``; lattice
paths get ``B_lin`` (whose constant ``B(BG) + theta_r r`` puts both on the same scale).

Multiple references: ``r`` in ``B_lin`` is the average reference length (exact with one reference, as
on Multi30k); clipping and reference lengths of path statistics follow :mod:`smtlib.bleu.stats`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numba
import numpy as np

from smtlib.bleu.background import background_bleu
from smtlib.bleu.stats import BleuSettings, preprocess
from smtlib.decoder.lattice_set import LatticeSet
from smtlib.errors import InputError

_RULE = {"closest": 0, "shortest": 1, "average": 2}


@dataclasses.dataclass
class LatticeReferences:
    """The references of a :class:`LatticeSet`, per sentence, for path statistics and oracle decoding.

    Attributes
    ----------
    local_words
        (W,) per lattice word token (``LatticeSet.words``), its id among the sentence's reference
        words (1-based), 0 if no reference of the sentence has it.
    n_local
        (S,) number of distinct reference words per sentence.
    ng_off, ng_keys, ng_max
        Per sentence, the sorted packed keys of the references' n-grams (orders 1-4) and each one's
        maximum count over the references.
    ref_lens
        (S, n_refs) reference lengths; ``rule`` the reference-length rule code.
    r_linear
        (S,) reference length used in the linear BLEU (the average).
    tr_off, n_ctx, tr_next, tr_mask
        Per sentence, the context automaton: ``n_ctx`` states (0 = no context; the others the
        reference n-grams of orders 1-3), and for state ``q`` and word ``w`` (0..n_local) at
        ``tr_off[s] + q * (n_local + 1) + w`` the next state and a bit mask of the n-gram orders
        (bit n-1 for order n) whose n-gram ending in ``w`` is a reference n-gram.
    """

    local_words: np.ndarray
    n_local: np.ndarray
    ng_off: np.ndarray
    ng_keys: np.ndarray
    ng_max: np.ndarray
    ref_lens: np.ndarray
    rule: int
    r_linear: np.ndarray
    tr_off: np.ndarray
    n_ctx: np.ndarray
    tr_next: np.ndarray
    tr_mask: np.ndarray

    def as_tuple(self) -> tuple:
        """The arrays the compiled kernels take (in this order)."""
        return (self.local_words, self.n_local, self.ng_off, self.ng_keys, self.ng_max, self.ref_lens, self.rule,
                self.r_linear, self.tr_off, self.n_ctx, self.tr_next, self.tr_mask)


def _pack(gram: Sequence[int]) -> int:
    key = 0
    for t in gram:
        key = (key << 16) | t
    return key


def prepare_references(ls: LatticeSet, references: Sequence[Sequence[str]],
                       settings: BleuSettings = BleuSettings()) -> LatticeReferences:
    """Reference tables for every sentence of ``ls`` (see :class:`LatticeReferences`).

    Raises
    ------
    InputError
        If the BLEU settings tokenize (edge words must be the BLEU tokens, so only ``tokenize=none``
        keeps BLEU decomposable over edges), or the references do not cover the lattices.
    """
    if settings.tokenize != "none":
        raise InputError(f"lattice tuners need --tokenize none (BLEU tokens must be the lattice words), got {settings.tokenize!r}")
    if not references:
        raise InputError("no references given")
    S = ls.n_sentences
    n_refs = len(references)
    for r, ref in enumerate(references):
        if len(ref) != S:
            raise InputError(f"reference set {r + 1} has {len(ref)} segments, the lattices need {S}")
    refs = [preprocess(list(ref), settings) for ref in references]
    vocab = [w.lower() for w in ls.vocab] if settings.lowercase else list(ls.vocab)
    ref_lens = np.zeros((S, n_refs), dtype=np.int64)
    n_local = np.zeros(S, dtype=np.int64)
    ng_off = np.zeros(S + 1, dtype=np.int64)
    tr_off = np.zeros(S + 1, dtype=np.int64)
    n_ctx = np.zeros(S, dtype=np.int64)
    keys_parts, max_parts, next_parts, mask_parts = [], [], [], []
    local_words = np.zeros(len(ls.words), dtype=np.int64)
    r_linear = np.zeros(S)
    for s in range(S):
        toks = [refs[r][s].split() for r in range(n_refs)]
        local: dict[str, int] = {}
        for t in toks:
            for w in t:
                local.setdefault(w, len(local) + 1)
        if len(local) >= 65535:
            raise InputError(f"sentence {s}: more than 65,534 distinct reference words")
        n_local[s] = len(local)
        ids = [[local[w] for w in t] for t in toks]
        counts: dict[int, int] = {}
        grams: list[set] = [set() for _ in range(5)]
        for r, t in enumerate(ids):
            ref_lens[s, r] = len(t)
            mine: dict[int, int] = {}
            for n in range(1, 5):
                for i in range(len(t) - n + 1):
                    g = tuple(t[i : i + n])
                    grams[n].add(g)
                    k = _pack(g)
                    mine[k] = mine.get(k, 0) + 1
            for k, c in mine.items():
                counts[k] = max(counts.get(k, 0), c)
        keys = np.array(sorted(counts), dtype=np.int64)
        keys_parts.append(keys)
        max_parts.append(np.array([counts[k] for k in keys.tolist()], dtype=np.int64))
        ng_off[s + 1] = ng_off[s] + len(keys)
        r_linear[s] = ref_lens[s].mean()
        # context automaton over the reference n-grams of orders 1..3
        states: list[tuple] = [()] + sorted(grams[1] | grams[2] | grams[3], key=lambda g: (len(g), g))
        index = {g: q for q, g in enumerate(states)}
        width = len(local) + 1
        nxt = np.zeros(len(states) * width, dtype=np.int64)
        msk = np.zeros(len(states) * width, dtype=np.int64)
        for q, ctx in enumerate(states):
            for w in range(1, width):
                t = ctx + (w,)
                m = 0
                for n in range(1, min(len(t), 4) + 1):
                    if t[-n:] in grams[n]:
                        m |= 1 << (n - 1)
                target = 0
                for length in range(min(len(t), 3), 0, -1):
                    q2 = index.get(t[-length:])
                    if q2 is not None:
                        target = q2
                        break
                nxt[q * width + w] = target
                msk[q * width + w] = m
        next_parts.append(nxt)
        mask_parts.append(msk)
        n_ctx[s] = len(states)
        tr_off[s + 1] = tr_off[s] + len(nxt)
        lo, hi = ls.word_off[ls.edge_off[s]], ls.word_off[ls.edge_off[s + 1]]
        if hi > lo:
            local_words[lo:hi] = [local.get(vocab[w], 0) for w in ls.words[lo:hi].tolist()]
    cat = (lambda xs: np.concatenate(xs).astype(np.int64) if xs else np.zeros(0, np.int64))
    return LatticeReferences(local_words, n_local, ng_off, cat(keys_parts), cat(max_parts), ref_lens,
                             _RULE[settings.ref_length], r_linear, tr_off, n_ctx, cat(next_parts), cat(mask_parts))


# ------------------------------------------------------------------------------------ statistics
@numba.njit(cache=True)
def _stats_of_tokens(toks, ng_keys, ng_max, lo, hi, ref_lens, rule, out):
    """Write the statistics row of the local-id tokens ``toks`` (0 = no reference word) to ``out``."""
    n = toks.shape[0]
    for k in range(10):
        out[k] = 0.0
    out[0] = n
    if rule == 0:
        best = ref_lens[0]
        for r in range(1, ref_lens.shape[0]):
            d_new = abs(n - ref_lens[r])
            d_old = abs(n - best)
            if d_new < d_old or (d_new == d_old and ref_lens[r] < best):
                best = ref_lens[r]
        out[1] = best
    elif rule == 1:
        out[1] = ref_lens.min()
    else:
        out[1] = ref_lens.sum() / ref_lens.shape[0]
    keys = np.empty(max(n, 1), dtype=np.int64)
    for order in range(1, 5):
        total = n - order + 1
        if total <= 0:
            continue
        out[5 + order] = total
        m = 0
        for i in range(total):
            key = np.int64(0)
            zero = False
            for j in range(order):
                t = toks[i + j]
                if t == 0:
                    zero = True
                key = (key << np.int64(16)) | t
            keys[m] = -1 if zero else key
            m += 1
        ks = np.sort(keys[:m])
        matched = 0
        i = 0
        while i < m:
            j = i
            while j < m and ks[j] == ks[i]:
                j += 1
            if ks[i] >= 0:
                pos = np.searchsorted(ng_keys[lo:hi], ks[i])
                if pos < hi - lo and ng_keys[lo + pos] == ks[i]:
                    matched += min(j - i, ng_max[lo + pos])
            i = j
        out[1 + order] = matched


@numba.njit(cache=True)
def _path_tokens(edges, word_off, local_words, buf):
    n = 0
    for e in edges:
        for q in range(word_off[e], word_off[e + 1]):
            buf[n] = local_words[q]
            n += 1
    return n


@numba.njit(cache=True, nogil=True)
def paths_stats_kernel(path_sent, path_off, path_edges, word_off, path_row, path_stats, refs):
    """Statistics rows of paths (global edge ids), whole-path edges taken from ``path_stats``."""
    local_words, n_local, ng_off, ng_keys, ng_max, ref_lens, rule = refs[0], refs[1], refs[2], refs[3], refs[4], refs[5], refs[6]
    n_paths = path_sent.shape[0]
    out = np.zeros((n_paths, 10))
    buf = np.empty(256, dtype=np.int64)
    for p in range(n_paths):
        a, b = path_off[p], path_off[p + 1]
        s = path_sent[p]
        if b - a == 1 and path_row[path_edges[a]] >= 0 and not np.isnan(path_stats[path_row[path_edges[a]], 0]):
            out[p, :] = path_stats[path_row[path_edges[a]], :]
            continue
        need = 0
        for k in range(a, b):
            e = path_edges[k]
            need += word_off[e + 1] - word_off[e]
        if need > buf.shape[0]:
            buf = np.empty(2 * need, dtype=np.int64)
        n = _path_tokens(path_edges[a:b], word_off, local_words, buf)
        _stats_of_tokens(buf[:n], ng_keys, ng_max, ng_off[s], ng_off[s + 1], ref_lens[s], rule, out[p])
    return out


def path_stats(ls: LatticeSet, refs: LatticeReferences, path_sent: np.ndarray, path_off: np.ndarray,
               path_edges: np.ndarray) -> np.ndarray:
    """(P, 10) BLEU statistics of the paths ``path_edges[path_off[p]:path_off[p+1]]`` of sentences ``path_sent``."""
    return paths_stats_kernel(np.asarray(path_sent, np.int64), np.asarray(path_off, np.int64),
                              np.asarray(path_edges, np.int64), ls.word_off, ls.path_row, ls.path_stats, refs.as_tuple())


def fill_whole_path_stats(ls: LatticeSet, refs: LatticeReferences) -> None:
    """Compute (in place) the statistics of whole-path edges that have none yet (NaN rows), from their words."""
    missing = np.flatnonzero(np.isnan(ls.path_stats[:, 0])) if len(ls.path_stats) else np.zeros(0, np.int64)
    if not len(missing):
        return
    edges = np.flatnonzero(ls.path_row >= 0)
    edges = edges[np.isin(ls.path_row[edges], missing)]
    sent = np.searchsorted(ls.edge_off, edges, side="right") - 1
    rows = ls.path_row[edges]
    # compute from words: a temporary row of NaN makes paths_stats_kernel count the words
    stats = paths_stats_kernel(sent.astype(np.int64), np.arange(len(edges) + 1, dtype=np.int64), edges.astype(np.int64),
                               ls.word_off, ls.path_row, ls.path_stats, refs.as_tuple())
    ls.path_stats[rows] = stats


# ------------------------------------------------------------------------------------ linear BLEU
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
    tr_off, n_ctx, tr_next, tr_mask, n_local = refs[8], refs[9], refs[10], refs[11], refs[1]
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
    for k in range(n // 2):
        tmp = path_buf[k]
        path_buf[k] = path_buf[n - 1 - k]
        path_buf[n - 1 - k] = tmp
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


@numba.njit(cache=True)
def viterbi_path(lo, hi, n_nodes, tails, heads, scores, buf):
    """The best path by model score (edges ``lo:hi`` sorted by head); ties: the first edge. Returns
    ``(score, n)`` with the edges in ``buf[:n]`` (``n = -1`` if the goal is unreachable)."""
    best = np.full(n_nodes, -np.inf)
    back = np.full(n_nodes, -1, dtype=np.int64)
    best[0] = 0.0
    for e in range(lo, hi):
        c = best[tails[e]] + scores[e]
        if c > best[heads[e]]:
            best[heads[e]] = c
            back[heads[e]] = e
    goal = n_nodes - 1
    if not np.isfinite(best[goal]):
        return -np.inf, -1
    n = 0
    v = goal
    while v != 0:
        e = back[v]
        buf[n] = e
        n += 1
        v = tails[e]
    for k in range(n // 2):
        tmp = buf[k]
        buf[k] = buf[n - 1 - k]
        buf[n - 1 - k] = tmp
    return best[goal], n
