"""A whole language model made to behave exactly like the same ARPA file read filtered to some words.

Text loading reads each LM with :func:`smtlib.decoder.lm.read_arpa`'s ``keep_words`` (the words the
input's phrase options can produce): n-grams with another word are dropped. No probability the decoder
asks for changes, but two derived quantities depend on which n-grams are kept:

* the **word bound** ``max_word_prob[w]`` (best kept n-gram ending in ``w``, plus ``order - 1`` times
  the largest kept back-off), which orders the options of a span and hence decides ties in the search;
* the **"extendable" flag** of an n-gram with back-off 0: it is set when the n-gram is the context of a
  longer one, so an n-gram whose longer n-grams were all dropped is not extendable, its state is shorter
  and hypotheses recombine more.

The compiled model (:mod:`smtlib.decoder.compiled`) holds the unfiltered hash table; a
:class:`Restriction` (computed once, at compile time) lets :func:`restrict` give both quantities for
any word set, touching only the entries of those words:

* ``ends_*``: every n-gram grouped by its last word, best probability first, with its context words;
  the restricted bound of ``w`` is the first of ``w``'s n-grams whose context words are all kept (the
  unigram of ``w`` always is, so the scan stops);
* ``pos_bo_*``: the n-grams with a positive back-off, largest first (the largest kept one, or 0, is
  the restricted ``max_bo``);
* ``fix_*``: the n-grams with back-off 0 that are contexts of longer n-grams, with the last words of
  those longer n-grams; if none of these words is kept, the n-gram's flag is cleared (in the process's
  private copy of the table). Language models estimated with Kneser-Ney smoothing give every context a
  non-zero back-off, so this list is usually empty.

An n-gram with a dropped word is never queried (the decoder only asks for kept words), so its entry
in the table may stay as it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numba
import numpy as np

from smtlib.decoder.arpa import ArpaGrams
from smtlib.decoder.lm import LN10, NGramLM, _keys_for, extendable, ngram_keys, table_find

SPECIALS = ("<unk>", "<s>", "</s>")


@dataclasses.dataclass
class Restriction:
    """What :func:`restrict` needs (see the module docstring); every array is stored in the compiled model."""

    ends_off: np.ndarray  #: (vocab + 1,) int64: n-grams ending in word w are rows ends_off[w]:ends_off[w+1]
    ends_ctx: np.ndarray  #: (n, max(order - 1, 1)) int32: their context words, -1 padded
    ends_prob: np.ndarray  #: (n,) float64: their natural-log probabilities, descending per word
    pos_bo_words: np.ndarray  #: (p, order) int32: words of the n-grams with a positive back-off, -1 padded
    pos_bo: np.ndarray  #: (p,) float64: those back-offs (natural log), descending
    fix_rows: np.ndarray  #: (f,) int64: table rows of the back-off-0 n-grams that are contexts
    fix_off: np.ndarray  #: (f + 1,) int64: their extensions' last words are fix_next[fix_off[i]:fix_off[i+1]]
    fix_next: np.ndarray  #: (x, 1) int32

    FIELDS = ("ends_off", "ends_ctx", "ends_prob", "pos_bo_words", "pos_bo", "fix_rows", "fix_off", "fix_next")


def _padded(ids: np.ndarray, width: int) -> np.ndarray:
    out = np.full((len(ids), width), -1, dtype=np.int32)
    out[:, : ids.shape[1]] = ids
    return out


def _ends(grams: ArpaGrams, orders: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    width = max(grams.order - 1, 1)
    ctx = np.concatenate([_padded(grams.ids[n][:, :-1], width) for n in orders])
    last = np.concatenate([grams.ids[n][:, -1] for n in orders])
    prob = np.concatenate([grams.log10_prob[n] * LN10 for n in orders])
    order = np.lexsort((-prob, last))
    off = np.zeros(len(grams.vocab) + 1, dtype=np.int64)
    np.cumsum(np.bincount(last, minlength=len(grams.vocab)), out=off[1:])
    return off, np.ascontiguousarray(ctx[order]), prob[order]


def _positive_backoffs(grams: ArpaGrams, orders: list[int]) -> tuple[np.ndarray, np.ndarray]:
    words = np.concatenate([_padded(grams.ids[n], grams.order) for n in orders])
    bo = np.concatenate([grams.log10_bo[n] * LN10 for n in orders])
    pos = np.flatnonzero(bo > 0)
    pos = pos[np.argsort(-bo[pos], kind="stable")]
    return np.ascontiguousarray(words[pos]), bo[pos]


def _fixes(grams: ArpaGrams, lm: NGramLM) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keys = ngram_keys(grams)
    ext = extendable(grams, keys)
    rows, counts, nexts = [], [], []
    for n in sorted(keys):
        cand = np.flatnonzero(ext[n] & (grams.log10_bo[n] * LN10 == 0.0))
        if not len(cand):
            continue
        longer = grams.ids[n + 1]
        prefix_keys = _keys_for(np.ascontiguousarray(longer[:, :-1]))
        by_prefix = np.argsort(prefix_keys, kind="stable")
        lo = np.searchsorted(prefix_keys[by_prefix], keys[n][cand], side="left")
        hi = np.searchsorted(prefix_keys[by_prefix], keys[n][cand], side="right")
        for i, a, b in zip(cand.tolist(), lo.tolist(), hi.tolist(), strict=True):
            rows.append(int(table_find(lm.tab, 0, lm.mask, keys[n][i])))
            counts.append(b - a)
            nexts.append(longer[by_prefix[a:b], -1])
    off = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(counts, out=off[1:])
    nxt = np.concatenate(nexts).astype(np.int32) if nexts else np.zeros(0, dtype=np.int32)
    return np.array(rows, dtype=np.int64), off, nxt.reshape(-1, 1)


def restriction(grams: ArpaGrams, lm: NGramLM) -> Restriction:
    """The :class:`Restriction` of an unfiltered LM (``lm = build_lm(grams)``)."""
    orders = sorted(grams.ids)
    ends_off, ends_ctx, ends_prob = _ends(grams, orders)
    pos_words, pos_bo = _positive_backoffs(grams, orders)
    fix_rows, fix_off, fix_next = _fixes(grams, lm)
    return Restriction(ends_off, ends_ctx, ends_prob, pos_words, pos_bo, fix_rows, fix_off, fix_next)


@numba.njit(cache=True)
def first_kept_nb(rows, starts, stops, keep):
    """For each group ``[starts[g], stops[g])`` of ``rows``, the first row whose words (ignoring -1)
    are all ``keep``, or -1."""
    out = np.full(starts.shape[0], -1, dtype=np.int64)
    for g in range(starts.shape[0]):
        for r in range(starts[g], stops[g]):
            ok = True
            for c in range(rows.shape[1]):
                w = rows[r, c]
                if w >= 0 and not keep[w]:
                    ok = False
                    break
            if ok:
                out[g] = r
                break
    return out


def keep_mask(lm: NGramLM, lm_ids: np.ndarray) -> np.ndarray:
    """Boolean mask over the LM's ids: the given ids and the special words."""
    keep = np.zeros(len(lm.vocab), dtype=np.bool_)
    keep[lm_ids] = True
    keep[[lm.vocab[w] for w in SPECIALS]] = True
    return keep


