"""Inputs and outputs of the lattice tuners (lb-mert, lb-mira): lattices, aggregated paths, references.

:func:`load_lattice_problem` reads the lattice files of this iteration (optionally density-pruned as
they are read, lb-mira §3.1) and the aggregated paths of earlier iterations (a k-best file; each
path becomes a whole-path edge of its sentence's lattice), and prepares the references;
:func:`write_paths` writes the aggregation for the next iteration: the paths given plus the new
ones (envelope paths for lb-mert, hope and fear paths for lb-mira), as a Moses n-best file sorted by
sentence id, without repeating a hypothesis (same words and features) already in it.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence

import numba
import numpy as np

from smtlib.bleu.references import Coverage, covered_sentences
from smtlib.bleu.stats import BleuSettings, preprocess
from smtlib.errors import InputError
from smtlib.io import LOOP_COMPRESSLEVEL, atomic_output, read_lines
from smtlib.kbest.format import DECODED, format_line
from smtlib.kbest.pool import read_pool
from smtlib.lattice.lattice_set import LatticeSet, LatticeSetBuilder, prune_part, release_free_memory
from smtlib.lattice.reader import read_lattice_set
from smtlib.lattice.stats import LatticeReferences, fill_whole_path_stats, prepare_references
from smtlib._dot import dot, matvec

_DENSE = re.compile(r"^(?P<group>.+)_(?P<k>\d+)$")


def reference_lengths(references: Sequence[Sequence[str]], settings: BleuSettings) -> np.ndarray:
    """(S,) average number of words of each sentence's references (after the BLEU preprocessing)."""
    refs = [preprocess(list(r), settings) for r in references]
    return np.array([np.mean([len(r[s].split()) for r in refs]) for s in range(len(refs[0]))])


def _density_pruning(lengths: np.ndarray, prune_weights: dict[str, float] | None, density: float):
    """A ``read_lattice_set`` transform: keep the ``ceil(density * reference words)`` edges of best
    max-marginal score under ``prune_weights`` (:func:`smtlib.lattice.lattice_set.prune_part`)."""
    weights = dict(prune_weights or {})

    def transform(sid: int, part: tuple, builder: LatticeSetBuilder) -> tuple:
        dense_w = np.array([weights.get(name, 0.0) for name in builder.feature_names])
        deltas = matvec(part[3], dense_w)
        rows, cols, vals = part[4]
        if len(rows):
            sw = np.array([weights.get(builder.sparse_names[c], 0.0) for c in cols.tolist()])
            np.add.at(deltas, rows, vals * sw)
        return prune_part(part, deltas, int(math.ceil(density * max(lengths[sid], 1.0))))

    return transform


def load_lattice_problem(
    lattice_files: Sequence[str | os.PathLike],
    path_files: Sequence[str | os.PathLike] | None,
    references: Sequence[Sequence[str]],
    settings: BleuSettings,
    *,
    prune_weights: dict[str, float] | None = None,
    density: float = 0.0,
) -> tuple[LatticeSet, LatticeReferences, int]:
    """The lattice set, its references and the number of aggregated paths read.

    With ``density > 0``, every lattice is pruned to ``ceil(density * reference words)`` edges by
    max-marginal score under ``prune_weights`` as it is read (lb-mira's 50 edges per reference word).
    Sentence ids are reference line numbers: the set covers the ids with a lattice or a path
    (:func:`covered`), and a sentence id beyond the references is an error.
    """
    n = len(references[0])
    transform = None
    if density > 0:
        transform = _density_pruning(reference_lengths(references, settings), prune_weights, density)
    builder = read_lattice_set(lattice_files, n, transform=transform)
    n_paths = 0
    if path_files:
        pool = read_pool(list(path_files), n_sentences=n)
        names = pool.dense_names
        cols = builder.dense_columns(names)
        for name, col in zip(names, cols, strict=True):
            if col is None:
                raise InputError(f"aggregated paths have dense feature {name!r}, which the lattices do not have",
                                 path_files[0])
        n_paths = builder.add_pool(pool, cols)
    ls = builder.build()
    refs = prepare_references(ls, references, settings)
    fill_whole_path_stats(ls, refs)
    release_free_memory()  # what reading the paths and the references left in glibc's heap (~80 MB late in a run)
    return ls, refs, n_paths


def covered(ls: LatticeSet, references: Sequence[Sequence[str]] | int) -> Coverage:
    """The sentences a score of the lattice set covers: those with a lattice or a path
    (:func:`smtlib.bleu.references.covered_sentences`, the rule of every command)."""
    return covered_sentences(np.flatnonzero(np.diff(ls.edge_off)), references, what="the lattice set")


def viterbi_lines(ls: LatticeSet, weights: np.ndarray) -> list[str]:
    """The words of each sentence's best path under ``weights`` (``""`` for a sentence without one):
    the lattice set's 1-best, what its printed BLEU scores."""
    from smtlib.lattice.paths import viterbi_paths

    sent, off, edges = viterbi_paths(ls.n_nodes, ls.edge_off, ls.tails, ls.heads, ls.edge_scores(weights))
    lines = [""] * ls.n_sentences
    for k, s in enumerate(sent.tolist()):
        lines[s] = " ".join(ls.path_words(edges[off[k] : off[k + 1]]))
    return lines


def dense_groups(names: Sequence[str]) -> list[tuple[str, int]]:
    """``NAME_k`` columns as ``[(NAME, count), ...]`` for n-best lines."""
    groups: list[tuple[str, int]] = []
    for name in names:
        m = _DENSE.match(name)
        group = m.group("group") if m else name
        if groups and groups[-1][0] == group:
            groups[-1] = (group, groups[-1][1] + 1)
        else:
            groups.append((group, 1))
    return groups


