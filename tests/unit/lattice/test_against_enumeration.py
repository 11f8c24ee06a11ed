"""Lattice path lines, envelopes and path statistics against brute-force enumeration of every path.

The paths of small random lattices (``tests/support/lattice_fixtures.py``) are enumerated one by one:
:func:`smtlib.lattice.problem.path_lines` must write each path's n-best line as ``format_line``
does from its summed features, :func:`smtlib.lattice.envelope.upper_envelope` must be the maximum of
the enumerated paths' lines, and :func:`smtlib.lattice.stats.path_stats` must be
:func:`smtlib.bleu.stats.compute_stats` of the path's words.
"""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.bleu.stats import compute_stats
from smtlib.kbest.format import DECODED, format_line
from smtlib.lattice.envelope import upper_envelope
from smtlib.lattice.lattice_set import LatticeSetBuilder
from smtlib.lattice.problem import dense_groups, path_lines
from smtlib.lattice.stats import path_stats
from tests.support.lattice_fixtures import SETTINGS, all_paths, global_paths, path_words, random_lattice, random_problem


@pytest.mark.parametrize("sparse", [False, True])
def test_path_lines_equal_the_per_path_features_and_words(sparse):
    """The batched n-best lines of aggregated paths are those of ``LatticeSet.path_features/path_words``
    per path (bit-identical dense sums, signed zeros included), whole-path edges too."""
    rng = np.random.default_rng(7)
    lats = [random_lattice(rng, s, n_nodes=6, extra=5, sparse=sparse) for s in range(3)]
    lats[1].dense[0] = -0.0
    lats[2].dense[:] *= 10.0 ** rng.integers(-9, 9, size=lats[2].dense.shape)
    b = LatticeSetBuilder(3, lats[0].feature_names)
    for lat in lats:
        b.add_lattice(lat)
    b.add_path(1, np.array([0.5, -0.0, 2.0]), {"cbin_2": 1.0} if sparse else {}, ["a", "new", "word"])
    ls = b.build()
    paths = [(s, np.array(p)) for s, _, p in global_paths(ls, lats)]
    paths += [(1, np.flatnonzero(ls.path_row >= 0)), (0, np.zeros(0, np.int64))]
    weights = rng.normal(size=len(ls.all_feature_names))
    d = len(ls.feature_names)
    groups = dense_groups(ls.feature_names)
    expected = []
    for s, edges in paths:
        h = ls.path_features(edges)
        sp = {ls.sparse_names[j]: float(h[d + j]) for j in np.flatnonzero(h[d:]).tolist()}
        line = format_line(s, " ".join(ls.path_words(edges)), groups, h[:d], sp.items(), float(h @ weights), DECODED)
        expected.append((s, line))
    assert path_lines(ls, paths, weights) == expected
    assert path_lines(ls, paths, weights, chunk=3) == expected
    assert path_lines(ls, [], weights) == []


# ------------------------------------------------------------------------------------ envelopes
@pytest.mark.parametrize("seed", range(12))
def test_upper_envelope_is_the_maximum_over_enumerated_paths(seed):
    rng = np.random.default_rng(seed)
    lat = random_lattice(rng, n_nodes=7, extra=8)
    w, d = rng.normal(size=3), rng.normal(size=3)
    env = upper_envelope(lat, w, d)
    paths = all_paths(lat)
    a = np.array([lat.dense[p].sum(axis=0) @ w for p in paths])
    b = np.array([lat.dense[p].sum(axis=0) @ d for p in paths])
    assert len(env.paths) >= 1 and all(p in paths for p in env.paths)
    assert np.all(np.diff(env.starts) > 0)
    ends = np.append(env.starts[1:], np.inf)
    for x in np.linspace(-20, 20, 401):
        k = int(np.searchsorted(env.starts, x, side="right") - 1)
        assert env.starts[k] <= x <= ends[k]
        value = env.intercepts[k] + x * env.slopes[k]
        assert value == pytest.approx(np.max(a + x * b), abs=1e-9)
    # every line of the envelope is the maximum somewhere (no dominated line is kept)
    for k in range(len(env.paths)):
        lo = env.starts[k] if np.isfinite(env.starts[k]) else ends[k] - 1.0
        hi = ends[k] if np.isfinite(ends[k]) else lo + 1.0
        x = 0.5 * (lo + hi)
        assert env.intercepts[k] + x * env.slopes[k] == pytest.approx(np.max(a + x * b), abs=1e-9)


# ------------------------------------------------------------------------------------ path BLEU
@pytest.mark.parametrize("seed", range(4))
def test_path_statistics_equal_compute_stats_of_the_words(seed):
    _, lats, refs, ls, lrefs = random_problem(seed)
    paths = global_paths(ls, lats)
    sent = np.array([s for s, _, _ in paths], np.int64)
    off = np.concatenate([[0], np.cumsum([len(g) for _, _, g in paths])]).astype(np.int64)
    edges = np.array([e for _, _, g in paths for e in g], np.int64)
    got = path_stats(ls, lrefs, sent, off, edges)
    texts = [" ".join(path_words(lats[s], p)) for s, p, _ in paths]
    want = compute_stats(texts, sent, [refs], SETTINGS)
    np.testing.assert_array_equal(got, want)