def restrict(lm: NGramLM, r: Restriction, keep: np.ndarray, tab: np.ndarray, off: int,
             read_rows: Callable[[str, np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    """The word bounds of ``lm`` read with only the ``keep`` words (for those words; the other
    entries keep the unfiltered bound), and the extendable flags fixed in ``tab`` (the LM's rows
    start at ``off``). Equal to what :func:`smtlib.decoder.lm.build_lm` computes from the filtered
    entries (same operations in the same order).

    ``read_rows(field, ranges)``, if given, reads the rows ``lo:hi`` of the restriction's array
    ``field`` for each range (:meth:`smtlib.decoder.compiled.CompiledModel.read_rows`), so that
    only the kept words' n-grams are read; otherwise they are sliced from ``r``.
    """
    ids = np.flatnonzero(keep)
    ranges = np.stack([r.ends_off[ids], r.ends_off[ids + 1]], axis=1)
    if read_rows is None:
        index = np.concatenate([np.arange(a, b) for a, b in ranges.tolist()]) if len(ids) else np.zeros(0, np.int64)
        ctx, probs = r.ends_ctx[index], r.ends_prob[index]
    else:
        ctx, probs = read_rows("ends_ctx", ranges), read_rows("ends_prob", ranges)
    stops = np.cumsum(ranges[:, 1] - ranges[:, 0])
    first = first_kept_nb(ctx, stops - (ranges[:, 1] - ranges[:, 0]), stops, keep)
    prob = probs[first]
    best = prob.astype(np.float32).astype(np.float64)
    best = np.where(np.isfinite(best), best, float(prob.max()))
    top = first_kept_nb(r.pos_bo_words, np.zeros(1, dtype=np.int64), np.array([len(r.pos_bo)]), keep)[0]
    max_bo = max(0.0, float(r.pos_bo[top])) if top >= 0 else 0.0
    best += (lm.order - 1) * max_bo
    bounds = np.array(lm.max_word_prob, dtype=np.float64)
    bounds[ids] = best + 1e-6
    if len(r.fix_rows):
        extended = first_kept_nb(r.fix_next, r.fix_off[:-1], r.fix_off[1:], keep) >= 0
        rows = off + r.fix_rows[~extended]
        tab[rows, 0] &= ~np.uint64(1)
    return bounds
