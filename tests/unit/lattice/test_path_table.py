"""The table of envelope paths lattice MERT keeps: rows equal to counting every path, new paths flagged once.

Reference: :func:`smtlib.lattice.stats.path_stats`, which counts every path's statistics from its words
each time, on every path of small random lattices (and on whole-path edges from a k-best pool).
"""
from __future__ import annotations

import numpy as np
import pytest

from smtlib.lattice.path_table import PathTable, path_hashes
from smtlib.lattice.stats import path_stats
from tests.support.lattice_fixtures import global_paths, random_problem


def _arrays(paths):
    sent = np.array([s for s, _ in paths], dtype=np.int64)
    off = np.zeros(len(paths) + 1, dtype=np.int64)
    np.cumsum([len(e) for _, e in paths], out=off[1:])
    edges = np.concatenate([np.asarray(e, np.int64) for _, e in paths]) if paths else np.zeros(0, np.int64)
    return sent, off, edges


@pytest.mark.parametrize("seed", range(6))
def test_rows_equal_counting_every_path_and_each_path_is_new_once(seed):
    rng, lats, _, ls, lrefs = random_problem(seed, n_sent=5, n_nodes=7, extra=8)
    every = [(s, g) for s, _, g in global_paths(ls, lats)]
    table = PathTable(ls, lrefs, capacity=4)  # tiny: the table grows (and rehashes) many times
    met = set()
    for _ in range(4):  # batches of random paths, with repeats inside and across batches
        pick = rng.integers(0, len(every), size=3 * len(every))
        batch = [every[k] for k in pick]
        sent, off, edges = _arrays(batch)
        stats, hashes, new = table.lookup(sent, off, edges)
        np.testing.assert_array_equal(stats, path_stats(ls, lrefs, sent, off, edges))
        np.testing.assert_array_equal(hashes, path_hashes(sent, off, edges))
        want_new = []
        for s, g in batch:
            key = (s, tuple(g))
            want_new.append(key not in met)
            met.add(key)
        assert new.tolist() == want_new
    assert table.n_rows == len(met)


def test_whole_path_edges_take_their_rows_and_are_never_new(tmp_path):
    from smtlib.lattice.lattice_set import lattice_set_from_pool
    from smtlib.lattice.stats import fill_whole_path_stats, prepare_references
    from smtlib.kbest.pool import read_pool
    from tests.support.lattice_fixtures import SETTINGS

    kbest = tmp_path / "pool.kbest"
    kbest.write_text("0 ||| a b c ||| F0= 1 F1= 2 ||| 3\n0 ||| a c ||| F0= 2 F1= 0 ||| 2\n"
                     "1 ||| d e ||| F0= 0 F1= 1 ||| 1\n")
    ls = lattice_set_from_pool(read_pool([str(kbest)]))
    refs = prepare_references(ls, [["a b c", "d e f"]], SETTINGS)
    fill_whole_path_stats(ls, refs)
    edges = np.flatnonzero(ls.path_row >= 0).astype(np.int64)
    sent = (np.searchsorted(ls.edge_off, edges, side="right") - 1).astype(np.int64)
    off = np.arange(len(edges) + 1, dtype=np.int64)
    table = PathTable(ls, refs)
    stats, _, new = table.lookup(sent, off, edges)
    np.testing.assert_array_equal(stats, ls.path_stats[ls.path_row[edges]])
    assert not new.any() and table.n_rows == 0
