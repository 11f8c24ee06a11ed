"""Lattice envelopes on lattices full of exact ties (integer features), against brute-force enumeration.

The random lattices of ``test_against_enumeration`` have Gaussian features, so two paths never share a
line; here features and directions are small integers, so many paths have equal slopes, equal
intercepts or both, and several lines cross at one point: the cases where the hull scan's tie rules
(equal slopes, lines that are the maximum at a single point only) decide what is kept.
"""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.bleu.stats import BleuSettings, compute_stats
from smtlib.lattice.envelope import upper_envelope
from smtlib.lattice.lattice_set import lattice_set_from_lattices
from smtlib.lattice.stats import prepare_references
from smtlib.tuners.lbmert import LatticeLineSearch
from smtlib.tuners.line_search import line_search
from smtlib.tuners.corpus_metric import BLEU
from tests.support.lattice_fixtures import all_paths, path_words, random_lattice, random_reference


@pytest.mark.parametrize("seed", range(16))
def test_envelope_with_ties_is_the_exact_maximum_over_enumerated_paths(seed):
    rng = np.random.default_rng(1000 + seed)
    lat = random_lattice(rng, n_nodes=8, extra=14, integer=True)
    w = rng.integers(-2, 3, size=3).astype(float)
    d = rng.integers(-2, 3, size=3).astype(float)
    env = upper_envelope(lat, w, d)
    paths = all_paths(lat)
    a = np.array([lat.dense[p].sum(axis=0) @ w for p in paths])
    b = np.array([lat.dense[p].sum(axis=0) @ d for p in paths])
    # integer lines: the true envelope's breakpoints are rationals; test at every one of them and between
    crossings = {(a[i] - a[j]) / (b[j] - b[i]) for i in range(len(a)) for j in range(len(a)) if b[i] != b[j]}
    probes = sorted(crossings | {min(crossings, default=0.0) - 1.0, max(crossings, default=0.0) + 1.0})
    probes += [0.5 * (x + y) for x, y in zip(probes, probes[1:])]
    assert np.all(np.diff(env.starts) > 0)
    # the envelope's lines are real paths with their exact sums
    for p, s, i in zip(env.paths, env.slopes, env.intercepts):
        assert p in paths
        assert s == b[paths.index(p)] and i == a[paths.index(p)]
    for x in probes:
        k = int(np.searchsorted(env.starts, x, side="right") - 1)
        assert env.intercepts[k] + x * env.slopes[k] == pytest.approx(np.max(a + x * b), abs=1e-9)
    # exactly the lines of the true envelope: between two consecutive crossings (and beyond the
    # outermost ones) one slope is the maximum; lines that win at a single point only are not kept
    cuts = sorted(crossings)
    inner = [cuts[0] - 1.0] + [0.5 * (x + y) for x, y in zip(cuts, cuts[1:])] + [cuts[-1] + 1.0] if cuts else [0.0]
    hull_slopes = sorted({float(b[np.argmax(a + x * b)]) for x in inner})
    assert env.slopes.tolist() == hull_slopes


@pytest.mark.parametrize("seed", range(8))
def test_lattice_line_search_with_ties_equals_kbest_line_search(seed):
    """With tied paths the BLEU of the chosen one matters; the lattice search must reach mert's optimum."""
    settings = BleuSettings(tokenize="none")
    rng = np.random.default_rng(2000 + seed)
    lats = [random_lattice(rng, s, n_nodes=6, extra=6, integer=True) for s in range(5)]
    refs = [random_reference(rng) for _ in range(5)]
    ls = lattice_set_from_lattices(lats, 5)
    lrefs = prepare_references(ls, [refs], settings)
    paths = []
    for s, lat in enumerate(lats):
        base = int(ls.edge_off[s])
        paths += [(s, p, [base + e for e in p]) for p in all_paths(lat)]
    w = rng.integers(-2, 3, size=3).astype(float)
    d = rng.integers(-2, 3, size=3).astype(float)
    feats = np.array([ls.dense[g].sum(axis=0) for _, _, g in paths])
    offsets = np.searchsorted([s for s, _, _ in paths], np.arange(ls.n_sentences + 1)).astype(np.int64)
    texts = [" ".join(path_words(lats[s], p)) for s, p, _ in paths]
    stats = compute_stats(texts, np.array([s for s, _, _ in paths]), [refs], settings).astype(np.float64)
    want_score, _ = line_search(feats @ d, feats @ w, offsets, stats, BLEU, 1.0)
    got_score, _ = LatticeLineSearch(ls, lrefs).search(ls.dense @ w, np.ascontiguousarray(ls.dense @ d), 1.0, None)
    assert got_score == pytest.approx(want_score, abs=1e-12)
