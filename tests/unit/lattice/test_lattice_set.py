"""LatticeSetBuilder's whole paths: a k-best pool added in blocks (``add_pool``, what lb-mert's and
lb-mira's aggregated paths and ``lattice_set_from_pool`` use) is the same set as its rows added one
by one (``add_path``): edges, words, sparse ids and their order, statistics rows."""

from __future__ import annotations

import numpy as np
import pytest

from smtlib.errors import InputError
from smtlib.kbest.pool import read_pool
from smtlib.lattice.lattice_set import LatticeSetBuilder, lattice_set_from_pool
from tests.support.lattice_fixtures import random_lattice

FIELDS = ["n_nodes", "edge_off", "tails", "heads", "dense", "word_off", "words", "path_row", "path_stats"]


def write_pool(path, rng, sentences, names, sparse_names):
    """A k-best file: one line per entry of ``sentences``, random features, words and sparse features
    (dense ``NAME_0`` columns are written as Moses's one-value groups ``NAME=``)."""
    lines = []
    for s in sentences:
        dense = " ".join(f"{n.rsplit('_', 1)[0]}= {rng.normal():.4f}" for n in names)
        sparse = " ".join(f"{n}= {int(rng.integers(1, 4))}" for n in sparse_names if rng.random() < 0.7)
        words = " ".join(rng.choice(["a", "b", "c", "new", "word"], size=int(rng.integers(1, 5))))
        lines.append(f"{s} ||| {words} ||| {dense} {sparse} ||| {rng.normal():.3f}\n")
    path.write_text("".join(lines))
    return path


def builder_with_lattices(rng, n, names):
    b = LatticeSetBuilder(n, names)
    for s in (0, 1, 3):
        b.add_lattice(random_lattice(rng, s, n_nodes=6, extra=5, sparse=True))
    return b


def assert_same_set(a, b):
    for field in FIELDS:
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
    assert (a.sparse != b.sparse).nnz == 0 and a.sparse.shape == b.sparse.shape
    assert a.sparse_names == b.sparse_names and a.vocab == b.vocab and a.feature_names == b.feature_names


@pytest.mark.parametrize("with_stats", [False, True])
def test_a_pool_added_in_blocks_is_its_rows_added_one_by_one(tmp_path, with_stats):
    rng = np.random.default_rng(11)
    names = random_lattice(rng, 0).feature_names
    # sentence 2 has paths and no lattice, 4 neither; sparse names new to the lattices and one they have;
    # two files, so that the pool numbers its sparse names (file by file) in another order than its
    # rows (sorted by sentence) meet them
    first = write_pool(tmp_path / "a.kbest", rng, [2, 2, 5], names[::-1], ["zz_new", "cbin_1"])
    second = write_pool(tmp_path / "b.kbest", rng, [0, 0, 1, 2, 3, 5], names[::-1], ["aa_other", "cbin_1"])
    pool = read_pool([first, second])
    assert pool.sparse.nnz > 0 and pool.dense_names == names[::-1]
    assert pool.sparse_names.index("zz_new") < pool.sparse_names.index("aa_other")
    stats = rng.integers(0, 9, size=(len(pool.texts), 10)).astype(np.float64) if with_stats else None
    cols = None
    built = []
    for blocks in (False, True):
        b = builder_with_lattices(np.random.default_rng(5), 6, names)
        cols = b.dense_columns(pool.dense_names)
        if blocks:
            assert b.add_pool(pool, cols, stats) == len(pool.texts)
        else:
            for s in range(pool.n_sentences):
                for r in range(pool.offsets[s], pool.offsets[s + 1]):
                    dense = np.zeros(len(names))
                    dense[cols] = pool.dense[r]
                    lo, hi = pool.sparse.indptr[r], pool.sparse.indptr[r + 1]
                    sparse = {pool.sparse_names[c]: float(v)
                              for c, v in zip(pool.sparse.indices[lo:hi], pool.sparse.data[lo:hi], strict=True)}
                    b.add_path(s, dense, sparse, pool.texts[r].split(), None if stats is None else stats[r])
        built.append(b.build())
    assert_same_set(*built)
    ls = built[1]
    assert ls.sparse_names == ["cbin_1", "aa_other", "zz_new"]
    assert int((ls.path_row >= 0).sum()) == len(pool.texts)
    assert np.isnan(ls.path_stats).all() if stats is None else np.array_equal(np.sort(ls.path_stats, axis=0),
                                                                              np.sort(stats, axis=0))


def test_lattice_set_from_pool_keeps_each_rows_features_words_and_statistics(tmp_path):
    rng = np.random.default_rng(2)
    pool = read_pool(write_pool(tmp_path / "pool.kbest", rng, [0, 0, 0, 2, 2, 3], ["tm_0", "lm_0"], ["x_1", "y_2"]))
    assert pool.dense_names == ["tm_0", "lm_0"] and sorted(pool.sparse_names) == ["x_1", "y_2"]
    pool.stats = rng.integers(0, 9, size=(len(pool.texts), 10)).astype(np.float64)
    ls = lattice_set_from_pool(pool)
    assert ls.sparse_names == pool.sparse_names
    for s in range(pool.n_sentences):
        edges = range(ls.edge_off[s], ls.edge_off[s + 1])
        rows = sorted(range(pool.offsets[s], pool.offsets[s + 1]), key=lambda r: tuple(pool.stats[r]))
        got = sorted(edges, key=lambda e: tuple(ls.path_stats[ls.path_row[e]]))
        assert len(got) == len(rows)
        for e, r in zip(got, rows, strict=True):
            assert ls.path_words([e]) == pool.texts[r].split()
            np.testing.assert_array_equal(ls.path_features([e]), np.concatenate([pool.dense[r], pool.sparse[r].toarray().ravel()]))


def test_a_pool_row_beyond_the_builders_sentences_is_an_error(tmp_path):
    rng = np.random.default_rng(0)
    pool = read_pool(write_pool(tmp_path / "p.kbest", rng, [0, 4], ["tm_0"], []))
    b = LatticeSetBuilder(3, ["tm_0"])
    with pytest.raises(InputError, match="path of sentence 4, but there are 3 sentences"):
        b.add_pool(pool, [0])