@numba.njit(cache=True)
def _path_dense_sums(dense, path_off, path_edges):
    """(P, D) summed dense features of the paths ``path_edges[path_off[p]:path_off[p+1]]``.

    Each row is summed from 0.0 in the path's edge order, as ``dense[edges].sum(axis=0)`` sums the
    (C-ordered) rows it selects, so the sums are bit-identical to that per-path numpy call
    (:meth:`LatticeSet.path_features`; a test checks it, signed zeros included).
    """
    n = path_off.shape[0] - 1
    out = np.zeros((n, dense.shape[1]))
    for p in range(n):
        for k in range(path_off[p], path_off[p + 1]):
            e = path_edges[k]
            for j in range(dense.shape[1]):
                out[p, j] = out[p, j] + dense[e, j]
    return out


def path_lines(ls: LatticeSet, paths: Sequence[tuple[int, np.ndarray]], weights: np.ndarray,
               chunk: int = 16384) -> list[tuple[int, str]]:
    """(sentence, n-best line) of every path; the total is ``weights . h``.

    The same lines as formatting each path from :meth:`LatticeSet.path_features` and
    :meth:`LatticeSet.path_words`, with the dense sums and the words gathered ``chunk`` paths at a
    time (lb-mert aggregates some 300k paths per step on 200 sentences; per path, the scipy row
    selection of ``path_features`` alone cost about 0.1 ms).
    """
    groups = dense_groups(ls.feature_names)
    weights = np.asarray(weights, dtype=np.float64)
    out: list[tuple[int, str]] = []
    for lo in range(0, len(paths), chunk):
        out.extend(_path_lines_chunk(ls, paths[lo : lo + chunk], weights, groups))
    return out


def _path_lines_chunk(ls: LatticeSet, paths: Sequence[tuple[int, np.ndarray]], weights: np.ndarray,
                      groups: list[tuple[str, int]]) -> list[tuple[int, str]]:
    d = len(ls.feature_names)
    lengths = np.array([len(edges) for _, edges in paths], dtype=np.int64)
    path_off = np.zeros(len(paths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=path_off[1:])
    path_edges = np.concatenate([np.asarray(edges, np.int64) for _, edges in paths])
    dense = _path_dense_sums(ls.dense, path_off, path_edges)
    # the words of every path's edges, in order, as vocabulary strings
    w_lo = ls.word_off[path_edges]
    w_len = ls.word_off[path_edges + 1] - w_lo
    w_cum = np.zeros(len(path_edges) + 1, dtype=np.int64)
    np.cumsum(w_len, out=w_cum[1:])
    flat = np.arange(w_cum[-1], dtype=np.int64) - np.repeat(w_cum[:-1] - w_lo, w_len)
    vocab = ls.vocab
    tokens = [vocab[w] for w in ls.words[flat].tolist()]
    word_bounds = w_cum[path_off].tolist()
    has_sparse = ls.sparse.shape[1] > 0
    no_sparse = np.zeros(0)
    out = []
    for p, (s, edges) in enumerate(paths):
        if has_sparse:
            sp_sum = np.asarray(ls.sparse[np.asarray(edges, np.int64)].sum(axis=0)).ravel()
        else:
            sp_sum = no_sparse
        h = np.concatenate([dense[p], sp_sum])
        sparse = {ls.sparse_names[j]: float(h[d + j]) for j in np.flatnonzero(h[d:]).tolist()}
        hyp = " ".join(tokens[word_bounds[p] : word_bounds[p + 1]])
        out.append((s, format_line(s, hyp, groups, h[:d], sparse.items(), dot(h, weights), DECODED)))
    return out


def write_paths(out_path: str | os.PathLike, previous: Sequence[str | os.PathLike] | None,
                new: list[tuple[int, str]]) -> int:
    """Write the previous aggregated paths plus ``new`` (sentence, line); returns the number of new lines kept.

    Every previous line is kept; a new line is kept unless a previous or an earlier new line is the same
    path (the same line up to its total score). The lines are written by sentence id, each sentence's
    lines in the order previous then new. Only the new lines' keys are held as a set, and previous
    lines are compared with them only where a new line has the same sentence id: the previous file
    can be large (every path aggregated so far) and the new lines are few after the first iterations.
    """
    prev_lines: list[str] = []
    for path in previous or []:
        prev_lines.extend(read_lines(path, what="k-best file", allow_empty=True))
    prev_sids = np.array([int(line.split(" ||| ", 1)[0]) for line in prev_lines], dtype=np.int64)
    new_keys: dict[str, int] = {}  # path -> its first new line
    for k, (_, line) in enumerate(new):
        new_keys.setdefault(line.rsplit(" ||| ", 1)[0], k)
    new_sids = {sid for sid, _ in new}
    for sid, line in zip(prev_sids.tolist(), prev_lines):
        if sid in new_sids:
            new_keys.pop(line.rsplit(" ||| ", 1)[0], None)
    kept_new = sorted(new_keys.values())
    sids = np.concatenate([prev_sids, np.array([new[k][0] for k in kept_new], dtype=np.int64)])
    order = np.argsort(sids, kind="stable")
    n_prev = len(prev_lines)
    with atomic_output(out_path, compresslevel=LOOP_COMPRESSLEVEL) as fh:  # a loop file: written once, read once
        for k in order.tolist():
            fh.write((prev_lines[k] if k < n_prev else new[kept_new[k - n_prev]][1]) + "\n")
    return len(kept_new)
